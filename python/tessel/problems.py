"""matmul, scaled_mm and attention: problem descriptions built through the
C API (tesselCompileMatmul, tesselCompileAttention), compiled once per
description (sizes that vary at run time are dynamic), run on host arrays
(numpy or torch CPU tensors) or on device arrays (tessel.DeviceArray,
queued on a stream without host round trips)."""

import numpy as np

from . import _capi
from ._capi import TesselError
from .device import DeviceArray, _host_array


class _HostArrays:
    """Host arrays: numpy (torch CPU tensors through numpy, without copies;
    bfloat16 as uint16 bits), run with tesselRun on `device`."""

    def __init__(self, device, from_torch):
        self.device = device
        self.from_torch = from_torch  # return torch tensors

    @staticmethod
    def take(value):
        return _host_array(value)

    @staticmethod
    def strides(x):
        return tuple(s // x.itemsize for s in x.strides)

    @staticmethod
    def contiguous(x, what):
        return np.ascontiguousarray(x)

    @staticmethod
    def float32(value, what):
        return np.ascontiguousarray(_host_array(value), dtype=np.float32)

    @staticmethod
    def output(shape, dtype, out):
        if out is None:
            return np.zeros(shape, dtype)
        out = _host_array(out)
        _check_out(out, shape, dtype)
        if not out.flags["C_CONTIGUOUS"]:
            raise TesselError("out must be C-contiguous")
        return out

    def run(self, kernel, arrays, name, sizes=None):
        kernel(*arrays, name=name, sizes=sizes, device=self.device)

    def result(self, array):
        """`array` as the caller's kind of array: a torch tensor for torch
        inputs (uint16 bf16 bits as a bfloat16 tensor, without a copy)."""
        if not self.from_torch:
            return array
        import torch
        if array.dtype == np.uint16:
            return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
        return torch.from_numpy(array)


class _DeviceArrays:
    """tessel.DeviceArray operands on one Device, launched on `stream`
    (None: the device's default stream); nothing is copied implicitly but
    small host parameters (bias, scales, sinks), which are uploaded."""

    def __init__(self, device, stream):
        self.device = device
        self.stream = stream

    def take(self, value):
        if not isinstance(value, DeviceArray):
            raise TesselError("mixing host and device arrays: pass "
                              "tessel.DeviceArray operands (Device.to_device)")
        if value.device is not self.device:
            raise TesselError("device arrays of two different devices")
        return value

    @staticmethod
    def strides(x):
        return x.strides

    @staticmethod
    def contiguous(x, what):
        if not x.is_contiguous():
            raise TesselError("%s is a strided device array the kernel "
                              "cannot read in place; make it contiguous" %
                              what)
        return x

    def float32(self, value, what):
        if isinstance(value, DeviceArray):
            if value.dtype != np.float32:
                raise TesselError("%s must be float32, got %s" %
                                  (what, value.dtype))
            return self.contiguous(self.take(value), what)
        host = np.ascontiguousarray(_host_array(value), dtype=np.float32)
        return self.device.to_device(host, self.stream)

    def output(self, shape, dtype, out):
        if out is None:
            return self.device.empty(shape, dtype)
        out = self.take(out)
        _check_out(out, shape, dtype)
        if not out.is_contiguous():
            raise TesselError("out must be a contiguous device array")
        return out

    def run(self, kernel, arrays, name, sizes=None):
        kernel(*arrays, name=name, sizes=sizes, stream=self.stream)

    @staticmethod
    def result(array):
        return array


def _check_out(out, shape, dtype):
    if tuple(out.shape) != tuple(shape) or np.dtype(out.dtype) != dtype:
        raise TesselError("out must be a %s %s array, got %s %s" % (
            shape, np.dtype(dtype), tuple(out.shape), out.dtype))


def _arrays_for(first, device, stream):
    """The backend for operands like `first`, and `first` taken by it."""
    if isinstance(first, DeviceArray):
        if device != "auto":
            raise TesselError("device= is for host arrays; device arrays "
                              "run on their own device")
        arrays = _DeviceArrays(first.device, stream)
        return arrays, arrays.take(first)
    if stream is not None:
        raise TesselError("stream= needs device arrays (tessel.DeviceArray)")
    from_torch = type(first).__module__.startswith("torch")
    return _HostArrays(device, from_torch), _host_array(first)


def _kind_of_layout(shape, strides):
    """"row" (dense row-major), "column" (the transpose of a dense array,
    which the kernel reads in place) or None."""
    dense = []
    step = 1
    for size in reversed(shape):
        dense.append(step)
        step *= max(size, 1)
    dense = tuple(reversed(dense))
    if all(n <= 1 or s == d for n, s, d in zip(shape, strides, dense)):
        return "row"
    if len(shape) == 2 and (shape[0] <= 1 or strides[0] == 1) and \
            (shape[1] <= 1 or strides[1] == shape[0]):
        return "column"
    return None


def _operand(arrays, x, what, allow_column):
    """`x` laid out as the kernel can read it, and whether it is read
    transposed (column-major)."""
    layout = _kind_of_layout(x.shape, arrays.strides(x))
    if layout == "column" and allow_column:
        return x, True
    if layout == "row":
        return x, False
    return arrays.contiguous(x, what), False


# Input dtypes of matmul and their Tessel types: bf16 travels as its uint16
# bits (numpy has no bfloat16; torch bfloat16 tensors are converted).
_MATMUL_TYPES = {np.dtype(np.float16): "f16", np.dtype(np.float32): "f32",
                 np.dtype(np.int8): "i8", np.dtype(np.uint16): "bf16"}
_MATMUL_OUTPUTS = {"f16": np.float16, "f32": np.float32, "i8": np.int32,
                   "bf16": np.uint16}


# Up to this many rows of C, matmul keeps M static by default: the compiler
# splits K over workgroups for such shapes (decode GEMMs, where the tiles do
# not fill the chip), and a split-K workspace is sized at compile time.
_STATIC_M_ROWS = 64


def matmul(a, b, *, chip="gfx942", alpha=None, bias=None, activation=None,
           residual=None, config=None, dynamic="auto", out=None,
           device="auto", stream=None):
    """a @ b on the GPU (or the emulator). `a` is (M, K) or (batch, M, K);
    `b` is (K, N), or (batch, K, N) with a batched `a` (a 2-D `b` with a 3-D
    `a` is a weight shared by the batch). dtypes: float16, float32, int8
    (-> int32) and bfloat16 (torch bfloat16 tensors, or uint16 arrays of
    bf16 bits), accumulated in f32 (i32); the output has the input's type.
    A 2-D `b` (or `a`) that is the transpose of a contiguous array, as a
    weight `w.T` is, is read in place. Epilogue, in this order: `alpha` (a
    number scaling the product, passed at run time: one compile serves
    every value), `bias` (N,) per column or (M, 1) per row (float32),
    `residual` (shaped like the output, of its type), `activation` ('relu',
    'gelu', 'silu'). `config` (a "#tessel.config<...>") fixes the tiling.
    `dynamic` lists the sizes passed at run time ("m", "batch", "n", "k");
    "auto" makes M and the batch dynamic (one compile serves every batch
    size) except for at most 64 rows, where a static M lets the compiler
    split K. `chip` may be a full target id ("gfx942:sramecc+:xnack-").

    Host arrays (numpy, torch CPU tensors) run on `device` and return a
    host result. tessel.DeviceArray operands are launched on `stream` of
    their device and return a DeviceArray at once (`out`, if given, is
    written instead of a new array)."""
    arrays, a = _arrays_for(a, device, stream)
    b = arrays.take(b)
    element = _MATMUL_TYPES.get(np.dtype(a.dtype))
    if element is None:
        raise TesselError("a has dtype %s; supported: float16, float32, "
                          "int8, bfloat16 (uint16 bits)" % a.dtype)
    if b.dtype != a.dtype:
        raise TesselError("a and b must have the same dtype, got %s and %s"
                          % (a.dtype, b.dtype))
    if (a.ndim not in (2, 3) or b.ndim not in (2, a.ndim) or
            a.shape[-1] != b.shape[-2]):
        raise TesselError("shapes %s and %s do not multiply" %
                          (tuple(a.shape), tuple(b.shape)))
    if a.ndim == 3 and b.ndim == 3 and a.shape[0] != b.shape[0]:
        raise TesselError("batch sizes differ: %d and %d" %
                          (a.shape[0], b.shape[0]))
    out_shape = tuple(a.shape[:-1]) + (b.shape[-1],)
    # A weight shared by the batch: one GEMM over batch x M rows.
    if a.ndim == 3 and b.ndim == 2:
        a = arrays.contiguous(a, "a").reshape(-1, a.shape[-1])
    batched = a.ndim == 3
    a, transpose_a = _operand(arrays, a, "a", allow_column=not batched)
    b, transpose_b = _operand(arrays, b, "b", allow_column=not batched)
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    c_shape = tuple(a.shape[:-1]) + (n,)
    c = arrays.output(out_shape, _MATMUL_OUTPUTS[element], out)
    c = c.reshape(c_shape) if c_shape != out_shape else c
    operands = [a, b, c]
    if alpha is not None:
        operands.append(float(alpha))
    bias_kind = "none"
    if bias is not None:
        bias = arrays.float32(bias, "bias")
        if tuple(bias.shape) == (n,):
            bias_kind = "n"
        elif tuple(bias.shape) in ((m, 1), (m,)) and not batched:
            bias, bias_kind = bias.reshape(m, 1), "m"
        else:
            raise TesselError("bias must have shape (N,) = (%d,) or (M, 1) "
                              "= (%d, 1), got %s" % (n, m, tuple(bias.shape)))
        operands.append(bias)
    if residual is not None:
        residual = arrays.contiguous(arrays.take(residual), "residual")
        if np.dtype(residual.dtype) != np.dtype(c.dtype):
            raise TesselError("residual must have the output's dtype %s, got "
                              "%s" % (c.dtype, residual.dtype))
        if residual.size != c.size:
            raise TesselError("residual must have the output's shape %s, got "
                              "%s" % (out_shape, tuple(residual.shape)))
        operands.append(residual.reshape(c_shape))
    if activation not in (None, "relu", "gelu", "silu"):
        raise TesselError("activation must be None, 'relu', 'gelu' or "
                          "'silu', got %r" % (activation,))
    problem = _capi.MatmulProblem(
        m=m, n=n, k=k, batch=a.shape[0] if batched else 0,
        a_type=element.encode(), transpose_a=int(transpose_a),
        transpose_b=int(transpose_b), bias=bias_kind.encode(),
        residual=int(residual is not None), alpha=int(alpha is not None),
        activation=(activation or "none").encode(),
        dynamic=_matmul_dynamic(dynamic, m, batched).encode(),
        config=config.encode() if config else None)
    from . import _default_compiler
    kernel = _default_compiler().compile_matmul(problem, chip)
    arrays.run(kernel, operands, "matmul")
    return arrays.result(c.reshape(out_shape) if c_shape != out_shape else c)


def _matmul_dynamic(dynamic, m, batched):
    """The C API's comma-separated dynamic sizes for matmul's `dynamic`."""
    if dynamic == "auto":
        if m <= _STATIC_M_ROWS:
            return ""
        return "m,batch" if batched else "m"
    if isinstance(dynamic, str):
        raise TesselError("dynamic must be \"auto\" or a list of sizes "
                          "(\"m\", \"n\", \"k\", \"batch\"), got %r" %
                          dynamic)
    return ",".join(dynamic)


# The 8-bit float a chip multiplies by default (FNUZ before gfx950, OCP on
# it), as scaled_mm's a_type.
_DEFAULT_FP8 = {"gfx942": "f8E4M3FNUZ", "gfx950": "f8E4M3FN",
                "gfx1201": "f8E4M3FN"}

# numpy dtypes of scaled_mm's outputs (bf16 travels as uint16 bits).
_SCALED_OUTPUTS = {"f16": np.float16, "bf16": np.uint16, "f32": np.float32}


def _scale_kind(arrays, scale, rows, what, per):
    """`scale` as a contiguous float32 array and its kind: one value
    (shape () or (1,)) is "tensor", else `per` with `rows` values."""
    scale = arrays.float32(scale, what)
    if scale.size == 1:
        return scale.reshape(1), "tensor"
    wanted = (rows, 1) if per == "row" else (1, rows)
    if tuple(scale.shape) not in (wanted, (rows,)):
        raise TesselError("%s must have one value or shape %s, got %s" %
                          (what, wanted, tuple(scale.shape)))
    return scale.reshape((rows, 1) if per == "row" else (rows,)), per


def scaled_mm(a, b, scale_a, scale_b, *, bias=None, out_dtype="bf16",
              a_type=None, b_type=None, chip="gfx942", out=None,
              device="auto", stream=None):
    """torch._scaled_mm on 8-bit floats: (a @ b) * scale_a * scale_b + bias.
    `a` (M, K) and `b` (K, N) hold fp8 bits as uint8 arrays (numpy and this
    torch have no fp8 dtypes); `b` may be the transpose of an (N, K) array,
    as torch passes it, and is then read in place. `a_type` names the
    format (default f8E4M3FNUZ on gfx942, f8E4M3FN on gfx950), `b_type`
    defaults to it. `scale_a` is one float32 or one per row ((M, 1));
    `scale_b` one or one per column ((1, N)); `bias` (N,) float32. The
    output is `out_dtype` "bf16" (returned as uint16 bits), "f16" or
    "f32", accumulated in f32. Device arrays as for matmul."""
    arrays, a = _arrays_for(a, device, stream)
    b = arrays.take(b)
    if a.dtype != np.uint8 or b.dtype != np.uint8:
        raise TesselError("a and b must be uint8 arrays of fp8 bits")
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise TesselError("shapes %s and %s do not multiply" %
                          (tuple(a.shape), tuple(b.shape)))
    if out_dtype not in _SCALED_OUTPUTS:
        raise TesselError("out_dtype must be one of " +
                          ", ".join(_SCALED_OUTPUTS))
    a_type = a_type or _DEFAULT_FP8.get(chip.split(":")[0])
    if a_type is None:
        raise TesselError("%s has no 8-bit float matrix instructions" % chip)
    m, k = a.shape
    n = b.shape[1]
    a = arrays.contiguous(a, "a")
    b, transpose_b = _operand(arrays, b, "b", allow_column=True)
    scale_a, kind_a = _scale_kind(arrays, scale_a, m, "scale_a", "row")
    scale_b, kind_b = _scale_kind(arrays, scale_b, n, "scale_b", "column")
    c = arrays.output((m, n), _SCALED_OUTPUTS[out_dtype], out)
    operands = [a, b, c, scale_a, scale_b]
    if bias is not None:
        bias = arrays.float32(bias, "bias")
        if tuple(bias.shape) != (n,):
            raise TesselError("bias must have shape (N,) = (%d,)" % n)
        operands.append(bias)
    problem = _capi.MatmulProblem(
        m=m, n=n, k=k, a_type=a_type.encode(),
        b_type=(b_type or a_type).encode(), c_type=out_dtype.encode(),
        transpose_b=int(transpose_b), scale_a=kind_a.encode(),
        scale_b=kind_b.encode(),
        bias=b"n" if bias is not None else b"none")
    from . import _default_compiler
    kernel = _default_compiler().compile_matmul(problem, chip)
    arrays.run(kernel, operands, "matmul")
    return arrays.result(c)


_ATTENTION_TYPES = {np.dtype(np.float16): "f16", np.dtype(np.uint16): "bf16"}
# Outputs of 8-bit attention (bf16 travels as uint16 bits).
_ATTENTION_OUTPUTS = {"bf16": np.uint16, "f16": np.float16,
                      "f32": np.float32}

# A static query length up to this takes the split-KV decode plan (the
# compiler's rule), so it stays static there.
_DECODE_QUERIES = 16


def _attention_element(q, k, v, fp8_type, chip):
    """The Tessel element type of q, k and v: f16 or bf16 by dtype, or an
    8-bit float (uint8 bits) named by `fp8_type` (default: the chip's)."""
    if not (q.dtype == k.dtype == v.dtype):
        raise TesselError("q, k and v must have one dtype, got %s, %s and %s"
                          % (q.dtype, k.dtype, v.dtype))
    if np.dtype(q.dtype) == np.uint8:
        element = fp8_type or _DEFAULT_FP8.get(chip.split(":")[0])
        if element is None:
            raise TesselError("%s has no 8-bit float matrix instructions" %
                              chip)
        return element
    element = _ATTENTION_TYPES.get(np.dtype(q.dtype))
    if element is None:
        raise TesselError("attention takes float16, bfloat16 (uint16 bits) "
                          "or 8-bit float (uint8 bits) q, k and v, got %s" %
                          q.dtype)
    return element


def attention(q, k, v, *, causal=False, scale=None, window_size=(-1, -1),
              sinks=None, descale=None, fp8_type=None, out_dtype=None,
              return_lse=False, chip="gfx942", out=None, device="auto",
              stream=None):
    """softmax(q k^T * scale) v per (batch, head): q is (B, H, Sq, D), k
    (B, Hkv, Skv, D) and v (B, Hkv, Skv, Dv) with H a multiple of Hkv
    (grouped/multi-query), float16 or bfloat16 (torch bfloat16 tensors, or
    uint16 arrays of bf16 bits); the output is (B, H, Sq, Dv) of the input
    type. `scale` defaults to 1/sqrt(D); `causal` masks keys past each
    query (aligned to the bottom right). `window_size=(left, right)` is
    FlashAttention's local attention: query position p sees keys p - left
    .. p + right, -1 unbounded. `sinks` (H,) float32 are attention-sink
    logits: each joins its head's softmax denominator.

    8-bit attention: q, k and v are uint8 arrays of `fp8_type` bits
    (default f8E4M3FNUZ on gfx942, f8E4M3FN on gfx950), `descale` the
    per-tensor float32 factors (dq, dk, dv) they were quantized with, and
    the output `out_dtype` "bf16" (default; uint16 bits), "f16" or "f32".

    `return_lse` also returns the logsumexp of each row's scaled scores
    ((B, H, Sq) float32), as FlashAttention does for its backward pass.
    The batch and the key length (and the query length above 16) are
    run-time sizes. Device arrays as for matmul.

    Torch tensors that require grad take part in autograd: the result's
    backward runs Tessel's attention backward (attention_backward) on the
    saved q, k, v, output and logsumexp (f16/bf16, without sinks)."""
    if _wants_autograd(q, k, v):
        if sinks is not None or descale is not None:
            raise TesselError("autograd of tessel.attention covers f16/bf16 "
                              "attention without sinks")
        return _AttentionFunction.apply(q, k, v, bool(causal), scale,
                                        tuple(window_size), chip, device,
                                        bool(return_lse))
    arrays, q = _arrays_for(q, device, stream)
    k = arrays.take(k)
    v = arrays.take(v)
    element = _attention_element(q, k, v, fp8_type, chip)
    eight_bit = np.dtype(q.dtype) == np.uint8
    if (q.ndim != 4 or k.ndim != 4 or v.ndim != 4
            or tuple(k.shape[:3]) != tuple(v.shape[:3])
            or k.shape[0] != q.shape[0] or k.shape[3] != q.shape[3]):
        raise TesselError("q must be (B, H, Sq, D), k (B, Hkv, Skv, D) and "
                          "v (B, Hkv, Skv, Dv), got %s, %s and %s" %
                          (tuple(q.shape), tuple(k.shape), tuple(v.shape)))
    if len(window_size) != 2:
        raise TesselError("window_size must be (left, right)")
    if (descale is not None) != eight_bit:
        raise TesselError("descale=(dq, dk, dv) goes with 8-bit q, k and v "
                          "(uint8 bits), and only with them")
    if out_dtype is not None and not eight_bit:
        raise TesselError("out_dtype is for 8-bit attention; the output of "
                          "f16/bf16 attention has the input type")
    out_dtype = out_dtype or "bf16"
    if eight_bit and out_dtype not in _ATTENTION_OUTPUTS:
        raise TesselError("out_dtype must be one of " +
                          ", ".join(_ATTENTION_OUTPUTS))
    q, k, v = (arrays.contiguous(x, name) for x, name in
               ((q, "q"), (k, "k"), (v, "v")))
    batch, heads, seq_q, head_dim = q.shape
    o_dtype = _ATTENTION_OUTPUTS[out_dtype] if eight_bit else q.dtype
    o = arrays.output(tuple(q.shape[:3]) + (v.shape[3],), o_dtype, out)
    operands = [q, k, v, o]
    lse = None
    if return_lse:
        lse = arrays.output(tuple(q.shape[:3]), np.float32, None)
        operands.append(lse)
    if sinks is not None:
        sinks = arrays.float32(sinks, "sinks")
        if tuple(sinks.shape) != (heads,):
            raise TesselError("sinks must be (H,) = (%d,), got %s" %
                              (heads, tuple(sinks.shape)))
        operands.append(sinks)
    if eight_bit:
        if len(descale) != 3:
            raise TesselError("descale must be (dq, dk, dv)")
        for factor, name in zip(descale, ("dq", "dk", "dv")):
            factor = arrays.float32(factor, "descale " + name)
            if factor.size != 1:
                raise TesselError("descale %s must be one value" % name)
            operands.append(factor.reshape(1))
    # Decode (the split-KV plan) keeps the batch static: its workspace is
    # sized by it.
    dynamic = "batch,seq-kv,seq-q" if seq_q > _DECODE_QUERIES else "seq-kv"
    window = tuple(int(w) for w in window_size)
    problem = _capi.AttentionProblem(
        batch=batch, heads=heads, kv_heads=k.shape[1], seq_q=seq_q,
        seq_kv=k.shape[2], head_dim=head_dim, head_dim_v=v.shape[3],
        type=element.encode(), causal=int(bool(causal)),
        has_scale=int(scale is not None),
        scale=float(scale) if scale is not None else 0.0,
        has_window=int(window != (-1, -1)), window_left=window[0],
        window_right=window[1], sinks=int(sinks is not None),
        lse=int(bool(return_lse)), descale=int(eight_bit),
        out_type=out_dtype.encode() if eight_bit else None,
        dynamic=dynamic.encode())
    from . import _default_compiler
    kernel = _default_compiler().compile_attention(problem, chip)
    arrays.run(kernel, operands, "attention",
               sizes={"seq_q": seq_q, "heads": heads, "batch": batch})
    if return_lse:
        return arrays.result(o), arrays.result(lse)
    return arrays.result(o)


def attention_backward(dout, q, k, v, out, lse, *, causal=False, scale=None,
                       window_size=(-1, -1), grad_dtype=None, chip="gfx942",
                       device="auto", stream=None):
    """The gradients (dq, dk, dv) of attention(q, k, v, causal=...,
    scale=..., window_size=...) given `dout`, the gradient of its output,
    and the forward's output `out` and logsumexp `lse` ((B, H, Sq) float32,
    attention(..., return_lse=True)), as FlashAttention's backward takes
    them. dk and dv are summed over the query heads that share a key/value
    head. The gradients have the inputs' type, or float32 with
    grad_dtype="f32". Runs Tessel's two-kernel backward plan (dQ per query
    block, then dK and dV per key block); arrays as for attention."""
    arrays, q = _arrays_for(q, device, stream)
    k, v, out, dout = (arrays.take(x) for x in (k, v, out, dout))
    element = _attention_element(q, k, v, None, chip)
    if np.dtype(q.dtype) == np.uint8:
        raise TesselError("the attention backward takes f16 or bf16 arrays")
    if (q.ndim != 4 or k.ndim != 4 or v.ndim != 4
            or tuple(k.shape[:3]) != tuple(v.shape[:3])
            or k.shape[0] != q.shape[0] or k.shape[3] != q.shape[3]):
        raise TesselError("q must be (B, H, Sq, D), k (B, Hkv, Skv, D) and "
                          "v (B, Hkv, Skv, Dv), got %s, %s and %s" %
                          (tuple(q.shape), tuple(k.shape), tuple(v.shape)))
    o_shape = tuple(q.shape[:3]) + (v.shape[3],)
    for x, name in ((out, "out"), (dout, "dout")):
        if tuple(x.shape) != o_shape or x.dtype != q.dtype:
            raise TesselError("%s must be a %s %s array (as the output), got "
                              "%s %s" % (name, o_shape, q.dtype,
                                         tuple(x.shape), x.dtype))
    lse = arrays.float32(lse, "lse")
    if tuple(lse.shape) != tuple(q.shape[:3]):
        raise TesselError("lse must be (B, H, Sq) = %s, got %s" %
                          (tuple(q.shape[:3]), tuple(lse.shape)))
    if grad_dtype not in (None, "f32"):
        raise TesselError('grad_dtype must be None (the inputs\' type) or '
                          '"f32"')
    if len(window_size) != 2:
        raise TesselError("window_size must be (left, right)")
    q, k, v, out, dout = (arrays.contiguous(x, name) for x, name in
                          ((q, "q"), (k, "k"), (v, "v"), (out, "out"),
                           (dout, "dout")))
    g_dtype = np.float32 if grad_dtype == "f32" else q.dtype
    dq = arrays.output(tuple(q.shape), g_dtype, None)
    dk = arrays.output(tuple(k.shape), g_dtype, None)
    dv = arrays.output(tuple(v.shape), g_dtype, None)
    batch, heads, seq_q, head_dim = q.shape
    window = tuple(int(w) for w in window_size)
    problem = _capi.AttentionProblem(
        batch=batch, heads=heads, kv_heads=k.shape[1], seq_q=seq_q,
        seq_kv=k.shape[2], head_dim=head_dim, head_dim_v=v.shape[3],
        type=element.encode(), causal=int(bool(causal)),
        has_scale=int(scale is not None),
        scale=float(scale) if scale is not None else 0.0,
        has_window=int(window != (-1, -1)), window_left=window[0],
        window_right=window[1], backward=1,
        out_type=grad_dtype.encode() if grad_dtype else None,
        dynamic=b"batch,seq-kv,seq-q")
    from . import _default_compiler
    kernel = _default_compiler().compile_attention(problem, chip)
    arrays.run(kernel, [q, k, v, out, dout, lse, dq, dk, dv], "attention",
               sizes={"seq_q": seq_q, "heads": heads, "batch": batch})
    return arrays.result(dq), arrays.result(dk), arrays.result(dv)


def _wants_autograd(*tensors):
    """Whether torch tensors among `tensors` require grad with grad mode
    on (attention then runs as an autograd Function)."""
    if not any(type(t).__module__.startswith("torch") for t in tensors):
        return False
    import torch
    return torch.is_grad_enabled() and any(
        getattr(t, "requires_grad", False) for t in tensors)


def _make_attention_function():
    import torch

    class AttentionFunction(torch.autograd.Function):
        """tessel.attention in torch autograd: the forward keeps q, k, v,
        the output and the logsumexp; the backward is Tessel's attention
        backward."""

        @staticmethod
        def forward(ctx, q, k, v, causal, scale, window, chip, device,
                    return_lse):
            q, k, v = (x.detach().contiguous() for x in (q, k, v))
            o, lse = attention(q, k, v, causal=causal, scale=scale,
                               window_size=window, return_lse=True, chip=chip,
                               device=device)
            ctx.save_for_backward(q, k, v, o, lse)
            ctx.options = dict(causal=causal, scale=scale,
                               window_size=window, chip=chip, device=device)
            ctx.mark_non_differentiable(lse)
            return (o, lse) if return_lse else o

        @staticmethod
        def backward(ctx, grad_o, *unused):
            q, k, v, o, lse = ctx.saved_tensors
            dq, dk, dv = attention_backward(
                grad_o.to(q.dtype).contiguous(), q, k, v, o, lse,
                **ctx.options)
            return dq, dk, dv, None, None, None, None, None, None

    return AttentionFunction


class _LazyFunction:
    """Builds the autograd Function on first use (torch is optional)."""

    def __init__(self, make):
        self._make = make
        self._function = None

    def apply(self, *args):
        if self._function is None:
            self._function = self._make()
        return self._function.apply(*args)


_AttentionFunction = _LazyFunction(_make_attention_function)


def _packed_view(arrays, x, name):
    """A packed (total, heads, head_dim) array as the [1, heads, total,
    head_dim] view the varlen kernel takes (the same memory)."""
    x = arrays.contiguous(x, name)
    if x.ndim != 3:
        raise TesselError("%s must be (total, heads, head_dim), got %s" %
                          (name, tuple(x.shape)))
    total, heads, columns = x.shape
    if isinstance(x, DeviceArray):
        return DeviceArray(x.device, x.ptr, (1, heads, total, columns),
                           x.dtype, (total * heads * columns, columns,
                                     heads * columns, 1), owner=x)
    return x.transpose(1, 0, 2)[None]


def attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                     max_seqlen_k=None, *, causal=False, softmax_scale=None,
                     window_size=(-1, -1), sinks=None, return_lse=False,
                     chip="gfx942", out=None, device="auto", stream=None):
    """Attention over a batch of variable-length sequences packed one after
    another, with flash_attn_varlen_func's arguments: q (total_q, H, D), k
    (total_k, Hkv, D) and v (total_k, Hkv, Dv), float16 or bfloat16;
    cu_seqlens_q and cu_seqlens_k the (B + 1,) int32 cumulative lengths
    (sequence b is rows cu[b] to cu[b + 1]); max_seqlen_q at least the
    longest query sequence (max_seqlen_k is accepted for the signature and
    not needed). Returns o (total_q, H, Dv), and with return_lse the
    logsumexp (H, total_q) float32. Masks, scale and sinks as attention();
    the lengths are read on the device, so no compile depends on them.

    Torch tensors that require grad take part in autograd (without sinks):
    the backward is attention_varlen_backward, which needs max_seqlen_k."""
    if _wants_autograd(q, k, v):
        if sinks is not None or max_seqlen_k is None:
            raise TesselError("autograd of attention_varlen needs "
                              "max_seqlen_k and no sinks")
        return _VarlenFunction.apply(
            q, k, v, cu_seqlens_q, cu_seqlens_k, int(max_seqlen_q),
            int(max_seqlen_k), bool(causal), softmax_scale,
            tuple(window_size), chip, device, bool(return_lse))
    arrays, q = _arrays_for(q, device, stream)
    k, v = arrays.take(k), arrays.take(v)
    element = _attention_element(q, k, v, None, chip)
    if np.dtype(q.dtype) == np.uint8:
        raise TesselError("attention_varlen takes float16 or bfloat16 arrays")
    if (q.ndim != 3 or k.ndim != 3 or v.ndim != 3
            or tuple(k.shape[:2]) != tuple(v.shape[:2])
            or k.shape[2] != q.shape[2]):
        raise TesselError("q must be (total_q, H, D), k (total_k, Hkv, D) and "
                          "v (total_k, Hkv, Dv), got %s, %s and %s" %
                          (tuple(q.shape), tuple(k.shape), tuple(v.shape)))
    cu_q = arrays.take(cu_seqlens_q) if isinstance(
        cu_seqlens_q, DeviceArray) else np.ascontiguousarray(
            _host_array(cu_seqlens_q), dtype=np.int32)
    cu_k = arrays.take(cu_seqlens_k) if isinstance(
        cu_seqlens_k, DeviceArray) else np.ascontiguousarray(
            _host_array(cu_seqlens_k), dtype=np.int32)
    if isinstance(arrays, _DeviceArrays):
        cu_q, cu_k = (x if isinstance(x, DeviceArray) else
                      arrays.device.to_device(x, arrays.stream)
                      for x in (cu_q, cu_k))
    if (cu_q.ndim != 1 or tuple(cu_q.shape) != tuple(cu_k.shape)
            or cu_q.shape[0] < 1 or np.dtype(cu_q.dtype) != np.int32
            or np.dtype(cu_k.dtype) != np.int32):
        raise TesselError("cu_seqlens_q and cu_seqlens_k must be (B + 1,) "
                          "int32 arrays of one size")
    max_seqlen_q = int(max_seqlen_q)
    if max_seqlen_q < 0:
        raise TesselError("max_seqlen_q must be 0 or more")
    if len(window_size) != 2:
        raise TesselError("window_size must be (left, right)")
    total_q, heads, head_dim = q.shape
    o = arrays.output((total_q, heads, v.shape[2]), q.dtype, out)
    operands = [_packed_view(arrays, x, name) for x, name in
                ((q, "q"), (k, "k"), (v, "v"), (o, "out"))]
    lse = None
    if return_lse:
        lse = arrays.output((heads, total_q), np.float32, None)
        operands.append(lse.reshape(1, heads, total_q))
    if sinks is not None:
        sinks = arrays.float32(sinks, "sinks")
        if tuple(sinks.shape) != (heads,):
            raise TesselError("sinks must be (H,) = (%d,), got %s" %
                              (heads, tuple(sinks.shape)))
        operands.append(sinks)
    operands += [cu_q, cu_k, max_seqlen_q]
    window = tuple(int(w) for w in window_size)
    problem = _capi.AttentionProblem(
        batch=max(cu_q.shape[0] - 1, 1), heads=heads, kv_heads=k.shape[1],
        seq_q=1, seq_kv=1, head_dim=head_dim, head_dim_v=v.shape[2],
        type=element.encode(), causal=int(bool(causal)),
        has_scale=int(softmax_scale is not None),
        scale=float(softmax_scale) if softmax_scale is not None else 0.0,
        has_window=int(window != (-1, -1)), window_left=window[0],
        window_right=window[1], sinks=int(sinks is not None),
        lse=int(bool(return_lse)), varlen=1, dynamic=b"batch")
    from . import _default_compiler
    kernel = _default_compiler().compile_attention(problem, chip)
    arrays.run(kernel, operands, "attention")
    if return_lse:
        return arrays.result(o), arrays.result(lse)
    return arrays.result(o)


