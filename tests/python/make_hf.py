"""Writes small Hugging Face model folders (config.json and safetensors weights, written
here byte by byte) with random weights, and the logits each should give for a batch of token
ids, computed from the published equations in float64 with per-head and per-pair loops. The
engine's own transformer must match these; nothing here shares code with it.

    make_hf.py OUT_DIR        writes OUT_DIR/{gpt2,llama,qwen2,mistral,qwen3}/ and expected.safetensors
"""
import json
import math
import os
import struct
import sys

import torch

DTYPES = {torch.float32: "F32", torch.int64: "I64", torch.float16: "F16", torch.bfloat16: "BF16"}


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        t = t.contiguous()
        data = t.view(torch.uint8).numpy().tobytes() if t.dtype == torch.bfloat16 else t.numpy().tobytes()
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw + b"".join(blobs))


def layer_norm(x, w, b, eps):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * w + b


def rms_norm(x, w, eps):
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * w


def gelu_tanh(x):
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def causal_attention(q, k, v, window=0):
    """q [T, D], k [T, D], v [T, D] for one head: row i attends to columns j <= i."""
    t, d = q.shape
    out = torch.zeros_like(q)
    for i in range(t):
        lo = 0 if window == 0 else max(0, i - window + 1)
        scores = torch.stack([q[i] @ k[j] for j in range(lo, i + 1)]) / math.sqrt(d)
        w = torch.softmax(scores, 0)
        out[i] = sum(w[j - lo] * v[j] for j in range(lo, i + 1))
    return out


def gpt2_logits(c, p, ids):
    h, nh = c["n_embd"], c["n_head"]
    hd = h // nh
    out = []
    for row in ids:
        t = len(row)
        x = p["wte.weight"][row] + p["wpe.weight"][:t]
        for i in range(c["n_layer"]):
            n = f"h.{i}."
            a = layer_norm(x, p[n + "ln_1.weight"], p[n + "ln_1.bias"], c["layer_norm_epsilon"])
            qkv = a @ p[n + "attn.c_attn.weight"] + p[n + "attn.c_attn.bias"]
            q, k, v = qkv[:, :h], qkv[:, h:2 * h], qkv[:, 2 * h:]
            heads = [causal_attention(q[:, j * hd:(j + 1) * hd], k[:, j * hd:(j + 1) * hd],
                                      v[:, j * hd:(j + 1) * hd]) for j in range(nh)]
            x = x + torch.cat(heads, 1) @ p[n + "attn.c_proj.weight"] + p[n + "attn.c_proj.bias"]
            m = layer_norm(x, p[n + "ln_2.weight"], p[n + "ln_2.bias"], c["layer_norm_epsilon"])
            x = x + gelu_tanh(m @ p[n + "mlp.c_fc.weight"] + p[n + "mlp.c_fc.bias"]) @ \
                p[n + "mlp.c_proj.weight"] + p[n + "mlp.c_proj.bias"]
        x = layer_norm(x, p["ln_f.weight"], p["ln_f.bias"], c["layer_norm_epsilon"])
        out.append(x @ p["wte.weight"].T)
    return torch.stack(out)


