"""Writes small Hugging Face model folders (config.json and safetensors weights, written
here byte by byte) with random weights, and the logits each should give for a batch of token
ids, computed from the published equations in float64 with per-head and per-pair loops. The
engine's own transformer must match these; nothing here shares code with it.

    make_hf.py OUT_DIR        writes OUT_DIR/{gpt2,llama,qwen2,mistral,qwen3,gemma3,phi3,smollm3,
                              olmo2,granite}/ and expected.safetensors
    make_hf.py --family NAME DIR [VOCAB [SEED]]
                              writes one folder of FAMILY_CONFIGS (float32; vocabulary 64
                              unless VOCAB), for the end-to-end tests

expected.safetensors holds each family's logits for input_ids, Phi-3's for their first 6 tokens
too ("phi3/short": LongRoPE's short factors), and, as "FAMILY/WRONG", the logits the same
weights give under a config that gets one of the family's own features wrong (WRONG_CHANGES in
this file): a check that matches the family must differ from each of those.
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


def read_safetensors(path):
    """A safetensors file's tensors by name, in their stored dtype."""
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    by_name = {v: k for k, v in DTYPES.items()}
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        a, b = meta["data_offsets"]
        out[name] = torch.frombuffer(bytearray(raw[8 + n + a:8 + n + b]),
                                     dtype=by_name[meta["dtype"]]).reshape(meta["shape"])
    return out


def layer_norm(x, w, b, eps):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * w + b


def rms_norm(x, w, eps):
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * w


def gelu_tanh(x):
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def causal_attention(q, k, v, window=0, scale=None, softcap=0):
    """q [T, D], k [T, D], v [T, D] for one head: row i attends to columns j <= i (and, with a
    window, j > i - window); scores scaled by `scale` (1/sqrt(D) unless given) and capped as
    softcap * tanh(score / softcap) where a soft cap is given."""
    t, d = q.shape
    scale = 1 / math.sqrt(d) if scale is None else scale
    out = torch.zeros_like(q)
    for i in range(t):
        lo = 0 if window == 0 else max(0, i - window + 1)
        scores = torch.stack([q[i] @ k[j] for j in range(lo, i + 1)]) * scale
        if softcap:
            scores = softcap * torch.tanh(scores / softcap)
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


