"""Tessel from Python: compile Tessel IR or build matmul and attention
kernels for AMD GPUs, cache them, and run them on numpy arrays (through HIP
when a GPU is present, else on Tessel's emulator).

    import numpy as np, tessel
    c = tessel.matmul(a, b, chip="gfx942")
    o = tessel.attention(q, k, v, causal=True)
    kernel = tessel.compile(ir_text, chip="gfx942")   # .hsaco, .isa, .report

A thin ctypes layer over libTesselC.so; the compiled kernels are cached in
memory and in TESSEL_CACHE_DIR (default ~/.cache/tessel; empty disables).
"""

import ctypes
import json

import numpy as np

from . import _capi
from ._capi import TesselError

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


__all__ = ["compile", "version", "matmul", "scaled_mm", "attention", "cache_stats", "hip_available",
           "Kernel", "TesselError"]

_ELEMENT_TYPES = {np.dtype(np.float16): "f16", np.dtype(np.float32): "f32",
                  np.dtype(np.int8): "i8"}


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

    def __call__(self, *arrays, name=None, sizes=None, device="auto"):
        """Runs problem `name` (default: the only one) over `arrays`, the
        problem function's arguments in order; the arrays the kernel writes
        are written in place, the others only read (read-only arrays are
        fine). Strided arrays (e.g. `b.T`) are passed as they are when the
        kernel's layout takes them. The problem's sizes come from the
        arrays; `sizes` (dict of m, n, batch, seq_q, heads) is an optional
        check."""
        name = self._problem_name(name)
        if device not in _capi.DEVICES:
            raise TesselError("device must be one of " +
                              ", ".join(_capi.DEVICES))
        expected = self.arguments(name)
        if len(arrays) != len(expected):
            raise TesselError("problem '%s' takes %d arguments, got %d" %
                              (name, len(expected), len(arrays)))
        keep = []  # ctypes arrays alive until the call returns
        buffers = (_capi.Buffer * len(arrays))()
        for index, (array, info) in enumerate(zip(arrays, expected)):
            if not isinstance(array, np.ndarray):
                raise TesselError("argument %d: expected a numpy array, got %s"
                                  % (index, type(array).__name__))
            _check_argument(index, array, info)
            shape = (ctypes.c_int64 * max(array.ndim, 1))(*array.shape)
            strides = (ctypes.c_int64 * max(array.ndim, 1))(
                *[s // array.itemsize for s in array.strides])
            keep += [shape, strides]
            low, high = _byte_bounds(array)
            buffers[index] = _capi.Buffer(array.ctypes.data, high - low,
                                          array.ndim, shape, strides)
        problem = _capi.ProblemSizes(**(sizes or {}))
        status = _capi.lib().tesselRun(self._handle, name.encode(),
                                       ctypes.byref(problem), buffers,
                                       len(arrays), _capi.DEVICES[device])
        if status:
            raise TesselError(_capi.last_error())


# numpy dtypes that carry each Tessel element type (bf16 and the fp8 types
# have no numpy dtype: their bits travel as uint16 and uint8).
_NUMPY_FOR_ELEMENT = {
    "f16": "float16", "f32": "float32", "f64": "float64", "bf16": "uint16",
    "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "f8E4M3FNUZ": "uint8", "f8E5M2FNUZ": "uint8", "f8E4M3FN": "uint8",
    "f8E5M2": "uint8"}


def _check_argument(index, array, info):
    """Raises TesselError when `array` cannot be argument `index`."""
    if not info["array"]:
        raise TesselError("argument %d is a scalar (%s); scalars are not "
                          "supported by Kernel calls yet" %
                          (index, info["element_type"]))
    wanted = _NUMPY_FOR_ELEMENT.get(info["element_type"])
    if wanted is None or array.dtype != np.dtype(wanted):
        raise TesselError("argument %d: the kernel takes %s (numpy %s), got "
                          "an array of %s" % (index, info["element_type"],
                                              wanted or "none", array.dtype))
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


def _to_numpy(value):
    """numpy arrays as they are; torch tensors through the CPU, bfloat16
    ones as their uint16 bits (numpy has no bfloat16). The second value
    says where the array came from, for _from_numpy: None (numpy), "torch"
    or "bf16" (a torch bfloat16 tensor)."""
    if type(value).__module__.startswith("torch"):
        import torch
        if value.dtype == torch.bfloat16:
            return value.detach().cpu().view(torch.int16).numpy().view(
                np.uint16), "bf16"
        return value.detach().cpu().numpy(), "torch"
    return np.asarray(value), None


def _from_numpy(array, origin):
    """`array` as the caller passed its inputs (see _to_numpy)."""
    if origin is None:
        return array
    import torch
    if origin == "bf16":
        return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(array)


def _memref(shape, element):
    return "memref<" + "x".join(str(s) for s in shape) + "x" + element + ">"


def _element_type(array, what):
    element = _ELEMENT_TYPES.get(array.dtype)
    if element is None:
        raise TesselError("%s has dtype %s; supported: float16, float32, int8"
                          % (what, array.dtype))
    return element


# Input dtypes of tessel.matmul and their Tessel types: bf16 travels as its
# uint16 bits (numpy has no bfloat16; torch bfloat16 tensors are converted).
_MATMUL_TYPES = {np.dtype(np.float16): "f16", np.dtype(np.float32): "f32",
                 np.dtype(np.int8): "i8", np.dtype(np.uint16): "bf16"}
_MATMUL_OUTPUTS = {"f16": np.float16, "f32": np.float32, "i8": np.int32,
                   "bf16": np.uint16}


def _column_major(array):
    """Whether a 2-D array is stored column-major (the transpose of a
    C-contiguous one), which the kernel reads in place."""
    return (array.ndim == 2 and not array.flags["C_CONTIGUOUS"] and
            array.T.flags["C_CONTIGUOUS"])


def matmul(a, b, *, chip="gfx942", bias=None, activation=None,
           residual=None, config=None, device="auto"):
    """a @ b on the GPU (or the emulator). `a` is (M, K) or (batch, M, K);
    `b` is (K, N), or (batch, K, N) with a batched `a` (a 2-D `b` with a 3-D
    `a` is a weight shared by the batch). dtypes: float16, float32, int8
    (-> int32) and bfloat16 (torch bfloat16 tensors, or numpy uint16 arrays
    of bf16 bits), accumulated in f32 (i32); the output has the input's
    type. A 2-D `b` (or `a`) that is the transpose of a contiguous array,
    as a weight `w.T` is, is read in place. Epilogue, in this order:
    `bias` (N,) per column or (M, 1) per row (float32), `residual` (shaped
    like the output, of its type), `activation` ('relu', 'gelu', 'silu').
    `config` (a "#tessel.config<...>") fixes the tiling. M and the batch
    are run-time sizes: one compile serves every batch size. `chip` may be
    a full target id ("gfx942:sramecc+:xnack-")."""
    a, origin = _to_numpy(a)
    b, _ = _to_numpy(b)
    element = _MATMUL_TYPES.get(a.dtype)
    if element is None:
        raise TesselError("a has dtype %s; supported: float16, float32, "
                          "int8, bfloat16 (uint16 bits)" % a.dtype)
    if b.dtype != a.dtype:
        raise TesselError("a and b must have the same dtype, got %s and %s"
                          % (a.dtype, b.dtype))
    if (a.ndim not in (2, 3) or b.ndim not in (2, a.ndim) or
            a.shape[-1] != b.shape[-2]):
        raise TesselError("shapes %s and %s do not multiply" %
                          (a.shape, b.shape))
    if a.ndim == 3 and b.ndim == 3 and a.shape[0] != b.shape[0]:
        raise TesselError("batch sizes differ: %d and %d" %
                          (a.shape[0], b.shape[0]))
    out_shape = a.shape[:-1] + (b.shape[-1],)
    # A weight shared by the batch: one GEMM over batch x M rows.
    if a.ndim == 3 and b.ndim == 2:
        a = np.ascontiguousarray(a).reshape(-1, a.shape[-1])
    batched = a.ndim == 3
    transpose_a = _column_major(a)
    transpose_b = _column_major(b)
    if not transpose_a:
        a = np.ascontiguousarray(a)
    if not transpose_b:
        b = np.ascontiguousarray(b)
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    c = np.zeros(a.shape[:-1] + (n,), dtype=_MATMUL_OUTPUTS[element])
    arrays = [a, b, c]
    bias_kind = "none"
    if bias is not None:
        bias = np.ascontiguousarray(_to_numpy(bias)[0], dtype=np.float32)
        if bias.shape == (n,):
            bias_kind = "n"
        elif bias.shape in ((m, 1), (m,)) and not batched:
            bias, bias_kind = bias.reshape(m, 1), "m"
        else:
            raise TesselError("bias must have shape (N,) = (%d,) or (M, 1) "
                              "= (%d, 1), got %s" % (n, m, bias.shape))
        arrays.append(bias)
    if residual is not None:
        residual = np.ascontiguousarray(
            _to_numpy(residual)[0]).reshape(c.shape)
        if residual.dtype != c.dtype:
            raise TesselError("residual must have the output's dtype %s, got "
                              "%s" % (c.dtype, residual.dtype))
        arrays.append(residual)
    if activation not in (None, "relu", "gelu", "silu"):
        raise TesselError("activation must be None, 'relu', 'gelu' or "
                          "'silu', got %r" % (activation,))
    problem = _capi.MatmulProblem(
        m=m, n=n, k=k, batch=a.shape[0] if batched else 0,
        a_type=element.encode(), transpose_a=int(transpose_a),
        transpose_b=int(transpose_b), bias=bias_kind.encode(),
        residual=int(residual is not None),
        activation=(activation or "none").encode(),
        dynamic=b"m,batch" if batched else b"m",
        config=config.encode() if config else None)
    kernel = _default_compiler().compile_matmul(problem, chip)
    kernel(*arrays, name="matmul", device=device)
    return _from_numpy(c.reshape(out_shape), origin)


# The 8-bit float a chip multiplies by default (FNUZ before gfx950, OCP on
# it), as scaled_mm's a_type.
_DEFAULT_FP8 = {"gfx942": "f8E4M3FNUZ", "gfx950": "f8E4M3FN"}

# numpy dtypes of scaled_mm's outputs (bf16 travels as uint16 bits).
_SCALED_OUTPUTS = {"f16": np.float16, "bf16": np.uint16, "f32": np.float32}


def _scale_kind(scale, rows, what, per):
    """`scale` as a contiguous float32 array and its kind: one value
    (shape () or (1,)) is "tensor", else `per` with `rows` values."""
    scale = np.ascontiguousarray(_to_numpy(scale)[0], dtype=np.float32)
    if scale.size == 1:
        return scale.reshape(1), "tensor"
    wanted = (rows, 1) if per == "row" else (1, rows)
    if scale.shape not in (wanted, (rows,)):
        raise TesselError("%s must have one value or shape %s, got %s" %
                          (what, wanted, scale.shape))
    return scale.reshape((rows, 1) if per == "row" else (rows,)), per


def scaled_mm(a, b, scale_a, scale_b, *, bias=None, out_dtype="bf16",
              a_type=None, b_type=None, chip="gfx942", device="auto"):
    """torch._scaled_mm on 8-bit floats: (a @ b) * scale_a * scale_b + bias.
    `a` (M, K) and `b` (K, N) hold fp8 bits as uint8 arrays (numpy and this
    torch have no fp8 dtypes); `b` may be the transpose of an (N, K) array,
    as torch passes it, and is then read in place. `a_type` names the
    format (default f8E4M3FNUZ on gfx942, f8E4M3FN on gfx950), `b_type`
    defaults to it. `scale_a` is one float32 or one per row ((M, 1));
    `scale_b` one or one per column ((1, N)); `bias` (N,) float32. The
    output is `out_dtype` "bf16" (returned as uint16 bits), "f16" or
    "f32", accumulated in f32."""
    a, origin = _to_numpy(a)
    b, _ = _to_numpy(b)
    if a.dtype != np.uint8 or b.dtype != np.uint8:
        raise TesselError("a and b must be uint8 arrays of fp8 bits")
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise TesselError("shapes %s and %s do not multiply" %
                          (a.shape, b.shape))
    if out_dtype not in _SCALED_OUTPUTS:
        raise TesselError("out_dtype must be one of " +
                          ", ".join(_SCALED_OUTPUTS))
    a_type = a_type or _DEFAULT_FP8.get(chip.split(":")[0])
    if a_type is None:
        raise TesselError("%s has no 8-bit float matrix instructions" % chip)
    m, k = a.shape
    n = b.shape[1]
    a = np.ascontiguousarray(a)
    transpose_b = not b.flags["C_CONTIGUOUS"] and b.T.flags["C_CONTIGUOUS"]
    if not transpose_b:
        b = np.ascontiguousarray(b)
    scale_a, kind_a = _scale_kind(scale_a, m, "scale_a", "row")
    scale_b, kind_b = _scale_kind(scale_b, n, "scale_b", "column")
    c = np.zeros((m, n), dtype=_SCALED_OUTPUTS[out_dtype])
    arrays = [a, b, c, scale_a, scale_b]
    if bias is not None:
        bias = np.ascontiguousarray(_to_numpy(bias)[0], dtype=np.float32)
        if bias.shape != (n,):
            raise TesselError("bias must have shape (N,) = (%d,)" % n)
        arrays.append(bias)
    problem = _capi.MatmulProblem(
        m=m, n=n, k=k, a_type=a_type.encode(),
        b_type=(b_type or a_type).encode(), c_type=out_dtype.encode(),
        transpose_b=int(transpose_b), scale_a=kind_a.encode(),
        scale_b=kind_b.encode(),
        bias=b"n" if bias is not None else b"none")
    kernel = _default_compiler().compile_matmul(problem, chip)
    kernel(*arrays, name="matmul", device=device)
    return _from_numpy(c, origin)


def attention(q, k, v, *, causal=False, scale=None, window_size=(-1, -1),
              sinks=None, chip="gfx942", device="auto"):
    """softmax(q k^T * scale) v per (batch, head): q is (B, H, Sq, D), k
    (B, Hkv, Skv, D) and v (B, Hkv, Skv, Dv) with H a multiple of Hkv
    (grouped/multi-query), float16; the output is (B, H, Sq, Dv). `scale` defaults to 1/sqrt(D); `causal` masks keys past each
    query (aligned to the bottom right). `window_size=(left, right)` is
    FlashAttention's local attention: query position p sees keys p - left
    .. p + right, -1 unbounded. `sinks` (H,) float32 are attention-sink
    logits: each joins its head's softmax denominator."""
    q, origin = _to_numpy(q)
    k, _ = _to_numpy(k)
    v, _ = _to_numpy(v)
    q, k, v = (np.ascontiguousarray(x) for x in (q, k, v))
    element = _element_type(q, "q")
    if element != "f16" or k.dtype != q.dtype or v.dtype != q.dtype:
        raise TesselError("attention takes float16 q, k and v")
    if (q.ndim != 4 or k.ndim != 4 or v.ndim != 4
            or k.shape[:3] != v.shape[:3]):
        raise TesselError("q must be (B, H, Sq, D), k (B, Hkv, Skv, D) and "
                          "v (B, Hkv, Skv, Dv)")
    if len(window_size) != 2:
        raise TesselError("window_size must be (left, right)")
    o = np.zeros(q.shape[:3] + v.shape[3:], dtype=q.dtype)
    arrays = [q, k, v, o]
    types = [_memref(x.shape, "f16") for x in arrays]
    attributes = []
    if causal:
        attributes.append("causal")
    if scale is not None:
        attributes.append("scale = {!r} : f32".format(float(scale)))
    if tuple(window_size) != (-1, -1):
        attributes.append("window = array<i64: {}, {}>".format(
            int(window_size[0]), int(window_size[1])))
    sink_argument = sink_operand = ""
    if sinks is not None:
        sinks, _ = _to_numpy(sinks)
        sinks = np.ascontiguousarray(sinks, dtype=np.float32)
        if sinks.shape != (q.shape[1],):
            raise TesselError("sinks must be (H,) = ({},), got {}".format(
                q.shape[1], sinks.shape))
        sink_type = _memref(sinks.shape, "f32")
        sink_argument = ", %s: " + sink_type
        sink_operand = " sinks(%s : " + sink_type + ")"
        arrays.append(sinks)
    ir = ("func.func @attention(%q: {0}, %k: {1}, %v: {2}, %o: {3}{5}) {{\n"
          "  tessel.attention ins(%q, %k, %v : {0}, {1}, {2}) outs(%o : {3})"
          "{6}{4}\n  return\n}}\n").format(
              *types, " {" + ", ".join(attributes) + "}" if attributes else "",
              sink_argument, sink_operand)
    kernel = compile(ir, chip)
    kernel(*arrays, name="attention",
           sizes={"seq_q": q.shape[2], "heads": q.shape[1],
                  "batch": q.shape[0]}, device=device)
    return _from_numpy(o, origin)