def paged_attention(q, k_cache, v_cache, block_table, context_lens, *,
                    scale=None, causal=False, window_size=(-1, -1),
                    sinks=None, chip="gfx942", device="auto", stream=None):
    """Decode attention over a paged KV cache, with the arguments of vLLM's
    paged attention and flash_attn_with_kvcache: q (B, H, D) (one query per
    sequence, vLLM) or (B, Sq, H, D) (FlashAttention); k_cache and v_cache
    (num_pages, page_size, Hkv, D) with page_size 16, 32, 64 or 128;
    block_table (B, max_pages) int32, the pages of each sequence in order;
    context_lens (B,) int32, each sequence's keys (its last page may be
    partly filled). Query i of Sq sits at key position context_len - Sq + i
    for `causal` and windows. Returns the output shaped as q. Lengths and
    page numbers are read on the device (clamped to the table and the
    cache); the batch is a run-time size. Long contexts are split over
    workgroups (split-KV), the split count chosen by the model."""
    arrays, q = _arrays_for(q, device, stream)
    k_cache, v_cache = arrays.take(k_cache), arrays.take(v_cache)
    element = _attention_element(q, k_cache, v_cache, None, chip)
    if np.dtype(q.dtype) == np.uint8:
        raise TesselError("paged_attention takes float16 or bfloat16 arrays")
    vllm = q.ndim == 3
    if q.ndim not in (3, 4):
        raise TesselError("q must be (B, H, D) or (B, Sq, H, D), got %s" %
                          (tuple(q.shape),))
    if (k_cache.ndim != 4 or v_cache.ndim != 4
            or tuple(k_cache.shape[:3]) != tuple(v_cache.shape[:3])
            or k_cache.shape[3] != q.shape[-1]):
        raise TesselError("k_cache and v_cache must be (num_pages, page_size, "
                          "Hkv, D) with q's D, got %s and %s" %
                          (tuple(k_cache.shape), tuple(v_cache.shape)))
    batch = q.shape[0]
    seq_q = 1 if vllm else q.shape[1]
    heads, head_dim = q.shape[-2], q.shape[-1]
    pages, page_size, kv_heads, _ = k_cache.shape
    tables = []
    for value, name, ndim in ((block_table, "block_table", 2),
                              (context_lens, "context_lens", 1)):
        if isinstance(value, DeviceArray):
            value = arrays.take(value)
        else:
            value = np.ascontiguousarray(_host_array(value), dtype=np.int32)
            if isinstance(arrays, _DeviceArrays):
                value = arrays.device.to_device(value, arrays.stream)
        if (value.ndim != ndim or value.shape[0] != batch
                or np.dtype(value.dtype) != np.int32):
            raise TesselError("%s must be a (B%s) int32 array with B = %d" %
                              (name, ", max_pages" if ndim == 2 else ",",
                               batch))
        tables.append(value)
    if len(window_size) != 2:
        raise TesselError("window_size must be (left, right)")
    k_cache, v_cache = (arrays.contiguous(x, name) for x, name in
                        ((k_cache, "k_cache"), (v_cache, "v_cache")))
    # The kernel's [pages, Hkv, page_size, D] views of the caches, and
    # [B, H, Sq, D] queries and output.
    def cache_view(x):
        if isinstance(x, DeviceArray):
            return DeviceArray(x.device, x.ptr,
                               (pages, kv_heads, page_size, head_dim), x.dtype,
                               (page_size * kv_heads * head_dim, head_dim,
                                kv_heads * head_dim, 1), owner=x)
        return x.transpose(0, 2, 1, 3)
    if vllm:
        queries = arrays.contiguous(q, "q").reshape(batch, heads, 1, head_dim)
    elif isinstance(q, DeviceArray):
        raise TesselError("device queries must be (B, H, D); the (B, Sq, H, "
                          "D) form is for host arrays")
    else:
        queries = np.ascontiguousarray(q.transpose(0, 2, 1, 3))
    o = arrays.output((batch, heads, seq_q, head_dim), q.dtype, None)
    operands = [queries, cache_view(k_cache), cache_view(v_cache), o]
    if sinks is not None:
        sinks = arrays.float32(sinks, "sinks")
        if tuple(sinks.shape) != (heads,):
            raise TesselError("sinks must be (H,) = (%d,), got %s" %
                              (heads, tuple(sinks.shape)))
        operands.append(sinks)
    operands += tables
    window = tuple(int(w) for w in window_size)
    problem = _capi.AttentionProblem(
        batch=batch, heads=heads, kv_heads=kv_heads, seq_q=seq_q,
        seq_kv=tables[0].shape[1] * page_size, head_dim=head_dim,
        type=element.encode(), causal=int(bool(causal)),
        has_scale=int(scale is not None),
        scale=float(scale) if scale is not None else 0.0,
        has_window=int(window != (-1, -1)), window_left=window[0],
        window_right=window[1], sinks=int(sinks is not None),
        page_size=page_size, dynamic=b"batch")
    from . import _default_compiler
    kernel = _default_compiler().compile_attention(problem, chip)
    arrays.run(kernel, operands, "attention")
    if vllm:
        result = o.reshape(batch, heads, head_dim)
    else:
        result = o.transpose(0, 2, 1, 3)
    return arrays.result(result)


