"""Writes a deep, thin TorchScript model for Fashion-MNIST (1x28x28 in, 10 classes out): 26
linear layers of width 64 with ReLU between them, 52 parameter tensors and 0.1 M parameters.
A step on it costs little arithmetic, so what a training loop adds per step shows. Run with
Debian's Python:

    /usr/bin/python3 bench/make_deepthin.py OUT.pt [DEPTH [WIDTH]]

DEPTH 1 is one linear layer (784 to 10): a step of almost no arithmetic, for the fixed cost of
a step (bench/step_cost.sh).
"""
import sys

import torch
import torch.nn as nn


class DeepThin(nn.Module):
    def __init__(self, depth=26, width=64):
        super().__init__()
        sizes = [784] + [width] * (depth - 1) + [10]
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))

    def forward(self, x):
        x = torch.flatten(x, 1)
        n = len(self.layers)
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < n - 1:
                x = torch.relu(x)
        return x


torch.manual_seed(0)
m = DeepThin(*(int(a) for a in sys.argv[2:4]))
print(sum(p.numel() for p in m.parameters()), "parameters in",
      len(list(m.parameters())), "tensors", file=sys.stderr)
torch.jit.script(m).save(sys.argv[1])
