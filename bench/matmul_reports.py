#!/usr/bin/python3
"""Resource reports of the default matmul kernels for a table of shapes, and
what a simple roofline model predicts limits each one.

For each shape the kernel is generated (tessel-gen), configured
(tessel-opt --tessel-select-config) and compiled to a code object (tesselc);
the registers, LDS, scratch and occupancy come from the code object's
metadata. The limits columns are a *model prediction* (peak rates and
bandwidth of docs/hardware.md §2), not a measurement: no AMD GPU is
attached to the development machine.

usage: bench/matmul_reports.py [--chip gfx942] [--type bf16] > table.md
"""
import argparse
import json
import math
import os
import re
import subprocess

here = os.path.dirname(os.path.abspath(__file__))
bin_dir = os.path.join(here, "..", "build", "bin")
parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--chip", default="gfx942")
parser.add_argument("--type", default="bf16")
args = parser.parse_args()

# Peak dense rate (TFLOP/s), bandwidth (TB/s) and CUs, docs/hardware.md §2.
CHIPS = {"gfx942": (1307.4, 5.3, 304), "gfx950": (2516.6, 8.0, 256),
         "gfx90a": (191.5, 1.6, 110)}
BYTES = {"bf16": 2, "f16": 2, "f32": 4, "fp8": 1, "i8": 1}
SHAPES = [(1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096),
          (8192, 8192, 8192), (65536, 128, 4096), (16, 4096, 4096),
          (4096, 14336, 4096)]


def tool(name, *argv, stdin=None):
    return subprocess.run([os.path.join(bin_dir, name), *argv], input=stdin,
                          check=True, capture_output=True, text=True).stdout


peak, bandwidth, cus = CHIPS[args.chip]
size = BYTES[args.type]
print("| M x N x K | config (tile, waves, instr) | VGPRs | LDS | scratch | "
      "occupancy (limit) | workgroups | FLOP/byte | model: bound by |")
print("|---|---|---|---|---|---|---|---|---|")
for m, n, k in SHAPES:
    l0 = tool("tessel-gen", "matmul", "-m", str(m), "-n", str(n), "-k", str(k),
              "-t", args.type, "--transpose-b")
    configured = tool("tessel-opt", "--pass-pipeline=builtin.module(func.func("
                      "tessel-select-config{chip=%s}))" % args.chip, stdin=l0)
    config = re.search(r"#tessel.config<tile = \[(\d+), (\d+), (\d+)\], "
                       r"waves = \[(\d+), (\d+)\], stages = (\d+), "
                       r"instr = \"(\w+)\">", configured)
    tm, tn, tk, wm, wn = (int(config.group(i)) for i in range(1, 6))
    report = json.loads(tool("tesselc", "--chip=" + args.chip, "--emit=report",
                             "--report-format=json", stdin=configured))
    kernel = report[0]["kernels"][0]
    occupancy = kernel["occupancy"]
    workgroups = math.ceil(m / tm) * math.ceil(n / tn)
    # Global traffic without L2 reuse: A is read once per column of tiles, B
    # once per row of tiles, C written once.
    traffic = (m * k * math.ceil(n / tn) + k * n * math.ceil(m / tm) +
               m * n) * size
    flops = 2 * m * n * k
    intensity = flops / traffic
    # Resident workgroups per CU and how full the last wave of them is.
    waves_per_wg = wm * wn
    resident = max(1, occupancy["waves_per_simd"] * 4 // waves_per_wg)
    slots = cus * resident
    quantization = workgroups / (math.ceil(workgroups / slots) * slots)
    compute_s = flops / (peak * 1e12)
    memory_s = traffic / (bandwidth * 1e12)
    if quantization < 0.5:
        bound = "too few workgroups (%.0f%% of %d slots)" % (
            100 * quantization, slots)
    elif memory_s > compute_s:
        bound = "bandwidth (%.0f%% of peak FLOPs at best)" % (
            100 * compute_s / memory_s)
    else:
        bound = "MFMA rate, occupancy %d waves/SIMD" % occupancy["waves_per_simd"]
    print("| %dx%dx%d | %dx%dx%d, %dx%d, %s | %d | %d KiB | %d | %d/8 (%s) | "
          "%d | %.0f | %s |" % (
              m, n, k, tm, tn, tk, wm, wn, config.group(7),
              kernel["vgpr_count"] + kernel["agpr_count"],
              kernel["lds_bytes"] // 1024, kernel["scratch_bytes"],
              occupancy["waves_per_simd"], occupancy["limited_by"], workgroups,
              intensity, bound))
