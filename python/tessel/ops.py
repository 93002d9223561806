"""Tessel's kernels as PyTorch operators: `import tessel.ops` registers

    torch.ops.tessel.matmul(a, b, bias=None, residual=None, activation="none",
                            alpha=None)
    torch.ops.tessel.scaled_mm(a, b, scale_a, scale_b, bias=None,
                               out_dtype="bf16", a_type=None)
    torch.ops.tessel.attention(q, k, v, causal=False, scale=None,
                               window_left=-1, window_right=-1, sinks=None)

with the semantics of tessel.matmul, tessel.scaled_mm and tessel.attention.
CPU tensors run on Tessel's emulator (compiled for TESSEL_CHIP, default
gfx942); GPU tensors (a ROCm build of torch, device "cuda") run through HIP
on torch's current stream, on the tensors' own memory, with the output
allocated by torch: nothing leaves the device and nothing waits for the
host. Meta implementations give output shapes to tracing.

Registered with torch.library.Library (define + impl per dispatch key),
which is what torch 1.13 offers. A newer torch would add
torch.library.custom_op with register_fake (torch.compile's fake tensors)
and register_autograd; fp8 dtypes (float8_e4m3fn/fnuz), which this torch
lacks, would replace scaled_mm's uint8 bits.
"""

import os

import numpy as np
import torch
from torch.library import Library

from . import problems
from .device import Device

_library = Library("tessel", "DEF")
_library.define(
    'matmul(Tensor a, Tensor b, Tensor? bias=None, Tensor? residual=None, '
    'str activation="none", float? alpha=None) -> Tensor')
_library.define(
    'scaled_mm(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b, '
    'Tensor? bias=None, str out_dtype="bf16", str? a_type=None) -> Tensor')
_library.define(
    'attention(Tensor q, Tensor k, Tensor v, bool causal=False, '
    'float? scale=None, int window_left=-1, int window_right=-1, '
    'Tensor? sinks=None) -> Tensor')

_SCALED_OUT = {"bf16": torch.bfloat16, "f16": torch.float16,
               "f32": torch.float32}


def _activation(name):
    return None if name == "none" else name


def _cpu_chip():
    return os.environ.get("TESSEL_CHIP", "gfx942")


# CPU: the emulator on the tensors' memory (numpy views, no copies).

def _matmul_cpu(a, b, bias=None, residual=None, activation="none",
                alpha=None):
    return problems.matmul(a, b, alpha=alpha, bias=bias, residual=residual,
                           activation=_activation(activation),
                           chip=_cpu_chip(), device="emulator")


def _scaled_mm_cpu(a, b, scale_a, scale_b, bias=None, out_dtype="bf16",
                   a_type=None):
    return problems.scaled_mm(a, b, scale_a, scale_b, bias=bias,
                              out_dtype=out_dtype, a_type=a_type,
                              chip=_cpu_chip(), device="emulator")


def _attention_cpu(q, k, v, causal=False, scale=None, window_left=-1,
                   window_right=-1, sinks=None):
    return problems.attention(q, k, v, causal=causal, scale=scale,
                              window_size=(window_left, window_right),
                              sinks=sinks, chip=_cpu_chip(),
                              device="emulator")


# GPU: HIP on torch's stream and memory.

_hip_device = None
# Tessel's stream over each torch stream, kept: a split-K or split-KV
# kernel's workspaces belong to the stream and are reused by every launch
# on it (a new wrapper per call would allocate and free them each time,
# and hipFree waits for the whole device).
_wrapped_streams = {}


def _gpu_context(tensor):
    """Tessel's HIP device, the chip of `tensor`'s GPU and torch's current
    stream there."""
    global _hip_device
    if tensor.device.index not in (None, 0):
        raise problems.TesselError(
            "Tessel's HIP runtime drives GPU 0; the tensor is on %s" %
            tensor.device)
    if _hip_device is None:
        _hip_device = Device("hip")
    chip = torch.cuda.get_device_properties(tensor.device).gcnArchName
    native = torch.cuda.current_stream(tensor.device).cuda_stream
    stream = _wrapped_streams.get(native)
    if stream is None:
        stream = _wrapped_streams[native] = _hip_device.wrap_stream(native)
    return _hip_device, chip, stream


_NUMPY_OF_TORCH = {torch.float16: np.float16, torch.float32: np.float32,
                   torch.int8: np.int8, torch.int32: np.int32,
                   torch.uint8: np.uint8, torch.bfloat16: np.uint16}


