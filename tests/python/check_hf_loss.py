"""The mean cross-entropy per token of a Hugging Face folder on a token file's windows, computed
from the published equations in float64 (make_hf.py's references), with no code of Tandem's:
what Tandem reports as a run's test loss, checked from the folder it exported.

    check_hf_loss.py DIR TOKENS CONTEXT      prints the loss
    check_hf_loss.py DIR TOKENS CONTEXT --wrong FAMILY
                                             then, a line each, "NAME LOSS": the loss of the
                                             same weights under each config of make_hf.py's
                                             WRONG_CHANGES[FAMILY], which gets one of the
                                             family's own features wrong

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


def main():
    folder, tokens, context = sys.argv[1], sys.argv[2], int(sys.argv[3])
    wrong = sys.argv[5] if len(sys.argv) > 5 and sys.argv[4] == "--wrong" else None
    with open(os.path.join(folder, "config.json")) as f:
        c = json.load(f)
    p = {k: v.to(torch.float64) for k, v in read_safetensors(os.path.join(folder, "model.safetensors")).items()}
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
