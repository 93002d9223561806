#!/usr/bin/python3
"""The GEMM speed targets, measured on the emitted code (docs/performance.md).

For each target problem: the config tessel-select-config chooses, the waves
that share a SIMD (occupancy from the code object), llvm-mca's matrix
density of the K loop (matrix-only clocks over loop clocks, the lowest of
the kernel's innermost loops), the model's structural efficiency, and the
scratch bytes. Prints a Markdown table.

    bench/gemm_targets.py [--bin-dir BUILD/bin]
"""
import argparse
import json
import os
import re
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import perf_vs_mca  # noqa: E402

# chip, M, N, K, element type, B stored N x K ("NT") or K x N ("NN"); the
# 8-bit float rows are scaled GEMMs (torch._scaled_mm: row-wise A and
# column-wise B scales, bf16 output).
SCALED = ["--scale-a", "row", "--scale-b", "column", "--out-type", "bf16"]
TARGETS = [
    ("gfx942", 4096, 4096, 4096, "bf16", "NT"),
    ("gfx942", 4096, 4096, 4096, "bf16", "NN"),
    ("gfx942", 8192, 8192, 8192, "bf16", "NT"),
    ("gfx942", 8192, 8192, 8192, "bf16", "NN"),
    ("gfx942", 4096, 14336, 4096, "bf16", "NT"),
    ("gfx942", 4096, 14336, 4096, "bf16", "NN"),
    ("gfx942", 4096, 4096, 4096, "f16", "NT"),
    ("gfx942", 4096, 4096, 4096, "f8E4M3FNUZ", "NT"),
    ("gfx950", 4096, 4096, 4096, "bf16", "NT"),
    ("gfx950", 4096, 4096, 4096, "bf16", "NN"),
    ("gfx950", 4096, 4096, 4096, "f8E4M3FN", "NT"),
]


def generator_args(tool, m, n, k, dtype, layout):
    """tessel-gen's arguments for one problem of the TARGETS form."""
    args = [tool("tessel-gen"), "matmul", "-m", str(m), "-n", str(n),
            "-k", str(k), "-t", dtype]
    if layout == "NT":
        args.append("--transpose-b")
    if dtype.startswith("f8"):
        args += SCALED
    return args


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin-dir", default=os.path.join(
        os.path.dirname(here), "build", "bin"))
    options = parser.parse_args()
    tool = lambda name: os.path.join(options.bin_dir, name)  # noqa: E731
    print("| chip | problem | config | waves per SIMD | llvm-mca matrix "
          "density | target | structural efficiency (model) | scratch |")
    print("|---|---|---|---|---|---|---|---|")
    for chip, m, n, k, dtype, layout in TARGETS:
        ir = perf_vs_mca.run(generator_args(tool, m, n, k, dtype, layout))
        tesselc = [tool("tesselc"), "--chip=" + chip]
        isa = perf_vs_mca.run(tesselc + ["--emit=isa", "-"], ir)
        [perf] = json.loads(perf_vs_mca.run(
            tesselc + ["--emit=perf", "--report-format=json", "-"], ir))
        report = perf_vs_mca.run(tesselc + ["--emit=report", "-"], ir)
        waves = int(re.search(r"occupancy\s+(\d+) waves/SIMD", report)
                    .group(1))
        scratch = int(re.search(r"scratch bytes\s+(\d+)", report).group(1))
        config = re.search(r"config = #tessel\.config<(.*?)>", perf_vs_mca.run(
            [tool("tessel-opt"), "--pass-pipeline=builtin.module(func.func("
             "tessel-select-config{chip=%s}))" % chip], ir)).group(1)
        densities = [perf_vs_mca.matrix_density(chip, body) for _, body in
                     perf_vs_mca.innermost_loops(perf_vs_mca.kernel_assembly(
                         isa, perf["kernel"]))]
        density = min(d for d in densities if d > 0)
        # One wave per SIMD carries the loop: 90 %; two share it: 75 %.
        target = 90.0 if waves == 1 else 75.0
        problem = dtype + (" scaled" if dtype.startswith("f8") else "")
        print("| %s | %s %dx%dx%d %s | %s | %d | %.1f %% | >= %.0f %% %s | "
              "%.1f %% | %d |" % (
                  chip, problem, m, n, k, layout, config.replace('"', ""),
                  waves, 100 * density, target,
                  "met" if 100 * density >= target else "**not met**",
                  100 * perf["structural_efficiency"], scratch))


if __name__ == "__main__":
    main()
