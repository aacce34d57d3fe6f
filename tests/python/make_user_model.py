"""Writes a user-style TorchScript model (BatchNorm and Dropout included) with torch.jit.script,
as a Tandem user would: make_user_model.py OUT.pt"""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class UserNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.drop = nn.Dropout(0.25)
        self.head = nn.Linear(8 * 14 * 14, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        return self.head(self.drop(torch.flatten(x, 1)))


torch.manual_seed(0)
torch.jit.script(UserNet()).save(sys.argv[1])
