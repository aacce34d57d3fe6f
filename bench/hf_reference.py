"""The causal language models Tandem builds natively, written again from the published equations
with torch's own operators and nothing of Tandem's: a stand-in for Hugging Face's transformers
(and PEFT's LoRA) where those are not installed, and the plain PyTorch loop the benchmarks time
Tandem against. Works on torch 1.13 and 2.x, in any dtype (float64 for references).

Families, by config.json's model_type: gpt2; llama, qwen2, mistral and qwen3 (rotary positions
with default, linear or llama3 scaling, RMSNorm, grouped-query attention, SwiGLU; Qwen2's q/k/v
biases; a sliding window; Qwen3's per-head RMS norms of q and k before the rotation).

    import hf_reference as ref
    cfg, params = ref.load_folder(DIR, dtype=torch.float64)
    logits = ref.logits(cfg, params, ids)                       # [B, T, V]
    model = ref.CausalLM(cfg, params, lora=ref.Lora(8, 16, ["q_proj", "v_proj"]))  # trainable
"""
import json
import math
import os
import struct

import torch
import torch.nn.functional as F
import torch.utils.checkpoint

DTYPES = {"F32": torch.float32, "F64": torch.float64, "F16": torch.float16, "BF16": torch.bfloat16,
          "I64": torch.int64, "I32": torch.int32}
NAMES = {v: k for k, v in DTYPES.items()}


# ---- safetensors, byte by byte ----------------------------------------------------------------

def read_safetensors(path, dtype=None):
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        a, b = meta["data_offsets"]
        t = torch.frombuffer(bytearray(data[a:b]), dtype=DTYPES[meta["dtype"]]) if b > a else \
            torch.zeros(0, dtype=DTYPES[meta["dtype"]])
        t = t.reshape(meta["shape"])
        out[name] = t.to(dtype) if dtype is not None and t.is_floating_point() else t
    return out


def write_safetensors(path, tensors, metadata=None):
    header, blobs, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    for name, t in tensors.items():
        t = t.detach().cpu().contiguous()
        data = t.view(torch.int16).numpy().tobytes() if t.dtype == torch.bfloat16 else t.numpy().tobytes()
        header[name] = {"dtype": NAMES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw + b"".join(blobs))


def load_folder(folder, dtype=None):
    """config.json and every tensor of the folder (one file or the index's shards)."""
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    single = os.path.join(folder, "model.safetensors")
    params = {}
    if os.path.exists(single):
        params = read_safetensors(single, dtype)
    else:
        with open(os.path.join(folder, "model.safetensors.index.json")) as f:
            for shard in sorted(set(json.load(f)["weight_map"].values())):
                params.update(read_safetensors(os.path.join(folder, shard), dtype))
    if cfg["model_type"] == "gpt2":  # GPT2Model's own checkpoints lack the prefix
        params = {k if k.startswith("transformer.") or k == "lm_head.weight" else "transformer." + k: v
                  for k, v in params.items()}
    return cfg, params


# ---- the figures a config gives -----------------------------------------------------------------

