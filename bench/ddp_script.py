"""PyTorch DistributedDataParallel (Gloo) over a TorchScript model file, measured the way
../shared/anchors/ddp_fashion_mnist.py measures its CNN: one process per rank, one CPU thread
each, random Fashion-MNIST batches, samples/s over the timed steps printed by rank 0. With the
file bench/hetero.sh trains (MODEL=resnet18.pt from bench/make_resnet18.py), DDP's figure for
the same job goes beside Tandem's. Adam at 0.001, as bench/hetero.sh trains. Run with Debian's
/usr/bin/python3 (python3-torch).

  ddp_script.py MODEL.pt --world 1 --rank 0 --steps 15 --batch 64
  ddp_script.py MODEL.pt --world 2 --rank R --steps 15 --batch 64 --port 29534   (R=0 and R=1)
"""
import argparse
import gzip
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

DATA = os.environ.get('FASHION_MNIST_DIR', '/usr/share/datasets/fashion-mnist')


def load(kind):
    with gzip.open(f'{DATA}/{kind}-images-idx3-ubyte.gz') as f:
        x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 1, 28, 28)
    with gzip.open(f'{DATA}/{kind}-labels-idx1-ubyte.gz') as f:
        y = np.frombuffer(f.read(), np.uint8, offset=8)
    x = torch.from_numpy(x.copy()).float().div(255).sub(0.2860).div(0.3530)
    return x, torch.from_numpy(y.copy()).long()


def main():
    p = argparse.ArgumentParser()
    p.add_argument('model')
    p.add_argument('--world', type=int, default=1)
    p.add_argument('--rank', type=int, default=0)
    p.add_argument('--steps', type=int, default=15)
    p.add_argument('--batch', type=int, default=64)
    p.add_argument('--port', type=int, default=29534)
    p.add_argument('--warmup', type=int, default=3)
    a = p.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    x, y = load('train')
    model = torch.jit.load(a.model)
    model.train()
    if a.world > 1:
        dist.init_process_group('gloo', init_method=f'tcp://127.0.0.1:{a.port}', rank=a.rank,
                                world_size=a.world)
        model = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.Adam(model.parameters(), lr=0.001)
    g = torch.Generator().manual_seed(a.rank)
    for i in range(a.warmup + a.steps):
        if i == a.warmup:
            t0 = time.perf_counter()
        idx = torch.randint(0, len(x), (a.batch,), generator=g)
        loss = F.cross_entropy(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    dt = time.perf_counter() - t0
    if a.rank == 0:
        print(f'samples_per_s={a.world * a.batch * a.steps / dt:.1f} world={a.world} '
              f'batch={a.batch} steps={a.steps} loss={loss.item():.3f}', flush=True)
    if a.world > 1:
        dist.destroy_process_group()


if __name__ == '__main__':
    main()
