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


DEVICES = {"auto": 0, "hip": 1, "emulator": 2}


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
