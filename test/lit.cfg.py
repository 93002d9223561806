# -*- Python -*-
import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config

config.name = "TESSEL"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "tessel-capi-test.c", "tessel-capi-device-test.c", "README.txt", "lit.cfg.py",
                   "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tessel_obj_root, "test")

config.environment["FILECHECK_OPTS"] = "--enable-var-scope"
# Tests never depend on the caller's device-library override.
config.environment.pop("TESSEL_ROCM_DEVICE_LIBS", None)

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(
    ["tessel-opt", "tesselc", "tessel-gen", "tessel-layout", "tessel-run",
     "tessel-capi-test", "tessel-capi-device-test", "tessel-bench-compile", "tessel-perf", "tessel-tune",
     "tessel-fuzz-ir-replay", "tessel-fuzz-npy-replay",
     "tessel-fuzz-layout-replay", "tessel-fuzz-cache-replay"],
    [config.tessel_tools_dir])
config.substitutions.append(("%tessel_src_root", config.tessel_src_root))
config.substitutions.append(("%tessel_obj_root", config.tessel_obj_root))
# The host C++ compiler, for stand-in libraries a test builds (fake_hip.cpp).
config.substitutions.append(("%cxx", config.cxx_compiler))
# Debian's python3 (numpy, pytest), whatever python3 comes first on PATH.
python = "/usr/bin/python3"
if config.tessel_sanitizer:
    # LLVM's BumpPtrAllocator poisons a new slab in instrumented code and
    # unpoisons each allocation only there; libMLIR.so (not instrumented)
    # then allocates from the same slab without unpoisoning. Manual poisoning
    # is therefore off: a false use-after-poison, not a bug of either.
    asan_options = "allow_user_poisoning=0"
    config.environment["ASAN_OPTIONS"] = asan_options
    # The sanitized libTesselC.so needs the AddressSanitizer runtime loaded
    # first in the (uninstrumented) interpreter; Python's own allocations are
    # not Tessel's leaks.
    runtime = subprocess.run([config.cxx_compiler,
                              "-print-file-name=libclang_rt.asan-x86_64.so"],
                             capture_output=True, text=True).stdout.strip()
    # sanitizer/python.py keeps the preload from the tools it starts.
    launcher = os.path.join(config.tessel_src_root, "test", "sanitizer",
                            "python.py")
    python = ("env LD_PRELOAD=%s ASAN_OPTIONS=%s:detect_leaks=0 %s %s"
              % (runtime, asan_options, python, launcher))
    config.available_features.add("sanitizer")
# Replaces lit's own %python (the interpreter running lit, unquoted here).
config.substitutions = [s for s in config.substitutions if s[0] != "%python"]
config.substitutions.append(("%python", python))

if os.path.exists(os.path.join(config.rocm_device_libs, "ocml.bc")):
    config.available_features.add("rocm-device-libs")
if os.path.exists("/dev/kfd"):
    # An AMD GPU driver is present: kernels may run on the GPU.
    config.available_features.add("amd-gpu")
# clang-22 with llvm-mc and ld.lld can build HIP device code without ROCm's
# HIP headers: the performance-model tests then build their own inputs.
if (shutil.which("clang-22") and
        os.path.exists(os.path.join(config.llvm_tools_dir, "llvm-mc")) and
        os.path.exists(os.path.join(config.llvm_tools_dir, "ld.lld"))):
    config.available_features.add("clang-hip")
if os.getuid() == 0:
    # root writes through file permissions: unwritable-output tests use a
    # path under a regular file instead, which fails for everyone.
    config.available_features.add("root")
