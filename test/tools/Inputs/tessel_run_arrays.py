#!/usr/bin/env python3
"""Arrays for tessel-run-problems.test, and the exact check of its results.

  tessel_run_arrays.py DIR                          writes the arrays to DIR
  tessel_run_arrays.py DIR check-matmul A B C [ALPHA]
      prints "exact" if C == ALPHA * (A @ B), else the mismatch

Matmul inputs are small integers in f32, so every product and sum is exact
and the kernel's result must equal numpy's bit for bit.
"""
import sys

import numpy as np


def small_integers(rng, shape):
    return rng.integers(-3, 4, shape).astype(np.float32)


def write(directory):
    rng = np.random.default_rng(0)
    arrays = {
        # Dynamic M, N, K: 200 rows, more than --dynamic-size 77 covers.
        "a": small_integers(rng, (200, 8)),
        "b": small_integers(rng, (8, 12)),
        "c": np.zeros((200, 12), np.float32),
        "b9": small_integers(rng, (9, 12)),  # K disagrees with a
        # 30x50 times 50x40 for the transposed operands.
        "at": small_integers(rng, (30, 50)),
        "bt": small_integers(rng, (50, 40)),
        "ct": np.zeros((30, 40), np.float32),
        # Attention with 20 queries over 90 keys.
        "q": rng.uniform(-1, 1, (1, 4, 20, 64)).astype(np.float16),
        "k": rng.uniform(-1, 1, (1, 2, 90, 64)).astype(np.float16),
        "v": rng.uniform(-1, 1, (1, 2, 90, 64)).astype(np.float16),
        "o": np.zeros((1, 4, 20, 64), np.float16),
        "lse": np.zeros((1, 4, 20), np.float32),
        # Decode: 7 queries over 500 keys (split-KV).
        "dq": rng.uniform(-1, 1, (1, 4, 7, 64)).astype(np.float16),
        "dk": rng.uniform(-1, 1, (1, 2, 500, 64)).astype(np.float16),
        "dv": rng.uniform(-1, 1, (1, 2, 500, 64)).astype(np.float16),
        "do": np.zeros((1, 4, 7, 64), np.float16),
        # f16 products around 2^-24: the results are f16 subnormals.
        "ha": (rng.uniform(-1, 1, (32, 16)) * 2**-12).astype(np.float16),
        "hb": (rng.uniform(-1, 1, (16, 16)) * 2**-12).astype(np.float16),
        "hc": np.zeros((32, 16), np.float16),
    }
    for name, array in arrays.items():
        np.save(f"{directory}/{name}.npy", array)


def check_matmul(a, b, c, alpha=1.0):
    expected = np.float32(alpha) * (np.load(a) @ np.load(b))
    got = np.load(c)
    if got.shape == expected.shape and (got == expected).all():
        print("exact")
        return
    rows = int((got != expected).any(axis=-1).sum())
    print(f"mismatch: shape {got.shape} vs {expected.shape}, {rows} rows differ")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[2] == "check-matmul":
        check_matmul(*sys.argv[3:6], *(float(x) for x in sys.argv[6:7]))
    else:
        write(sys.argv[1])
