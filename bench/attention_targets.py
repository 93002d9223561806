#!/usr/bin/python3
"""The attention speed targets, measured on the emitted code
(docs/performance.md).

For each FlashAttention forward target (batch 2, 16 heads, 4096 queries and
keys): the config tessel-select-config chooses, the waves each CU holds
(waves per workgroup x workgroups per CU: all four SIMDs are busy from 4),
llvm-mca's matrix density of the key loops (matrix-only clocks over loop
clocks: the main loop over whole, unmasked key blocks, and the masked loop
over the causal diagonal and the tail block when the kernel keeps one), the
model's structural
efficiency, VGPRs + AGPRs, spills (VGPR, SGPR, and AGPR moves outside the
matrix instructions' own use, which is spill space for a kernel whose
accumulators are ArchVGPRs), LDS and the cold compile time. Prints a
Markdown table.

    bench/attention_targets.py [--bin-dir BUILD/bin] [--chips gfx942,gfx950]
"""
import argparse
import json
import os
import re
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import perf_vs_mca  # noqa: E402

# chip, element type, head dim, causal.
TARGETS = [(chip, dtype, d, causal)
           for chip in ("gfx942", "gfx950")
           for dtype in ("f16", "bf16")
           for d in (64, 128)
           for causal in (False, True)]


def measure(tool, chip, dtype, d, causal):
    args = [tool("tessel-gen"), "attention", "-b", "2", "-h", "16",
            "--seq-q", "4096", "--seq-kv", "4096", "-d", str(d), "-t", dtype]
    if causal:
        args.append("--causal")
    ir = perf_vs_mca.run(args)
    tesselc = [tool("tesselc"), "--chip=" + chip]
    start = time.monotonic()
    isa = perf_vs_mca.run(tesselc + ["--emit=isa", "-"], ir)
    compile_ms = 1000 * (time.monotonic() - start)
    [perf] = json.loads(perf_vs_mca.run(
        tesselc + ["--emit=perf", "--report-format=json", "-"], ir))
    report = perf_vs_mca.run(tesselc + ["--emit=report", "-"], ir)
    field = lambda name: int(re.search(  # noqa: E731
        name + r"\s+(\d+)", report).group(1))
    workgroup = field("workgroup")
    waves_per_simd = field("occupancy")
    # Waves per CU: the occupancy is per SIMD; only whole workgroups fit (an
    # 8-wave workgroup at 3 waves per SIMD leaves room for one), and a
    # workgroup of fewer waves than SIMDs leaves the others idle unless more
    # workgroups fit.
    workgroup_waves = workgroup // 64
    per_cu = max(1, 4 * waves_per_simd // workgroup_waves)
    lds = field("LDS bytes")
    if lds:
        per_cu = min(per_cu, (160 if chip == "gfx950" else 64) * 1024 // lds)
    waves_per_cu = min(4 * waves_per_simd, per_cu * workgroup_waves)
    config = re.search(r"config = #tessel\.config<(.*?)>", perf_vs_mca.run(
        [tool("tessel-opt"), "--pass-pipeline=builtin.module(func.func("
         "tessel-select-config{chip=%s}))" % chip], ir)).group(1)
    body = perf_vs_mca.kernel_assembly(isa, perf["kernel"])
    # The key loops in program order: the unmasked one first.
    densities = [d for d in (perf_vs_mca.matrix_density(chip, loop)
                             for _, loop in perf_vs_mca.innermost_loops(body))
                 if d > 0]
    agpr_moves = sum(1 for line in body
                     if re.search(r"v_accvgpr_(read|write)", line))
    return {
        "config": config.replace('"', ""),
        "waves_per_cu": waves_per_cu,
        "density": " / ".join("%.1f %%" % (100 * d) for d in densities),
        "structural": 100 * perf["structural_efficiency"],
        "registers": "%d+%d" % (field("VGPRs"), field("AGPRs")),
        "spills": "%d/%d/%d" % (field("VGPR spills"), field("SGPR spills"),
                                agpr_moves),
        "lds": lds // 1024,
        "compile_ms": compile_ms,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin-dir", default=os.path.join(
        os.path.dirname(here), "build", "bin"))
    parser.add_argument("--chips", default="gfx942,gfx950")
    options = parser.parse_args()
    tool = lambda name: os.path.join(options.bin_dir, name)  # noqa: E731
    chips = options.chips.split(",")
    print("| chip | problem | config | waves per CU | llvm-mca matrix density "
          "(>= 65 %; main / masked loop) | structural efficiency (model, "
          ">= 70 %) | VGPRs+AGPRs "
          "| spills VGPR/SGPR/AGPR moves | LDS | compile |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for chip, dtype, d, causal in TARGETS:
        if chip not in chips:
            continue
        r = measure(tool, chip, dtype, d, causal)
        print("| %s | %s D=%d %s | %s | %d | %s | %.1f %% | %s | %s | "
              "%d KiB | %.0f ms |" % (
                  chip, dtype, d, "causal" if causal else "full",
                  r["config"], r["waves_per_cu"], r["density"],
                  r["structural"], r["registers"], r["spills"], r["lds"],
                  r["compile_ms"]), flush=True)


if __name__ == "__main__":
    main()
