"""Tessel from Python: compile Tessel IR or build matmul and attention
kernels for AMD GPUs, cache them, and run them on numpy arrays or torch
tensors (through HIP when a GPU is present, else on Tessel's emulator), or
on device arrays queued on streams.

    import numpy as np, tessel
    c = tessel.matmul(a, b, chip="gfx942")
    o = tessel.attention(q, k, v, causal=True)
    kernel = tessel.compile(ir_text, chip="gfx942")   # .hsaco, .isa, .report

    dev = tessel.Device()                              # HIP or the emulator
    s = dev.stream()
    c = tessel.matmul(dev.to_device(a), dev.to_device(b), stream=s)
    s.synchronize(); c.numpy()

    import tessel.ops                                  # torch.ops.tessel.*

A thin ctypes layer over libTesselC.so; the compiled kernels are cached in
memory and in TESSEL_CACHE_DIR (default ~/.cache/tessel; empty disables).
"""

import ctypes
import json

import numpy as np

from . import _capi
from ._capi import TesselError
from .device import NUMPY_FOR_ELEMENT, Device, DeviceArray, Event, Stream

def __getattr__(name):
    # tessel.__version__ comes from the library the package loads ("0.1.0"),
    # read on first use so that importing loads nothing.
    if name == "__version__":
        return version().split()[0]
    raise AttributeError("module 'tessel' has no attribute %r" % name)


def version():
    """The loaded library's version, git revision and LLVM:
    "0.1.0 (git 1234abcd5678, LLVM 22.1.8)"."""
    return _capi.lib().tesselGetVersion().decode()


__all__ = ["compile", "version", "matmul", "scaled_mm", "attention",
           "attention_backward", "attention_varlen",
           "attention_varlen_backward", "paged_attention",
           "cache_stats", "hip_available", "Kernel", "TesselError", "Device",
           "DeviceArray", "Stream", "Event"]


