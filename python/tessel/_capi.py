"""ctypes bindings of libTesselC.so (include/tessel-c/Tessel.h)."""

import ctypes
import os
from pathlib import Path


class TesselError(RuntimeError):
    """A compile or run that failed; the message is Tessel's diagnostic."""


class Buffer(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("bytes", ctypes.c_size_t),
                ("rank", ctypes.c_int32),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64))]


class ArgumentInfo(ctypes.Structure):
    _fields_ = [("is_array", ctypes.c_int32),
                ("element_type", ctypes.c_char_p),
                ("element_bytes", ctypes.c_uint32),
                ("rank", ctypes.c_int32),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("written", ctypes.c_int32)]


class ProblemSizes(ctypes.Structure):
    _fields_ = [("m", ctypes.c_int64), ("n", ctypes.c_int64),
                ("batch", ctypes.c_int64), ("seq_q", ctypes.c_int64),
                ("heads", ctypes.c_int64)]


class CacheStats(ctypes.Structure):
    _fields_ = [("memory_hits", ctypes.c_uint64),
                ("disk_hits", ctypes.c_uint64), ("misses", ctypes.c_uint64),
                ("corrupt_entries", ctypes.c_uint64),
                ("write_failures", ctypes.c_uint64)]


class MatmulProblem(ctypes.Structure):
    """TesselMatmulProblem: zero fields take the defaults of the C API."""
    _fields_ = [("name", ctypes.c_char_p), ("m", ctypes.c_int64),
                ("n", ctypes.c_int64), ("k", ctypes.c_int64),
                ("batch", ctypes.c_int64), ("a_type", ctypes.c_char_p),
                ("b_type", ctypes.c_char_p), ("c_type", ctypes.c_char_p),
                ("transpose_a", ctypes.c_int32),
                ("transpose_b", ctypes.c_int32), ("bias", ctypes.c_char_p),
                ("residual", ctypes.c_int32),
                ("activation", ctypes.c_char_p), ("alpha", ctypes.c_int32),
                ("scale_a", ctypes.c_char_p), ("scale_b", ctypes.c_char_p),
                ("dynamic", ctypes.c_char_p), ("config", ctypes.c_char_p)]


class AttentionProblem(ctypes.Structure):
    """TesselAttentionProblem: zero fields take the defaults of the C API."""
    _fields_ = [("name", ctypes.c_char_p), ("batch", ctypes.c_int64),
                ("heads", ctypes.c_int64), ("kv_heads", ctypes.c_int64),
                ("seq_q", ctypes.c_int64), ("seq_kv", ctypes.c_int64),
                ("head_dim", ctypes.c_int64), ("type", ctypes.c_char_p),
                ("causal", ctypes.c_int32), ("scale", ctypes.c_float),
                ("lse", ctypes.c_int32), ("has_scale", ctypes.c_int32),
                ("has_window", ctypes.c_int32),
                ("window_left", ctypes.c_int64),
                ("window_right", ctypes.c_int64), ("sinks", ctypes.c_int32),
                ("head_dim_v", ctypes.c_int64), ("dynamic", ctypes.c_char_p),
                ("config", ctypes.c_char_p), ("descale", ctypes.c_int32),
                ("out_type", ctypes.c_char_p), ("backward", ctypes.c_int32),
                ("varlen", ctypes.c_int32), ("page_size", ctypes.c_int64)]


DEVICES = {"auto": 0, "hip": 1, "emulator": 2}
SCALAR_RANK = -1  # TESSEL_SCALAR_RANK: a buffer that holds a scalar
DEVICE_NAMES = {1: "hip", 2: "emulator"}
COPY_HOST_TO_DEVICE, COPY_DEVICE_TO_HOST, COPY_DEVICE_TO_DEVICE = 1, 2, 3


def _library_path():
    """TESSEL_LIBRARY; else the library inside the package (a pip-installed
    package carries it); else the one `cmake --install` put in the prefix's
    library directory (_install.py, written at install); else the build tree
    of a source checkout."""
    explicit = os.environ.get("TESSEL_LIBRARY")
    if explicit:
        return explicit
    here = Path(__file__).resolve().parent
    bundled = sorted(here.glob("libTesselC.so*"))
    if bundled:
        return str(bundled[0])
    try:
        from . import _install
        installed = here / _install.LIBRARY
        if installed.exists():
            return str(installed)
    except ImportError:
        pass
    root = here.parents[1]
    for build in ("build", "build-release"):
        candidate = root / build / "lib" / "libTesselC.so"
        if candidate.exists():
            return str(candidate)
    raise TesselError(
        "libTesselC.so not found: build Tessel (bash scripts/test.sh), install "
        "it (cmake --install, pip install), or set TESSEL_LIBRARY to its path")


