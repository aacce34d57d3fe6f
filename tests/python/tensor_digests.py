"""Prints the SHA-256 of each parameter's bytes (float32, little-endian, row-major), one
"NAME DIGEST" a line, as they are in a TorchScript file: tensor_digests.py MODEL.pt"""
import hashlib
import sys

import torch

model = torch.jit.load(sys.argv[1])
for name, p in model.named_parameters():
    data = p.detach().contiguous().to(torch.float32).numpy().tobytes()
    print(name, hashlib.sha256(data).hexdigest())
