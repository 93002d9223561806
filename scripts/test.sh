#!/usr/bin/env bash
# The whole test suite: builds Tessel (installing what is missing) and runs
# every lit test, FileCheck test and GoogleTest through lit.
#
#   scripts/test.sh              the regular build in build/
#   scripts/test.sh --sanitize   the same suite on the AddressSanitizer +
#                                UndefinedBehaviorSanitizer build in
#                                build-sanitize/ (docs/fuzzing.md)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
case "${1:-}" in
  "") ;;
  --sanitize) export TESSEL_SANITIZE=1 ;;
  *) echo "usage: scripts/test.sh [--sanitize]" >&2; exit 2 ;;
esac
if [ "${TESSEL_SANITIZE:-0}" = 1 ]; then
  build="${TESSEL_BUILD_DIR:-$root/build-sanitize}"
else
  build="${TESSEL_BUILD_DIR:-$root/build}"
fi
export TESSEL_BUILD_DIR="$build"

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