def rope_frequencies(c):
    hd = c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]
    freqs = []
    for i in range(hd // 2):
        f = c.get("rope_theta", 10000.0) ** (-2 * i / hd)
        s = c.get("rope_scaling")
        if s and s["rope_type"] == "llama3":
            wavelen = 2 * math.pi / f
            orig = s["original_max_position_embeddings"]
            if wavelen > orig / s["low_freq_factor"]:
                f = f / s["factor"]
            elif wavelen >= orig / s["high_freq_factor"]:
                smooth = (orig / wavelen - s["low_freq_factor"]) / (s["high_freq_factor"] - s["low_freq_factor"])
                f = (1 - smooth) * f / s["factor"] + smooth * f
        freqs.append(f)
    return freqs


def rotate(x, freqs):
    """Rotates each (i, i + half) pair of x [T, D] by position * frequency i."""
    t, d = x.shape
    half = d // 2
    out = x.clone()
    for pos in range(t):
        for i, f in enumerate(freqs):
            a, b = x[pos, i], x[pos, i + half]
            cos, sin = math.cos(pos * f), math.sin(pos * f)
            out[pos, i] = a * cos - b * sin
            out[pos, i + half] = b * cos + a * sin
    return out


def llama_logits(c, p, ids, qwen=False):
    nh, nkv = c["num_attention_heads"], c.get("num_key_value_heads", c["num_attention_heads"])
    hd = c.get("head_dim") or c["hidden_size"] // nh
    eps = c["rms_norm_eps"]
    freqs = rope_frequencies(c)
    bias = qwen or c.get("attention_bias", False)
    # Mistral's blocks each attend within its sliding window (Qwen2's only where it says so).
    window = (c.get("sliding_window") or 0) if c["model_type"] == "mistral" else 0
    # Qwen3 normalises each head's query and key (RMS over the head's dimensions) before rotating.
    qk_norm = c["model_type"] == "qwen3"

    def lin(x, name, has_bias):
        y = x @ p[name + ".weight"].T
        return y + p[name + ".bias"] if has_bias else y

    out = []
    for row in ids:
        x = p["model.embed_tokens.weight"][row]
        for i in range(c["num_hidden_layers"]):
            n = f"model.layers.{i}."
            r = rms_norm(x, p[n + "input_layernorm.weight"], eps)
            q = lin(r, n + "self_attn.q_proj", bias)
            k = lin(r, n + "self_attn.k_proj", bias)
            v = lin(r, n + "self_attn.v_proj", bias)
            heads = []
            for j in range(nh):
                g = j // (nh // nkv)  # the key/value head this query head shares
                qh, kh = q[:, j * hd:(j + 1) * hd], k[:, g * hd:(g + 1) * hd]
                if qk_norm:
                    qh = rms_norm(qh, p[n + "self_attn.q_norm.weight"], eps)
                    kh = rms_norm(kh, p[n + "self_attn.k_norm.weight"], eps)
                heads.append(causal_attention(rotate(qh, freqs), rotate(kh, freqs),
                                              v[:, g * hd:(g + 1) * hd], window))
            x = x + lin(torch.cat(heads, 1), n + "self_attn.o_proj", c.get("attention_bias", False))
            r2 = rms_norm(x, p[n + "post_attention_layernorm.weight"], eps)
            gate = lin(r2, n + "mlp.gate_proj", False)
            x = x + lin(gate * torch.sigmoid(gate) * lin(r2, n + "mlp.up_proj", False), n + "mlp.down_proj", False)
        x = rms_norm(x, p["model.norm.weight"], eps)
        head = p["model.embed_tokens.weight"] if c.get("tie_word_embeddings") else p["lm_head.weight"]
        out.append(x @ head.T)
    return torch.stack(out)


def randn(gen, *shape, scale=0.3):
    return torch.randn(*shape, generator=gen, dtype=torch.float64) * scale


def gpt2_model(gen):
    c = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": 50,
         "n_positions": 16, "n_embd": 32, "n_layer": 2, "n_head": 4, "n_inner": None,
         "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5, "torch_dtype": "float32",
         "bos_token_id": 49, "eos_token_id": 49}
    h, f = 32, 128
    p = {"wte.weight": randn(gen, 50, h), "wpe.weight": randn(gen, 16, h),
         "ln_f.weight": 1 + randn(gen, h, scale=0.1), "ln_f.bias": randn(gen, h, scale=0.1)}
    for i in range(2):
        n = f"h.{i}."
        p.update({n + "ln_1.weight": 1 + randn(gen, h, scale=0.1), n + "ln_1.bias": randn(gen, h, scale=0.1),
                  n + "attn.c_attn.weight": randn(gen, h, 3 * h, scale=0.2), n + "attn.c_attn.bias": randn(gen, 3 * h, scale=0.1),
                  n + "attn.c_proj.weight": randn(gen, h, h, scale=0.2), n + "attn.c_proj.bias": randn(gen, h, scale=0.1),
                  n + "ln_2.weight": 1 + randn(gen, h, scale=0.1), n + "ln_2.bias": randn(gen, h, scale=0.1),
                  n + "mlp.c_fc.weight": randn(gen, h, f, scale=0.2), n + "mlp.c_fc.bias": randn(gen, f, scale=0.1),
                  n + "mlp.c_proj.weight": randn(gen, f, h, scale=0.1), n + "mlp.c_proj.bias": randn(gen, h, scale=0.1)})
    # As GPT2Model saves them: no "transformer." prefix, and the causal masks as buffers.
    stored = dict(p)
    stored["h.0.attn.bias"] = torch.tril(torch.ones(16, 16)).view(1, 1, 16, 16)
    return c, p, stored


