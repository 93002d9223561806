#!/usr/bin/python3
"""How good the matmul config chooser's pick is, by the ISA-level model.

tessel-select-config ranks configs with the analytical form of the model
(include/tessel/Perf/MatmulEstimate.h); the ISA-level model judges the code
a config compiles to. For each problem this runs tessel-tune over the
analytical top candidates (--top) and prints the chooser's pick (the
analytical #1) next to the best compiled candidate: their configs, the
ISA-level model's structural efficiency and the best one's analytical rank.
The gap is what the analytical form costs; a best candidate ranked low
shows where its ranking is off (docs/performance-model.md, "The analytical
form"). Prints a Markdown table.

    bench/chooser_check.py [--bin-dir BUILD/bin] [--top 16]
"""
import argparse
import json
import os
import re
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import gemm_targets  # noqa: E402
import perf_vs_mca  # noqa: E402

# The GEMM speed targets (bench/gemm_targets.py) and smaller grids.
PROBLEMS = gemm_targets.TARGETS + [
    ("gfx942", 2048, 2048, 2048, "bf16", "NT"),
    ("gfx942", 1024, 1024, 1024, "bf16", "NT"),
    ("gfx950", 8192, 8192, 8192, "bf16", "NT"),
    ("gfx950", 2048, 2048, 2048, "bf16", "NT"),
    ("gfx950", 4096, 14336, 4096, "bf16", "NT"),
    ("gfx90a", 4096, 4096, 4096, "f16", "NT"),
]


def short(config):
    """tile, waves, instruction and grid form of a config, compactly."""
    tile = re.search(r"tile = \[(.*?)\]", config).group(1).replace(", ", "x")
    waves = re.search(r"waves = \[(.*?)\]", config).group(1).replace(", ", "x")
    instr = re.search(r'instr = "v_mfma_\w+?_(\d+x\d+x\d+)', config).group(1)
    grid = re.search(r"(stream_k|splits) = (\d+)", config)
    return "%s on %s, %s%s" % (tile, waves, instr,
                               ", %s %s" % grid.groups() if grid else "")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin-dir", default=os.path.join(
        os.path.dirname(here), "build", "bin"))
    parser.add_argument("--top", type=int, default=16)
    options = parser.parse_args()
    tool = lambda name: os.path.join(options.bin_dir, name)  # noqa: E731
    print("| chip | problem | chooser's pick | structural | best of %d "
          "compiled | structural | its analytical rank |" % options.top)
    print("|---|---|---|---|---|---|---|")
    for chip, m, n, k, dtype, layout in PROBLEMS:
        ir = perf_vs_mca.run(
            gemm_targets.generator_args(tool, m, n, k, dtype, layout))
        [tuned] = json.loads(perf_vs_mca.run(
            [tool("tessel-tune"), "--chip=" + chip, "--top=%d" % options.top,
             "--format=json", "-"], ir))
        trials = [t for t in tuned["trials"] if "structural_efficiency" in t]
        pick = next(t for t in trials if t["analytical_rank"] == 1)
        best = max(trials, key=lambda t: t["structural_efficiency"])
        print("| %s | %s %dx%dx%d %s | %s | %.1f %% | %s | %.1f %% | #%d |" % (
            chip, dtype, m, n, k, layout, short(pick["config"]),
            100 * pick["structural_efficiency"], short(best["config"]),
            100 * best["structural_efficiency"], best["analytical_rank"]))


if __name__ == "__main__":
    main()
