"""The reference for bench/lm.sh: the plain PyTorch loop a user writes to train a byte-level
language model from a TorchScript file: torch.jit.load, torch.optim.Adam, windows of CONTEXT + 1
bytes from the first nine tenths of TEXT (as Tandem's text: data cuts them), drawn without
replacement, cross-entropy over the last dimension. Prints tokens/s over the training loop only
(loading and warm-up excluded). Run with Debian's Python:

    /usr/bin/python3 bench/python_lm_loop.py MODEL.pt TEXT CONTEXT STEPS THREADS [BATCH]
"""
import json
import sys
import time

import torch
import torch.nn.functional as F

path, text, context, steps, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), \
    int(sys.argv[4]), int(sys.argv[5])
batch = int(sys.argv[6]) if len(sys.argv) > 6 else 32
torch.set_num_threads(threads)
torch.manual_seed(0)
data = open(text, "rb").read()
data = torch.tensor(list(data[: len(data) - len(data) // 10]), dtype=torch.long)
windows = (len(data) - 1) // context
starts = torch.arange(windows) * context
model = torch.jit.load(path)
model.train()
opt = torch.optim.Adam(model.parameters(), lr=0.001)
order = torch.randperm(windows)
offsets = torch.arange(context + 1)


def step(i):
    at = (i * batch) % max(1, windows - batch)
    rows = data[(starts[order[at:at + batch]].unsqueeze(1) + offsets)]
    x, y = rows[:, :-1], rows[:, 1:]
    out = model(x)
    loss = F.cross_entropy(out.reshape(-1, out.size(-1)), y.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


for i in range(3):  # warm-up: the TorchScript profiling executor settles here
    step(i)
start = time.perf_counter()
for i in range(steps):
    loss = step(i)
loss.item()
elapsed = time.perf_counter() - start
print(json.dumps({"tokens_per_s": round(steps * batch * context / elapsed, 1), "steps": steps,
                  "threads": threads, "loss": round(loss.item(), 4)}))