def dims(c):
    """The config's figures under one set of names, for either family and either form of
    transformers' configs (4.x: rope_theta and rope_scaling; 5.x: rope_parameters)."""
    if c["model_type"] == "gpt2":
        h = c.get("n_embd", c.get("hidden_size"))
        nh = c.get("n_head", c.get("num_attention_heads"))
        return {"gpt2": True, "hidden": h, "layers": c.get("n_layer", c.get("num_hidden_layers")),
                "heads": nh, "kv": nh, "head_dim": h // nh, "inter": c.get("n_inner") or 4 * h,
                "vocab": c["vocab_size"], "positions": c.get("n_positions", c.get("max_position_embeddings")),
                "eps": c.get("layer_norm_epsilon", 1e-5), "tied": True,
                "act": c.get("activation_function", "gelu_new")}
    nh = c["num_attention_heads"]
    rope = dict(c.get("rope_parameters") or {})
    scaling = c.get("rope_scaling") or {}
    if scaling and not rope:
        rope = dict(scaling)
    rope.setdefault("rope_theta", c.get("rope_theta", 10000.0))
    rope.setdefault("rope_type", rope.get("type", "default"))
    kind = c["model_type"]
    if kind not in ("llama", "qwen2", "mistral", "qwen3"):
        raise ValueError("model_type %s is not in this reference" % kind)
    layers = c["num_hidden_layers"]
    window, sliding = 0, [False] * layers
    if kind == "mistral" or c.get("use_sliding_window"):
        window = c.get("sliding_window") or 0
        if c.get("layer_types"):
            sliding = [t == "sliding_attention" for t in c["layer_types"]]
        elif kind == "mistral":
            sliding = [True] * layers
        else:  # Qwen2 and Qwen3: the layers from max_window_layers on
            sliding = [i >= c.get("max_window_layers", 28) for i in range(layers)]
    return {"gpt2": False, "hidden": c["hidden_size"], "layers": c["num_hidden_layers"], "heads": nh,
            "kv": c.get("num_key_value_heads") or nh,
            "head_dim": c.get("head_dim") or (128 if kind == "qwen3" else c["hidden_size"] // nh),
            "inter": c["intermediate_size"], "vocab": c["vocab_size"],
            "eps": c.get("rms_norm_eps", 1e-6), "tied": c.get("tie_word_embeddings", kind == "qwen2"),
            "qkv_bias": kind == "qwen2" or c.get("attention_bias", False),
            "o_bias": c.get("attention_bias", False), "mlp_bias": c.get("mlp_bias", False),
            "qk_norm": kind == "qwen3", "rope": rope, "window": window, "sliding": sliding,
            "act": c.get("hidden_act", "silu")}


def tensor_shapes(c):
    """Every tensor the config calls for, by its Hugging Face name."""
    d = dims(c)
    h, f, v = d["hidden"], d["inter"], d["vocab"]
    s = {}
    if d["gpt2"]:
        s["transformer.wte.weight"] = (v, h)
        s["transformer.wpe.weight"] = (d["positions"], h)
        for i in range(d["layers"]):
            n = f"transformer.h.{i}."
            s.update({n + "ln_1.weight": (h,), n + "ln_1.bias": (h,),
                      n + "attn.c_attn.weight": (h, 3 * h), n + "attn.c_attn.bias": (3 * h,),
                      n + "attn.c_proj.weight": (h, h), n + "attn.c_proj.bias": (h,),
                      n + "ln_2.weight": (h,), n + "ln_2.bias": (h,),
                      n + "mlp.c_fc.weight": (h, f), n + "mlp.c_fc.bias": (f,),
                      n + "mlp.c_proj.weight": (f, h), n + "mlp.c_proj.bias": (h,)})
        s["transformer.ln_f.weight"] = (h,)
        s["transformer.ln_f.bias"] = (h,)
        return s
    q, kv = d["heads"] * d["head_dim"], d["kv"] * d["head_dim"]
    s["model.embed_tokens.weight"] = (v, h)
    for i in range(d["layers"]):
        n = f"model.layers.{i}."
        s[n + "input_layernorm.weight"] = (h,)
        for proj, out in (("q", q), ("k", kv), ("v", kv)):
            s[n + f"self_attn.{proj}_proj.weight"] = (out, h)
            if d["qkv_bias"]:
                s[n + f"self_attn.{proj}_proj.bias"] = (out,)
        s[n + "self_attn.o_proj.weight"] = (h, q)
        if d["o_bias"]:
            s[n + "self_attn.o_proj.bias"] = (h,)
        if d["qk_norm"]:
            s[n + "self_attn.q_norm.weight"] = (d["head_dim"],)
            s[n + "self_attn.k_norm.weight"] = (d["head_dim"],)
        s[n + "post_attention_layernorm.weight"] = (h,)
        for proj, shape in (("gate", (f, h)), ("up", (f, h)), ("down", (h, f))):
            s[n + f"mlp.{proj}_proj.weight"] = shape
            if d["mlp_bias"]:
                s[n + f"mlp.{proj}_proj.bias"] = (shape[0],)
    s["model.norm.weight"] = (h,)
    if not d["tied"]:
        s["lm_head.weight"] = (v, h)
    return s


def random_weights(c, seed=0, dtype=torch.float32, device="cpu", init="checks"):
    """Weights that give activations of order one, so that a wrong equation moves the logits
    far: embeddings N(0, 1), matrices N(0, 1/fan-in), norms 1 + N(0, 0.1), biases N(0, 0.1);
    or with init="training", as transformers initialises a model to train (N(0, 0.02), norms
    at one, biases zero). Drawn in float64 for a float64 model, else in float32 on `device` (a
    GPU draws a billion in a moment), and returned on the CPU."""
    gen = torch.Generator(device=device).manual_seed(seed)
    draw = torch.float64 if dtype == torch.float64 else torch.float32
    out = {}
    for name, shape in tensor_shapes(c).items():
        t = torch.randn(*shape, generator=gen, dtype=draw, device=device)
        if init == "training":
            norm = len(shape) == 1 and ("norm" in name or "ln_" in name)
            t = torch.ones_like(t) if norm else t * (0.0 if len(shape) == 1 else 0.02)
        elif len(shape) == 1:
            t = t * 0.1 + (1.0 if "norm" in name or "ln_" in name else 0.0)
        elif not ("wte" in name or "wpe" in name or "embed" in name):
            t = t / math.sqrt(shape[0] if c["model_type"] == "gpt2" else shape[1])
        out[name] = t.to(dtype).cpu()
    return out


# ---- the equations ------------------------------------------------------------------------------

def rms_norm(x, w, eps):
    f = x.to(torch.float32) if x.dtype in (torch.float16, torch.bfloat16) else x
    normed = f * torch.rsqrt(f.pow(2).mean(-1, keepdim=True) + eps)
    return w * normed.to(x.dtype)


def inv_frequencies(d, device):
    """The rotary inverse frequencies, scaled as the config's rope type says."""
    rope, hd = d["rope"], d["head_dim"]
    base = float(rope["rope_theta"])
    inv = 1.0 / (base ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
    kind = rope["rope_type"]
    if kind == "linear":
        inv = inv / rope["factor"]
    elif kind == "llama3":
        orig, factor = rope["original_max_position_embeddings"], rope["factor"]
        low, high = rope["low_freq_factor"], rope["high_freq_factor"]
        wavelen = 2 * math.pi / inv
        smooth = (orig / wavelen - low) / (high - low)
        scaled = torch.where(wavelen > orig / low, inv / factor, inv)
        mid = (wavelen <= orig / low) & (wavelen >= orig / high)
        inv = torch.where(mid, (1 - smooth) * inv / factor + smooth * inv, scaled)
    elif kind != "default":
        raise ValueError("rope_type %s is not in this reference" % kind)
    return inv.to(device)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), -1)


