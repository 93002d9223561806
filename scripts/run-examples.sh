#!/usr/bin/env bash
# The main job: builds Tessel, compiles every kernel under examples/ for a chip
# (default gfx942) into an HSACO code object under build/examples/, and prints
# each kernel's report (registers, LDS, scratch, occupancy, arguments).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TESSEL_BUILD_DIR:-$root/build}"
chip="${1:-gfx942}"

bash "$root/scripts/build.sh"

mkdir -p "$build/examples"
for example in "$root"/examples/*.mlir; do
  name="$(basename "$example" .mlir)"
  "$build/bin/tesselc" "$example" --chip="$chip" -o "$build/examples/$name.$chip.hsaco"
  echo "== $name: $build/examples/$name.$chip.hsaco ($(stat -c %s "$build/examples/$name.$chip.hsaco") bytes)"
  "$build/bin/tesselc" "$example" --chip="$chip" --emit=report
done
