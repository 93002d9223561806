#!/usr/bin/env bash
# Builds a code object from a HIP source in this directory with clang-22,
# llvm-mc and ld.lld (Debian's LLVM 22; no ROCm HIP headers needed). The
# checked-in code objects were made with it:
#   build-hip.sh naive_gemm.hip naive_gemm.gfx942.hsaco gfx942
#   build-hip.sh lds_transpose.hip lds_transpose.gfx942.hsaco gfx942
#   build-hip.sh pingpong_gemm.hip pingpong_gemm.gfx942.hsaco gfx942
# Usage: build-hip.sh SOURCE OUTPUT.hsaco CHIP
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source="$1"
out="$2"
chip="$3"
case "$source" in /*) ;; *) source="$here/$source" ;; esac
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
clang-22 -x hip --offload-arch="$chip" --cuda-device-only -nogpulib -nogpuinc \
  -O3 -S "$source" -o "$tmp/kernel.s"
/usr/lib/llvm-22/bin/llvm-mc -triple amdgcn-amd-amdhsa -mcpu="$chip" \
  -filetype=obj "$tmp/kernel.s" -o "$tmp/kernel.o"
/usr/lib/llvm-22/bin/ld.lld -shared "$tmp/kernel.o" -o "$out"
