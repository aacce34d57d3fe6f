"""The size of a GGUF export in each quantization for published model shapes, as Tandem would
write it (`tandem export --model hf:DIR --format gguf --sizes`), without writing a weight: each
shape becomes a folder whose model.safetensors has the real header and a sparse, empty data
section, with the family's published tokenizer files beside it.

    python3 bench/gguf_sizes.py TANDEM TOKENIZERS OUT_DIR

TOKENIZERS is build/npm/tokenizers (packaging/quickstart.sh test writes it). Prints one JSON
line per shape: its parameters and the bytes of each quantization.
"""
import json
import os
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_hf_folder import SHAPES  # noqa: E402

# Qwen3-0.6B's, Llama-3.2-1B's and Llama-3.1-8B's shapes, with the tokenizer each one ships.
MODELS = [("Qwen3-0.6B", "qwen3-0.5b", "qwen3"),
          ("Llama-3.2-1B", "llama-1b", "llama3"),
          ("Llama-3.1-8B", "llama-8b", "llama3")]


def tensors(c):
    h, f, v = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    hd = c.get("head_dim", h // c["num_attention_heads"])
    q, kv = c["num_attention_heads"] * hd, c["num_key_value_heads"] * hd
    out = [("model.embed_tokens.weight", [v, h])]
    for i in range(c["num_hidden_layers"]):
        n = f"model.layers.{i}."
        out += [(n + "input_layernorm.weight", [h]), (n + "self_attn.q_proj.weight", [q, h]),
                (n + "self_attn.k_proj.weight", [kv, h]), (n + "self_attn.v_proj.weight", [kv, h]),
                (n + "self_attn.o_proj.weight", [h, q]),
                (n + "post_attention_layernorm.weight", [h]),
                (n + "mlp.gate_proj.weight", [f, h]), (n + "mlp.up_proj.weight", [f, h]),
                (n + "mlp.down_proj.weight", [h, f])]
        if c["model_type"] == "qwen3":
            out += [(n + "self_attn.q_norm.weight", [hd]), (n + "self_attn.k_norm.weight", [hd])]
    out.append(("model.norm.weight", [h]))
    if not c["tie_word_embeddings"]:
        out.append(("lm_head.weight", [v, h]))
    return out


def sparse_folder(folder, c):
    os.makedirs(folder, exist_ok=True)
    c = dict(c, torch_dtype="bfloat16")
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(c, f)
    header, offset, params = {}, 0, 0
    for name, shape in tensors(c):
        n = 1
        for d in shape:
            n *= d
        header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [offset, offset + 2 * n]}
        offset += 2 * n
        params += n
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    with open(os.path.join(folder, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw)
        f.truncate(8 + len(raw) + offset)
    return params


def main():
    tandem, tokenizers, out = sys.argv[1], sys.argv[2], sys.argv[3]
    for title, shape, tokenizer in MODELS:
        folder = os.path.join(out, shape)
        params = sparse_folder(folder, SHAPES[shape])
        for name in ("tokenizer.json", "tokenizer_config.json"):
            shutil.copy(os.path.join(tokenizers, tokenizer, name), folder)
        sizes = subprocess.run([tandem, "export", "--model", "hf:" + folder, "--format", "gguf",
                                "--sizes"], check=True, capture_output=True, text=True).stdout
        print(json.dumps({"model": title, "parameters": params, "bytes": json.loads(sizes)}))
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
