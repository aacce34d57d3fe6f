"""Scripts a network of torchvision (Debian's python3-torchvision) for Fashion-MNIST: the
28x28 grey image is resized to SIZE x SIZE and repeated over three channels in the module
itself, then the unchanged torchvision network (10 classes) follows. Run with Debian's Python:

    /usr/bin/python3 bench/make_torchvision.py NAME OUT.pt [SIZE]

NAME: squeezenet1_1, mobilenet_v2, mobilenet_v3_small, shufflenet_v2_x0_5, resnet18, ...
"""
import sys

import torch
import torch.nn.functional as F
import torchvision


class Grey(torch.nn.Module):
    def __init__(self, net, size):
        super().__init__()
        self.net = net
        self.size = size

    def forward(self, x):
        x = F.interpolate(x, size=[self.size, self.size], mode="bilinear", align_corners=False)
        return self.net(x.expand(-1, 3, -1, -1))


name, out = sys.argv[1], sys.argv[2]
size = int(sys.argv[3]) if len(sys.argv) > 3 else 64
torch.manual_seed(0)
net = getattr(torchvision.models, name)(num_classes=10)
torch.jit.script(Grey(net, size)).save(out)
print(f"{name}: {sum(p.numel() for p in net.parameters())} parameters, input {size}x{size}")
