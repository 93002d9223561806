#!/usr/bin/env bash
# Rebuilds naive_gemm.gfx942.hsaco from naive_gemm.hip with clang-22, llvm-mc
# and ld.lld (Debian's LLVM 22; no ROCm HIP headers needed). Usage:
#   build-naive-gemm.sh [output.hsaco] [chip]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:-$here/naive_gemm.gfx942.hsaco}"
chip="${2:-gfx942}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
clang-22 -x hip --offload-arch="$chip" --cuda-device-only -nogpulib -nogpuinc \
  -O3 -S "$here/naive_gemm.hip" -o "$tmp/naive_gemm.s"
/usr/lib/llvm-22/bin/llvm-mc -triple amdgcn-amd-amdhsa -mcpu="$chip" \
  -filetype=obj "$tmp/naive_gemm.s" -o "$tmp/naive_gemm.o"
/usr/lib/llvm-22/bin/ld.lld -shared "$tmp/naive_gemm.o" -o "$out"
