#!/usr/bin/env python3
"""Random problem sweep: kernels of every family on the emulator.

Draws problems at random from the cross product of what tessel-gen can ask
for (sizes around and past the tiles, element types, layouts, epilogues,
causal masks, windows, sinks, the logsumexp, grouped and mixed head dims,
8-bit inputs, dynamic sizes, decode, paged caches, packed variable-length
batches, the backward pass), compiles each for a random CDNA chip with the
configuration the compiler chooses, runs it on the emulator (tessel-run) and
checks it against the host reference. Each line gives the outcome and the
command that reproduces it:

  PASS      the kernel matched the reference
  REJECTED  the compiler refused the problem with a diagnostic (exit 1, an
            error: line, no output): a problem-level limit, not a failure
  FAIL      a wrong answer, a crash, any other exit, or a timeout

Exits 1 if any problem failed. A long sweep is a separate run (docs/
robustness.md, "Random problem sweeps"); test/e2e/sweep.test runs a few.

Usage: scripts/sweep.py [--count N] [--seed S] [--families a,b,...]
       [--chips gfx90a,gfx942,gfx950] [--bin-dir build/bin] [--timeout SEC]
"""

import argparse
import os
import random
import subprocess
import sys

FAMILIES = ("matmul", "attention", "decode", "paged", "varlen", "backward")
CHIPS = ("gfx90a", "gfx942", "gfx950")


def fp8_type(chip):
    """The E4M3 format chip's matrix instructions take, if any."""
    return {"gfx942": "f8E4M3FNUZ", "gfx950": "f8E4M3FN"}.get(chip)


def matmul_problem(rnd, chip):
    types = ["f16", "bf16", "f32", "i8"]
    if fp8_type(chip):
        types.append(fp8_type(chip))
    element = rnd.choice(types)
    sizes = [1, 2, 3, 7, 15, 16, 17, 31, 33, 63, 64, 65, 100, 127, 128, 129,
             200, 255, 256, 257, 300, 513]
    m, n, k = (rnd.choice(sizes) for _ in range(3))
    if rnd.random() < 0.25:  # decode-shaped: few rows, wide N and K
        m = rnd.choice([1, 4, 8, 16])
        n, k = rnd.choice([512, 1024, 2048]), rnd.choice([256, 512, 1024])
    args = ["matmul", "-m", str(m), "-n", str(n), "-k", str(k), "-t", element]
    if rnd.random() < 0.2:
        args += ["--batch", str(rnd.randint(1, 3))]
    for flag in ("--transpose-a", "--transpose-b", "--transpose-c"):
        if rnd.random() < 0.3:
            args.append(flag)
    if element.startswith("f8"):
        args += ["--out-type", rnd.choice(["f32", "bf16", "f16"])]
        if rnd.random() < 0.6:
            args += ["--scale-a", rnd.choice(["tensor", "row"]),
                     "--scale-b", rnd.choice(["tensor", "column"])]
    elif element != "i8":
        if rnd.random() < 0.2:
            args += ["--bias", rnd.choice(["m", "n"])]
        if rnd.random() < 0.2:
            args += ["--activation", rnd.choice(["relu", "gelu", "silu"])]
        if rnd.random() < 0.15:
            args.append("--residual")
        if rnd.random() < 0.15:
            args.append("--alpha")
        if rnd.random() < 0.1 and element != "f32":
            args += ["--out-type", "f32"]
    dynamic = None
    if rnd.random() < 0.15:
        args += ["--dynamic", rnd.choice(["m", "n", "k", "m,n,k"])]
        dynamic = rnd.randint(1, 300)
    return args, dynamic


def heads(rnd):
    query = rnd.choice([1, 2, 4, 8])
    return query, rnd.choice([h for h in (1, 2, 4, 8) if query % h == 0])


