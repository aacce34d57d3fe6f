"""Loads Tandem's exports in PyTorch and scores them on the dataset's test split.

  check_export.py --out RUN_DIR --model mlp|mnist-cnn|resnet8 --data-dir DIR [--limit-test N]
                  [--expect-accuracy X] [--tolerance T]

model.pt is loaded with torch.jit.load. model.safetensors is parsed by the format's own rules
(8-byte little-endian header length, JSON header, raw little-endian data) and loaded with
load_state_dict(strict=True) into the torch.nn definition of the same network, which proves
the keys and shapes match. Prints one JSON line; exits 1 when an accuracy is off.
"""
import argparse, gzip, json, os, struct, sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def read_idx(path):
    opener = gzip.open if path.endswith('.gz') else open
    with opener(path, 'rb') as f:
        data = f.read()
    ndim = data[3]
    dims = struct.unpack('>' + 'I' * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, np.uint8, offset=4 + 4 * ndim).reshape(dims)


def find(dirname, stem):
    for suffix in ('.gz', ''):
        p = os.path.join(dirname, stem + suffix)
        if os.path.exists(p):
            return p
    raise FileNotFoundError(os.path.join(dirname, stem))


def load_test(data_dir, limit):
    x = read_idx(find(data_dir, 't10k-images-idx3-ubyte'))
    y = read_idx(find(data_dir, 't10k-labels-idx1-ubyte'))
    if limit:
        x, y = x[:limit], y[:limit]
    # Tandem feeds images as float in [0, 1], NCHW, with no normalisation.
    return torch.from_numpy(x.copy()).float().div(255).unsqueeze(1), torch.from_numpy(y.copy()).long()


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 256)
        self.fc2 = nn.Linear(256, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(torch.flatten(x, 1))))


class MnistCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3)
        self.conv2 = nn.Conv2d(32, 64, 3)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc2(F.relu(self.fc1(torch.flatten(x, 1))))


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.project = stride != 1 or cin != cout
        if self.project:
            self.shortcut_conv = nn.Conv2d(cin, cout, 1, stride, 0, bias=False)
            self.shortcut_bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        s = self.shortcut_bn(self.shortcut_conv(x)) if self.project else x
        return F.relu(y + s)


class ResNet8(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.layer1 = Block(16, 16, 1)
        self.layer2 = Block(16, 32, 2)
        self.layer3 = Block(32, 64, 2)
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.layer3(self.layer2(self.layer1(x)))
        return self.fc(torch.mean(x, [2, 3]))


NETS = {'mlp': Mlp, 'mnist-cnn': MnistCnn, 'resnet8': ResNet8}
DTYPES = {'F32': torch.float32, 'F64': torch.float64, 'F16': torch.float16, 'BF16': torch.bfloat16,
          'I64': torch.int64, 'I32': torch.int32, 'U8': torch.uint8, 'BOOL': torch.bool}


def read_safetensors(path):
    with open(path, 'rb') as f:
        blob = f.read()
    (n,) = struct.unpack('<Q', blob[:8])
    header = json.loads(blob[8:8 + n])
    data = blob[8 + n:]
    out = {}
    for name, meta in header.items():
        if name == '__metadata__':
            continue
        begin, end = meta['data_offsets']
        t = torch.frombuffer(bytearray(data[begin:end]), dtype=DTYPES[meta['dtype']])
        out[name] = t.reshape(meta['shape']).clone()
    return out


@torch.no_grad()
def accuracy(model, x, y):
    model.eval()
    correct = 0
    for i in range(0, len(x), 1000):
        correct += (model(x[i:i + 1000]).argmax(1) == y[i:i + 1000]).sum().item()
    return correct / len(x)


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--out', required=True)
    p.add_argument('--model', required=True, choices=sorted(NETS))
    p.add_argument('--data-dir', required=True)
    p.add_argument('--limit-test', type=int, default=0)
    p.add_argument('--expect-accuracy', type=float)
    p.add_argument('--tolerance', type=float, default=0.005)
    a = p.parse_args()
    torch.set_num_threads(max(1, os.cpu_count() or 1))

    x, y = load_test(a.data_dir, a.limit_test)
    scripted = torch.jit.load(os.path.join(a.out, 'model.pt'))
    names = [n for n, _ in scripted.named_parameters()]
    acc_ts = accuracy(scripted, x, y)

    net = NETS[a.model]()
    state = read_safetensors(os.path.join(a.out, 'model.safetensors'))
    net.load_state_dict(state, strict=True)
    acc_st = accuracy(net, x, y)

    expected_names = [n for n, _ in net.named_parameters()]
    result = {'torchscript_accuracy': acc_ts, 'safetensors_accuracy': acc_st,
              'parameter_names_match': names == expected_names, 'torch_version': torch.__version__}
    print(json.dumps(result))
    ok = names == expected_names
    if a.expect_accuracy is not None:
        ok = ok and abs(acc_ts - a.expect_accuracy) <= a.tolerance
        ok = ok and abs(acc_st - a.expect_accuracy) <= a.tolerance
    sys.exit(0 if ok else 1)


if __name__ == '__main__':
    main()
