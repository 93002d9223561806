"""tessel.attention_varlen (flash_attn_varlen_func's conventions) on the
emulator, against a float64 reference per packed sequence."""

import os

import numpy as np
import pytest

import tessel


@pytest.fixture(autouse=True, scope="module")
def private_cache(tmp_path_factory):
    os.environ["TESSEL_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))


def reference(q, k, v, causal, scale, window):
    """One sequence: q (Sq, H, D), k and v (Skv, Hkv, D) in float64;
    returns o (Sq, H, Dv) and the logsumexp (H, Sq)."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    group = q.shape[1] // k.shape[1]
    k = np.repeat(k, group, axis=1)
    v = np.repeat(v, group, axis=1)
    scores = np.einsum("qhd,khd->hqk", q, k) * scale
    sq, skv = q.shape[0], k.shape[0]
    position = np.arange(sq)[:, None] + (skv - sq)
    key = np.arange(skv)[None, :]
    left, right = window
    if causal:
        right = 0
    visible = np.ones((sq, skv), bool)
    if right >= 0:
        visible &= key <= position + right
    if left >= 0:
        visible &= key >= position - left
    scores = np.where(visible, scores, -np.inf)
    top = scores.max(axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0)
    weights = np.exp(scores - top)
    total = weights.sum(axis=-1, keepdims=True)
    o = np.einsum("hqk,khd->qhd", weights / np.where(total, total, 1), v)
    lse = np.where(total[..., 0] > 0, np.log(total[..., 0]) + top[..., 0],
                   np.inf)
    return o, lse


@pytest.mark.parametrize("causal,window", [(True, (-1, -1)),
                                           (False, (16, 4))])
def test_varlen_against_each_sequence(causal, window):
    rng = np.random.default_rng(5)
    lengths_q = [7, 0, 70, 33]
    lengths_k = [9, 4, 70, 50]
    cu_q = np.cumsum([0] + lengths_q).astype(np.int32)
    cu_k = np.cumsum([0] + lengths_k).astype(np.int32)
    q = rng.standard_normal((cu_q[-1], 4, 64)).astype(np.float16)
    k = rng.standard_normal((cu_k[-1], 2, 64)).astype(np.float16)
    v = rng.standard_normal((cu_k[-1], 2, 64)).astype(np.float16)
    o, lse = tessel.attention_varlen(q, k, v, cu_q, cu_k, max(lengths_q),
                                     max(lengths_k), causal=causal,
                                     window_size=window, softmax_scale=0.2,
                                     return_lse=True)
    assert o.shape == q.shape and lse.shape == (4, cu_q[-1])
    for b in range(len(lengths_q)):
        rows = slice(cu_q[b], cu_q[b + 1])
        keys = slice(cu_k[b], cu_k[b + 1])
        if lengths_q[b] == 0:
            continue
        expected, expected_lse = reference(q[rows], k[keys], v[keys], causal,
                                           0.2, window)
        assert np.abs(o[rows] - expected).max() <= 2e-3 * max(
            1.0, np.abs(expected).max())
        finite = np.isfinite(expected_lse)
        assert np.array_equal(np.isfinite(lse[:, rows]), finite)
        assert np.abs(lse[:, rows][finite] - expected_lse[finite]).max() < 1e-3


def test_varlen_torch_bf16():
    torch = pytest.importorskip("torch")
    generator = torch.Generator().manual_seed(0)
    cu = torch.tensor([0, 20, 21, 60], dtype=torch.int32)
    q = torch.randn(60, 2, 32, generator=generator).bfloat16()
    k = torch.randn(60, 2, 32, generator=generator).bfloat16()
    v = torch.randn(60, 2, 32, generator=generator).bfloat16()
    o = tessel.attention_varlen(q, k, v, cu, cu, 39, 39, causal=True)
    assert o.dtype == torch.bfloat16 and o.shape == (60, 2, 32)
    for b in range(3):
        rows = slice(int(cu[b]), int(cu[b + 1]))
        expected, _ = reference(q[rows].float().numpy(),
                                k[rows].float().numpy(),
                                v[rows].float().numpy(), True, 32 ** -0.5,
                                (-1, -1))
        assert np.abs(o[rows].double().numpy() - expected).max() < 3e-2


def test_varlen_rejects_bad_lengths():
    q = np.zeros((10, 2, 32), np.float16)
    with pytest.raises(tessel.TesselError, match="cu_seqlens"):
        tessel.attention_varlen(q, q, q, np.array([0, 10], np.int32),
                                np.array([0, 5, 10], np.int32), 10)
    with pytest.raises(tessel.TesselError, match=r"\(total_q, H, D\)"):
        tessel.attention_varlen(q[None], q, q, np.array([0, 10], np.int32),
                                np.array([0, 10], np.int32), 10)


def test_varlen_autograd_against_torch():
    torch = pytest.importorskip("torch")
    generator = torch.Generator().manual_seed(3)
    lengths_q, lengths_k = [12, 0, 30], [20, 5, 30]
    cu_q = torch.tensor([0, 12, 12, 42], dtype=torch.int32)
    cu_k = torch.tensor([0, 20, 25, 55], dtype=torch.int32)
    q = torch.randn(42, 4, 32, generator=generator).half().requires_grad_()
    k = torch.randn(55, 2, 32, generator=generator).half().requires_grad_()
    v = torch.randn(55, 2, 32, generator=generator).half().requires_grad_()
    out = tessel.attention_varlen(q, k, v, cu_q, cu_k, 30, 30, causal=True)
    assert out.requires_grad
    grad = torch.randn(out.shape, generator=generator).half()
    out.backward(grad)
    # The reference: each sequence through torch's own ops in float64.
    q64, k64, v64 = (x.detach().double().requires_grad_() for x in (q, k, v))
    outs = []
    for b in range(3):
        rows = slice(int(cu_q[b]), int(cu_q[b + 1]))
        keys = slice(int(cu_k[b]), int(cu_k[b + 1]))
        qs = q64[rows].transpose(0, 1)
        ks = k64[keys].transpose(0, 1).repeat_interleave(2, dim=0)
        vs = v64[keys].transpose(0, 1).repeat_interleave(2, dim=0)
        scores = qs @ ks.transpose(-1, -2) / np.sqrt(32)
        position = torch.arange(qs.shape[1])[:, None] + (ks.shape[1] -
                                                         qs.shape[1])
        scores = scores.masked_fill(
            torch.arange(ks.shape[1])[None, :] > position, float("-inf"))
        outs.append((torch.softmax(scores, -1) @ vs).transpose(0, 1))
    torch.cat(outs).backward(grad.double())
    for got, want in ((q.grad, q64.grad), (k.grad, k64.grad),
                      (v.grad, v64.grad)):
        assert (got.double() - want).abs().max() <= 4e-3 * want.abs().max()
