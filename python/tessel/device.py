"""The device-resident runtime from Python: arrays that stay in device
memory, streams, events, and kernels launched on device arrays without host
round trips.

    dev = tessel.Device()                 # HIP if there is a GPU, else the emulator
    a = dev.to_device(a_host)             # DeviceArray
    c = dev.empty((m, n), np.float16)
    s = dev.stream()
    kernel(a, b, c, stream=s)             # queued; returns at once
    result = c.numpy()                    # waits for the default stream only
    s.synchronize(); result = c.numpy()

The emulator implements the same calls (checked device memory, one thread
per stream), so a program written against a Device runs with and without a
GPU.
"""

import ctypes
import weakref

import numpy as np

from . import _capi
from ._capi import TesselError

# numpy dtypes of Tessel element types (bf16 and the 8-bit floats have no
# numpy dtype: their bits travel as uint16 and uint8).
NUMPY_FOR_ELEMENT = {
    "f16": "float16", "f32": "float32", "f64": "float64", "bf16": "uint16",
    "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "index": "int64",
    "f8E4M3FNUZ": "uint8", "f8E5M2FNUZ": "uint8", "f8E4M3FN": "uint8",
    "f8E5M2": "uint8"}


def _numpy_dtype(dtype):
    """A numpy dtype from a numpy dtype or a Tessel element type name."""
    if isinstance(dtype, str) and dtype in NUMPY_FOR_ELEMENT:
        return np.dtype(NUMPY_FOR_ELEMENT[dtype])
    try:
        return np.dtype(dtype)
    except TypeError:
        raise TesselError("unknown dtype %r" % (dtype,)) from None


