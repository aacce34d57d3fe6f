"""The mean cross-entropy per token of a Hugging Face folder on a token file's windows, computed
from the published equations in float64 (make_hf.py's references), with no code of Tandem's:
what Tandem reports as a run's test loss, checked from the folder it exported.

    check_hf_loss.py DIR TOKENS CONTEXT      prints the loss
    check_hf_loss.py DIR TOKENS CONTEXT --wrong FAMILY
                                             then, a line each, "NAME LOSS": the loss of the
                                             same weights under each config of make_hf.py's
                                             WRONG_CHANGES[FAMILY], which gets one of the
                                             family's own features wrong
    check_hf_loss.py DIR TOKENS CONTEXT --adapter ADAPTER [--base nf4]
                                             the loss of DIR's weights with PEFT's adapter
                                             folder ADAPTER applied: W + lora_alpha/r * B A for
                                             each module it holds. With --base nf4, every block
                                             linear weight of DIR is first quantized to NF4 with
                                             double quantization and dequantized in its own dtype
                                             (quant_reference.py), as a run with that base
                                             trained on it

TOKENS is a little-endian uint16 stream (uint32 when its name ends in .u32); its windows are
tokens [i*CONTEXT, i*CONTEXT+CONTEXT]
for i below (n-1)//CONTEXT, each position predicting the next token, as Tandem cuts them.
"""
import json
import os
import struct
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_hf import WRONG_CHANGES, gpt2_logits, llama_logits, read_safetensors  # noqa: E402


def mean_loss(c, p, t, context):
    windows = (len(t) - 1) // context
    total, count = 0.0, 0
    for i in range(windows):
        x = t[i * context:i * context + context]
        y = torch.tensor(t[i * context + 1:i * context + context + 1])
        if c["model_type"] == "gpt2":
            c.setdefault("layer_norm_epsilon", 1e-5)
            p2 = {k[len("transformer."):] if k.startswith("transformer.") else k: v for k, v in p.items()}
            logits = gpt2_logits(c, p2, [x])[0]
        else:
            c.setdefault("rms_norm_eps", 1e-5 if c["model_type"] == "phi3" else 1e-6)
            logits = llama_logits(c, p, [x])[0]
        total += torch.nn.functional.cross_entropy(logits, y, reduction="sum").item()
        count += len(x)
    return total / count


def apply_adapter(p, adapter, base):
    """The folder's weights p (as stored) in float64, with the PEFT adapter folder `adapter`
    merged in; `base` "nf4" first puts every block linear weight through NF4 and back."""
    with open(os.path.join(adapter, "adapter_config.json")) as f:
        ac = json.load(f)
    if ac.get("use_rslora") or ac.get("use_dora"):
        raise SystemExit("adapter: rsLoRA and DoRA are not what this reference applies")
    scale = ac["lora_alpha"] / ac["r"]
    if base == "nf4":
        from quant_reference import LINEAR, nf4, nf4_dequant
        for name, w in p.items():
            module = name[:-len(".weight")] if name.endswith(".weight") else ""
            if ".layers." in name and module.split(".")[-1] in LINEAR:
                p[name] = nf4_dequant(nf4(w, True), w.shape, w.numel()).to(w.dtype)
    p = {k: v.to(torch.float64) for k, v in p.items()}
    lora = read_safetensors(os.path.join(adapter, "adapter_model.safetensors"))
    prefix = "base_model.model."
    merged = 0
    for key, a in lora.items():
        if not key.endswith(".lora_A.weight"):
            continue
        module = key[len(prefix):-len(".lora_A.weight")]
        b = lora[key.replace(".lora_A.", ".lora_B.")].to(torch.float64)
        if module + ".weight" not in p:
            raise SystemExit("adapter: %s names no weight of the folder" % module)
        p[module + ".weight"] = p[module + ".weight"] + scale * (b @ a.to(torch.float64))
        merged += 1
    if merged == 0:
        raise SystemExit("adapter: no lora_A/lora_B pairs in " + adapter)
    return p


def main():
    folder, tokens, context = sys.argv[1], sys.argv[2], int(sys.argv[3])
    flags = dict(zip(sys.argv[4::2], sys.argv[5::2]))
    wrong = flags.get("--wrong")
    with open(os.path.join(folder, "config.json")) as f:
        c = json.load(f)
    p = {k: v.to(torch.float64) for k, v in read_safetensors(os.path.join(folder, "model.safetensors")).items()}
    if "--adapter" in flags:
        p = apply_adapter(read_safetensors(os.path.join(folder, "model.safetensors")),
                          flags["--adapter"], flags.get("--base"))
    with open(tokens, "rb") as f:
        raw = f.read()
    if tokens.endswith(".u32"):
        t = list(struct.unpack("<%dI" % (len(raw) // 4), raw))
    else:
        t = list(struct.unpack("<%dH" % (len(raw) // 2), raw))
    print(mean_loss(c, p, t, context))
    for name, change in WRONG_CHANGES.get(wrong, {}).items() if wrong else []:
        print(name.replace(" ", "_"), mean_loss(dict(c, **change), p, t, context))


if __name__ == "__main__":
    main()
