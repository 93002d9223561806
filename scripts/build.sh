#!/usr/bin/env bash
# Installs what is missing, then configures (once) and builds Tessel into
# $TESSEL_BUILD_DIR (default: build/). Safe to run again: it only rebuilds
# what changed.
#
# TESSEL_SANITIZE=1 makes an instrumented build instead (default directory
# build-sanitize/): clang-22 with AddressSanitizer, UndefinedBehaviorSanitizer
# (any report aborts) and libFuzzer's coverage instrumentation, so that the
# same build runs the test suite under the sanitizers (scripts/test.sh
# --sanitize) and links the fuzz targets (scripts/fuzz.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

bash "$root/scripts/install-deps.sh"

options=(-DCMAKE_BUILD_TYPE=Release -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit)
if [ "${TESSEL_SANITIZE:-0}" = 1 ]; then
  build="${TESSEL_BUILD_DIR:-$root/build-sanitize}"
  options+=(
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22
    "-DLLVM_USE_SANITIZER=Address;Undefined"
    # vptr needs RTTI, which LLVM and Tessel are built without.
    "-DLLVM_UBSAN_FLAGS=-fsanitize=undefined -fno-sanitize=vptr -fno-sanitize-recover=all"
    -DLLVM_USE_SANITIZE_COVERAGE=ON)
else
  build="${TESSEL_BUILD_DIR:-$root/build}"
fi

if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" "${options[@]}"
fi
# Two jobs: MLIR headers are heavy and the machines have two cores.
ninja -C "$build" -j "${TESSEL_JOBS:-2}"
