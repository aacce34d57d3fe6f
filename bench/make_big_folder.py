"""Writes a Hugging Face folder in a large published shape (Llama-3.1-8B's config) with random
bf16 weights, N(0, 0.02) and norms at one, one tensor at a time, so that a machine with less
memory than the model writes it; and a token file to train it on. For speed, the weights are
slices of one pool of 32 Mi random values at random offsets: random enough for memory and time,
not for what a model learns.

    make_big_folder.py DIR [--shape llama-3.1-8b] [--tokens FILE N]

For bench/hf_quant.sh: what loading such a folder into nf4 holds, and one LoRA step on it.
"""
import argparse
import json
import os
import struct

import numpy as np

SHAPES = {
    # Llama-3.1-8B's config.json, as published.
    "llama-3.1-8b": {"model_type": "llama", "architectures": ["LlamaForCausalLM"],
                     "vocab_size": 128256, "hidden_size": 4096, "intermediate_size": 14336,
                     "num_hidden_layers": 32, "num_attention_heads": 32,
                     "num_key_value_heads": 8, "max_position_embeddings": 131072,
                     "rms_norm_eps": 1e-5, "rope_theta": 500000.0, "hidden_act": "silu",
                     "tie_word_embeddings": False, "bos_token_id": 128000,
                     "eos_token_id": 128001, "torch_dtype": "bfloat16",
                     "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0,
                                      "high_freq_factor": 4.0,
                                      "original_max_position_embeddings": 8192,
                                      "rope_type": "llama3"}},
    # Qwen2.5-1.5B's shape as a Llama, for the quantization error (bench/hf_quant.sh).
    "llama-1.5b": {"model_type": "llama", "architectures": ["LlamaForCausalLM"],
                   "vocab_size": 32000, "hidden_size": 1536, "intermediate_size": 8960,
                   "num_hidden_layers": 28, "num_attention_heads": 12,
                   "num_key_value_heads": 2, "max_position_embeddings": 4096,
                   "rms_norm_eps": 1e-6, "rope_theta": 1000000.0, "hidden_act": "silu",
                   "tie_word_embeddings": True, "bos_token_id": 1, "eos_token_id": 2,
                   "torch_dtype": "bfloat16"},
}


def tensors(c):
    h, f, v = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    hd = h // c["num_attention_heads"]
    q, kv = c["num_attention_heads"] * hd, c["num_key_value_heads"] * hd
    yield "model.embed_tokens.weight", (v, h), False
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        yield p + "input_layernorm.weight", (h,), True
        for n, shape in (("self_attn.q_proj", (q, h)), ("self_attn.k_proj", (kv, h)),
                         ("self_attn.v_proj", (kv, h)), ("self_attn.o_proj", (h, q)),
                         ("mlp.gate_proj", (f, h)), ("mlp.up_proj", (f, h)),
                         ("mlp.down_proj", (h, f))):
            yield p + n + ".weight", shape, False
        yield p + "post_attention_layernorm.weight", (h,), True
    yield "model.norm.weight", (h,), True
    if not c["tie_word_embeddings"]:
        yield "lm_head.weight", (v, h), False


def bf16(a):
    """float32 to bfloat16's bits, rounded to nearest even."""
    bits = a.astype(np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--shape", default="llama-3.1-8b", choices=sorted(SHAPES))
    ap.add_argument("--tokens", nargs=2, metavar=("FILE", "N"))
    a = ap.parse_args()
    c = SHAPES[a.shape]
    os.makedirs(a.dir, exist_ok=True)
    with open(os.path.join(a.dir, "config.json"), "w") as f:
        json.dump(c, f, indent=2)
    header, offset = {}, 0
    for name, shape, _ in tensors(c):
        n = int(np.prod(shape)) * 2
        header[name] = {"dtype": "BF16", "shape": list(shape), "data_offsets": [offset, offset + n]}
        offset += n
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    rng = np.random.default_rng(1)
    pool = bf16(rng.standard_normal(32 << 20, dtype=np.float32) * 0.02)
    pool = np.concatenate([pool, pool])
    with open(os.path.join(a.dir, "model.safetensors"), "wb") as out:
        out.write(struct.pack("<Q", len(raw)) + raw)
        for name, shape, norm in tensors(c):
            rows = shape[0]
            step = max(1, (64 << 20) // (4 * int(np.prod(shape[1:]))))
            for r in range(0, rows, step):  # in slices of about 64 MiB
                part = (rows if len(shape) == 1 else min(step, rows - r),) + tuple(shape[1:])
                count = int(np.prod(part))
                if norm:
                    out.write(bf16(np.ones(count, dtype=np.float32)).tobytes())
                else:
                    at = int(rng.integers(0, (32 << 20) - count + 1))
                    out.write(pool[at:at + count].tobytes())
                if norm:
                    break
    if a.tokens:
        ids = rng.integers(0, c["vocab_size"], int(a.tokens[1]), dtype=np.uint32)
        ids.tofile(a.tokens[0])


if __name__ == "__main__":
    main()
