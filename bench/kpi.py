#!/usr/bin/python3
"""Tessel's performance KPIs: a fixed table of problems on gfx942 and gfx950,
each compiled with the config tessel-select-config chooses and judged by the
performance model (tesselc --emit=perf, docs/performance-model.md).

Per kernel it reports the model's predicted structural efficiency (matrix
pipes busy, clock-free), % of the chip's matrix peak and of its HBM
bandwidth, the binding limit, and the cold compile time (one tesselc
process, wall clock). Every figure but the compile time is a *prediction*
of the model over the emitted code, deterministic for a given tree; no AMD
GPU is involved.

usage:
  bench/kpi.py [--smoke] [--chips gfx942,gfx950] [--json OUT]
               [--compare BASELINE] [--margin PCT] [--compile-margin PCT]
               [--update-docs docs/performance.md]

--compare flags every KPI that got worse than the baseline by more than the
margin (percentage points of efficiency and of peak, default 1.0; compile
time, relative, only with --compile-margin) and exits 1 if any did. The
checked-in baseline is bench/kpi-baseline.json (write it with --json).
--update-docs replaces the KPI table of docs/performance.md.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(here)

# name, tessel-gen arguments (per chip where the types differ), FLOP kind.
GEMM = "matmul"
ATTENTION = "attention"


def gemm(m, n, k, dtype="bf16", transpose_b=True):
    args = ["matmul", "-m", str(m), "-n", str(n), "-k", str(k), "-t", dtype]
    if transpose_b:
        args.append("--transpose-b")
    layout = "NT" if transpose_b else "NN"
    return ("gemm %s %dx%dx%d %s" % (dtype, m, n, k, layout), args)


def fp8_gemm(chip, size=4096):
    # FNUZ on gfx942, OCP on gfx950; f32 output.
    dtype = "f8E4M3FNUZ" if chip == "gfx942" else "f8E4M3FN"
    name, args = gemm(size, size, size, dtype)
    return ("gemm fp8 %dx%dx%d NT" % (size, size, size), args)


def attention(d, causal, seq=4096, batch=2, heads=16, dtype="f16"):
    args = ["attention", "-b", str(batch), "-h", str(heads), "--seq-q",
            str(seq), "--seq-kv", str(seq), "-d", str(d), "-t", dtype]
    if causal:
        args.append("--causal")
    return ("attention %s D=%d %s b%d h%d s%d" % (
        dtype, d, "causal" if causal else "full", batch, heads, seq), args)


def fp8_attention(chip, d=128):
    # E4M3 inputs (FNUZ on gfx942, OCP on gfx950), per-tensor descales,
    # bf16 output, as FlashAttention-3's fp8 forward.
    dtype = "f8E4M3FNUZ" if chip == "gfx942" else "f8E4M3FN"
    _, args = attention(d, False, dtype=dtype)
    return ("attention fp8 D=%d full b2 h16 s4096" % d, args + ["--descale"])


def decode(d=128, seq_kv=8192, batch=8, heads=32, kv_heads=8, dtype="f16"):
    args = ["attention", "-b", str(batch), "-h", str(heads), "--kv-heads",
            str(kv_heads), "--seq-q", "1", "--seq-kv", str(seq_kv), "-d",
            str(d), "-t", dtype]
    return ("decode %s D=%d b%d h%d/%d kv%d" % (
        dtype, d, batch, heads, kv_heads, seq_kv), args)


def problems(chip, smoke):
    if smoke:
        return [gemm(1024, 1024, 1024), attention(64, False)]
    return [gemm(s, s, s) for s in (1024, 2048, 4096, 8192)] + [
        gemm(4096, 4096, 4096, transpose_b=False),
        gemm(16, 4096, 4096),
        gemm(4096, 14336, 4096),
        fp8_gemm(chip),
        attention(64, False), attention(64, True),
        attention(128, False), attention(128, True),
        # Past 128: a padded head dim in chunks (192, DeepSeek's scores,
        # causal) and 256 with both LDS slots.
        attention(192, True, dtype="bf16"), attention(256, False, dtype="bf16"),
        fp8_attention(chip),
        decode(),
    ]


def tool(bin_dir, name, *argv, stdin=None):
    result = subprocess.run([os.path.join(bin_dir, name), *argv], input=stdin,
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError("%s %s failed:\n%s" % (name, " ".join(argv),
                                                  result.stderr))
    return result.stdout


CONFIG = re.compile(r"#tessel\.config<[^>]*>")

# Peak DRAM bandwidth, TB/s (docs/hardware.md §2).
BANDWIDTH = {"gfx942": 5.3, "gfx950": 8.0, "gfx90a": 1.6}


def measure(bin_dir, chip, args):
    """The KPIs of one problem on one chip."""
    l0 = tool(bin_dir, "tessel-gen", *args)
    configured = tool(bin_dir, "tessel-opt", "--pass-pipeline=builtin.module("
                      "func.func(tessel-select-config{chip=%s}))" % chip,
                      stdin=l0)
    config = CONFIG.search(configured)
    start = time.perf_counter()
    tool(bin_dir, "tesselc", "--chip=" + chip, "--emit=hsaco", "-o",
         os.devnull, stdin=configured)
    compile_ms = (time.perf_counter() - start) * 1e3
    reports = json.loads(tool(bin_dir, "tesselc", "--chip=" + chip,
                              "--emit=perf", "--report-format=json",
                              stdin=configured))
    # Several kernels (split-KV decode, split-K and their combine) run one
    # after the other: times add, with the model's launch gap before each
    # later stage; the longest one's limit binds. "% of HBM" counts the
    # problem's own arrays once (not the workspaces).
    seconds = sum(r["predicted_seconds"] + r["launch_gap_seconds"]
                  for r in reports)
    flops = sum(r["flops"] for r in reports)
    unique_bytes = max(r["problem_bytes"] for r in reports)
    longest = max(reports, key=lambda r: r["predicted_seconds"])
    peak_tflops = longest["tflops"] / max(longest["percent_of_peak"], 1e-12) \
        * 100 if longest["percent_of_peak"] else 0
    tflops = flops / seconds / 1e12 if seconds else 0
    return {
        "config": config.group(0) if config else "",
        "kernels": len(reports),
        "predicted_us": round(seconds * 1e6, 3),
        "tflops": round(tflops, 1),
        "percent_of_peak": round(100 * tflops / peak_tflops, 2)
        if peak_tflops else 0.0,
        "structural_efficiency": round(100 * sum(
            r["structural_efficiency"] * r["predicted_seconds"]
            for r in reports) / seconds, 2) if seconds else 0.0,
        "percent_of_hbm": round(100 * unique_bytes / seconds /
                                (BANDWIDTH[chip] * 1e12), 2)
        if seconds else 0.0,
        "binding_limit": longest["binding_limit"],
        "vgprs": longest["vgprs"],
        "agprs": longest["agprs"],
        "lds_bytes": longest["lds_bytes"],
        "workgroups": longest["workgroups"],
        "compile_ms": round(compile_ms, 1),
    }


# The KPIs --compare checks: (key, label, higher is better).
KPIS = [("structural_efficiency", "structural efficiency %", True),
        ("percent_of_peak", "% of matrix peak", True),
        ("percent_of_hbm", "% of HBM bandwidth", True)]


def compare(results, baseline, margin, compile_margin):
    """The KPIs that got worse than the baseline by more than the margins."""
    worse = []
    for key, now in sorted(results.items()):
        before = baseline.get(key)
        if before is None:
            continue
        for kpi, label, _ in KPIS:
            if now[kpi] < before[kpi] - margin:
                worse.append("%s: %s %.2f -> %.2f" % (key, label, before[kpi],
                                                      now[kpi]))
        if compile_margin is not None and now["compile_ms"] > \
                before["compile_ms"] * (1 + compile_margin / 100):
            worse.append("%s: cold compile %.0f ms -> %.0f ms" % (
                key, before["compile_ms"], now["compile_ms"]))
    return worse


def markdown(results):
    lines = [
        "| chip | problem | config | predicted | TFLOP/s | % of peak | "
        "structural eff. | % of HBM | binding limit | VGPRs+AGPRs | LDS | "
        "cold compile |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for key, r in sorted(results.items(), key=lambda kv: kv[0]):
        chip, problem = key.split(" ", 1)
        config = r["config"].replace("#tessel.config<", "").rstrip(">")
        config = re.sub(r"instr = \"(\w+)\"", r"\1", config)
        lines.append("| %s | %s | %s | %.1f us | %.0f | %.1f | %.1f | %.1f | "
                     "%s | %d+%d | %d KiB | %.0f ms |" % (
                         chip, problem, config.replace("|", "/"),
                         r["predicted_us"], r["tflops"], r["percent_of_peak"],
                         r["structural_efficiency"], r["percent_of_hbm"],
                         r["binding_limit"], r["vgprs"], r["agprs"],
                         r["lds_bytes"] // 1024, r["compile_ms"]))
    return "\n".join(lines) + "\n"


BEGIN = "<!-- kpi table: generated by bench/kpi.py --update-docs -->"
END = "<!-- end of kpi table -->"


def update_docs(path, table):
    text = open(path).read()
    if BEGIN not in text or END not in text:
        sys.exit("kpi.py: %s has no KPI table markers" % path)
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    open(path, "w").write(head + BEGIN + "\n\n" + table + "\n" + END + tail)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin-dir", default=os.path.join(root, "build", "bin"))
    parser.add_argument("--chips", default="gfx942,gfx950")
    parser.add_argument("--smoke", action="store_true",
                        help="two problems of the table per chip (the test "
                        "suite)")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--compare", help="baseline JSON to compare with")
    parser.add_argument("--margin", type=float, default=1.0,
                        help="percentage points a KPI may lose (default 1)")
    parser.add_argument("--compile-margin", type=float,
                        help="also flag cold compiles slower by this %%")
    parser.add_argument("--update-docs", help="rewrite this page's KPI table")
    args = parser.parse_args()

    results = {}
    for chip in args.chips.split(","):
        for name, gen_args in problems(chip, args.smoke):
            results["%s %s" % (chip, name)] = measure(args.bin_dir, chip,
                                                      gen_args)
    table = markdown(results)
    print(table, end="")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=1, sort_keys=True)
            out.write("\n")
    if args.update_docs:
        update_docs(args.update_docs, table)
    if args.compare:
        baseline = json.load(open(args.compare))
        missing = [key for key in results if key not in baseline]
        for key in missing:
            print("kpi: %s is not in the baseline" % key)
        worse = compare(results, baseline, args.margin, args.compile_margin)
        for line in worse:
            print("kpi: WORSE %s" % line)
        print("kpi: %d of %d problems compared, %d KPI(s) worse" % (
            len(results) - len(missing), len(results), len(worse)))
        if worse or missing:
            sys.exit(1)


if __name__ == "__main__":
    main()
