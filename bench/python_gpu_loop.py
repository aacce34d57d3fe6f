"""The reference for bench/gpu.sh: a plain PyTorch eager training loop on one device, as a user
writes it, over the same arrays and model that Tandem trains there. Adam (lr 0.001), random
batches without replacement, cross-entropy, fp32 or bf16 autocast. Prints samples/s over the
timed steps only (data on the device, warm-up excluded), as JSON.

    python3 bench/python_gpu_loop.py DATA.npz mnist-cnn|resnet18 STEPS BATCH fp32|bf16 [DEVICE]

Also writes the inputs bench/gpu.sh gives Tandem:

    python3 bench/python_gpu_loop.py --make DIR     DIR/mnist.npz, DIR/cifar.npz, DIR/resnet18.pt
"""
import json
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class MnistCnn(nn.Module):
    """pytorch/examples' MNIST network without dropout, as Tandem's built-in mnist-cnn."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return self.fc2(x)


def resnet18():
    import torchvision

    return torchvision.models.resnet18(num_classes=10)


def make(folder):
    rng = np.random.default_rng(0)
    for name, shape in (("mnist", (1, 28, 28)), ("cifar", (3, 32, 32))):
        n, t = 8192, 512
        np.savez(f"{folder}/{name}.npz",
                 x_train=rng.random((n, *shape), dtype=np.float32),
                 y_train=rng.integers(0, 10, n).astype(np.int64),
                 x_test=rng.random((t, *shape), dtype=np.float32),
                 y_test=rng.integers(0, 10, t).astype(np.int64))
    torch.jit.script(resnet18()).save(f"{folder}/resnet18.pt")


def main():
    if sys.argv[1] == "--make":
        make(sys.argv[2])
        return
    path, name, steps, batch, precision = sys.argv[1:6]
    device = torch.device(sys.argv[6] if len(sys.argv) > 6 else "cuda:0")
    steps, batch = int(steps), int(batch)
    torch.manual_seed(0)
    arrays = np.load(path)
    x = torch.from_numpy(arrays["x_train"]).to(device)
    y = torch.from_numpy(arrays["y_train"]).to(device)
    model = (MnistCnn() if name == "mnist-cnn" else resnet18()).to(device)
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=0.001)
    order = torch.randperm(x.shape[0], device=device)

    def step(i):
        at = (i * batch) % (x.shape[0] - batch)
        take = order[at:at + batch]
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=precision == "bf16"):
            loss = F.cross_entropy(model(x.index_select(0, take)), y.index_select(0, take))
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    for i in range(10):
        step(i)
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    for i in range(steps):
        loss = step(i)
    final = loss.item()  # waits for the device
    elapsed = time.perf_counter() - start
    print(json.dumps({"model": name, "precision": precision, "device": str(device),
                      "samples_per_s": round(steps * batch / elapsed, 1), "steps": steps,
                      "batch": batch, "loss": round(final, 4),
                      "torch": torch.__version__}))


if __name__ == "__main__":
    main()