def _wrap(device, tensor, keep_layout=False):
    """A DeviceArray over a GPU tensor's memory (kept alive with it); made
    contiguous on the GPU first unless it already is, or is a transposed
    2-D array the kernel reads in place (`keep_layout`)."""
    if tensor is None:
        return None
    transposed = (keep_layout and tensor.dim() == 2 and
                  tensor.t().is_contiguous())
    if not tensor.is_contiguous() and not transposed:
        tensor = tensor.contiguous()
    dtype = _NUMPY_OF_TORCH.get(tensor.dtype)
    if dtype is None:
        raise problems.TesselError("unsupported dtype %s" % tensor.dtype)
    return device.wrap(tensor.data_ptr(), tuple(tensor.shape), dtype,
                       tensor.stride(), owner=tensor)


def _matmul_gpu(a, b, bias=None, residual=None, activation="none",
                alpha=None):
    device, chip, stream = _gpu_context(a)
    out_dtype = torch.int32 if a.dtype == torch.int8 else a.dtype
    out = torch.empty(tuple(a.shape[:-1]) + (b.shape[-1],), dtype=out_dtype,
                      device=a.device)
    problems.matmul(
        _wrap(device, a, True), _wrap(device, b, True), alpha=alpha,
        bias=_wrap(device, bias.float() if bias is not None else None),
        residual=_wrap(device, residual),
        activation=_activation(activation), chip=chip,
        out=_wrap(device, out), stream=stream)
    return out


def _scaled_mm_gpu(a, b, scale_a, scale_b, bias=None, out_dtype="bf16",
                   a_type=None):
    device, chip, stream = _gpu_context(a)
    out = torch.empty((a.shape[0], b.shape[1]), dtype=_SCALED_OUT[out_dtype],
                      device=a.device)
    problems.scaled_mm(
        _wrap(device, a), _wrap(device, b, True),
        _wrap(device, scale_a.float()), _wrap(device, scale_b.float()),
        bias=_wrap(device, bias.float() if bias is not None else None),
        out_dtype=out_dtype, a_type=a_type, chip=chip,
        out=_wrap(device, out), stream=stream)
    return out


def _attention_gpu(q, k, v, causal=False, scale=None, window_left=-1,
                   window_right=-1, sinks=None):
    device, chip, stream = _gpu_context(q)
    out = torch.empty(tuple(q.shape[:3]) + (v.shape[3],), dtype=q.dtype,
                      device=q.device)
    problems.attention(
        _wrap(device, q), _wrap(device, k), _wrap(device, v), causal=causal,
        scale=scale, window_size=(window_left, window_right),
        sinks=_wrap(device, sinks.float() if sinks is not None else None),
        chip=chip, out=_wrap(device, out), stream=stream)
    return out


# Meta: shapes and dtypes only.

def _matmul_meta(a, b, bias=None, residual=None, activation="none",
                 alpha=None):
    out_dtype = torch.int32 if a.dtype == torch.int8 else a.dtype
    return a.new_empty(tuple(a.shape[:-1]) + (b.shape[-1],), dtype=out_dtype)


def _scaled_mm_meta(a, b, scale_a, scale_b, bias=None, out_dtype="bf16",
                    a_type=None):
    return a.new_empty((a.shape[0], b.shape[1]), dtype=_SCALED_OUT[out_dtype])


def _attention_meta(q, k, v, causal=False, scale=None, window_left=-1,
                    window_right=-1, sinks=None):
    return q.new_empty(tuple(q.shape[:3]) + (v.shape[3],))


def _on_gpu0(function):
    """`function` with GPU 0 current on the calling thread: HIP's current
    device is per thread, and Tessel's allocations and launches go to it."""
    def run(*args, **kwargs):
        with torch.cuda.device(0):
            return function(*args, **kwargs)
    return run


for _name, _cpu, _gpu, _meta in (
        ("matmul", _matmul_cpu, _matmul_gpu, _matmul_meta),
        ("scaled_mm", _scaled_mm_cpu, _scaled_mm_gpu, _scaled_mm_meta),
        ("attention", _attention_cpu, _attention_gpu, _attention_meta)):
    _library.impl(_name, _cpu, "CPU")
    _library.impl(_name, _on_gpu0(_gpu), "CUDA")
    _library.impl(_name, _meta, "Meta")
    # This torch has no autograd fallthrough for meta tensors; the ops have
    # no derivative, so the meta kernel serves that key as well.
    _library.impl(_name, _meta, "AutogradMeta")
