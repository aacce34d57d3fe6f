"""Writes a wide TorchScript MLP for 1x28x28 inputs, 784-4096-1024-10 (7.4 M parameters, 29.7 MB
of fp32 weights), for the test that moves tens of megabytes per step through the real
transport: make_wide_model.py OUT.pt"""
import sys

import torch
import torch.nn as nn


class Wide(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 4096)
        self.fc2 = nn.Linear(4096, 1024)
        self.fc3 = nn.Linear(1024, 10)

    def forward(self, x):
        x = torch.relu(self.fc1(torch.flatten(x, 1)))
        return self.fc3(torch.relu(self.fc2(x)))


torch.manual_seed(0)
torch.jit.script(Wide()).save(sys.argv[1])