def attention_varlen_backward(dout, q, k, v, out, lse, cu_seqlens_q,
                              cu_seqlens_k, max_seqlen_q, max_seqlen_k, *,
                              causal=False, softmax_scale=None,
                              window_size=(-1, -1), grad_dtype=None,
                              chip="gfx942", device="auto", stream=None):
    """The gradients (dq, dk, dv) of attention_varlen, FlashAttention's
    varlen backward: dout and out (total_q, H, Dv), q (total_q, H, D), k
    and v (total_k, Hkv, D/Dv), lse (H, total_q) float32 from
    attention_varlen(..., return_lse=True), the cumulative lengths and the
    longest query and key sequences. Gradients shaped as q, k, v, of their
    type or float32 (grad_dtype="f32"). Host arrays only."""
    arrays, q = _arrays_for(q, device, stream)
    if isinstance(arrays, _DeviceArrays):
        raise TesselError("attention_varlen_backward takes host arrays")
    k, v, out, dout = (arrays.take(x) for x in (k, v, out, dout))
    element = _attention_element(q, k, v, None, chip)
    if (q.ndim != 3 or k.ndim != 3 or v.ndim != 3
            or tuple(k.shape[:2]) != tuple(v.shape[:2])
            or k.shape[2] != q.shape[2]):
        raise TesselError("q must be (total_q, H, D), k (total_k, Hkv, D) and "
                          "v (total_k, Hkv, Dv), got %s, %s and %s" %
                          (tuple(q.shape), tuple(k.shape), tuple(v.shape)))
    total_q, heads, head_dim = q.shape
    o_shape = (total_q, heads, v.shape[2])
    for x, name in ((out, "out"), (dout, "dout")):
        if tuple(x.shape) != o_shape or x.dtype != q.dtype:
            raise TesselError("%s must be a %s %s array, got %s %s" % (
                name, o_shape, q.dtype, tuple(x.shape), x.dtype))
    lse = arrays.float32(lse, "lse")
    if tuple(lse.shape) != (heads, total_q):
        raise TesselError("lse must be (H, total_q) = %s, got %s" %
                          ((heads, total_q), tuple(lse.shape)))
    cu_q, cu_k = (np.ascontiguousarray(_host_array(x), dtype=np.int32)
                  for x in (cu_seqlens_q, cu_seqlens_k))
    if cu_q.ndim != 1 or cu_q.shape != cu_k.shape or cu_q.shape[0] < 1:
        raise TesselError("cu_seqlens_q and cu_seqlens_k must be (B + 1,) "
                          "int32 arrays of one size")
    if grad_dtype not in (None, "f32"):
        raise TesselError('grad_dtype must be None or "f32"')
    g_dtype = np.float32 if grad_dtype == "f32" else q.dtype
    dq, dk, dv = (arrays.output(tuple(x.shape), g_dtype, None)
                  for x in (q, k, v))
    operands = [_packed_view(arrays, x, name) for x, name in
                ((q, "q"), (k, "k"), (v, "v"), (out, "out"),
                 (dout, "dout"))]
    operands.append(lse.reshape(1, heads, total_q))
    operands += [_packed_view(arrays, x, name) for x, name in
                 ((dq, "dq"), (dk, "dk"), (dv, "dv"))]
    operands += [cu_q, cu_k, int(max_seqlen_q), int(max_seqlen_k)]
    window = tuple(int(w) for w in window_size)
    problem = _capi.AttentionProblem(
        batch=max(cu_q.shape[0] - 1, 1), heads=heads, kv_heads=k.shape[1],
        seq_q=1, seq_kv=1, head_dim=head_dim, head_dim_v=v.shape[2],
        type=element.encode(), causal=int(bool(causal)),
        has_scale=int(softmax_scale is not None),
        scale=float(softmax_scale) if softmax_scale is not None else 0.0,
        has_window=int(window != (-1, -1)), window_left=window[0],
        window_right=window[1], backward=1, varlen=1,
        out_type=grad_dtype.encode() if grad_dtype else None,
        dynamic=b"batch")
    from . import _default_compiler
    kernel = _default_compiler().compile_attention(problem, chip)
    arrays.run(kernel, operands, "attention")
    return arrays.result(dq), arrays.result(dk), arrays.result(dv)


