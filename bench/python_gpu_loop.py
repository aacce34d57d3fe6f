"""The reference for bench/gpu.sh: a plain PyTorch eager training loop on one device, as a user
writes it, over the same arrays and model that Tandem trains there. Adam (lr 0.001), random
batches without replacement, cross-entropy, fp32 or bf16 autocast. Prints samples/s over the
timed steps only (data on the device, warm-up excluded), as JSON.

    python3 bench/python_gpu_loop.py DATA.npz mnist-cnn|resnet18 STEPS BATCH fp32|bf16 [DEVICE]

Also writes the inputs bench/gpu.sh gives Tandem:

    python3 bench/python_gpu_loop.py --make DIR     DIR/mnist.npz, DIR/cifar.npz, DIR/resnet18.pt

resnet18 is torchvision's, written out here in torch.nn: the lent machines have PyTorch but not
always torchvision. Where torchvision is installed, `--check-resnet18` loads its resnet18's
weights into this one and compares the two outputs.
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


class BasicBlock(nn.Module):
    """torchvision.models.resnet.BasicBlock, with its parameter names."""

    def __init__(self, inplanes, planes, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride, bias=False),
                                            nn.BatchNorm2d(planes))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class ResNet18(nn.Module):
    """torchvision.models.resnet18(num_classes=10): the same layers, names and initialisation."""

    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        widths, inplanes = (64, 128, 256, 512), 64
        for i, planes in enumerate(widths):
            stride = 1 if i == 0 else 2
            setattr(self, f"layer{i + 1}",
                    nn.Sequential(BasicBlock(inplanes, planes, stride), BasicBlock(planes, planes, 1)))
            inplanes = planes
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def resnet18():
    return ResNet18(num_classes=10)


def check_resnet18():
    """This resnet18 against torchvision's: the same names and shapes, the same outputs."""
    import torchvision

    theirs = torchvision.models.resnet18(num_classes=10).eval()
    ours = resnet18().eval()
    a, b = theirs.state_dict(), ours.state_dict()
    assert [(k, v.shape) for k, v in a.items()] == [(k, v.shape) for k, v in b.items()], \
        "the state dicts differ"
    ours.load_state_dict(a)
    x = torch.randn(4, 3, 32, 32)
    with torch.no_grad():
        diff = (theirs(x) - ours(x)).abs().max().item()
    assert diff < 1e-5, f"outputs differ by {diff}"
    print(json.dumps({"resnet18": "matches torchvision", "tensors": len(a),
                      "max_abs_diff": diff, "torchvision": torchvision.__version__}))


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
    if sys.argv[1] == "--check-resnet18":
        check_resnet18()
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
