"""Writes NumPy datasets for the objectives' tests: make_arrays.py KIND OUT.npz
  regression   x [2000, 3] float32, y = 2a - b + 0.5c + 1 plus a little noise, float64 [2000]
  multilabel   x [2000, 4] float32, y [2000, 3] bool: whether each of the first three is > 0.5"""
import sys

import numpy as np

rng = np.random.default_rng(5)
kind, out = sys.argv[1], sys.argv[2]
if kind == "regression":
    x = rng.random((2000, 3)).astype(np.float32)
    y = 2 * x[:, 0] - x[:, 1] + 0.5 * x[:, 2] + 1 + (rng.random(2000) - 0.5) * 0.05
    np.savez_compressed(out, x_train=x[:1600], y_train=y[:1600], x_test=x[1600:], y_test=y[1600:])
elif kind == "multilabel":
    x = rng.random((2000, 4)).astype(np.float32)
    np.savez(out, x_train=x, y_train=x[:, :3] > 0.5)
else:
    raise SystemExit(f"unknown kind {kind}")
