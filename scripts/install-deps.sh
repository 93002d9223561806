#!/usr/bin/env bash
# Installs every Debian package Tessel needs to build, test and run, and nothing else.
# Idempotent: packages already present are left alone, and apt is not touched at all
# when everything is installed. Run as root (or through sudo).
set -euo pipefail

PACKAGES=(
  # build
  cmake ninja-build g++ pkg-config
  # LLVM / MLIR 22 (llvm-version.txt pins the exact release)
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  # in-process HSACO linking
  lld-22 liblld-22-dev
  # AMD device libraries (ocml/ockl bitcode) and the HIP runtime headers
  rocm-device-libs libamdhip64-dev
  # unit tests
  libgtest-dev
  # the sanitizer build and the libFuzzer targets (scripts/test.sh --sanitize,
  # scripts/fuzz.sh); clang also builds the hand-written HIP kernel the
  # performance-model tests read
  clang-22 libclang-rt-22-dev
  # Python package and its tests
  python3 python3-numpy python3-pytest
  # pip install of the package into a virtual environment (test/install)
  python3-pip python3-venv python3-setuptools python3-wheel
  # torch tensors in and out of the Python package (CPU build is enough)
  python3-torch
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
