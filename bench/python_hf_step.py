"""The plain PyTorch side of bench_hf_step: the same GPT-2 shape (Conv1D weights [in, out],
LayerNorm, GELU tanh, causal attention, tied output layer) written with torch's own vectorised
operators, random weights, one forward and backward pass per step, timed after a warm-up.
Prints one JSON line like bench_hf_step's.

    /usr/bin/python3 bench/python_hf_step.py [HIDDEN LAYERS CONTEXT BATCH [STEPS]]
"""
import json
import math
import resource
import sys
import time

import torch
import torch.nn.functional as F


def main():
    args = [int(a) for a in sys.argv[1:]]
    hidden, layers, context, batch, steps = (args + [768, 12, 256, 2, 2][len(args):])[:5]
    torch.set_num_threads(2)
    torch.manual_seed(1)
    vocab, heads = 50257, hidden // 64

    def param(*shape):
        return (torch.randn(*shape) * 0.02).requires_grad_()

    wte, wpe = param(vocab, hidden), param(max(context, 1024), hidden)
    blocks = [{name: param(*shape) for name, shape in (
        ("ln1w", (hidden,)), ("ln1b", (hidden,)), ("attnw", (hidden, 3 * hidden)), ("attnb", (3 * hidden,)),
        ("projw", (hidden, hidden)), ("projb", (hidden,)), ("ln2w", (hidden,)), ("ln2b", (hidden,)),
        ("fcw", (hidden, 4 * hidden)), ("fcb", (4 * hidden,)), ("outw", (4 * hidden, hidden)), ("outb", (hidden,)))}
        for _ in range(layers)]
    lnfw, lnfb = param(hidden), param(hidden)
    mask = torch.ones(context, context, dtype=torch.bool).triu(1)

    def forward(ids):
        b, t = ids.shape
        x = wte[ids] + wpe[:t]
        for p in blocks:
            a = F.layer_norm(x, (hidden,), p["ln1w"], p["ln1b"], 1e-5)
            q, k, v = torch.addmm(p["attnb"], a.reshape(b * t, hidden), p["attnw"]).view(b, t, 3 * hidden).split(hidden, -1)
            q, k, v = (y.view(b, t, heads, 64).transpose(1, 2) for y in (q, k, v))
            scores = (q @ k.transpose(-2, -1)) / math.sqrt(64)
            att = torch.softmax(scores.masked_fill(mask[:t, :t], float("-inf")), -1) @ v
            x = x + torch.addmm(p["projb"], att.transpose(1, 2).reshape(b * t, hidden), p["projw"]).view(b, t, hidden)
            m = F.layer_norm(x, (hidden,), p["ln2w"], p["ln2b"], 1e-5).reshape(b * t, hidden)
            inner = F.gelu(torch.addmm(p["fcb"], m, p["fcw"]), approximate="tanh")
            x = x + torch.addmm(p["outb"], inner, p["outw"]).view(b, t, hidden)
        return F.layer_norm(x, (hidden,), lnfw, lnfb, 1e-5) @ wte.t()

    params = [wte, wpe, lnfw, lnfb] + [t for p in blocks for t in p.values()]
    ids = torch.randint(vocab, (batch, context))
    total = 0.0
    for i in range(steps + 1):
        start = time.perf_counter()
        logits = forward(ids)
        F.cross_entropy(logits.reshape(-1, vocab), ids.reshape(-1)).backward()
        for t in params:
            t.grad = None
        if i > 0:
            total += time.perf_counter() - start
    ms = total / steps * 1000
    print(json.dumps({"family": "gpt2", "setting": "python", "parameters": sum(t.numel() for t in params),
                      "hidden": hidden, "layers": layers, "context": context, "batch": batch,
                      "step_ms": round(ms, 1), "tokens_per_s": round(batch * context / (ms / 1000), 1),
                      "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}))


if __name__ == "__main__":
    main()
