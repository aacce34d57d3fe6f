"""The reference for bench/deep_thin.sh: the plain PyTorch training loop over a TorchScript
file, as a user writes it. torch.jit.load, torch.optim.Adam, Fashion-MNIST from Debian's
dataset package, random batches without replacement, cross-entropy. Prints samples/s over the
training loop only (data loading and warm-up excluded). Run with Debian's Python:

    /usr/bin/python3 bench/python_loop.py MODEL.pt STEPS THREADS [BATCH]
"""
import gzip
import json
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

DATA = "/usr/share/datasets/fashion-mnist"


def idx(path, offset):
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)


path, steps, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
batch = int(sys.argv[4]) if len(sys.argv) > 4 else 64
torch.set_num_threads(threads)
torch.manual_seed(0)
images = torch.from_numpy(idx(f"{DATA}/train-images-idx3-ubyte.gz", 16).copy()).view(-1, 1, 28, 28)
labels = torch.from_numpy(idx(f"{DATA}/train-labels-idx1-ubyte.gz", 8).astype(np.int64))
model = torch.jit.load(path)
model.train()
opt = torch.optim.Adam(model.parameters(), lr=0.001)
order = torch.randperm(images.shape[0])


def step(i):
    at = (i * batch) % (images.shape[0] - batch)
    take = order[at:at + batch]
    x = images.index_select(0, take).float().div_(255)
    y = labels.index_select(0, take)
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


for i in range(5):  # warm-up: the TorchScript profiling executor settles here
    step(i)
start = time.perf_counter()
for i in range(steps):
    loss = step(i)
loss.item()
elapsed = time.perf_counter() - start
print(json.dumps({"samples_per_s": round(steps * batch / elapsed, 1), "steps": steps,
                  "threads": threads, "loss": round(loss.item(), 4)}))