def rope_frequencies(c, theta=None, scaling="config", dims=None, length=0):
    """The rotary frequencies of a head's `dims` rotating dimensions, and the factor cos and sin
    are scaled by: the config's rope_theta and rope_scaling unless `theta` and `scaling` say
    otherwise (Gemma 3's local layers: their own base, no scaling). LongRoPE takes its long
    factors where the pass reaches past original_max_position_embeddings (`length`)."""
    hd = c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]
    dims = dims or hd
    theta = c.get("rope_theta", 10000.0) if theta is None else theta
    s = c.get("rope_scaling") if scaling == "config" else scaling
    kind = s and (s.get("rope_type") or s.get("type"))
    attention = 1.0
    if kind == "longrope":
        orig = s.get("original_max_position_embeddings") or c["original_max_position_embeddings"]
        factors = s["long_factor"] if length > orig else s["short_factor"]
        factor = s.get("factor") or c["max_position_embeddings"] / orig
        attention = s.get("attention_factor") or (
            1.0 if factor <= 1 else math.sqrt(1 + math.log(factor) / math.log(orig)))
    freqs = []
    for i in range(dims // 2):
        f = theta ** (-2 * i / dims)
        if kind == "llama3":
            wavelen = 2 * math.pi / f
            orig = s["original_max_position_embeddings"]
            if wavelen > orig / s["low_freq_factor"]:
                f = f / s["factor"]
            elif wavelen >= orig / s["high_freq_factor"]:
                smooth = (orig / wavelen - s["low_freq_factor"]) / (s["high_freq_factor"] - s["low_freq_factor"])
                f = (1 - smooth) * f / s["factor"] + smooth * f
        elif kind == "linear":
            f = f / s["factor"]
        elif kind == "longrope":
            f = f / factors[i]
        freqs.append(f)
    return freqs, attention


def rotate(x, freqs, attention=1.0):
    """Rotates each (i, i + half) pair of x's first 2·len(freqs) columns (x [T, D]) by
    position * frequency i, scaled by `attention`; the columns after them pass unchanged."""
    t, d = x.shape
    half = len(freqs)
    out = x.clone()
    for pos in range(t):
        for i, f in enumerate(freqs):
            a, b = x[pos, i], x[pos, i + half]
            cos, sin = math.cos(pos * f) * attention, math.sin(pos * f) * attention
            out[pos, i] = a * cos - b * sin
            out[pos, i + half] = b * cos + a * sin
    return out


def one_plus_rms_norm(x, w, eps):
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * (1 + w)


def sliding_layers(c):
    """Which layers attend within the sliding window, as each family's config says."""
    n, kind = c["num_hidden_layers"], c["model_type"]
    if c.get("layer_types"):
        return [t == "sliding_attention" for t in c["layer_types"]]
    if kind == "mistral" or kind == "phi3":
        return [bool(c.get("sliding_window"))] * n
    if kind == "gemma3_text":
        pattern = c.get("sliding_window_pattern", 6)
        return [(i + 1) % pattern != 0 for i in range(n)]
    if kind in ("qwen2", "qwen3") and c.get("use_sliding_window"):
        return [i >= c.get("max_window_layers", 28) for i in range(n)]
    return [False] * n


def llama_logits(c, p, ids, qwen=False):
    """Llama and the families built from it, each where it departs: Qwen2's q/k/v biases,
    Mistral's sliding window, Qwen3's per-head q/k norms, Gemma 3 (four (1 + w) norms a layer,
    per-head q/k norms, GeGLU, scaled embeddings and scores, local and global layers with their
    own rotary bases, soft caps), Phi-3 (fused projections, partial rotary, LongRoPE), SmolLM3
    (layers without rotary positions), OLMo 2 (norms after attention and the MLP, q/k norms over
    the whole projection) and Granite (its four multipliers)."""
    kind = c["model_type"]
    nh, nkv = c["num_attention_heads"], c.get("num_key_value_heads", c["num_attention_heads"])
    h = c["hidden_size"]
    hd = c.get("head_dim") or h // nh
    eps = c["rms_norm_eps"]
    gemma, phi3, olmo2, granite = (kind == "gemma3_text", kind == "phi3", kind == "olmo2",
                                   kind == "granite")
    bias = qwen or kind == "qwen2" or c.get("attention_bias", False)
    sliding = sliding_layers(c)
    window = c.get("sliding_window") or 0
    rotary = int(hd * c.get("partial_rotary_factor", 1.0))
    if kind == "smollm3":
        no_rope = c.get("no_rope_layers") or [int((i + 1) % c.get("no_rope_layer_interval", 4) != 0)
                                             for i in range(c["num_hidden_layers"])]
        uses_rope = [bool(r) for r in no_rope]
    else:
        uses_rope = [True] * c["num_hidden_layers"]
    scale = None
    if gemma:
        scale = c.get("query_pre_attn_scalar", 256) ** -0.5
    elif granite:
        scale = c.get("attention_multiplier", 1.0)
    residual = c.get("residual_multiplier", 1.0) if granite else 1.0
    norm = one_plus_rms_norm if gemma else rms_norm
    act = gelu_tanh if gemma else (lambda g: g * torch.sigmoid(g))

    def lin(x, name, has_bias):
        y = x @ p[name + ".weight"].T
        return y + p[name + ".bias"] if has_bias else y

    out = []
    for row in ids:
        t = len(row)
        full = rope_frequencies(c, theta=c.get("rope_theta", 1000000.0 if gemma else 10000.0),
                                dims=rotary, length=t)
        local = rope_frequencies(c, theta=c.get("rope_local_base_freq", 10000.0), scaling=None,
                                 dims=rotary, length=t) if gemma else full
        x = p["model.embed_tokens.weight"][row]
        if gemma:
            x = x * math.sqrt(h)
        if granite:
            x = x * c.get("embedding_multiplier", 1.0)
        for i in range(c["num_hidden_layers"]):
            n = f"model.layers.{i}."
            r = x if olmo2 else norm(x, p[n + "input_layernorm.weight"], eps)
            if phi3:
                qkv = lin(r, n + "self_attn.qkv_proj", False)
                q, k, v = qkv[:, :nh * hd], qkv[:, nh * hd:(nh + nkv) * hd], qkv[:, (nh + nkv) * hd:]
            else:
                q = lin(r, n + "self_attn.q_proj", bias)
                k = lin(r, n + "self_attn.k_proj", bias)
                v = lin(r, n + "self_attn.v_proj", bias)
            if olmo2 and not c.get("_no_qk_norm"):  # over the whole projection, before the split
                q = rms_norm(q, p[n + "self_attn.q_norm.weight"], eps)
                k = rms_norm(k, p[n + "self_attn.k_norm.weight"], eps)
            freqs, attention = local if gemma and sliding[i] else full
            heads = []
            for j in range(nh):
                g = j // (nh // nkv)  # the key/value head this query head shares
                qh, kh = q[:, j * hd:(j + 1) * hd], k[:, g * hd:(g + 1) * hd]
                if kind in ("qwen3", "gemma3_text") and not c.get("_no_qk_norm"):  # each head's own
                    qh = norm(qh, p[n + "self_attn.q_norm.weight"], eps)
                    kh = norm(kh, p[n + "self_attn.k_norm.weight"], eps)
                if uses_rope[i]:
                    qh, kh = rotate(qh, freqs, attention), rotate(kh, freqs, attention)
                heads.append(causal_attention(qh, kh, v[:, g * hd:(g + 1) * hd],
                                              window if sliding[i] else 0, scale,
                                              c.get("attn_logit_softcapping") or 0))
            a = lin(torch.cat(heads, 1), n + "self_attn.o_proj", c.get("attention_bias", False))
            if gemma or olmo2:
                a = norm(a, p[n + "post_attention_layernorm.weight"], eps)
            x = x + a * residual
            if gemma:
                r2 = norm(x, p[n + "pre_feedforward_layernorm.weight"], eps)
            elif olmo2:
                r2 = x
            else:
                r2 = norm(x, p[n + "post_attention_layernorm.weight"], eps)
            if phi3:
                gate, up = lin(r2, n + "mlp.gate_up_proj", False).chunk(2, -1)
            else:
                gate, up = lin(r2, n + "mlp.gate_proj", False), lin(r2, n + "mlp.up_proj", False)
            m = lin(act(gate) * up, n + "mlp.down_proj", False)
            if gemma or olmo2:
                m = norm(m, p[n + "post_feedforward_layernorm.weight"], eps)
            x = x + m * residual
        x = norm(x, p["model.norm.weight"], eps)
        head = p["model.embed_tokens.weight"] if c.get("tie_word_embeddings") else p["lm_head.weight"]
        logits = x @ head.T
        if granite:
            logits = logits / c.get("logits_scaling", 1.0)
        if c.get("final_logit_softcapping"):
            cap = c["final_logit_softcapping"]
            logits = cap * torch.tanh(logits / cap)
        out.append(logits)
    return torch.stack(out)


def randn(gen, *shape, scale=0.3):
    return torch.randn(*shape, generator=gen, dtype=torch.float64) * scale


def gpt2_model(gen, vocab=50, positions=16):
    c = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": vocab,
         "n_positions": positions, "n_embd": 32, "n_layer": 2, "n_head": 4, "n_inner": None,
         "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5, "torch_dtype": "float32",
         "bos_token_id": vocab - 1, "eos_token_id": vocab - 1}
    h, f = 32, 128
    p = {"wte.weight": randn(gen, vocab, h), "wpe.weight": randn(gen, positions, h),
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
    stored["h.0.attn.bias"] = torch.tril(torch.ones(positions, positions)).view(1, 1, positions, positions)
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


# The new families' small models: each config sets what the family does differently, at sizes
# where it matters for 12 tokens (windows shorter than them, LongRoPE's original context too).
FAMILY_CONFIGS = {
    # Gemma 3: heads wider than hidden / heads, a scores scale of its own, layers sliding, full,
    # sliding (pattern 2) with the local layers on their own base and the global ones scaled,
    # both soft caps.
    "gemma3": {"model_type": "gemma3_text", "architectures": ["Gemma3ForCausalLM"],
               "head_dim": 16, "num_hidden_layers": 3, "query_pre_attn_scalar": 64,
               "sliding_window": 4, "sliding_window_pattern": 2, "rope_theta": 1000000.0,
               "rope_scaling": {"rope_type": "linear", "factor": 2.0},
               "rope_local_base_freq": 100.0, "hidden_activation": "gelu_pytorch_tanh",
               "attn_logit_softcapping": 2.5, "final_logit_softcapping": 3.0,
               "tie_word_embeddings": True, "rms_norm_eps": 1e-6},
    # Phi-3: half of each head rotates, LongRoPE from an original context of 8 (the 12 tokens
    # take the long factors, 6 the short ones), a sliding window.
    "phi3": {"model_type": "phi3", "architectures": ["Phi3ForCausalLM"],
             "partial_rotary_factor": 0.5, "original_max_position_embeddings": 8,
             "rope_scaling": {"type": "longrope", "short_factor": [1.0, 1.5],
                              "long_factor": [2.0, 4.0]},
             "sliding_window": 5, "rms_norm_eps": 1e-5},
    # Phi-4-mini: Phi-3's layout with three quarters of each head rotating (LongRoPE over the
    # three pairs that rotate), tied embeddings and no sliding window.
    "phi4-mini": {"model_type": "phi3", "architectures": ["Phi3ForCausalLM"],
                  "partial_rotary_factor": 0.75, "original_max_position_embeddings": 8,
                  "rope_scaling": {"type": "longrope", "short_factor": [1.0, 1.5, 1.25],
                                   "long_factor": [2.0, 4.0, 3.0]},
                  "sliding_window": None, "tie_word_embeddings": True, "rms_norm_eps": 1e-5},
    # SmolLM3: the second layer takes no rotary positions.
    "smollm3": {"model_type": "smollm3", "architectures": ["SmolLM3ForCausalLM"],
                "no_rope_layers": [1, 0], "rope_theta": 2000000.0, "tie_word_embeddings": True,
                "rms_norm_eps": 1e-6},
    # OLMo 2: norms after attention and the MLP, q/k norms over the whole projection.
    "olmo2": {"model_type": "olmo2", "architectures": ["Olmo2ForCausalLM"], "rms_norm_eps": 1e-6},
    # Qwen3: per-head q/k norms, heads wider than hidden / heads (the end-to-end tests' folder;
    # make_hf.py OUT_DIR writes llama_model's).
    "qwen3": {"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"], "head_dim": 16,
              "tie_word_embeddings": True, "rms_norm_eps": 1e-6},
    # Llama 3: its frequency scaling, every branch of it (the first frequency's wavelength lies
    # between the high and low limits, the others past the low one); for the GGUF export's
    # rope_freqs tensor.
    "llama": {"model_type": "llama", "architectures": ["LlamaForCausalLM"],
              "rope_theta": 500000.0, "tie_word_embeddings": True,
              "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                               "high_freq_factor": 4.0, "original_max_position_embeddings": 16}},
    # SmolLM3 with four blocks, the fourth without rotary positions: the layout llama.cpp's
    # smollm3 architecture reads (every fourth block without them).
    "smollm3-4": {"model_type": "smollm3", "architectures": ["SmolLM3ForCausalLM"],
                  "num_hidden_layers": 4, "no_rope_layers": [1, 1, 1, 0],
                  "rope_theta": 2000000.0, "tie_word_embeddings": True, "rms_norm_eps": 1e-6},
    # Qwen2: biases on q, k and v.
    "qwen2": {"model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"],
              "rope_theta": 1000000.0, "tie_word_embeddings": True, "rms_norm_eps": 1e-6},
    # Granite: its four multipliers.
    "granite": {"model_type": "granite", "architectures": ["GraniteForCausalLM"],
                "embedding_multiplier": 3.0, "attention_multiplier": 0.2,
                "residual_multiplier": 0.5, "logits_scaling": 2.0},
}