def _make_varlen_function():
    import torch

    class VarlenFunction(torch.autograd.Function):
        """attention_varlen in torch autograd; the backward is
        attention_varlen_backward."""

        @staticmethod
        def forward(ctx, q, k, v, cu_q, cu_k, max_q, max_k, causal, scale,
                    window, chip, device, return_lse):
            q, k, v = (x.detach().contiguous() for x in (q, k, v))
            o, lse = attention_varlen(q, k, v, cu_q, cu_k, max_q, max_k,
                                      causal=causal, softmax_scale=scale,
                                      window_size=window, return_lse=True,
                                      chip=chip, device=device)
            ctx.save_for_backward(q, k, v, o, lse)
            ctx.lengths = (cu_q, cu_k, max_q, max_k)
            ctx.options = dict(causal=causal, softmax_scale=scale,
                               window_size=window, chip=chip, device=device)
            ctx.mark_non_differentiable(lse)
            return (o, lse) if return_lse else o

        @staticmethod
        def backward(ctx, grad_o, *unused):
            q, k, v, o, lse = ctx.saved_tensors
            dq, dk, dv = attention_varlen_backward(
                grad_o.to(q.dtype).contiguous(), q, k, v, o, lse,
                *ctx.lengths, **ctx.options)
            return (dq, dk, dv) + (None,) * 10

    return VarlenFunction


_VarlenFunction = _LazyFunction(_make_varlen_function)