def _dense_strides(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


class Device:
    """A GPU through HIP or the emulator: `kind` "auto" (HIP when a GPU is
    present), "hip" or "emulator"."""

    def __init__(self, kind="auto"):
        if kind not in _capi.DEVICES:
            raise TesselError("device must be one of " +
                              ", ".join(_capi.DEVICES))
        self._handle = _capi.lib().tesselContextCreate(_capi.DEVICES[kind])
        if not self._handle:
            raise TesselError(_capi.last_error())
        self.kind = _capi.DEVICE_NAMES[
            _capi.lib().tesselContextGetDevice(self._handle)]
        self._streams = weakref.WeakSet()  # to release their host buffers

    def __del__(self):
        if getattr(self, "_handle", None):
            _capi.lib().tesselContextDestroy(self._handle)
            self._handle = None

    def __repr__(self):
        return "tessel.Device(%r)" % self.kind

    def empty(self, shape, dtype):
        """An uninitialized device array (the emulator fills it with 0xff
        bytes, NaN in every float type)."""
        return DeviceArray._allocate(self, tuple(int(s) for s in shape),
                                     _numpy_dtype(dtype))

    def zeros(self, shape, dtype, stream=None):
        array = self.empty(shape, dtype)
        _capi.check(_capi.lib().tesselMemset(
            self._handle, array.ptr, 0, array.nbytes, _stream_handle(stream)))
        return array

    def to_device(self, array, stream=None):
        """A device copy of a host array (numpy, or a torch CPU tensor; a
        torch bfloat16 tensor becomes uint16 bits). With a stream the copy
        is queued and the host array is kept alive until the stream is
        synchronized."""
        host = _host_array(array)
        result = self.empty(host.shape, host.dtype)
        result.copy_from(host, stream)
        return result

    def wrap(self, pointer, shape, dtype, strides=None, owner=None):
        """A device array over memory someone else allocated (a torch GPU
        tensor's data_ptr()); `owner` is kept alive with the array.
        `strides` are in elements (default: dense row-major)."""
        dtype = _numpy_dtype(dtype)
        shape = tuple(int(s) for s in shape)
        strides = tuple(int(s) for s in strides) if strides is not None \
            else _dense_strides(shape)
        return DeviceArray(self, int(pointer), shape, dtype, strides,
                           owner=owner)

    def stream(self):
        """A new stream (its work runs in order, asynchronously)."""
        handle = _capi.lib().tesselStreamCreate(self._handle)
        if not handle:
            raise TesselError(_capi.last_error())
        return self._track(Stream(self, handle))

    def wrap_stream(self, native):
        """A stream over a hipStream_t the caller owns, e.g.
        torch.cuda.current_stream().cuda_stream (HIP devices only)."""
        handle = _capi.lib().tesselStreamWrap(self._handle,
                                              ctypes.c_void_p(native))
        if not handle:
            raise TesselError(_capi.last_error())
        return self._track(Stream(self, handle))

    def _track(self, stream):
        self._streams.add(stream)
        return stream

    def event(self):
        handle = _capi.lib().tesselEventCreate(self._handle)
        if not handle:
            raise TesselError(_capi.last_error())
        return Event(self, handle)

    def synchronize(self):
        """Waits for all work on every stream of the device; raises the
        first error of any stream's work."""
        try:
            _capi.check(_capi.lib().tesselContextSynchronize(self._handle))
        finally:
            for stream in list(self._streams):
                stream._keep.clear()


def _stream_handle(stream):
    return stream._handle if stream is not None else None


def _host_array(value):
    """A numpy array for a host value: numpy as it is, a torch CPU tensor
    without a copy (bfloat16 as its uint16 bits)."""
    if type(value).__module__.startswith("torch"):
        import torch
        if value.device.type != "cpu":
            raise TesselError("expected a host array, got a tensor on %s" %
                              value.device)
        if value.dtype == torch.bfloat16:
            return value.detach().view(torch.int16).numpy().view(np.uint16)
        return value.detach().numpy()
    return np.asarray(value)


class DeviceArray:
    """An array in a Device's memory: `ptr`, `shape`, `dtype` (numpy; bf16
    as uint16), `strides` in elements. Freed with the object (after the
    work queued on it) unless it wraps memory owned elsewhere."""

    def __init__(self, device, ptr, shape, dtype, strides, owner=None,
                 owned=False):
        self.device = device
        self.ptr = ptr
        self.shape = shape
        self.dtype = dtype
        self.strides = strides
        self._owner = owner
        self._owned = owned

    @classmethod
    def _allocate(cls, device, shape, dtype):
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        pointer = _capi.lib().tesselDeviceAlloc(device._handle, nbytes)
        if not pointer:
            raise TesselError(_capi.last_error())
        return cls(device, pointer, shape, dtype, _dense_strides(shape),
                   owned=True)

    def __del__(self):
        if getattr(self, "_owned", False) and self.device._handle:
            _capi.lib().tesselDeviceFree(self.device._handle, self.ptr)
            self._owned = False

    def __repr__(self):
        return "tessel.DeviceArray(shape=%s, dtype=%s, device=%r)" % (
            self.shape, self.dtype, self.device.kind)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self):
        """The bytes the array spans (from its first to its last element)."""
        if self.size == 0:
            return 0
        extent = sum((n - 1) * s for n, s in zip(self.shape, self.strides))
        return (extent + 1) * self.dtype.itemsize

    def is_contiguous(self):
        return self.strides == _dense_strides(self.shape) or self.size <= 1

    def reshape(self, *shape):
        """A view with another shape (contiguous arrays only)."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = tuple(int(s) for s in shape)
        if -1 in shape:
            known = int(np.prod([s for s in shape if s != -1]))
            shape = tuple(self.size // max(known, 1) if s == -1 else s
                          for s in shape)
        if int(np.prod(shape, dtype=np.int64)) != self.size:
            raise TesselError("cannot reshape %s into %s" % (self.shape,
                                                             shape))
        if not self.is_contiguous():
            raise TesselError("reshape of a strided device array")
        return DeviceArray(self.device, self.ptr, shape, self.dtype,
                           _dense_strides(shape), owner=self)

    @property
    def T(self):
        """The transpose of a 2-D array, as a view."""
        if self.ndim != 2:
            raise TesselError(".T of a %d-D device array" % self.ndim)
        return DeviceArray(self.device, self.ptr, self.shape[::-1],
                           self.dtype, self.strides[::-1], owner=self)

    def copy_from(self, host, stream=None):
        """Copies a host array of the same shape and dtype into this one
        (contiguous arrays). With a stream the copy is queued and `host` is
        kept alive until the stream is synchronized."""
        host = np.ascontiguousarray(_host_array(host))
        self._check_like(host)
        _capi.check(_capi.lib().tesselMemcpy(
            self.device._handle, self.ptr, host.ctypes.data, host.nbytes,
            _capi.COPY_HOST_TO_DEVICE, _stream_handle(stream)))
        if stream is not None:
            stream._keep.append(host)

    def numpy(self, stream=None):
        """A host copy. Without a stream the copy runs on the default stream
        and is waited for; with one it is queued, and the returned array is
        valid once the stream is synchronized."""
        if not self.is_contiguous():
            raise TesselError("copy of a strided device array to the host")
        host = np.empty(self.shape, self.dtype)
        _capi.check(_capi.lib().tesselMemcpy(
            self.device._handle, host.ctypes.data, self.ptr, host.nbytes,
            _capi.COPY_DEVICE_TO_HOST, _stream_handle(stream)))
        if stream is not None:
            stream._keep.append(host)
        return host

    def _check_like(self, host):
        if host.shape != self.shape or host.dtype != self.dtype:
            raise TesselError("a %s %s array does not fit a %s %s device "
                              "array" % (host.shape, host.dtype, self.shape,
                                         self.dtype))
        if not self.is_contiguous():
            raise TesselError("copy into a strided device array")


class Stream:
    """An in-order queue of device work."""

    def __init__(self, device, handle):
        self.device = device
        self._handle = handle
        self._keep = []  # host arrays of queued copies

    def __del__(self):
        if getattr(self, "_handle", None):
            # Queued copies may still read host buffers kept here (a
            # wrapped stream is not waited for when it is destroyed).
            if self._keep:
                _capi.lib().tesselStreamSynchronize(self._handle)
            _capi.lib().tesselStreamDestroy(self._handle)
            self._handle = None

    def synchronize(self):
        """Waits for the queued work; raises the first error it met."""
        try:
            _capi.check(_capi.lib().tesselStreamSynchronize(self._handle))
        finally:
            self._keep.clear()

    def wait(self, event):
        """Later work on this stream waits for `event`'s latest record."""
        _capi.check(_capi.lib().tesselStreamWaitEvent(self._handle,
                                                      event._handle))

    def record(self, event=None):
        """Records `event` (a new one by default) here and returns it."""
        event = event or self.device.event()
        event.record(self)
        return event


class Event:
    """A point in a stream, to wait for or to time."""

    def __init__(self, device, handle):
        self.device = device
        self._handle = handle

    def __del__(self):
        if getattr(self, "_handle", None):
            _capi.lib().tesselEventDestroy(self._handle)
            self._handle = None

    def record(self, stream=None):
        _capi.check(_capi.lib().tesselEventRecord(self._handle,
                                                  _stream_handle(stream)))

    def synchronize(self):
        _capi.check(_capi.lib().tesselEventSynchronize(self._handle))

    def query(self):
        """Whether the latest record has completed."""
        status = _capi.lib().tesselEventQuery(self._handle)
        if status < 0:
            raise TesselError(_capi.last_error())
        return bool(status)

    def elapsed_ms(self, start):
        """Milliseconds from `start` to this event (both completed)."""
        milliseconds = ctypes.c_float()
        _capi.check(_capi.lib().tesselEventElapsedTime(
            ctypes.byref(milliseconds), start._handle, self._handle))
        return milliseconds.value
