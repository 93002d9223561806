"""torch.ops.tessel on CPU tensors (the emulator) and meta tensors, checked
against torch's own arithmetic in float64."""

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tessel  # noqa: E402
import tessel.ops  # noqa: E402,F401  (registers torch.ops.tessel)


@pytest.fixture(autouse=True, scope="module")
def private_cache(tmp_path_factory):
    os.environ["TESSEL_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))


def test_matmul_op_f16_bias_gelu():
    torch.manual_seed(0)
    a = torch.randn(50, 64).half()
    w = torch.randn(40, 64).half()  # a weight (N, K), used as w.t()
    bias = torch.randn(40)
    c = torch.ops.tessel.matmul(a, w.t(), bias, None, "gelu")
    assert c.dtype == torch.float16 and c.shape == (50, 40)
    expected = torch.nn.functional.gelu(a.double() @ w.double().t() +
                                        bias.double())
    assert (c.double() - expected).abs().max() < 0.05


def test_matmul_op_bf16_residual_batched():
    torch.manual_seed(1)
    a = torch.randn(2, 20, 32).bfloat16()
    b = torch.randn(32, 24).bfloat16()
    residual = torch.randn(2, 20, 24).bfloat16()
    c = torch.ops.tessel.matmul(a, b, residual=residual)
    assert c.dtype == torch.bfloat16 and c.shape == (2, 20, 24)
    expected = a.double() @ b.double() + residual.double()
    assert (c.double() - expected).abs().max() < 0.15


def test_attention_op_gqa_causal_window():
    torch.manual_seed(2)
    q = torch.randn(1, 4, 48, 64).half()
    k = torch.randn(1, 2, 48, 64).half()
    v = torch.randn(1, 2, 48, 32).half()
    o = torch.ops.tessel.attention(q, k, v, causal=True, window_left=8)
    assert o.shape == (1, 4, 48, 32) and o.dtype == torch.float16
    kk = k.double().repeat_interleave(2, dim=1)
    vv = v.double().repeat_interleave(2, dim=1)
    scores = q.double() @ kk.transpose(-1, -2) / 8
    position = torch.arange(48)
    visible = (position[None, :] <= position[:, None]) & \
        (position[None, :] >= position[:, None] - 8)
    scores = scores.masked_fill(~visible, float("-inf"))
    expected = scores.softmax(-1) @ vv
    assert (o.double() - expected).abs().max() < 2e-3


def test_scaled_mm_op_matches_decoded_fp8():
    torch.manual_seed(3)
    # E4M3FNUZ bits of small values: sign, 4 exponent, 3 mantissa bits
    # (bias 8); 0x80 is NaN in FNUZ, so it is avoided.
    a = torch.randint(0, 0x70, (32, 64), dtype=torch.uint8)
    b = torch.randint(0, 0x70, (48, 64), dtype=torch.uint8)

    def decode(bits):
        bits = bits.numpy().astype(np.int64)
        exponent, mantissa = (bits >> 3) & 0xF, bits & 7
        value = np.where(exponent == 0, mantissa / 8.0 * 2.0 ** -7,
                         (1 + mantissa / 8.0) * 2.0 ** (exponent - 8))
        return torch.from_numpy(np.where(bits & 0x80, -value, value))

    c = torch.ops.tessel.scaled_mm(a, b.t(), torch.tensor([0.5]),
                                   torch.tensor([3.0]), None, "f32")
    expected = decode(a) @ decode(b).t() * 1.5
    assert c.dtype == torch.float32
    assert (c.double() - expected).abs().max() < 1e-3 * expected.abs().max()


def test_meta_tensors_give_shapes():
    a = torch.empty(7, 16, device="meta", dtype=torch.int8)
    b = torch.empty(16, 5, device="meta", dtype=torch.int8)
    c = torch.ops.tessel.matmul(a, b)
    assert c.device.type == "meta" and c.shape == (7, 5)
    assert c.dtype == torch.int32
    o = torch.ops.tessel.attention(
        torch.empty(1, 2, 3, 64, device="meta"),
        torch.empty(1, 1, 9, 64, device="meta"),
        torch.empty(1, 1, 9, 32, device="meta"))
    assert o.shape == (1, 2, 3, 32)


def test_op_errors_are_tessel_errors():
    with pytest.raises(tessel.TesselError, match="do not multiply"):
        torch.ops.tessel.matmul(torch.ones(4, 5).half(), torch.ones(4, 5).half())
    with pytest.raises(tessel.TesselError, match="activation must be"):
        torch.ops.tessel.matmul(torch.ones(4, 4).half(),
                                torch.ones(4, 4).half(), activation="tanh")


def test_matmul_op_alpha():
    a = (torch.arange(24 * 16) % 7 - 3).float().reshape(24, 16)
    b = (torch.arange(16 * 8) % 5 - 2).float().reshape(16, 8)
    assert torch.equal(torch.ops.tessel.matmul(a, b, alpha=0.5), 0.5 * (a @ b))
