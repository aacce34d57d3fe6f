"""Loads an exported byte-level language model (model.pt) in PyTorch and prints its mean loss
per predicted byte over the test windows Tandem evaluated on: check_lm.py MODEL.pt TEXT CONTEXT.
The text's last tenth is the test split; windows of CONTEXT + 1 bytes share their boundary
byte, as in Tandem's text: data."""
import sys

import torch
import torch.nn.functional as F

model = torch.jit.load(sys.argv[1])
model.eval()
data = open(sys.argv[2], "rb").read()
context = int(sys.argv[3])
cut = len(data) - len(data) // 10
test = torch.tensor(list(data[cut:]), dtype=torch.long)
windows = (len(test) - 1) // context
x = torch.stack([test[i * context:(i + 1) * context] for i in range(windows)])
y = torch.stack([test[i * context + 1:(i + 1) * context + 1] for i in range(windows)])
with torch.no_grad():
    out = model(x)
    print(F.cross_entropy(out.reshape(-1, out.size(-1)), y.reshape(-1)).item())
