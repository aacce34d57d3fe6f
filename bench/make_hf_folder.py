"""Writes a Hugging Face model folder with random weights in a published family's shape, and a
token file to train it on, for the benchmarks (bench/gpu.sh, bench/hf_versus.sh).

    make_hf_folder.py SHAPE DIR [--dtype bf16|fp32] [--device cuda:0] [--tokens FILE N] [--vocab V]

SHAPE is one of SHAPES below. Weights are drawn as transformers initialises a model to train
(bench/hf_reference.py's init="training", on --device, which a GPU does in a moment for a
billion of them); --tokens writes N random ids
below the vocabulary as little-endian uint32 (`--data tokens:FILE,dtype=uint32`); with
--patterned, ids that follow each other as a small Markov chain does, which a model learns.
"""
import argparse
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_reference as ref  # noqa: E402


def llama(hidden, layers, heads, kv, inter, vocab=128256, tied=True):
    return {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "vocab_size": vocab,
            "hidden_size": hidden, "intermediate_size": inter, "num_hidden_layers": layers,
            "num_attention_heads": heads, "num_key_value_heads": kv, "max_position_embeddings": 8192,
            "rms_norm_eps": 1e-5, "rope_theta": 500000.0, "hidden_act": "silu",
            "tie_word_embeddings": tied, "bos_token_id": 0, "eos_token_id": 1}


def qwen2(hidden, layers, heads, kv, inter, vocab=151936, tied=True):
    return {"model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"], "vocab_size": vocab,
            "hidden_size": hidden, "intermediate_size": inter, "num_hidden_layers": layers,
            "num_attention_heads": heads, "num_key_value_heads": kv, "max_position_embeddings": 32768,
            "rms_norm_eps": 1e-6, "rope_theta": 1000000.0, "hidden_act": "silu",
            "tie_word_embeddings": tied, "use_sliding_window": False, "bos_token_id": 0,
            "eos_token_id": 1}


def qwen3(hidden, layers, heads, kv, inter, head_dim=128, vocab=151936, tied=True):
    return {"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"], "vocab_size": vocab,
            "hidden_size": hidden, "intermediate_size": inter, "num_hidden_layers": layers,
            "num_attention_heads": heads, "num_key_value_heads": kv, "head_dim": head_dim,
            "max_position_embeddings": 40960, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
            "hidden_act": "silu", "tie_word_embeddings": tied, "use_sliding_window": False,
            "bos_token_id": 0, "eos_token_id": 1}


# About 0.5 B and 1.5 B parameters each: a Llama 3 vocabulary with Llama's proportions, and
# Qwen3-0.6B's and Qwen3-1.7B's own shapes. The tiny ones are for checking the scripts on a CPU;
# "llama-60m" is the CPU benchmark's.
SHAPES = {
    "llama-0.5b": llama(1024, 24, 16, 8, 4096),
    "llama-1.5b": llama(2048, 20, 32, 8, 7168),
    # Llama-3.2-1B's shape (bench/gguf_sizes.py).
    "llama-1b": llama(2048, 16, 32, 8, 8192),
    "qwen3-0.5b": qwen3(1024, 28, 16, 8, 3072),
    # Qwen2.5-0.5B's own shape (494 M parameters, the embedding tied), for the sharded full
    # fine-tune under memory limits (bench/shard_memory.sh).
    "qwen2.5-0.5b": qwen2(896, 24, 14, 2, 4864),
    # Qwen2.5-1.5B's own shape (1.54 B parameters, the embedding tied), for the sharded plan of
    # issue 65's 16 GB and 12 GB machines (bench/shard_plan.sh).
    "qwen2.5-1.5b": qwen2(1536, 28, 12, 2, 8960),
    "qwen3-1.5b": qwen3(2048, 28, 16, 8, 6144),
    "llama-60m": llama(512, 8, 8, 4, 1536, vocab=32000, tied=False),
    "llama-tiny": llama(64, 2, 4, 2, 160, vocab=512),
    # Llama-3.1-8B's shape, for the 4-bit base on a GPU (bench/gpu.sh's nf4 phase).
    "llama-8b": llama(4096, 32, 32, 8, 14336, tied=False),
    # For the memory plan against measured peaks (bench/hf_plan.sh): deep and narrow, wide and
    # shallow (with --vocab 128256, llama-60m is the large-vocabulary one).
    "llama-deep": llama(128, 32, 4, 2, 384, vocab=1024, tied=False),
    "llama-wide": llama(1024, 2, 16, 8, 4096, vocab=1024, tied=False),
    "qwen3-tiny": qwen3(64, 2, 4, 2, 160, head_dim=32, vocab=512),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("shape", choices=sorted(SHAPES))
    ap.add_argument("dir")
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "fp32"])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--tokens", nargs=2, metavar=("FILE", "N"))
    ap.add_argument("--patterned", action="store_true",
                    help="tokens a model can learn: each id is followed by one of four, mostly the first")
    ap.add_argument("--vocab", type=int, help="another vocabulary size than the shape's")
    ap.add_argument("--layers", type=int, help="another number of blocks than the shape's")
    args = ap.parse_args()
    cfg = dict(SHAPES[args.shape])
    if args.vocab:
        cfg["vocab_size"] = args.vocab
    if args.layers:
        cfg["num_hidden_layers"] = args.layers
    cfg["torch_dtype"] = "bfloat16" if args.dtype == "bf16" else "float32"
    os.makedirs(args.dir, exist_ok=True)
    device = args.device if args.device.startswith("cuda") else "cpu"
    weights = ref.random_weights(cfg, 1, torch.bfloat16 if args.dtype == "bf16" else torch.float32, device,
                                 init="training")
    with open(os.path.join(args.dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    ref.write_safetensors(os.path.join(args.dir, "model.safetensors"), weights, {"format": "pt"})
    parameters = sum(t.numel() for t in weights.values())
    if args.tokens:
        rng = np.random.default_rng(1)
        n, vocab = int(args.tokens[1]), cfg["vocab_size"]
        if args.patterned:
            successors = rng.integers(0, vocab, (vocab, 4))
            pick = rng.choice(4, n, p=[0.7, 0.1, 0.1, 0.1])
            ids = np.empty(n, dtype=np.uint32)
            ids[0] = 0
            for i in range(1, n):
                ids[i] = successors[ids[i - 1], pick[i]]
            ids.tofile(args.tokens[0])
        else:
            rng.integers(0, vocab, n, dtype=np.uint32).tofile(args.tokens[0])
    print(json.dumps({"shape": args.shape, "parameters": parameters, "dtype": args.dtype}))


if __name__ == "__main__":
    main()