def attention(q, k, v, window=0):
    """q [B, H, T, D]; k and v [B, H, T, D]; causal, and within `window` tokens when set."""
    t = q.shape[2]
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    pos = torch.arange(t, device=q.device)
    blocked = pos[None, :] > pos[:, None]
    if window:
        blocked = blocked | (pos[None, :] <= pos[:, None] - window)
    scores = scores.masked_fill(blocked, float("-inf"))
    weights = torch.softmax(scores.to(torch.float32) if q.dtype != torch.float64 else scores, -1)
    return weights.to(q.dtype) @ v


class Lora:
    def __init__(self, rank, alpha, targets):
        self.rank, self.alpha, self.targets = rank, alpha, list(targets)

    @property
    def scale(self):
        return self.alpha / self.rank


def adapter_shapes(c, lora):
    """Each adapted module's (A, B) shapes by its name, as PEFT makes them: A [r, in], B [out, r]."""
    out = {}
    gpt2 = c["model_type"] == "gpt2"
    for name, shape in tensor_shapes(c).items():
        if not name.endswith(".weight") or len(shape) != 2:
            continue
        module = name[:-len(".weight")]
        if module.rsplit(".", 1)[-1] not in lora.targets:
            continue
        fan_in, fan_out = (shape[0], shape[1]) if gpt2 else (shape[1], shape[0])
        out[module] = ((lora.rank, fan_in), (fan_out, lora.rank))
    return out