def attention_problem(rnd, chip, family):
    element = rnd.choice(["f16", "bf16"])
    if family == "attention" and fp8_type(chip) and rnd.random() < 0.2:
        element = fp8_type(chip)
    query_heads, kv_heads = heads(rnd)
    head_dim = 8 * rnd.randint(1, 32)
    args = ["attention", "-b", str(rnd.randint(1, 3)), "-h", str(query_heads),
            "--kv-heads", str(kv_heads), "-d", str(head_dim), "-t", element]
    if family in ("decode", "paged"):
        queries, keys = rnd.choice([1, 2, 3, 8]), rnd.randint(1, 3000)
    else:
        queries, keys = rnd.randint(1, 300), rnd.randint(1, 300)
    args += ["--seq-q", str(queries), "--seq-kv", str(keys)]
    if family == "paged":
        args += ["--page-size", str(rnd.choice([16, 32, 64, 128]))]
    if family == "varlen":
        args.append("--varlen")
    if family == "backward":
        args.append("--backward")
    if element.startswith("f8"):
        args.append("--descale")
    elif family != "backward" and rnd.random() < 0.2:
        args += ["--head-dim-v", str(8 * rnd.randint(1, 32))]
    causal = rnd.random() < 0.4
    if causal:
        args.append("--causal")
    if family in ("attention", "decode") and rnd.random() < 0.2:
        left = rnd.choice([-1, rnd.randint(0, 200)])
        right = 0 if causal else rnd.choice([-1, 0, rnd.randint(0, 50)])
        args += ["--window", "%d,%d" % (left, right)]
    if family != "backward" and rnd.random() < 0.3:
        args.append("--lse")
    if family in ("attention", "decode") and rnd.random() < 0.15:
        args.append("--sinks")
    dynamic = None
    if family in ("attention", "decode") and rnd.random() < 0.15:
        args += ["--dynamic", "seq-q,seq-kv"]
        dynamic = rnd.randint(1, 300)
    return args, dynamic


def run_problem(bin_dir, chip, args, dynamic, timeout):
    """(outcome, detail, reproduction)."""
    gen = [os.path.join(bin_dir, "tessel-gen")] + args
    run = [os.path.join(bin_dir, "tessel-run"), "--chip", chip]
    if dynamic is not None:
        run += ["--dynamic-size", str(dynamic)]
    command = " ".join(["tessel-gen"] + args) + " | " + " ".join(
        ["tessel-run"] + run[1:])
    try:
        problem = subprocess.run(gen, capture_output=True, text=True,
                                 timeout=timeout)
        if problem.returncode != 0:
            return "REJECTED", problem.stderr.strip().splitlines()[0], command
        result = subprocess.run(run, input=problem.stdout,
                                capture_output=True, text=True,
                                timeout=timeout)
    except subprocess.TimeoutExpired:
        return "FAIL", "timeout after %d s" % timeout, command
    output = (result.stdout + result.stderr).strip()
    lines = output.splitlines()
    if result.returncode == 0 and lines and ": PASS" in output:
        return "PASS", "", command
    if (result.returncode == 1 and "error:" in output and
            "FAIL" not in output):
        return "REJECTED", lines[0], command
    return ("FAIL", "exit %d: %s" % (result.returncode,
                                     " ".join(lines[-3:])[:400]), command)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--chips", default=",".join(CHIPS))
    parser.add_argument("--bin-dir", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "build", "bin"))
    parser.add_argument("--timeout", type=int, default=600,
                        help="seconds per compile or run")
    options = parser.parse_args()
    families = options.families.split(",")
    chips = options.chips.split(",")
    for family in families:
        if family not in FAMILIES:
            parser.error("unknown family %r (one of %s)" %
                         (family, ", ".join(FAMILIES)))
    rnd = random.Random(options.seed)
    counts = {"PASS": 0, "REJECTED": 0, "FAIL": 0}
    for _ in range(options.count):
        family, chip = rnd.choice(families), rnd.choice(chips)
        if family == "matmul":
            args, dynamic = matmul_problem(rnd, chip)
        else:
            args, dynamic = attention_problem(rnd, chip, family)
        outcome, detail, command = run_problem(options.bin_dir, chip, args,
                                               dynamic, options.timeout)
        counts[outcome] += 1
        print("%-8s %s%s" % (outcome, command,
                             " | " + detail if detail else ""), flush=True)
    print("sweep: %d problems (seed %d): %d passed, %d rejected, %d failed" %
          (options.count, options.seed, counts["PASS"], counts["REJECTED"],
           counts["FAIL"]))
    return 1 if counts["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