def _declare(lib):
    p, c = ctypes.c_void_p, ctypes.c_char_p
    sig = {
        "tesselGetLastError": (c, []),
        "tesselGetVersion": (c, []),
        "tesselGetVersionNumber": (ctypes.c_int, []),
        "tesselCompilerCreate": (p, [c]),
        "tesselCompilerDestroy": (None, [p]),
        "tesselCompilerGetCacheStats": (None, [p, ctypes.POINTER(CacheStats)]),
        "tesselCompile": (p, [p, c, c]),
        "tesselCompileMatmul": (p, [p, ctypes.POINTER(MatmulProblem), c]),
        "tesselModuleDestroy": (None, [p]),
        "tesselModuleGetCodeObject": (p, [p, ctypes.POINTER(ctypes.c_size_t)]),
        "tesselModuleGetReport": (c, [p]),
        "tesselModuleGetAssembly": (c, [p]),
        "tesselModuleGetNumKernels": (ctypes.c_size_t, [p]),
        "tesselModuleGetKernelName": (c, [p, ctypes.c_size_t]),
        "tesselModuleGetKernelBlockSize": (ctypes.c_uint, [p, ctypes.c_size_t]),
        "tesselModuleGetKernelLdsBytes": (ctypes.c_uint64, [p, ctypes.c_size_t]),
        "tesselModuleGetNumArguments": (ctypes.c_int64, [p, c]),
        "tesselModuleGetArgument": (ctypes.c_int, [p, c, ctypes.c_size_t,
                                                   ctypes.POINTER(
                                                       ArgumentInfo)]),
        "tesselRun": (ctypes.c_int, [p, c, ctypes.POINTER(ProblemSizes),
                                     ctypes.POINTER(Buffer), ctypes.c_size_t,
                                     ctypes.c_int]),
        "tesselHipAvailable": (ctypes.c_int, []),
        "tesselCompileAttention": (p, [p, ctypes.POINTER(AttentionProblem),
                                       c]),
        # The device-resident runtime.
        "tesselContextCreate": (p, [ctypes.c_int]),
        "tesselContextDestroy": (None, [p]),
        "tesselContextGetDevice": (ctypes.c_int, [p]),
        "tesselContextSynchronize": (ctypes.c_int, [p]),
        "tesselDeviceAlloc": (p, [p, ctypes.c_size_t]),
        "tesselDeviceFree": (ctypes.c_int, [p, p]),
        "tesselMemcpy": (ctypes.c_int, [p, p, p, ctypes.c_size_t,
                                        ctypes.c_int, p]),
        "tesselMemset": (ctypes.c_int, [p, p, ctypes.c_int, ctypes.c_size_t,
                                        p]),
        "tesselStreamCreate": (p, [p]),
        "tesselStreamWrap": (p, [p, p]),
        "tesselStreamSynchronize": (ctypes.c_int, [p]),
        "tesselStreamWaitEvent": (ctypes.c_int, [p, p]),
        "tesselStreamDestroy": (None, [p]),
        "tesselEventCreate": (p, [p]),
        "tesselEventRecord": (ctypes.c_int, [p, p]),
        "tesselEventSynchronize": (ctypes.c_int, [p]),
        "tesselEventQuery": (ctypes.c_int, [p]),
        "tesselEventElapsedTime": (ctypes.c_int, [ctypes.POINTER(
            ctypes.c_float), p, p]),
        "tesselEventDestroy": (None, [p]),
        "tesselLaunch": (ctypes.c_int, [p, p, p, c,
                                        ctypes.POINTER(ProblemSizes),
                                        ctypes.POINTER(Buffer),
                                        ctypes.c_size_t]),
    }
    for name, (restype, argtypes) in sig.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


_lib = None


def lib():
    global _lib
    if _lib is None:
        _lib = _declare(ctypes.CDLL(_library_path()))
    return _lib


def last_error():
    return lib().tesselGetLastError().decode()


def check(status):
    """Raises TesselError with the library's message when `status` is
    nonzero (a failed call)."""
    if status:
        raise TesselError(last_error())
