#!/bin/bash
# The attention backward's two kernels under the performance model
# (tesselc --emit=perf) and their resources (tesselc --emit=report), for
# the table in docs/performance.md. Predictions, not measurements.
# Usage: bench/attention_backward.sh [BIN_DIR]   (default: build/bin)
set -euo pipefail
bin=${1:-build/bin}
echo "| chip | problem (4x32x4096, D) | kernel | predicted time | structural eff. | VGPRs+AGPRs | spills | problem TFLOP/s (5 products) |"
echo "|---|---|---|---|---|---|---|---|"
while read -r chip type d causal; do
  mask=""; [ "$causal" = causal ] && mask="--causal"
  ir=$("$bin/tessel-gen" attention --backward -b 4 -h 32 --seq-q 4096 \
       --seq-kv 4096 -d "$d" -t "$type" $mask)
  perf=$(echo "$ir" | "$bin/tesselc" - --chip="$chip" --emit=perf \
         --report-format=json)
  report=$(echo "$ir" | "$bin/tesselc" - --chip="$chip" --emit=report \
           --report-format=json)
  /usr/bin/python3 - "$chip" "$type" "$d" "$causal" "$perf" "$report" <<'PY'
import json, sys
chip, element, d, causal, perf, report = sys.argv[1:]
d = int(d)
kernels = json.loads(perf)
resources = {k["name"]: k for k in json.loads(report)[0]["kernels"]}
seq = 4096
pairs = seq * (seq + 1) / 2 if causal == "causal" else seq * seq
# FlashAttention's count: 5 products of 2 x pairs x D per (batch, head).
useful = 5 * 2 * 4 * 32 * pairs * d
total = sum(k["predicted_seconds"] for k in kernels)
for k in kernels:
    r = resources[k["kernel"]]
    print("| %s | %s D=%d%s | %s | %.3f ms | %.1f %% | %d+%d | %d/%d | %s |" % (
        chip, element, d, " causal" if causal == "causal" else "",
        k["kernel"].split("__")[1], k["predicted_seconds"] * 1e3,
        k["structural_efficiency"] * 100, r["vgpr_count"], r["agpr_count"],
        r["vgpr_spill_count"], r["sgpr_spill_count"],
        "%.0f (plan %.3f ms)" % (useful / total / 1e12, total * 1e3)
        if k is kernels[-1] else ""))
PY
done <<'LIST'
gfx942 bf16 128 causal
gfx942 bf16 128 full
gfx942 f16 64 causal
gfx942 bf16 256 causal
gfx950 bf16 128 causal
gfx950 f16 64 full
gfx90a f16 128 causal
LIST
