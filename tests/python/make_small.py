"""Writes small TorchScript models for the objectives' tests: make_small.py KIND OUT.pt
  linear IN OUT    a linear layer: regression, or multi-label logits
  backbone         a frozen 'pretrained' MLP body with a trainable head, 784 -> 10"""
import sys

import torch
import torch.nn as nn

torch.manual_seed(0)
kind, out = sys.argv[1], sys.argv[2]
if kind == "linear":
    model = nn.Sequential(nn.Linear(int(sys.argv[3]), int(sys.argv[4])))
elif kind == "backbone":
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 64), nn.ReLU(), nn.Linear(64, 10))
    for p in model[1].parameters():
        p.requires_grad_(False)
else:
    raise SystemExit(f"unknown kind {kind}")
torch.jit.script(model).save(out)