# What a reference that misses each family's own features would compute instead.
WRONG_CHANGES = {
    "gemma3": {"window": {"sliding_window": 6}, "pattern": {"sliding_window_pattern": 3},
               "local base": {"rope_local_base_freq": 1000000.0},
               "scalar": {"query_pre_attn_scalar": 16}, "qk norm": {"_no_qk_norm": True}},
    "phi3": {"partial rotary": {"partial_rotary_factor": 1.0,
                                "rope_scaling": {"type": "longrope",
                                                 "short_factor": [1.0, 1.5, 1.0, 1.0],
                                                 "long_factor": [2.0, 4.0, 1.0, 1.0]}},
             "long factor": {"rope_scaling": {"type": "longrope", "short_factor": [1.0, 1.5],
                                              "long_factor": [4.0, 4.0]}},
             "short factors past the context": {
                 "rope_scaling": {"type": "longrope", "short_factor": [1.0, 1.5],
                                  "long_factor": [1.0, 1.5]}},
             "attention factor": {"rope_scaling": {"type": "longrope", "short_factor": [1.0, 1.5],
                                                   "long_factor": [2.0, 4.0],
                                                   "attention_factor": 1.0}},
             "window": {"sliding_window": 0}},
    "smollm3": {"rope everywhere": {"no_rope_layers": [1, 1]}},
    "qwen3": {"qk norm": {"_no_qk_norm": True}},
    "olmo2": {"qk norm": {"_no_qk_norm": True}},
    "granite": {"residual": {"residual_multiplier": 1.0}, "scores": {"attention_multiplier": 0.125}},
}


