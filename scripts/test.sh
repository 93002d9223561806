#!/usr/bin/env bash
# The whole test suite: builds Tessel (installing what is missing) and runs
# every lit test, FileCheck test and GoogleTest through lit.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TESSEL_BUILD_DIR:-$root/build}"

bash "$root/scripts/build.sh"
ninja -C "$build" -j "${TESSEL_JOBS:-2}" TesselUnitTests

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
/usr/lib/llvm-22/bin/lit -sv "$build/test" 2>&1 | tee "$log" || status=$?
passed=$(sed -n 's/^ *Passed *: *\([0-9]*\).*/\1/p' "$log" | head -n 1)
failed=$(sed -n 's/^ *Failed *: *\([0-9]*\).*/\1/p' "$log" | head -n 1)
echo "${passed:-0} passed, ${failed:-0} failed"
exit "$status"
