#!/usr/bin/env python3
"""Compares tessel-perf's single-wave loop cycles with llvm-mca.

For each problem: compiles it with tesselc (--emit=isa and --emit=perf),
cuts every loop body out of the assembly (from the label a backward
s_cbranch targets to that branch), runs llvm-mca over it, and prints
llvm-mca's cycles per iteration (one llvm-mca cycle is one 4-clock pass on
CDNA) next to the model's single-wave cycles.

    bench/perf_vs_mca.py BUILD_DIR
"""
import json
import re
import subprocess
import sys

PROBLEMS = [
    ("gfx942", ["matmul", "-m", "4096", "-n", "4096", "-k", "4096", "-t", "bf16"]),
    ("gfx950", ["matmul", "-m", "4096", "-n", "4096", "-k", "4096", "-t", "bf16"]),
    ("gfx942", ["attention", "-b", "16", "-h", "16", "--seq-q", "4096",
                "--seq-kv", "4096", "-d", "128", "-t", "bf16"]),
]
MCA = "/usr/lib/llvm-22/bin/llvm-mca"


def run(args, stdin=None):
    return subprocess.run(args, input=stdin, capture_output=True, text=True,
                          check=True).stdout


def loop_bodies(assembly):
    """Yields (label, lines) for each backward branch's loop."""
    lines = assembly.splitlines()
    labels = {}
    for index, line in enumerate(lines):
        match = re.match(r"^(\.LBB\w+):", line)
        if match:
            labels[match.group(1)] = index
    for index, line in enumerate(lines):
        match = re.match(r"^\s+s_cbranch\w*\s+(\.LBB\w+)", line)
        if match and labels.get(match.group(1), index + 1) < index:
            body = [l for l in lines[labels[match.group(1)] + 1:index + 1]
                    if l.strip() and not l.strip().startswith((";", "."))]
            yield match.group(1), body


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    print(f"{'chip':8} {'problem':10} {'loop':10} {'instrs':>6} "
          f"{'mca clk':>8} {'model clk':>9} {'diff':>6}")
    for chip, problem in PROBLEMS:
        ir = run([f"{build}/bin/tessel-gen"] + problem)
        isa = run([f"{build}/bin/tesselc", f"--chip={chip}", "--emit=isa",
                   "-"], ir)
        report = json.loads(run([f"{build}/bin/tesselc", f"--chip={chip}",
                                 "--emit=perf", "--report-format=json", "-"],
                                ir))[0]
        model = [loop for loop in report["loops"]
                 if loop["matrix_instructions"] > 0]
        for (label, body), loop in zip(
                [b for b in loop_bodies(isa)
                 if any("mfma" in l for l in b[1])], model):
            mca = run([MCA, "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={chip}",
                       "-iterations=100"], "\n".join(body) + "\n")
            cycles = int(re.search(r"Total Cycles:\s+(\d+)", mca).group(1))
            mca_clocks = cycles / 100 * 4
            ours = loop["single_wave_cycles"]
            print(f"{chip:8} {problem[0]:10} {label:10} {len(body):6} "
                  f"{mca_clocks:8.0f} {ours:9.0f} "
                  f"{100 * (ours - mca_clocks) / mca_clocks:+5.1f}%")


if __name__ == "__main__":
    main()
