#!/usr/bin/env bash
# Installs what is missing, then configures (once) and builds Tessel into
# $TESSEL_BUILD_DIR (default: build/). Safe to run again: it only rebuilds
# what changed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TESSEL_BUILD_DIR:-$root/build}"

bash "$root/scripts/install-deps.sh"

if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit
fi
# Two jobs: MLIR headers are heavy and the machines have two cores.
ninja -C "$build" -j "${TESSEL_JOBS:-2}"