def logits(c, p, ids, adapters=None, scale=1.0, checkpoint=False):
    """Next-token logits [B, T, V] of ids [B, T] (int64), in the weights' dtype. `adapters`
    maps a module name to its (A, B); each adds scale * B A x to that module's output. With
    `checkpoint`, each block keeps only its input and is computed again for the backward pass."""
    d = dims(c)
    adapters = adapters or {}

    def linear(x, module, bias, conv=False):
        w = p[module + ".weight"]
        y = x @ w if conv else x @ w.t()
        if bias:
            y = y + p[module + ".bias"]
        if module in adapters:
            a, b = adapters[module]
            y = y + ((x.to(a.dtype) @ a.t()) @ b.t() * scale).to(y.dtype)
        return y

    b, t = ids.shape
    if d["gpt2"]:
        h, nh, hd = d["hidden"], d["heads"], d["head_dim"]
        x = p["transformer.wte.weight"][ids] + p["transformer.wpe.weight"][:t]
        approximate = d["act"] != "gelu"
        for i in range(d["layers"]):
            n = f"transformer.h.{i}."
            a = F.layer_norm(x, (h,), p[n + "ln_1.weight"], p[n + "ln_1.bias"], d["eps"])
            qkv = linear(a, n + "attn.c_attn", True, conv=True)
            q, k, v = (y.view(b, t, nh, hd).transpose(1, 2) for y in qkv.split(h, -1))
            att = attention(q, k, v).transpose(1, 2).reshape(b, t, h)
            x = x + linear(att, n + "attn.c_proj", True, conv=True)
            m = F.layer_norm(x, (h,), p[n + "ln_2.weight"], p[n + "ln_2.bias"], d["eps"])
            fc = linear(m, n + "mlp.c_fc", True, conv=True)
            fc = 0.5 * fc * (1 + torch.tanh(math.sqrt(2 / math.pi) * (fc + 0.044715 * fc ** 3))) \
                if approximate else F.gelu(fc)
            x = x + linear(fc, n + "mlp.c_proj", True, conv=True)
        x = F.layer_norm(x, (h,), p["transformer.ln_f.weight"], p["transformer.ln_f.bias"], d["eps"])
        return x @ p["transformer.wte.weight"].t()
    nh, nkv, hd = d["heads"], d["kv"], d["head_dim"]
    x = p["model.embed_tokens.weight"][ids]
    inv = inv_frequencies(d, x.device)
    angles = torch.arange(t, dtype=torch.float64, device=x.device)[:, None] * inv[None, :]
    angles = torch.cat((angles, angles), -1)
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)

    def block(i, x):
        n = f"model.layers.{i}."
        r = rms_norm(x, p[n + "input_layernorm.weight"], d["eps"])
        q = linear(r, n + "self_attn.q_proj", d["qkv_bias"]).view(b, t, nh, hd).transpose(1, 2)
        k = linear(r, n + "self_attn.k_proj", d["qkv_bias"]).view(b, t, nkv, hd).transpose(1, 2)
        v = linear(r, n + "self_attn.v_proj", d["qkv_bias"]).view(b, t, nkv, hd).transpose(1, 2)
        if d["qk_norm"]:  # each head's q and k, over the head's dimensions, before rotating
            q = rms_norm(q, p[n + "self_attn.q_norm.weight"], d["eps"])
            k = rms_norm(k, p[n + "self_attn.k_norm.weight"], d["eps"])
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(nh // nkv, 1)
        v = v.repeat_interleave(nh // nkv, 1)
        window = d["window"] if d["sliding"][i] else 0
        att = attention(q, k, v, window).transpose(1, 2).reshape(b, t, nh * hd)
        x = x + linear(att, n + "self_attn.o_proj", d["o_bias"])
        r2 = rms_norm(x, p[n + "post_attention_layernorm.weight"], d["eps"])
        gate = linear(r2, n + "mlp.gate_proj", d["mlp_bias"])
        return x + linear(F.silu(gate) * linear(r2, n + "mlp.up_proj", d["mlp_bias"]),
                          n + "mlp.down_proj", d["mlp_bias"])

    for i in range(d["layers"]):
        if checkpoint and torch.is_grad_enabled():
            x = torch.utils.checkpoint.checkpoint(block, i, x, use_reentrant=False)
        else:
            x = block(i, x)
    x = rms_norm(x, p["model.norm.weight"], d["eps"])
    return x @ (p["model.embed_tokens.weight"] if d["tied"] else p["lm_head.weight"]).t()


class CausalLM(torch.nn.Module):
    """The equations above as a module that trains: every weight, or with `lora` only the
    adapters (A drawn as torch.nn.Linear draws a weight, B zero), the base frozen."""

    def __init__(self, cfg, params, lora=None, seed=0, checkpoint=False):
        super().__init__()
        self.cfg = cfg
        self.lora = lora
        self.checkpoint = checkpoint
        self.base = torch.nn.ParameterDict({k.replace(".", "__"): torch.nn.Parameter(v, requires_grad=lora is None)
                                            for k, v in params.items()})
        self.adapters = torch.nn.ParameterDict()
        if lora:
            gen = torch.Generator().manual_seed(seed)
            dtype = torch.float32 if not next(iter(params.values())).dtype == torch.float64 else torch.float64
            for module, (a, b) in adapter_shapes(cfg, lora).items():
                bound = 1 / math.sqrt(a[1])
                key = module.replace(".", "__")
                self.adapters[key + "__A"] = torch.nn.Parameter(
                    (torch.rand(*a, generator=gen, dtype=torch.float64) * 2 - 1).mul(bound).to(dtype))
                self.adapters[key + "__B"] = torch.nn.Parameter(torch.zeros(*b, dtype=dtype))

    def forward(self, ids):
        p = {k.replace("__", "."): v for k, v in self.base.items()}
        adapters = {}
        for key in self.adapters:
            if key.endswith("__A"):
                module = key[:-3].replace("__", ".")
                adapters[module] = (self.adapters[key], self.adapters[key[:-3] + "__B"])
        return logits(self.cfg, p, ids, adapters, self.lora.scale if self.lora else 1.0,
                      self.checkpoint)