class Kernel:
    """A compiled module: its code object, report and kernels, callable on
    numpy arrays."""

    def __init__(self, handle):
        self._handle = handle

    def __del__(self):
        if getattr(self, "_handle", None):
            _capi.lib().tesselModuleDestroy(self._handle)
            self._handle = None

    @property
    def hsaco(self):
        """The HSACO code object (bytes)."""
        size = ctypes.c_size_t()
        data = _capi.lib().tesselModuleGetCodeObject(self._handle,
                                                     ctypes.byref(size))
        return ctypes.string_at(data, size.value)

    @property
    def isa(self):
        """The AMDGPU assembly (generated on first use)."""
        text = _capi.lib().tesselModuleGetAssembly(self._handle)
        if text is None:
            raise TesselError(_capi.last_error())
        return text.decode()

    @property
    def report(self):
        """Registers, LDS, spills, occupancy and arguments of every kernel."""
        return json.loads(_capi.lib().tesselModuleGetReport(self._handle))

    @property
    def kernels(self):
        lib = _capi.lib()
        return [lib.tesselModuleGetKernelName(self._handle, i).decode()
                for i in range(lib.tesselModuleGetNumKernels(self._handle))]

    def arguments(self, name=None):
        """The arguments problem `name` takes: per argument a dict with
        `array` (else a scalar), `element_type` ("f16", "bf16", ...),
        `shape` and `strides` (-1 where set at run time) and `written`."""
        name = self._problem_name(name)
        lib = _capi.lib()
        count = lib.tesselModuleGetNumArguments(self._handle, name.encode())
        if count < 0:
            raise TesselError(_capi.last_error())
        result = []
        for index in range(count):
            info = _capi.ArgumentInfo()
            if lib.tesselModuleGetArgument(self._handle, name.encode(), index,
                                           ctypes.byref(info)):
                raise TesselError(_capi.last_error())
            result.append({
                "array": bool(info.is_array),
                "element_type": info.element_type.decode(),
                "shape": tuple(info.shape[i] for i in range(info.rank)),
                "strides": tuple(info.strides[i] for i in range(info.rank)),
                "written": bool(info.written)})
        return result

    def _problem_name(self, name):
        if name is not None:
            return name
        problems = {k.split("__")[0] for k in self.kernels}
        if len(problems) != 1:
            raise TesselError("the module has several problems (%s); pass "
                              "name=" % ", ".join(sorted(problems)))
        return problems.pop()

    def __call__(self, *arrays, name=None, sizes=None, device="auto",
                 stream=None):
        """Runs problem `name` (default: the only one) over `arrays`, the
        problem function's arguments in order. The problem's sizes come
        from the arrays; `sizes` (dict of m, n, batch, seq_q, heads) is an
        optional check.

        Host arrays (numpy) run on `device` ("auto", "hip", "emulator") and
        the call returns when they are written: the arrays the kernel
        writes are written in place, the others only read (read-only
        arrays are fine). Strided arrays (e.g. `b.T`) are passed as they
        are when the kernel's layout takes them.

        tessel.DeviceArray arguments (all of one Device) are launched on
        `stream` (None: the device's default stream) and the call returns
        at once; synchronize the stream before reading the results."""
        name = self._problem_name(name)
        expected = self.arguments(name)
        if len(arrays) != len(expected):
            raise TesselError("problem '%s' takes %d arguments, got %d" %
                              (name, len(expected), len(arrays)))
        problem = _capi.ProblemSizes(**(sizes or {}))
        if any(isinstance(array, DeviceArray) for array in arrays):
            self._launch(name, arrays, expected, problem, device, stream)
            return
        if stream is not None:
            raise TesselError("stream= needs device arrays (tessel."
                              "DeviceArray); host arrays run synchronously")
        if device not in _capi.DEVICES:
            raise TesselError("device must be one of " +
                              ", ".join(_capi.DEVICES))
        keep = []  # ctypes arrays alive until the call returns
        buffers = (_capi.Buffer * len(arrays))()
        for index, (array, info) in enumerate(zip(arrays, expected)):
            if not info["array"]:
                buffers[index] = _scalar(index, array, info, keep)
                continue
            if not isinstance(array, np.ndarray):
                raise TesselError("argument %d: expected a numpy array, got %s"
                                  % (index, type(array).__name__))
            _check_argument(index, array, info)
            element_strides = [s // array.itemsize for s in array.strides]
            low, high = _byte_bounds(array)
            buffers[index] = _buffer(array.ctypes.data, high - low,
                                     array.shape, element_strides, keep)
        _capi.check(_capi.lib().tesselRun(self._handle, name.encode(),
                                          ctypes.byref(problem), buffers,
                                          len(arrays), _capi.DEVICES[device]))

    def _launch(self, name, arrays, expected, problem, device, stream):
        """Queues problem `name` on device arrays (see __call__)."""
        if device != "auto":
            raise TesselError("device= is for host arrays; device arrays run "
                              "on their own device")
        owner = None
        keep = []
        buffers = (_capi.Buffer * len(arrays))()
        for index, (array, info) in enumerate(zip(arrays, expected)):
            if not info["array"]:
                buffers[index] = _scalar(index, array, info, keep)
                continue
            if not isinstance(array, DeviceArray):
                raise TesselError("argument %d: expected a tessel.DeviceArray "
                                  "(arguments are all on the device or all "
                                  "on the host), got %s" %
                                  (index, type(array).__name__))
            if owner is None:
                owner = array.device
            elif array.device is not owner:
                raise TesselError("argument %d is on another device" % index)
            _check_element_type(index, array.dtype, info)
            buffers[index] = _buffer(array.ptr, array.nbytes, array.shape,
                                     array.strides, keep)
        if stream is not None and stream.device is not owner:
            raise TesselError("the stream belongs to another device")
        _capi.check(_capi.lib().tesselLaunch(
            owner._handle, stream._handle if stream is not None else None,
            self._handle, name.encode(), ctypes.byref(problem), buffers,
            len(arrays)))


def _scalar(index, value, info, keep):
    """A TesselBuffer holding scalar argument `index` (a Python or numpy
    number) in the kernel's type; its storage goes into `keep`."""
    dtype = np.dtype(NUMPY_FOR_ELEMENT.get(info["element_type"], "V1"))
    if dtype.itemsize not in (4, 8) or dtype.kind not in "fiu":
        raise TesselError("argument %d is a %s scalar, which kernel calls do "
                          "not pass" % (index, info["element_type"]))
    if isinstance(value, (np.ndarray, DeviceArray)) and value.ndim > 0:
        raise TesselError("argument %d: expected a %s scalar, got an array" %
                          (index, info["element_type"]))
    try:
        storage = np.array(value, dtype=dtype)
    except (TypeError, ValueError):
        raise TesselError("argument %d: expected a %s scalar, got %r" %
                          (index, info["element_type"], value)) from None
    keep.append(storage)
    return _capi.Buffer(storage.ctypes.data, storage.itemsize,
                        _capi.SCALAR_RANK, None, None)


def _buffer(address, nbytes, shape, element_strides, keep):
    """A TesselBuffer; its shape and strides arrays go into `keep`."""
    rank = len(shape)
    shape_array = (ctypes.c_int64 * max(rank, 1))(*shape)
    strides_array = (ctypes.c_int64 * max(rank, 1))(*element_strides)
    keep += [shape_array, strides_array]
    return _capi.Buffer(address, nbytes, rank, shape_array, strides_array)


def _check_element_type(index, dtype, info):
    """Raises TesselError unless an array of numpy `dtype` can be argument
    `index` (bf16 and the 8-bit floats travel as uint16 and uint8 bits)."""
    wanted = NUMPY_FOR_ELEMENT.get(info["element_type"])
    if wanted is None or np.dtype(dtype) != np.dtype(wanted):
        raise TesselError("argument %d: the kernel takes %s (numpy %s), got "
                          "an array of %s" % (index, info["element_type"],
                                              wanted or "none", dtype))


def _check_argument(index, array, info):
    """Raises TesselError when host `array` cannot be argument `index`."""
    _check_element_type(index, array.dtype, info)
    if info["written"] and not array.flags["WRITEABLE"]:
        raise TesselError("argument %d is an output and the array is "
                          "read-only" % index)
    if any(s < 0 or s % array.itemsize for s in array.strides):
        raise TesselError("argument %d: negative or unaligned strides %s; "
                          "pass np.ascontiguousarray(x)" %
                          (index, array.strides))


def _byte_bounds(array):
    """The [low, high) byte range an array touches, from its data pointer."""
    if array.size == 0:
        return 0, 0
    extent = sum((n - 1) * s for n, s in zip(array.shape, array.strides))
    return 0, extent + array.itemsize


class _Compiler:
    def __init__(self):
        self._handle = _capi.lib().tesselCompilerCreate(None)

    def compile(self, ir, chip):
        handle = _capi.lib().tesselCompile(self._handle, ir.encode(),
                                           chip.encode())
        if not handle:
            raise TesselError(_capi.last_error())
        return Kernel(handle)

    def compile_matmul(self, problem, chip):
        handle = _capi.lib().tesselCompileMatmul(self._handle,
                                                 ctypes.byref(problem),
                                                 chip.encode())
        if not handle:
            raise TesselError(_capi.last_error())
        return Kernel(handle)

    def compile_attention(self, problem, chip):
        handle = _capi.lib().tesselCompileAttention(self._handle,
                                                    ctypes.byref(problem),
                                                    chip.encode())
        if not handle:
            raise TesselError(_capi.last_error())
        return Kernel(handle)

    def stats(self):
        stats = _capi.CacheStats()
        _capi.lib().tesselCompilerGetCacheStats(self._handle,
                                                ctypes.byref(stats))
        return {name: getattr(stats, name) for name, _ in stats._fields_}


_compiler = None


def _default_compiler():
    global _compiler
    if _compiler is None:
        _compiler = _Compiler()
    return _compiler


def compile(ir, chip="gfx942"):
    """Compiles Tessel IR (MLIR text) for `chip` into a Kernel (cached)."""
    return _default_compiler().compile(ir, chip)


def cache_stats():
    """Hits and misses of this process's compiler cache."""
    return _default_compiler().stats()


def hip_available():
    return bool(_capi.lib().tesselHipAvailable())


from .problems import (attention, attention_backward,  # noqa: E402
                       attention_varlen, attention_varlen_backward, matmul,
                       paged_attention, scaled_mm)
