"""tessel.attention in torch autograd and tessel.attention_backward, on the
emulator: gradients against torch autograd of the reference formula in
float64."""

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tessel  # noqa: E402


@pytest.fixture(autouse=True, scope="module")
def private_cache(tmp_path_factory):
    os.environ["TESSEL_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))


def reference(q, k, v, causal=False, scale=None, window=(-1, -1)):
    """softmax(scale q k^T + mask) v in float64 with torch ops (autograd
    differentiates it), masks aligned to the bottom right."""
    q, k, v = q.double(), k.double(), v.double()
    group = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(group, dim=1)
    v = v.repeat_interleave(group, dim=1)
    scale = scale if scale is not None else q.shape[-1] ** -0.5
    scores = scale * q @ k.transpose(-1, -2)
    sq, skv = q.shape[2], k.shape[2]
    position = torch.arange(sq)[:, None] + (skv - sq)
    key = torch.arange(skv)[None, :]
    left, right = window
    if causal:
        right = 0
    visible = torch.ones(sq, skv, dtype=torch.bool)
    if right >= 0:
        visible &= key <= position + right
    if left >= 0:
        visible &= key >= position - left
    scores = scores.masked_fill(~visible, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def leaves(*shapes, dtype=torch.float16, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return [torch.randn(*shape, generator=generator).to(dtype)
            .requires_grad_() for shape in shapes]


def check_grads(got, expected, tolerance):
    for g, e, name in zip(got, expected, ("dq", "dk", "dv")):
        assert g is not None and g.shape == e.shape, name
        error = (g.double() - e).abs().max().item()
        assert error <= tolerance * e.abs().max().item(), (name, error)


@pytest.mark.parametrize("causal", [False, True])
def test_autograd_gqa(causal):
    q, k, v = leaves((1, 4, 40, 64), (1, 2, 56, 64), (1, 2, 56, 64))
    out = tessel.attention(q, k, v, causal=causal)
    assert out.requires_grad and out.dtype == torch.float16
    grad = torch.randn(out.shape, generator=torch.Generator().manual_seed(1))
    out.backward(grad.half())
    q64, k64, v64 = (x.detach().double().requires_grad_() for x in (q, k, v))
    ref = reference(q64, k64, v64, causal=causal)
    assert (out.double() - ref).abs().max() < 2e-3 * ref.abs().max()
    ref.backward(grad.half().double())
    check_grads((q.grad, k.grad, v.grad), (q64.grad, k64.grad, v64.grad),
                4e-3)


def test_autograd_bf16_window_scale_and_lse():
    q, k, v = leaves((2, 2, 33, 32), (2, 2, 48, 32), (2, 2, 48, 32),
                     dtype=torch.bfloat16, seed=2)
    out, lse = tessel.attention(q, k, v, scale=0.3, window_size=(8, 4),
                                return_lse=True)
    assert lse.dtype == torch.float32 and not lse.requires_grad
    out.float().square().sum().backward()
    q64, k64, v64 = (x.detach().double().requires_grad_() for x in (q, k, v))
    ref = reference(q64, k64, v64, scale=0.3, window=(8, 4))
    # The gradient of out^2 is 2 out: the kernel's rounded output, as
    # torch's bf16 backward would see it.
    ref.backward(2 * out.detach().double())
    check_grads((q.grad, k.grad, v.grad), (q64.grad, k64.grad, v64.grad),
                3e-2)


def test_attention_backward_numpy_f32_gradients():
    rng = np.random.default_rng(3)
    q = rng.standard_normal((1, 2, 20, 64)).astype(np.float16)
    k = rng.standard_normal((1, 1, 30, 64)).astype(np.float16)
    v = rng.standard_normal((1, 1, 30, 64)).astype(np.float16)
    dout = rng.standard_normal((1, 2, 20, 64)).astype(np.float16)
    out, lse = tessel.attention(q, k, v, causal=True, return_lse=True)
    dq, dk, dv = tessel.attention_backward(dout, q, k, v, out, lse,
                                           causal=True, grad_dtype="f32")
    assert dq.dtype == dk.dtype == dv.dtype == np.float32
    q64, k64, v64 = (torch.from_numpy(x).double().requires_grad_()
                     for x in (q, k, v))
    ref = reference(q64, k64, v64, causal=True)
    ref.backward(torch.from_numpy(dout).double())
    check_grads([torch.from_numpy(x) for x in (dq, dk, dv)],
                (q64.grad, k64.grad, v64.grad), 4e-3)


def test_attention_backward_rejects_bad_shapes():
    q = np.zeros((1, 2, 16, 64), np.float16)
    lse = np.zeros((1, 2, 15), np.float32)
    with pytest.raises(tessel.TesselError, match="lse must be"):
        tessel.attention_backward(q, q, q, q, q, lse)
    with pytest.raises(tessel.TesselError, match="dout must be"):
        tessel.attention_backward(q[:, :, :8], q, q, q, q,
                                  np.zeros((1, 2, 16), np.float32))