def llama_model(gen, kind):
    c = {"model_type": kind, "architectures": [{"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM",
                                                "mistral": "MistralForCausalLM",
                                                "qwen3": "Qwen3ForCausalLM"}[kind]],
         "vocab_size": 64, "hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 2,
         "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64,
         "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "hidden_act": "silu", "torch_dtype": "float32",
         "tie_word_embeddings": False, "bos_token_id": 1, "eos_token_id": [2, 3]}
    if kind == "llama":
        c["rope_theta"] = 500000.0
        c["rope_scaling"] = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                             "high_freq_factor": 4.0, "original_max_position_embeddings": 256}
        c["head_dim"] = 8
    if kind == "qwen2":
        c.update({"num_key_value_heads": 1, "tie_word_embeddings": True, "rms_norm_eps": 1e-6,
                  "use_sliding_window": False, "sliding_window": 4})
    if kind == "mistral":  # a window shorter than the 12 tokens the logits are checked on
        c.update({"sliding_window": 5, "num_key_value_heads": 4})
    if kind == "qwen3":  # heads wider than hidden / heads, tied, q/k norms, no biases
        c.update({"head_dim": 16, "tie_word_embeddings": True, "rope_theta": 1000000.0})
    h, f = 32, 48
    nkv = c["num_key_value_heads"]
    hd = c.get("head_dim", 8)
    p = {"model.embed_tokens.weight": randn(gen, 64, h), "model.norm.weight": 1 + randn(gen, h, scale=0.1)}
    if not c["tie_word_embeddings"]:
        p["lm_head.weight"] = randn(gen, 64, h, scale=0.2)
    for i in range(2):
        n = f"model.layers.{i}."
        p.update({n + "input_layernorm.weight": 1 + randn(gen, h, scale=0.1),
                  n + "self_attn.q_proj.weight": randn(gen, 4 * hd, h, scale=0.2),
                  n + "self_attn.k_proj.weight": randn(gen, nkv * hd, h, scale=0.2),
                  n + "self_attn.v_proj.weight": randn(gen, nkv * hd, h, scale=0.2),
                  n + "self_attn.o_proj.weight": randn(gen, h, 4 * hd, scale=0.2),
                  n + "post_attention_layernorm.weight": 1 + randn(gen, h, scale=0.1),
                  n + "mlp.gate_proj.weight": randn(gen, f, h, scale=0.2),
                  n + "mlp.up_proj.weight": randn(gen, f, h, scale=0.2),
                  n + "mlp.down_proj.weight": randn(gen, h, f, scale=0.2)})
        if kind == "qwen2":
            for proj, size in (("q", 4 * hd), ("k", nkv * hd), ("v", nkv * hd)):
                p[n + f"self_attn.{proj}_proj.bias"] = randn(gen, size, scale=0.1)
        if kind == "qwen3":
            p[n + "self_attn.q_norm.weight"] = 1 + randn(gen, hd, scale=0.3)
            p[n + "self_attn.k_norm.weight"] = 1 + randn(gen, hd, scale=0.3)
    stored = dict(p)
    if kind == "llama":
        stored["model.layers.0.self_attn.rotary_emb.inv_freq"] = torch.zeros(4)
    return c, p, stored


def main():
    out = sys.argv[1]
    gen = torch.Generator().manual_seed(7)
    ids = torch.randint(0, 50, (2, 12), generator=gen)
    expected = {"input_ids": ids}
    for kind in ("gpt2", "llama", "qwen2", "mistral", "qwen3"):
        if kind == "gpt2":
            c, p, stored = gpt2_model(gen)
            logits = gpt2_logits(c, p, ids)
        else:
            c, p, stored = llama_model(gen, kind)
            logits = llama_logits(c, p, ids, qwen=kind == "qwen2")
        folder = os.path.join(out, kind)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump(c, f, indent=2)
        stored = {k: v.to(torch.float32) if v.is_floating_point() else v for k, v in stored.items()}
        if kind == "llama":  # two shards and their index, as large checkpoints come
            names = sorted(stored)
            shards = {"model-00001-of-00002.safetensors": names[::2],
                      "model-00002-of-00002.safetensors": names[1::2]}
            weight_map = {}
            for shard, part in shards.items():
                write_safetensors(os.path.join(folder, shard), {n: stored[n] for n in part})
                weight_map.update({n: shard for n in part})
            with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
                json.dump({"metadata": {}, "weight_map": weight_map}, f)
        else:
            write_safetensors(os.path.join(folder, "model.safetensors"), stored)
        expected[kind] = logits.to(torch.float32)
    write_safetensors(os.path.join(out, "expected.safetensors"), expected)


if __name__ == "__main__":
    main()