def family_model(gen, folder, vocab=64, wide=False):
    """The family's tiny folder; `wide`: rows of 256 and 512 values (hidden 256, heads of 64,
    an MLP of 512, four blocks), wide enough for ggml's 256-value k-quant blocks, its matrices
    drawn as for training from scratch."""
    c = {"vocab_size": vocab, "hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 2,
         "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64,
         "rms_norm_eps": 1e-5, "hidden_act": "silu", "torch_dtype": "float32",
         "tie_word_embeddings": False, "bos_token_id": 1, "eos_token_id": 2}
    c.update(FAMILY_CONFIGS[folder])
    if wide:
        c.update({"hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 4,
                  "head_dim": 64})
    kind = c["model_type"]
    h, f, nh, nkv = c["hidden_size"], c["intermediate_size"], 4, c["num_key_value_heads"]
    hd = c.get("head_dim", 8)
    # Gemma's norms hold w of (1 + w), near zero; the others' hold w itself, near one.
    centre = 0.0 if kind == "gemma3_text" else 1.0
    p = {"model.embed_tokens.weight": randn(gen, vocab, h),
         "model.norm.weight": centre + randn(gen, h, scale=0.1)}
    if not c["tie_word_embeddings"]:
        p["lm_head.weight"] = randn(gen, vocab, h, scale=0.2)
    for i in range(c["num_hidden_layers"]):
        n = f"model.layers.{i}."
        norms = {"gemma3_text": ["input_layernorm", "post_attention_layernorm",
                                 "pre_feedforward_layernorm", "post_feedforward_layernorm"],
                 "olmo2": ["post_attention_layernorm", "post_feedforward_layernorm"]}.get(
                     kind, ["input_layernorm", "post_attention_layernorm"])
        for norm in norms:
            p[n + norm + ".weight"] = centre + randn(gen, h, scale=0.1)
        if kind == "phi3":
            p[n + "self_attn.qkv_proj.weight"] = randn(gen, (nh + 2 * nkv) * hd, h, scale=0.2)
            p[n + "mlp.gate_up_proj.weight"] = randn(gen, 2 * f, h, scale=0.2)
        else:
            p[n + "self_attn.q_proj.weight"] = randn(gen, nh * hd, h, scale=0.2)
            p[n + "self_attn.k_proj.weight"] = randn(gen, nkv * hd, h, scale=0.2)
            p[n + "self_attn.v_proj.weight"] = randn(gen, nkv * hd, h, scale=0.2)
            p[n + "mlp.gate_proj.weight"] = randn(gen, f, h, scale=0.2)
            p[n + "mlp.up_proj.weight"] = randn(gen, f, h, scale=0.2)
        p[n + "self_attn.o_proj.weight"] = randn(gen, h, nh * hd, scale=0.2)
        p[n + "mlp.down_proj.weight"] = randn(gen, h, f, scale=0.2)
        if kind == "qwen2":
            p[n + "self_attn.q_proj.bias"] = randn(gen, nh * hd, scale=0.2)
            p[n + "self_attn.k_proj.bias"] = randn(gen, nkv * hd, scale=0.2)
            p[n + "self_attn.v_proj.bias"] = randn(gen, nkv * hd, scale=0.2)
        if kind == "qwen3":
            p[n + "self_attn.q_norm.weight"] = 1 + randn(gen, hd, scale=0.3)
            p[n + "self_attn.k_norm.weight"] = 1 + randn(gen, hd, scale=0.3)
        if kind == "gemma3_text":
            p[n + "self_attn.q_norm.weight"] = randn(gen, hd, scale=0.3)
            p[n + "self_attn.k_norm.weight"] = randn(gen, hd, scale=0.3)
        if kind == "olmo2":
            p[n + "self_attn.q_norm.weight"] = 1 + randn(gen, nh * hd, scale=0.3)
            p[n + "self_attn.k_norm.weight"] = 1 + randn(gen, nkv * hd, scale=0.3)
    if wide:  # initialised as Hugging Face initialises a model to train: matrices N(0, 0.02)
        p = {k: v * (0.02 / v.std()) if v.dim() == 2 else v for k, v in p.items()}
    return c, p


