"""The Python package end to end: builds, caches and runs kernels (on the
emulator here), checked against numpy."""

import os

import numpy as np
import pytest

import tessel


@pytest.fixture(autouse=True, scope="module")
def private_cache(tmp_path_factory):
    # Set before the first compile: the package's compiler reads it once.
    os.environ["TESSEL_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))


def reference_matmul(a, b):
    return a.astype(np.float64) @ b.astype(np.float64)


def test_matmul_f16_and_cache():
    rng = np.random.default_rng(0)
    a = rng.random((100, 70)).astype(np.float16)
    b = rng.random((70, 50)).astype(np.float16)
    before = tessel.cache_stats()
    c = tessel.matmul(a, b, chip="gfx942")
    assert c.dtype == np.float16 and c.shape == (100, 50)
    # f32 accumulation, one f16 rounding of results up to ~25.
    assert np.abs(c - reference_matmul(a, b)).max() < 0.02
    tessel.matmul(a, b, chip="gfx942")
    after = tessel.cache_stats()
    assert after["misses"] == before["misses"] + 1
    assert after["memory_hits"] == before["memory_hits"] + 1


def test_matmul_f32_exact_batched_and_int8():
    a = (np.arange(2 * 33 * 20) % 7 - 3).astype(np.float32).reshape(2, 33, 20)
    b = (np.arange(2 * 20 * 17) % 5 - 2).astype(np.float32).reshape(2, 20, 17)
    assert np.array_equal(tessel.matmul(a, b), a @ b)
    ai = (np.arange(45 * 64) % 255 - 127).astype(np.int8).reshape(45, 64)
    bi = (np.arange(64 * 31) % 253 - 126).astype(np.int8).reshape(64, 31)
    ci = tessel.matmul(ai, bi, chip="gfx90a")
    assert ci.dtype == np.int32
    assert np.array_equal(ci, ai.astype(np.int32) @ bi.astype(np.int32))


def test_matmul_split_k_decode_shape():
    # 16 rows of C leave most CUs idle: the compiler splits K (one kernel,
    # two runtime workspaces); the last split of each tile sums the
    # partials in a fixed order, so repeated runs agree bit for bit.
    rng = np.random.default_rng(2)
    a = rng.standard_normal((16, 2048)).astype(np.float32)
    b = rng.standard_normal((2048, 64)).astype(np.float32)
    c = tessel.matmul(a, b, chip="gfx942")
    assert np.abs(c - reference_matmul(a, b)).max() < 1e-3
    assert np.array_equal(c, tessel.matmul(a, b, chip="gfx942"))
    # The kernel matmul compiled (M static at 16 rows) takes the split-K
    # workspaces past the 21 kernarg pieces of its three 2-D arrays.
    from tessel import _capi
    kernel = tessel._default_compiler().compile_matmul(
        _capi.MatmulProblem(m=16, n=64, k=2048, a_type=b"f32"), "gfx942")
    assert len(kernel.report["kernels"][0]["args"]) > 21


def test_matmul_epilogue_bias_relu():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((40, 24)).astype(np.float32)
    b = rng.standard_normal((24, 36)).astype(np.float32)
    bias = rng.standard_normal(36).astype(np.float32)
    c = tessel.matmul(a, b, bias=bias, activation="relu")
    expected = np.maximum(reference_matmul(a, b) + bias, 0)
    assert np.abs(c - expected).max() < 1e-4
    bias_only = tessel.matmul(a, b, bias=bias)
    assert np.abs(bias_only - (reference_matmul(a, b) + bias)).max() < 1e-4
    relu_only = tessel.matmul(a, b, activation="relu")
    assert np.abs(relu_only - np.maximum(reference_matmul(a, b), 0)).max() < 1e-4


def reference_attention(q, k, v, causal, scale):
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    group = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    s = q @ k.transpose(0, 1, 3, 2) * scale
    if causal:
        sq, skv = q.shape[2], k.shape[2]
        rows = np.arange(sq)[:, None] + (skv - sq)
        s = np.where(np.arange(skv)[None, :] <= rows, s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def decode_fp8(bits, fmt):
    """fp8 bits (uint8) -> float64 for the E4M3 formats: FNUZ (bias 8, 0x80
    NaN, no -0) and OCP FN (bias 7, S.1111.111 NaN)."""
    bits = bits.astype(np.int64)
    sign = np.where(bits & 0x80, -1.0, 1.0)
    exponent, mantissa = (bits >> 3) & 0xF, bits & 0x7
    bias = 8 if fmt == "f8E4M3FNUZ" else 7
    normal = (1 + mantissa / 8.0) * np.exp2(exponent - bias)
    subnormal = (mantissa / 8.0) * np.exp2(1 - bias)
    value = sign * np.where(exponent == 0, subnormal, normal)
    nan = (bits == 0x80) if fmt == "f8E4M3FNUZ" else ((bits & 0x7F) == 0x7F)
    return np.where(nan, np.nan, value)


def random_fp8(rng, shape, fmt):
    """Random finite fp8 bits whose values lie in [-4, 4]."""
    table = decode_fp8(np.arange(256), fmt)
    usable = np.flatnonzero(np.isfinite(table) & (np.abs(table) <= 4))
    return usable[rng.integers(0, len(usable), size=shape)].astype(np.uint8)


def bf16_bits_to_float(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


@pytest.mark.parametrize("chip,fmt", [("gfx942", "f8E4M3FNUZ"),
                                      ("gfx950", "f8E4M3FN")])
def test_scaled_mm_fp8_rowwise_and_tensorwise(chip, fmt):
    rng = np.random.default_rng(7)
    m, n, k = 40, 72, 96
    a = random_fp8(rng, (m, k), fmt)
    weight = random_fp8(rng, (n, k), fmt)  # stored N x K, as torch wants it
    scale_a = rng.uniform(0.5, 2.0, (m, 1)).astype(np.float32)
    scale_b = np.float32(0.25)
    bias = rng.uniform(-1, 1, n).astype(np.float32)
    c = tessel.scaled_mm(a, weight.T, scale_a, scale_b, bias=bias,
                         out_dtype="bf16", chip=chip)
    assert c.dtype == np.uint16 and c.shape == (m, n)
    product = decode_fp8(a, fmt) @ decode_fp8(weight, fmt).T
    expected = product * scale_a * 0.25 + bias
    # f32 accumulation, one bf16 rounding (relative 2^-8).
    got = bf16_bits_to_float(c)
    assert np.abs(got - expected).max() <= 2.0**-8 * np.abs(expected).max()
    # Dropping a scale is visible: the test can fail.
    assert np.abs(got - (product * scale_a + bias)).max() > 1.0
    # Per-column B scales and an f32 output.
    scale_b = rng.uniform(0.5, 2.0, (1, n)).astype(np.float32)
    c = tessel.scaled_mm(a, weight.T, np.float32(2.0), scale_b,
                         out_dtype="f32", chip=chip)
    assert np.allclose(c, product * 2.0 * scale_b, rtol=1e-6, atol=1e-5)


def test_scaled_mm_rejects_bad_scales():
    a = np.zeros((8, 16), np.uint8)
    b = np.zeros((16, 8), np.uint8)
    with pytest.raises(tessel.TesselError, match="scale_a"):
        tessel.scaled_mm(a, b, np.ones((3, 1), np.float32), 1.0)
    with pytest.raises(tessel.TesselError, match="uint8"):
        tessel.scaled_mm(a.astype(np.float16), b, 1.0, 1.0)
    with pytest.raises(tessel.TesselError, match="no 8-bit float"):
        tessel.scaled_mm(a, b, 1.0, 1.0, chip="gfx90a")


@pytest.mark.parametrize("sq,skv,causal", [(37, 70, True), (1, 600, False)])
def test_attention(sq, skv, causal):
    rng = np.random.default_rng(2)
    q = rng.standard_normal((1, 4, sq, 64)).astype(np.float16)
    k = rng.standard_normal((1, 2, skv, 64)).astype(np.float16)
    v = rng.standard_normal((1, 2, skv, 64)).astype(np.float16)
    o = tessel.attention(q, k, v, causal=causal, scale=0.125)
    assert o.shape == q.shape and o.dtype == np.float16
    expected = reference_attention(q, k, v, causal, 0.125)
    assert np.abs(o - expected).max() < 1e-2


def test_attention_window_and_sinks():
    # FlashAttention's window_size and gpt-oss-style sinks: a 9-key window
    # with sinks of a few units makes the sink a large part of each row.
    rng = np.random.default_rng(3)
    q = rng.standard_normal((1, 2, 50, 64)).astype(np.float16)
    k = rng.standard_normal((1, 2, 80, 64)).astype(np.float16)
    v = rng.standard_normal((1, 2, 80, 64)).astype(np.float16)
    sinks = np.array([1.5, -0.5], dtype=np.float32)
    o = tessel.attention(q, k, v, scale=0.125, window_size=(6, 2),
                         sinks=sinks)
    q64, k64, v64 = (x.astype(np.float64) for x in (q, k, v))
    s = q64 @ k64.transpose(0, 1, 3, 2) * 0.125
    position = np.arange(50)[:, None] + 30
    keys = np.arange(80)[None, :]
    s = np.where((keys >= position - 6) & (keys <= position + 2), s, -np.inf)
    sink = sinks.astype(np.float64)[None, :, None, None]
    top = np.maximum(s.max(-1, keepdims=True), sink)
    p = np.exp(s - top)
    expected = (p @ v64) / (p.sum(-1, keepdims=True) + np.exp(sink - top))
    assert np.abs(o - expected).max() < 1e-2
    with pytest.raises(tessel.TesselError, match="sinks must be"):
        tessel.attention(q, k, v, sinks=sinks[:1])
    # A NaN sink makes its head's rows NaN (as a NaN logit does in torch's
    # softmax); the other head is unaffected.
    o = tessel.attention(q, k, v, sinks=np.array([np.nan, 0.0], np.float32))
    assert np.isnan(o[0, 0]).all() and np.isfinite(o[0, 1]).all()


@pytest.mark.parametrize("chip,dtype,causal,d", [
    ("gfx942", "bf16", False, 64), ("gfx942", "bf16", True, 64),
    ("gfx90a", "bf16", True, 64), ("gfx950", "bf16", False, 64),
    ("gfx942", "f16", True, 64),
    # Past head dim 128 the loop without the scores ahead rescales lazily;
    # 192 computes in chunks of 32.
    ("gfx942", "bf16", True, 192), ("gfx950", "f16", False, 256)])
def test_attention_propagates_nan_and_inf(chip, dtype, causal, d):
    # As in FlashAttention and torch: a NaN in a query makes its row NaN; a
    # NaN in a key makes NaN every row that sees that key; a +inf in a key
    # gives +inf scores (NaN rows: inf - inf) where the query's element is
    # positive and -inf ones (the key drops out) where it is negative. The
    # other rows stay finite and right. 200 keys: whole blocks (the
    # unmasked, prefetched loop) and a tail.
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    sq, skv = 96, 200
    q = rng.standard_normal((1, 2, sq, d)).astype(np.float32)
    k = rng.standard_normal((1, 2, skv, d)).astype(np.float32)
    v = rng.standard_normal((1, 2, skv, d)).astype(np.float32)
    q[0, 0, 5, 3] = np.nan
    k[0, 1, 150, 7] = np.nan
    k[0, 0, 20, 0] = np.inf
    torch_type = torch.bfloat16 if dtype == "bf16" else torch.float16
    args = [torch.from_numpy(x).to(torch_type) for x in (q, k, v)]
    o = tessel.attention(*args, causal=causal, scale=0.125, chip=chip)
    o = o.float().numpy()[0]
    with np.errstate(invalid="ignore"):
        expected = reference_attention(
            *(x.float().numpy() for x in args), causal, 0.125)[0]
    nan_rows = np.isnan(expected).all(-1)
    assert nan_rows[0, 5] and nan_rows[0, 4] == (q[0, 0, 4, 0] > 0)
    sees_key_150 = np.arange(sq) + (skv - sq) >= 150 if causal else True
    assert np.array_equal(nan_rows[1], np.broadcast_to(sees_key_150, (sq,)))
    assert not np.isnan(expected[~nan_rows]).any()
    assert np.array_equal(np.isnan(o).all(-1), nan_rows)
    assert not np.isnan(o[~nan_rows]).any()
    assert np.abs(o[~nan_rows] - expected[~nan_rows]).max() < 3e-2


def test_attention_value_head_dim():
    # DeepSeek-style head dims: 192 for the scores, 128 for the values.
    rng = np.random.default_rng(4)
    q = rng.standard_normal((1, 2, 20, 192)).astype(np.float16)
    k = rng.standard_normal((1, 2, 40, 192)).astype(np.float16)
    v = rng.standard_normal((1, 2, 40, 128)).astype(np.float16)
    o = tessel.attention(q, k, v, causal=True)
    assert o.shape == (1, 2, 20, 128)
    expected = reference_attention(q, k, v, True, 192 ** -0.5)
    assert np.abs(o - expected).max() < 1e-2


def test_compile_exposes_code_object_and_report():
    ir = """
func.func @mm(%a: memref<64x32xf16>, %b: memref<32x64xf16>,
              %c: memref<64x64xf16>) {
  tessel.matmul ins(%a, %b : memref<64x32xf16>, memref<32x64xf16>)
                outs(%c : memref<64x64xf16>)
  return
}
"""
    kernel = tessel.compile(ir, chip="gfx950")
    assert kernel.hsaco[:4] == b"\x7fELF"
    assert kernel.kernels == ["mm"]
    report = kernel.report
    assert report["kernels"][0]["name"] == "mm"
    assert report["kernels"][0]["vgpr_count"] > 0
    isa = kernel.isa
    assert "gfx950" in isa and "v_mfma_" in isa


def test_errors_are_exceptions_with_diagnostics():
    with pytest.raises(tessel.TesselError, match=r"<tessel input>:1:"):
        tessel.compile("func.func @f( {", chip="gfx942")
    with pytest.raises(tessel.TesselError, match="unknown chip"):
        tessel.matmul(np.ones((4, 4), np.float16), np.ones((4, 4), np.float16),
                      chip="gfx000")
    with pytest.raises(tessel.TesselError, match="do not multiply"):
        tessel.matmul(np.ones((4, 5), np.float16), np.ones((4, 4), np.float16))
    with pytest.raises(tessel.TesselError, match="activation must be"):
        tessel.matmul(np.ones((4, 4), np.int8), np.ones((4, 4), np.int8),
                      activation="tanh")
    with pytest.raises(tessel.TesselError, match="bias must have shape"):
        tessel.matmul(np.ones((4, 4), np.float16), np.ones((4, 6), np.float16),
                      bias=np.ones(5, np.float32))
    with pytest.raises(tessel.TesselError, match="unknown chip"):
        tessel.matmul(np.ones((4, 4), np.float16), np.ones((4, 4), np.float16),
                      chip="gfx942:foo+")
    with pytest.raises(tessel.TesselError, match="device must be one of"):
        tessel.matmul(np.ones((4, 4), np.float16), np.ones((4, 4), np.float16),
                      device="cuda")
    with pytest.raises(tessel.TesselError, match="dtype"):
        tessel.matmul(np.ones((4, 4)), np.ones((4, 4)))


def test_torch_tensors():
    torch = pytest.importorskip("torch")
    a = torch.ones(16, 8, dtype=torch.float32)
    b = torch.ones(8, 16, dtype=torch.float32)
    c = tessel.matmul(a, b)
    assert isinstance(c, torch.Tensor)
    assert float(c.max()) == 8.0


TRANSPOSED_B_DYNAMIC_K = """
func.func @mm(%a: memref<33x?xf32>, %b: memref<?x24xf32, strided<[1, ?]>>,
              %c: memref<33x24xf32>) {
  tessel.matmul ins(%a, %b : memref<33x?xf32>, memref<?x24xf32, strided<[1, ?]>>)
                outs(%c : memref<33x24xf32>)
  return
}
"""


def test_kernel_call_strided_transposed_operand():
    kernel = tessel.compile(TRANSPOSED_B_DYNAMIC_K)
    args = kernel.arguments()
    assert [a["written"] for a in args] == [False, False, True]
    assert args[1]["strides"] == (1, -1)
    a = (np.arange(33 * 21) % 7 - 3).astype(np.float32).reshape(33, 21)
    bt = (np.arange(24 * 21) % 5 - 2).astype(np.float32).reshape(24, 21)
    c = np.zeros((33, 24), np.float32)
    # b.T is the column-major K x N view the kernel takes; no sizes= needed,
    # and read-only inputs are only read.
    a.flags.writeable = False
    kernel(a, bt.T, c)
    assert np.array_equal(c, a @ bt.T)
    # A row-major K x N array is not what the kernel's layout takes.
    with pytest.raises(tessel.TesselError, match="stride"):
        kernel(a, np.ascontiguousarray(bt.T), c)


def test_kernel_call_rejects_what_would_be_wrong():
    kernel = tessel.compile(TRANSPOSED_B_DYNAMIC_K)
    a = np.ones((33, 21), np.float32)
    b = np.ones((24, 21), np.float32).T
    c = np.zeros((33, 24), np.float32)
    with pytest.raises(tessel.TesselError, match="takes f32"):
        kernel(a.astype(np.float16), b, c)
    with pytest.raises(tessel.TesselError, match="takes 3 arguments"):
        kernel(a, b)
    with pytest.raises(tessel.TesselError, match="k = 20"):
        kernel(a, np.ones((24, 20), np.float32).T, c)
    with pytest.raises(tessel.TesselError, match="compiled for 24"):
        kernel(a, b, np.zeros((33, 23), np.float32))
    readonly = c.copy()
    readonly.flags.writeable = False
    with pytest.raises(tessel.TesselError, match="output"):
        kernel(a, b, readonly)
    with pytest.raises(tessel.TesselError, match="requested"):
        kernel(a, b, c, sizes={"m": 32})
    # Nothing was written by any rejected call.
    assert not c.any()


def test_kernel_call_zero_sized_problem():
    kernel = tessel.compile(TRANSPOSED_B_DYNAMIC_K)
    a = np.ones((33, 0), np.float32)
    b = np.ones((24, 0), np.float32).T
    c = np.full((33, 24), 5.0, np.float32)
    kernel(a, b, c)
    # K = 0: numpy's a @ b is all zeros.
    assert np.array_equal(c, a @ b)


def test_attention_propagates_nan_and_inf_like_flash_attention():
    rng = np.random.default_rng(3)
    q = rng.standard_normal((1, 2, 16, 64)).astype(np.float16)
    k = rng.standard_normal((1, 2, 40, 64)).astype(np.float16)
    v = rng.standard_normal((1, 2, 40, 64)).astype(np.float16)
    k_nan = k.copy()
    k_nan[0, 0, 5, 3] = np.nan  # every query of head 0 sees key 5
    o = tessel.attention(q, k_nan, v)
    assert np.isnan(o[0, 0]).all() and np.isfinite(o[0, 1]).all()
    q_inf = q.copy()
    q_inf[0, 1, 2, 0] = np.inf  # one query row
    o = tessel.attention(q_inf, k, v)
    assert np.isnan(o[0, 1, 2]).all()
    assert np.isfinite(np.delete(o[0, 1], 2, axis=0)).all()


ATTENTION_LSE = """
func.func @attn(%q: memref<1x2x50x64xf16>, %k: memref<1x2x40x64xf16>,
                %v: memref<1x2x40x64xf16>, %o: memref<1x2x50x64xf16>,
                %lse: memref<1x2x50xf32>) {
  tessel.attention ins(%q, %k, %v : memref<1x2x50x64xf16>,
      memref<1x2x40x64xf16>, memref<1x2x40x64xf16>)
      outs(%o : memref<1x2x50x64xf16>) lse(%lse : memref<1x2x50xf32>)
      {causal}
  return
}
"""


def test_attention_fully_masked_rows():
    # Causal, 50 queries over 40 keys (bottom-right aligned): the first 10
    # queries see no key. O is 0 there and the logsumexp +inf, as
    # FlashAttention writes them.
    kernel = tessel.compile(ATTENTION_LSE)
    rng = np.random.default_rng(4)
    q = rng.standard_normal((1, 2, 50, 64)).astype(np.float16)
    k = rng.standard_normal((1, 2, 40, 64)).astype(np.float16)
    v = rng.standard_normal((1, 2, 40, 64)).astype(np.float16)
    o = np.full(q.shape, np.nan, np.float16)
    lse = np.full((1, 2, 50), np.nan, np.float32)
    kernel(q, k, v, o, lse)
    assert (o[:, :, :10] == 0).all() and np.isposinf(lse[:, :, :10]).all()
    s = (q[:, :, 10:].astype(np.float64) @
         k.astype(np.float64).transpose(0, 1, 3, 2)) / 8.0
    rows = np.arange(40)[:, None]
    s = np.where(np.arange(40)[None, :] <= rows, s, -np.inf)
    expected = np.log(np.exp(s).sum(-1))
    assert np.abs(lse[:, :, 10:] - expected).max() < 1e-3


INT8_DIVIDING_EPILOGUE = """
func.func @mm(%a: memref<16x32xi8>, %b: memref<32x16xi8>,
              %c: memref<16x16xi32>, %d: memref<16xi32>) {
  tessel.matmul ins(%a, %b : memref<16x32xi8>, memref<32x16xi8>)
                outs(%c : memref<16x16xi32>)
                epilogue(%d : memref<16xi32>) {
  ^bb0(%acc: i32, %di: i32):
    %q = arith.divsi %acc, %di : i32
    tessel.yield %q : i32
  }
  return
}
"""


def test_division_fault_is_an_error_not_a_signal():
    # A zero divisor in the epilogue's column divisors: the emulator reports
    # the lane's fault instead of the host process dying of SIGFPE.
    kernel = tessel.compile(INT8_DIVIDING_EPILOGUE)
    a = (np.arange(16 * 32) % 11 - 5).astype(np.int8).reshape(16, 32)
    b = (np.arange(32 * 16) % 7 - 3).astype(np.int8).reshape(32, 16)
    d = (np.arange(16) % 4 + 1).astype(np.int32)
    c = np.zeros((16, 16), np.int32)
    kernel(a, b, c, d, device="emulator")
    products = a.astype(np.int64) @ b.astype(np.int64)
    assert np.array_equal(c, np.trunc(products / d).astype(np.int32))
    d[3] = 0
    with pytest.raises(tessel.TesselError,
                       match="integer division by zero in an i32 sdiv"):
        kernel(a, b, c, d, device="emulator")
    # The process and the module go on working.
    d[3] = 1
    kernel(a, b, c, d, device="emulator")
    assert np.array_equal(c[:, 3], products[:, 3])


def test_version_comes_from_the_library():
    assert tessel.__version__.count(".") == 2
    assert all(part.isdigit() for part in tessel.__version__.split("."))
    full = tessel.version()
    assert full.startswith(tessel.__version__ + " (git ")
    assert "LLVM 22." in full
    number = tessel._capi.lib().tesselGetVersionNumber()
    major, minor, patch = (int(p) for p in tessel.__version__.split("."))
    assert number == 10000 * major + 100 * minor + patch


def bf16_bits(values):
    """float32 -> bf16 bits (round to nearest even), as uint16."""
    bits = np.asarray(values, np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return bits.astype(np.uint16)


def test_matmul_bf16_epilogues_and_a_transposed_weight():
    rng = np.random.default_rng(3)
    m, n, k = 70, 48, 96
    a = bf16_bits(rng.uniform(-1, 1, (m, k)))
    weight = bf16_bits(rng.uniform(-1, 1, (n, k)))  # N x K, as a layer's
    bias = rng.uniform(-1, 1, n).astype(np.float32)
    residual = bf16_bits(rng.uniform(-1, 1, (m, n)))
    c = tessel.matmul(a, weight.T, bias=bias, residual=residual,
                      activation="silu", chip="gfx942:sramecc+:xnack-")
    assert c.dtype == np.uint16 and c.shape == (m, n)
    x = (bf16_bits_to_float(a) @ bf16_bits_to_float(weight).T + bias +
         bf16_bits_to_float(residual))
    expected = x / (1 + np.exp(-x))
    assert np.abs(bf16_bits_to_float(c) - expected).max() <= 2.0**-7 * (
        np.abs(expected).max() + 1)
    # GELU and a bias per row, f16.
    a16 = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b16 = rng.uniform(-1, 1, (k, n)).astype(np.float16)
    row_bias = rng.uniform(-1, 1, (m, 1)).astype(np.float32)
    c = tessel.matmul(a16, b16, bias=row_bias, activation="gelu",
                      chip="gfx950")
    x = a16.astype(np.float64) @ b16.astype(np.float64) + row_bias
    from math import erf
    expected = 0.5 * x * (1 + np.vectorize(erf)(x / np.sqrt(2)))
    assert np.abs(c - expected).max() < 0.02


@pytest.mark.parametrize("chip", ["gfx90a", "gfx942", "gfx950"])
def test_matmul_bf16_rounding_matches_torch_bit_for_bit(chip):
    # Inputs with few significant bits, so that every dot product is exact
    # in f32 whatever the order of accumulation: C's bits are then the
    # f32 -> bf16 rounding alone, compared with torch's. gfx90a and gfx942
    # round with integer arithmetic (no conversion instruction), gfx950
    # with v_cvt_pk_bf16_f32. The shape is no multiple of the tiles: C's
    # edge tiles are stored masked.
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(11)
    m, n, k = 70, 45, 64
    a = (rng.integers(-255, 256, (m, k)) * 2.0**-9).astype(np.float32)
    b = (rng.integers(-15, 16, (k, n)) * 2.0**-3).astype(np.float32)
    # Row 0 is 1 + 2^-8 * b[1, j]: halfway between two bf16 values for odd
    # b[1, j] * 8, a tie that rounds to the even one.
    a[0, :] = 0.0
    a[0, :2] = [1.0, 2.0**-8]
    b[0, :] = 1.0
    b[1, :3] = [1.0, 3.0, 5.0]
    a[3, 9] = np.nan  # row 3 is NaN
    b[9, 7] = np.inf  # column 7 is +-inf, or NaN where a[i, 9] is 0
    a[5, 9] = 0.0
    c = tessel.matmul(bf16_bits(a), bf16_bits(b), chip=chip)
    assert c.dtype == np.uint16 and c.shape == (m, n)
    with np.errstate(invalid="ignore"):  # inf * 0
        exact = bf16_bits_to_float(bf16_bits(a)) @ bf16_bits_to_float(
            bf16_bits(b))
    expected = torch.from_numpy(exact.astype(np.float32)).to(
        torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    nan = np.isnan(exact)
    assert nan[3].all() and nan[5, 7] and np.isinf(exact[1:, 7][~nan[1:, 7]]).all()
    assert np.isnan(bf16_bits_to_float(c[nan])).all()
    assert np.array_equal(c[~nan], expected[~nan])
    assert list(c[0, :3]) == [0x3F80, 0x3F82, 0x3F82]  # ties to even
    if chip != "gfx950":
        # torch's quiet NaN, whatever the NaN: 0x7fc0.
        assert np.all(c[nan] == 0x7FC0)


def test_matmul_one_compile_serves_every_batch_size():
    rng = np.random.default_rng(4)
    w = rng.uniform(-1, 1, (64, 32)).astype(np.float32)
    before = tessel.cache_stats()
    for rows in (65, 200, 97):
        x = rng.uniform(-1, 1, (rows, 64)).astype(np.float32)
        assert np.allclose(tessel.matmul(x, w, chip="gfx942"), x @ w,
                           atol=1e-4)
    after = tessel.cache_stats()
    assert after["misses"] == before["misses"] + 1
    # Up to 64 rows M stays static by default (the compiler may split K);
    # dynamic=["m"] asks for one kernel for those too.
    for rows in (17, 30):
        x = rng.uniform(-1, 1, (rows, 64)).astype(np.float32)
        assert np.allclose(tessel.matmul(x, w, chip="gfx942"), x @ w,
                           atol=1e-4)
        assert np.allclose(tessel.matmul(x, w, chip="gfx942",
                                         dynamic=["m"]), x @ w, atol=1e-4)
    assert tessel.cache_stats()["misses"] == after["misses"] + 2
    with pytest.raises(tessel.TesselError, match="dynamic must be"):
        tessel.matmul(x, w, dynamic="m")
    # A 3-D activation by a 2-D weight: one GEMM over batch x rows.
    x = rng.uniform(-1, 1, (3, 10, 64)).astype(np.float32)
    c = tessel.matmul(x, w, chip="gfx942")
    assert c.shape == (3, 10, 32) and np.allclose(c, x @ w, atol=1e-4)


def test_matmul_config_override_and_torch_bf16():
    torch = pytest.importorskip("torch")
    a = torch.randn(64, 64).to(torch.bfloat16)
    b = torch.randn(64, 64).to(torch.bfloat16)
    config = ('#tessel.config<tile = [32, 32, 32], waves = [1, 1], '
              'stages = 2, instr = "v_mfma_f32_32x32x8_bf16">')
    c = tessel.matmul(a, b, config=config, chip="gfx942")
    assert c.dtype == torch.bfloat16 and c.shape == (64, 64)
    expected = a.float() @ b.float()
    assert (c.float() - expected).abs().max() <= 2.0**-7 * (
        expected.abs().max() + 1)
    with pytest.raises(tessel.TesselError, match="tile"):
        tessel.matmul(a, b, config="#tessel.config<tile = [33, 32, 32], "
                      "waves = [1, 1], stages = 2, instr = "
                      "\"v_mfma_f32_32x32x8_bf16\">", chip="gfx942")


@pytest.mark.parametrize("chip,fmt", [("gfx942", "f8E4M3FNUZ"),
                                      ("gfx950", "f8E4M3FN")])
def test_attention_fp8_with_descales_and_lse(chip, fmt):
    rng = np.random.default_rng(11)
    q = random_fp8(rng, (1, 2, 40, 64), fmt)
    k = random_fp8(rng, (1, 1, 48, 64), fmt)
    v = random_fp8(rng, (1, 1, 48, 64), fmt)
    descale = (np.float32(0.5), np.float32(0.25), np.float32(2.0))
    o, lse = tessel.attention(q, k, v, causal=True, descale=descale,
                              return_lse=True, chip=chip)
    assert o.dtype == np.uint16 and o.shape == (1, 2, 40, 64)
    assert lse.dtype == np.float32 and lse.shape == (1, 2, 40)
    qf, kf = decode_fp8(q, fmt) * 0.5, decode_fp8(k, fmt) * 0.25
    vf = decode_fp8(v, fmt) * 2.0
    scores = np.einsum("bhqd,bkd->bhqk", qf, kf[:, 0]) / 8
    visible = np.tril(np.ones((40, 48), bool), 8)
    scores = np.where(visible, scores, -np.inf)
    top = scores.max(-1, keepdims=True)
    weights = np.exp(scores - top)
    expected_lse = (top + np.log(weights.sum(-1, keepdims=True)))[..., 0]
    assert np.abs(lse - expected_lse).max() < 1e-3
    # P is rounded to the 8-bit type before the second product, as the
    # kernel does, so the output matches only to that precision.
    expected = (weights / weights.sum(-1, keepdims=True)) @ vf[:, 0]
    got = bf16_bits_to_float(o)
    assert np.abs(got - expected).max() < 0.1 * np.abs(expected).max()
    with pytest.raises(tessel.TesselError, match="descale"):
        tessel.attention(q, k, v, chip=chip)


def test_attention_bf16_and_lse():
    rng = np.random.default_rng(12)
    q = rng.standard_normal((2, 2, 24, 64)).astype(np.float32)
    k = rng.standard_normal((2, 2, 30, 64)).astype(np.float32)
    v = rng.standard_normal((2, 2, 30, 64)).astype(np.float32)

    def bf16(x):  # round to nearest even, as uint16 bits
        bits = x.view(np.uint32).astype(np.uint64)
        return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)

    qb, kb, vb = bf16(q), bf16(k), bf16(v)
    o, lse = tessel.attention(qb, kb, vb, return_lse=True)
    assert o.dtype == np.uint16 and o.shape == (2, 2, 24, 64)
    qf, kf, vf = (bf16_bits_to_float(x) for x in (qb, kb, vb))
    expected = reference_attention(qf, kf, vf, False, 0.125)
    assert np.abs(bf16_bits_to_float(o) - expected).max() < 2e-2
    scores = np.einsum("bhqd,bhkd->bhqk", qf, kf) * 0.125
    expected_lse = np.log(np.exp(scores).sum(-1))
    assert np.abs(lse - expected_lse).max() < 1e-3


@pytest.mark.parametrize("chip", ["gfx1100", "gfx1201"])
def test_wmma_chips(chip):
    rng = np.random.default_rng(13)
    a = rng.standard_normal((70, 64)).astype(np.float16)
    b = rng.standard_normal((64, 50)).astype(np.float16)
    c = tessel.matmul(a, b, chip=chip)
    assert np.abs(c - reference_matmul(a, b)).max() < 0.05
    q = rng.standard_normal((1, 2, 40, 64)).astype(np.float16)
    k = rng.standard_normal((1, 1, 50, 64)).astype(np.float16)
    o = tessel.attention(q, k, k, causal=True, scale=0.125, chip=chip)
    assert np.abs(o - reference_attention(q, k, k, True, 0.125)).max() < 1e-2


def random_gqa_decode(seed, sq, skv, d):
    """f16 q (1, 8, sq, d), k and v (1, 2, skv, d): one batch, 8 query
    heads on 2 key/value heads."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((1, 8, sq, d)).astype(np.float16)
    k = rng.standard_normal((1, 2, skv, d)).astype(np.float16)
    v = rng.standard_normal((1, 2, skv, d)).astype(np.float16)
    return q, k, v


@pytest.mark.parametrize("chip", ["gfx90a", "gfx942", "gfx950"])
def test_two_wave_packed_decode(chip):
    # 8 queries of 4 packed heads fill a 32-row block, which two waves of
    # 16 rows share, in the split kernel and in the merge of the splits (8
    # of them: the key length is dynamic here). A NaN key makes NaN the
    # rows of its key/value head's query heads, and only those.
    # (tessel-run's e2e tests run the two-level merges of more splits.)
    d = 128
    q, k, v = random_gqa_decode(17, 8, 3000, d)
    o = tessel.attention(q, k, v, chip=chip).astype(np.float32)[0]
    expected = reference_attention(q, k, v, False, 1 / np.sqrt(d))[0]
    assert np.abs(o - expected).max() < 2e-3
    k[0, 1, 2500, 7] = np.nan
    o = tessel.attention(q, k, v, chip=chip).astype(np.float32)[0]
    assert np.isnan(o[4:]).all() and not np.isnan(o[:4]).any()
    assert np.abs(o[:4] - expected[:4]).max() < 2e-3


@pytest.mark.parametrize("chip", ["gfx942", "gfx950"])
def test_split_decode_propagates_nan(chip):
    # A grouped-query decode whose keys the model splits (one batch, two
    # key/value heads: few workgroups): the last split to arrive merges the
    # splits' partials. A NaN in a key makes NaN the rows of every query
    # head of its group (all see it), whichever split holds it; a NaN query
    # only its own row; the other group stays finite and right.
    d = 64
    q, k, v = random_gqa_decode(11, 2, 3000, d)
    k[0, 0, 2000, 5] = np.nan
    q[0, 5, 1, 0] = np.nan
    o = tessel.attention(q, k, v, chip=chip).astype(np.float32)[0]
    with np.errstate(invalid="ignore"):
        expected = reference_attention(q, k, v, False, 1 / np.sqrt(d))[0]
    nan_rows = np.isnan(expected).all(-1)
    assert nan_rows[:4].all() and nan_rows[5, 1] and not nan_rows[5, 0]
    assert np.array_equal(np.isnan(o).all(-1), nan_rows)
    assert not np.isnan(o[~nan_rows]).any()
    assert np.abs(o[~nan_rows] - expected[~nan_rows]).max() < 1e-2
