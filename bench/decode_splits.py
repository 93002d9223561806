#!/usr/bin/env python3
"""The decode split count tessel-select-config chooses (DecodeEstimate)
against the ISA-level model's prediction at 8, 16, 32 and 64 splits.

Grouped-query decodes (32 query heads on 8 key/value heads, D=128, bf16)
at batch 1 and 8, 1 and 8 queries, 4096, 32768 and 131072 keys. Each row
gives the chosen count and its predicted share of the HBM bandwidth (the
problem's bytes over the predicted time, as bench/kpi.py), the best of the
fixed counts, and every fixed count. Predictions, not measurements.

Usage: bench/decode_splits.py [--bin-dir build/bin] [--chips gfx942,gfx950]
       [--smoke]   (batch 1, 8 queries, 32768 keys only: the lit test's form)
"""

import argparse
import json
import os
import re
import subprocess

# Peak DRAM bandwidth, TB/s (docs/hardware.md §2).
BANDWIDTH = {"gfx942": 5.3, "gfx950": 8.0, "gfx90a": 1.6}
FIXED_SPLITS = (8, 16, 32, 64)


def run(argv, stdin=None):
    return subprocess.run(argv, input=stdin, capture_output=True, text=True,
                          check=True).stdout


def share_of_bandwidth(bin_dir, chip, mlir):
    """The problem's bytes over the predicted time of all its kernels, as a
    percentage of the chip's HBM bandwidth."""
    reports = json.loads(run([os.path.join(bin_dir, "tesselc"),
                              "--chip=" + chip, "--emit=perf",
                              "--report-format=json"], mlir))
    seconds = sum(r["predicted_seconds"] + r["launch_gap_seconds"]
                  for r in reports)
    problem_bytes = max(r["problem_bytes"] for r in reports)
    return problem_bytes / seconds / (BANDWIDTH[chip] * 1e12) * 100


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin-dir", default="build/bin")
    parser.add_argument("--chips", default="gfx942,gfx950")
    parser.add_argument("--smoke", action="store_true",
                        help="one problem: batch 1, 8 queries, 32768 keys")
    args = parser.parse_args()
    batches, query_counts, key_counts = (1, 8), (1, 8), (4096, 32768, 131072)
    if args.smoke:
        batches, query_counts, key_counts = (1,), (8,), (32768,)
    print("| chip | batch | queries | keys | chosen | best of 8-64 | "
          "8 / 16 / 32 / 64 splits |")
    print("|---|---|---|---|---|---|---|")
    for chip in args.chips.split(","):
        select = ("--pass-pipeline=builtin.module(func.func("
                  "tessel-select-config{chip=%s}))" % chip)
        for batch in batches:
            for queries in query_counts:
                for keys in key_counts:
                    problem = run([os.path.join(args.bin_dir, "tessel-gen"),
                                   "attention", "-b", str(batch), "-h", "32",
                                   "--kv-heads", "8", "--seq-q", str(queries),
                                   "--seq-kv", str(keys), "-d", "128", "-t",
                                   "bf16"])
                    configured = run([os.path.join(args.bin_dir, "tessel-opt"),
                                      select], problem)
                    chosen = re.search(r"splits = (\d+)", configured)
                    chosen_share = share_of_bandwidth(args.bin_dir, chip,
                                                      configured)
                    fixed = {}
                    if chosen:
                        for splits in FIXED_SPLITS:
                            fixed[splits] = share_of_bandwidth(
                                args.bin_dir, chip,
                                re.sub(r"splits = \d+", "splits = %d" % splits,
                                       configured))
                    best = max(fixed, key=fixed.get) if fixed else None
                    print("| %s | %d | %d | %d | %s: %.1f %% | %s | %s |" % (
                        chip, batch, queries, keys,
                        chosen.group(1) if chosen else "1", chosen_share,
                        "%d: %.1f %%" % (best, fixed[best]) if fixed else "-",
                        " / ".join("%.1f" % fixed[s] for s in FIXED_SPLITS)
                        if fixed else "-"), flush=True)


if __name__ == "__main__":
    main()