def write_family(name, folder, vocab, seed, wide=False):
    if name == "gpt2":  # GPT2LMHeadModel's names, positions for a real context
        c, p, _ = gpt2_model(torch.Generator().manual_seed(seed), vocab, 1024)
        p = {"transformer." + k: v for k, v in p.items()}
    else:
        c, p = family_model(torch.Generator().manual_seed(seed), name, vocab, wide)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(c, f, indent=2)
    write_safetensors(os.path.join(folder, "model.safetensors"),
                      {k: v.to(torch.float32) for k, v in p.items()})


def main():
    if sys.argv[1] == "--family":
        write_family(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 64,
                     int(sys.argv[5]) if len(sys.argv) > 5 else 1,
                     len(sys.argv) > 6 and sys.argv[6] == "wide")
        return
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
    for folder in FAMILY_CONFIGS:
        # Written above by llama_model, or only for --family (the GGUF checks' folders).
        if folder in expected or folder not in WRONG_CHANGES:
            continue
        c, p = family_model(gen, folder)
        path = os.path.join(out, folder)
        os.makedirs(path, exist_ok=True)
        with open(os.path.join(path, "config.json"), "w") as f:
            json.dump(c, f, indent=2)
        write_safetensors(os.path.join(path, "model.safetensors"),
                          {k: v.to(torch.float32) for k, v in p.items()})
        expected[folder] = llama_logits(c, p, ids).to(torch.float32)
        if folder == "phi3":
            expected["phi3/short"] = llama_logits(c, p, ids[:, :6]).to(torch.float32)
        for wrong, change in WRONG_CHANGES[folder].items():
            expected[folder + "/" + wrong] = llama_logits(dict(c, **change), p, ids).to(torch.float32)
    write_safetensors(os.path.join(out, "expected.safetensors"), expected)


if __name__ == "__main__":
    main()
