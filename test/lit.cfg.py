# -*- Python -*-
import os
import shutil

import lit.formats
from lit.llvm import llvm_config

config.name = "TESSEL"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "tessel-capi-test.c", "README.txt", "lit.cfg.py",
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
     "tessel-capi-test", "tessel-bench-compile", "tessel-perf"],
    [config.tessel_tools_dir])
config.substitutions.append(("%tessel_src_root", config.tessel_src_root))
config.substitutions.append(("%tessel_obj_root", config.tessel_obj_root))
# Debian's python3 (numpy, pytest), whatever python3 comes first on PATH.
config.substitutions.append(("%python", "/usr/bin/python3"))

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
