#!/usr/bin/python3
"""Compares tessel-perf's single-wave loop cycles with llvm-mca.

For every problem of the KPI table (bench/kpi.py) on gfx942 and gfx950:
compiles it with tesselc (--emit=isa and --emit=perf), cuts every innermost
loop body out of the assembly (from the label a backward s_cbranch targets
to that branch), runs llvm-mca over it, and prints llvm-mca's clocks per
iteration (one llvm-mca cycle is one 4-clock pass on CDNA) next to the
model's single wave without memory latency (what llvm-mca models) and with
it, and llvm-mca's matrix density of the loop (the clocks of its matrix
instructions alone over the clocks of the whole body: the GEMM targets of
docs/performance.md). Prints a Markdown table (docs/performance-model.md).

    bench/perf_vs_mca.py [--bin-dir BUILD/bin] [--chips gfx942,gfx950]
"""
import argparse
import json
import os
import re
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import kpi  # noqa: E402

MCA = "/usr/lib/llvm-22/bin/llvm-mca"


def run(args, stdin=None):
    return subprocess.run(args, input=stdin, capture_output=True, text=True,
                          check=True).stdout


def kernel_assembly(assembly, name):
    """The lines of kernel `name`'s function."""
    lines = assembly.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(name + ":"))
    end = next(i for i in range(start, len(lines))
               if lines[i].startswith(".Lfunc_end"))
    return lines[start:end]


def innermost_loops(lines):
    """(label, body) of each backward branch's loop that holds no other."""
    labels = {}
    for index, line in enumerate(lines):
        match = re.match(r"^(\.LBB\w+):", line)
        if match:
            labels[match.group(1)] = index
    ranges = []
    for index, line in enumerate(lines):
        match = re.match(r"^\s+s_cbranch\w*\s+(\.LBB\w+)", line)
        if match and labels.get(match.group(1), index + 1) < index:
            ranges.append((labels[match.group(1)], index, match.group(1)))
    for begin, end, label in ranges:
        if any(b > begin and e < end for b, e, _ in ranges):
            continue
        body = [l for l in lines[begin + 1:end + 1]
                if l.strip() and not l.strip().startswith((";", "."))]
        yield label, body


def matrix_density(chip, body):
    """llvm-mca's matrix density of a loop body: the clocks of its matrix
    instructions alone over the clocks of the whole body."""
    matrix = [line for line in body if re.match(r"\s*v_(mfma|smfmac|wmma)", line)]
    if not matrix:
        return 0.0
    return mca_clocks(chip, matrix) / mca_clocks(chip, body)


def mca_clocks(chip, body):
    # llvm-mca 22 never finishes some gfx950 loops that hold
    # v_permlane32_swap (a one-pass VALU lane swap, what a shuffle across
    # the half-waves becomes): it is measured as the v_mov it costs like.
    body = [re.sub(r"v_permlane(16|32)_swap_b32(_e32)?", "v_mov_b32_e32", line)
            for line in body]
    out = run([MCA, "-mtriple=amdgcn-amd-amdhsa", "-mcpu=" + chip,
               "-iterations=100"], "\n".join(body) + "\n")
    cycles = int(re.search(r"Total Cycles:\s+(\d+)", out).group(1))
    return cycles / 100 * 4


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin-dir", default=os.path.join(
        os.path.dirname(here), "build", "bin"))
    parser.add_argument("--chips", default="gfx942,gfx950")
    options = parser.parse_args()
    print("| chip | problem | loop instructions | llvm-mca clocks | model, "
          "no latency | difference | model, with latency | llvm-mca matrix "
          "density |")
    print("|---|---|---|---|---|---|---|---|")
    for chip in options.chips.split(","):
        for name, args in kpi.problems(chip, False):
            ir = run([os.path.join(options.bin_dir, "tessel-gen")] + args)
            tesselc = [os.path.join(options.bin_dir, "tesselc"),
                       "--chip=" + chip]
            isa = run(tesselc + ["--emit=isa", "-"], ir)
            reports = json.loads(run(tesselc + [
                "--emit=perf", "--report-format=json", "-"], ir))
            for report in reports:
                bodies = list(innermost_loops(
                    kernel_assembly(isa, report["kernel"])))
                for (label, body), loop in zip(bodies, report["loops"]):
                    mca = mca_clocks(chip, body)
                    ours = loop["single_wave_no_latency_cycles"]
                    count = ("%d" % len(body) if len(body) ==
                             loop["instructions"] else "%d (model %d)" %
                             (len(body), loop["instructions"]))
                    print("| %s | %s%s | %s | %.0f | %.0f | %+.1f %% | %.0f "
                          "| %.1f %% |" % (
                              chip, name, "" if len(reports) == 1 else
                              " (" + report["kernel"] + ")", count, mca, ours,
                              100 * (ours - mca) / mca,
                              loop["single_wave_cycles"],
                              100 * matrix_density(chip, body)))


if __name__ == "__main__":
    main()
