#!/usr/bin/env bash
# The main job: builds Tessel, compiles every kernel under examples/ for a chip
# (default gfx942) into an HSACO code object under build/examples/, and prints
# a table of what a kernel engineer asks first: the config the compiler chose
# (problem-level examples), registers, LDS, scratch, occupancy and, for
# problem-level kernels, the performance model's prediction. A chip Tessel
# has no pipeline for yet gets the reason, not a failure.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TESSEL_BUILD_DIR:-$root/build}"
chip="${1:-gfx942}"

bash "$root/scripts/build.sh"

mkdir -p "$build/examples"
rows=()
for example in "$root"/examples/*.mlir; do
  name="$(basename "$example" .mlir)"
  hsaco="$build/examples/$name.$chip.hsaco"
  if ! error="$("$build/bin/tesselc" "$example" --chip="$chip" -o "$hsaco" 2>&1)"; then
    reason="$(printf '%s\n' "$error" | grep -m1 'error:' | sed 's/.*error: //')"
    rows+=("$name|not supported yet on $chip: ${reason:-$error}")
    continue
  fi
  report="$("$build/bin/tesselc" "$example" --chip="$chip" --emit=report --report-format=json)"
  perf=""
  if grep -q "tessel\.\(matmul\|attention\)" "$example"; then
    perf="$("$build/bin/tesselc" "$example" --chip="$chip" --emit=perf --report-format=json)"
  fi
  rows+=("$name|$(/usr/bin/python3 - "$report" "$perf" "$hsaco" <<'PY'
import json, os, re, sys
report, perf, hsaco = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
kernels = [k for module in report for k in module["kernels"]]
predictions = {p["kernel"]: p for p in json.loads(perf)} if perf else {}
cells = []
for k in kernels:
    occupancy = k["occupancy"]
    cell = "%s: %d B code object, %d VGPRs + %d AGPRs, %d SGPRs, %d B LDS, " \
           "%d B scratch, %d waves/SIMD (limited by %s)" % (
               k["name"], os.path.getsize(hsaco), k["vgpr_count"] - k["agpr_count"],
               k["agpr_count"], k["sgpr_count"], k["lds_bytes"], k["scratch_bytes"],
               occupancy["waves_per_simd"], occupancy["limited_by"])
    p = predictions.get(k["name"])
    if p:
        cell += "; predicted %.1f us, structural efficiency %.1f %%, %s" % (
            p["predicted_seconds"] * 1e6, 100 * p["structural_efficiency"],
            p["binding_limit"])
    cells.append(cell)
print("; ".join(cells))
PY
)")
done

echo
echo "Examples on $chip (code objects in $build/examples; predictions are the"
echo "performance model's, docs/performance-model.md):"
echo
for row in "${rows[@]}"; do
  printf '  %-26s %s\n' "${row%%|*}" "${row#*|}"
done
echo
echo "config chosen for each problem-level example (tessel-select-config):"
for example in "$root"/examples/*.mlir; do
  if grep -q "tessel\.\(matmul\|attention\)" "$example"; then
    config="$("$build/bin/tessel-opt" "$example" \
      --pass-pipeline="builtin.module(func.func(tessel-select-config{chip=$chip}))" 2>&1 \
      | grep -o '#tessel.config<[^>]*>' || echo "none ($chip has no pipeline yet)")"
    printf '  %-26s %s\n' "$(basename "$example" .mlir)" "$config"
  fi
done
