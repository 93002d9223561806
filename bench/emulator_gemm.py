#!/usr/bin/python3
"""Emulator speed benchmark: a 256x256x256 f16 GEMM-sized MFMA kernel
(emulator_gemm_f16.mlir: 64 workgroups of one wave, 2048 wave-level
v_mfma_f32_32x32x8_f16) run through tessel-run on the emulator.

Prints the median wall time of the whole tessel-run process (parse, lower,
JIT, run, write back) and of the run alone over --repeat runs, checks the
result against numpy, and exits non-zero when the median wall time is over
--budget seconds (10 s by default, the target on the 2-core development
machine).

usage: bench/emulator_gemm.py [--tessel-run build/bin/tessel-run]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--tessel-run",
                    default=os.path.join(here, "..", "build", "bin", "tessel-run"))
parser.add_argument("--size", type=int, default=256)
parser.add_argument("--repeat", type=int, default=5)
parser.add_argument("--chip", default="gfx942")
parser.add_argument("--budget", type=float, default=10.0)
args = parser.parse_args()

n = args.size
rng = np.random.default_rng(0)
a = rng.integers(-3, 4, (n, n)).astype(np.float16)
bt = rng.integers(-3, 4, (n, n)).astype(np.float16)
with tempfile.TemporaryDirectory() as work:
    paths = [os.path.join(work, name) for name in ("a.npy", "bt.npy", "c.npy")]
    np.save(paths[0], a)
    np.save(paths[1], bt)
    np.save(paths[2], np.zeros((n, n), np.float32))
    command = [args.tessel_run, os.path.join(here, "emulator_gemm_f16.mlir"),
               "--kernel", "gemm_f16", "--chip", args.chip,
               "--grid", "%d,%d" % (n // 32, n // 32),
               "--out-dir", os.path.join(work, "out")]
    for path in paths:
        command += ["--arg", path]
    walls, runs = [], []
    for _ in range(args.repeat):
        start = time.perf_counter()
        output = subprocess.run(command, check=True, capture_output=True,
                                text=True).stdout
        walls.append(time.perf_counter() - start)
        runs.append(float(re.search(r"run ([0-9.]+) ms", output).group(1)))
    c = np.load(os.path.join(work, "out", "arg2.npy"))
error = np.abs(c - a.astype(np.float64) @ bt.astype(np.float64).T).max()
print(output.strip())
print("emulated %dx%dx%d f16 GEMM (%d MFMAs) on %s: median wall %.2f s, "
      "median run %.0f ms over %d runs, max abs error %g, %d cores"
      % (n, n, n, (n // 32) ** 2 * (n // 8), args.chip, statistics.median(walls),
         statistics.median(runs), args.repeat, error, os.cpu_count()))
if error != 0:
    sys.exit("FAIL: the result differs from numpy")
if statistics.median(walls) > args.budget:
    sys.exit("FAIL: over the %.0f s budget" % args.budget)
