#!/bin/bash
# Paged-KV decode against the dense decode under the performance model
# (tesselc --emit=perf): predicted time and the fraction of the chip's HBM
# bandwidth the problem's bytes reach at that time, with the code object's
# registers and spills. Every sequence is taken to fill its block table's
# pages. Predictions, not measurements.
# Usage: bench/paged_decode.sh [BIN_DIR]   (default: build/bin)
set -euo pipefail
bin=${1:-build/bin}
echo "| chip | decode (8 seqs x 32 heads / 8 kv, 8192 keys, D=128, f16) | predicted time | compute floor | % of HBM bandwidth | VGPRs+AGPRs | spills |"
echo "|---|---|---|---|---|---|---|"
for chip in gfx942 gfx950; do
  for page in 0 16 64; do
    args=(attention -b 8 -h 32 --kv-heads 8 --seq-q 1 --seq-kv 8192 -d 128)
    what="dense"
    if [ "$page" != 0 ]; then
      args+=(--page-size "$page" --num-pages $((8 * 8192 / page)))
      what="paged, pages of $page"
    fi
    ir=$("$bin/tessel-gen" "${args[@]}")
    perf=$(echo "$ir" | "$bin/tesselc" - --chip="$chip" --emit=perf \
           --report-format=json)
    report=$(echo "$ir" | "$bin/tesselc" - --chip="$chip" --emit=report \
             --report-format=json)
    /usr/bin/python3 - "$chip" "$what" "$perf" "$report" <<'PY'
import json, sys
chip, what, perf, report = sys.argv[1:]
k = json.loads(perf)[0]
r = json.loads(report)[0]["kernels"][0]
# The problem's bytes over the predicted time and the spec bandwidth (as
# bench/kpi.py's "% of HBM").
bandwidth = {"gfx942": 5.3, "gfx950": 8.0}[chip] * 1e12
fraction = k["problem_bytes"] / k["predicted_seconds"] / bandwidth
print("| %s | %s | %.2f us | %.2f us | %.1f %% | %d+%d | %d/%d |" % (
    chip, what, k["predicted_seconds"] * 1e6, k["compute_seconds"] * 1e6,
    fraction * 100,
    r["vgpr_count"], r["agpr_count"], r["vgpr_spill_count"],
    r["sgpr_spill_count"]))
PY
  done
done
