"""The plain PyTorch training loop that `tandem train --model hf:DIR` is timed against: the same
Hugging Face folder, token file, batch, context, precision and optimizer, one process, one
device. With transformers (and PEFT for --lora) the model is transformers' own; without, it is
bench/hf_reference.py's (the same equations in torch operators), which is what a CPU machine
without transformers runs.

    python_hf_loop.py DIR TOKENS --context N --batch B --steps S [--warmup W] [--device D]
        [--lora r=16,targets=q_proj,...] [--checkpoint] [--precision fp32|bf16] [--lr X]
        [--threads T] [--token-type uint16|uint32]

Full fine-tuning keeps fp32 weights and, with --precision bf16, computes under bf16 autocast;
with --lora the base stays in the folder's dtype and the adapters train in fp32, as Tandem does.
Prints one JSON line: the median step time after the warm-up steps, tokens/s from it, the
peak memory the allocator reserved (GPU) or the process's peak resident memory (CPU).
"""
import argparse
import json
import os
import resource
import statistics
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_reference as ref  # noqa: E402

try:
    from transformers import AutoModelForCausalLM
    HAVE_TRANSFORMERS = True
except ImportError:
    HAVE_TRANSFORMERS = False


def parse_lora(spec):
    out = {"r": 8, "alpha": None, "targets": []}
    in_targets = False
    for item in spec.split(","):
        if "=" in item:
            key, value = item.split("=", 1)
            in_targets = key == "targets"
            if key == "r":
                out["r"] = int(value)
            elif key == "alpha":
                out["alpha"] = float(value)
            elif key == "targets" and value:
                out["targets"].append(value)
        elif in_targets:
            out["targets"].append(item)
    out["alpha"] = out["alpha"] or 2.0 * out["r"]
    out["targets"] = out["targets"] or ["q_proj", "k_proj", "v_proj", "o_proj"]
    return out


def build(args, device):
    """(model, what it is, its trainable parameters)."""
    lora = parse_lora(args.lora) if args.lora else None
    if HAVE_TRANSFORMERS and not args.stand_in:
        dtype = None if lora else torch.float32  # LoRA: the folder's dtype; full: fp32 masters
        kwargs = {"dtype": dtype} if dtype else {}
        try:
            model = AutoModelForCausalLM.from_pretrained(args.dir, **kwargs)
        except TypeError:  # transformers 4.x names it torch_dtype
            model = AutoModelForCausalLM.from_pretrained(args.dir, torch_dtype=dtype or "auto")
        if args.checkpoint:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        if lora:
            from peft import LoraConfig, get_peft_model
            if args.checkpoint:
                model.enable_input_require_grads()
            model = get_peft_model(model, LoraConfig(r=lora["r"], lora_alpha=lora["alpha"],
                                                     lora_dropout=0.0, target_modules=lora["targets"]))
        what = "transformers" + (" + peft" if lora else "")
    else:
        cfg, params = ref.load_folder(args.dir)
        if not lora:
            params = {k: v.float() for k, v in params.items()}
        model = ref.CausalLM(cfg, params, ref.Lora(lora["r"], lora["alpha"], lora["targets"]) if lora else None,
                             seed=1, checkpoint=args.checkpoint)
        what = "plain torch (bench/hf_reference.py)"
    model = model.to(device).train()
    return model, what, [p for p in model.parameters() if p.requires_grad]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("tokens")
    ap.add_argument("--context", type=int, required=True)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--lora", default="")
    ap.add_argument("--checkpoint", action="store_true")
    ap.add_argument("--precision", default="fp32", choices=["fp32", "bf16"])
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--token-type", default="uint32", choices=["uint16", "uint32"])
    ap.add_argument("--stand-in", action="store_true", help="bench/hf_reference.py even with transformers")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    torch.manual_seed(0)
    tokens = np.memmap(args.tokens, dtype=np.uint16 if args.token_type == "uint16" else np.uint32, mode="r")
    windows = (len(tokens) - 1) // args.context
    model, what, trainable = build(args, device)
    optimizer = torch.optim.Adam(trainable, lr=args.lr)
    rng = np.random.default_rng(0)
    cuda = device.type == "cuda"
    times = []
    losses = []
    for step in range(args.warmup + args.steps):
        starts = rng.integers(0, windows, args.batch) * args.context
        batch = torch.from_numpy(np.stack([tokens[s:s + args.context + 1].astype(np.int64) for s in starts]))
        batch = batch.to(device)
        if cuda:
            torch.cuda.synchronize()
        begun = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=args.precision == "bf16" and not args.lora):
            out = model(batch[:, :-1])
            out = out.logits if hasattr(out, "logits") else out
        loss = torch.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]).float(),
                                                 batch[:, 1:].reshape(-1))
        loss.backward()
        optimizer.step()
        if cuda:
            torch.cuda.synchronize()
        if step >= args.warmup:
            times.append(time.perf_counter() - begun)
        losses.append(loss.item())
    median = statistics.median(times)
    result = {"loop": what, "device": args.device, "context": args.context, "batch": args.batch,
              "steps": args.steps, "step_ms": round(median * 1000, 2),
              "tokens_per_s": round(args.batch * args.context / median, 1),
              "trainable_parameters": sum(p.numel() for p in trainable),
              "first_loss": round(losses[0], 4), "last_loss": round(losses[-1], 4)}
    if cuda:
        result["peak_reserved_mb"] = round(torch.cuda.max_memory_reserved(device) / 2**20, 1)
        result["peak_allocated_mb"] = round(torch.cuda.max_memory_allocated(device) / 2**20, 1)
    else:
        result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
