"""tessel.paged_attention (vLLM's and flash_attn_with_kvcache's argument
conventions) on the emulator, against a float64 reference over the keys
gathered through each sequence's block table."""

import os

import numpy as np
import pytest

import tessel


@pytest.fixture(autouse=True, scope="module")
def private_cache(tmp_path_factory):
    os.environ["TESSEL_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))


def reference(q, k_cache, v_cache, table, lengths, causal=False):
    """q (B, Sq, H, D); returns (B, Sq, H, D) in float64."""
    batch, seq_q, heads, _ = q.shape
    out = np.zeros(q.shape)
    for b in range(batch):
        keys = np.concatenate([k_cache[p] for p in table[b]])[:lengths[b]]
        values = np.concatenate([v_cache[p] for p in table[b]])[:lengths[b]]
        group = heads // keys.shape[1]
        k = np.repeat(keys.astype(np.float64), group, axis=1)
        v = np.repeat(values.astype(np.float64), group, axis=1)
        scores = np.einsum("qhd,khd->hqk", q[b].astype(np.float64), k)
        scores /= np.sqrt(q.shape[-1])
        if causal:
            position = np.arange(seq_q)[:, None] + lengths[b] - seq_q
            scores = np.where(np.arange(len(k))[None, :] <= position, scores,
                              -np.inf)
        weights = np.exp(scores - scores.max(-1, keepdims=True))
        weights /= weights.sum(-1, keepdims=True)
        out[b] = np.einsum("hqk,khd->qhd", weights, v)
    return out


def cache(rng, pages, page_size, kv_heads, head_dim, dtype=np.float16):
    shape = (pages, page_size, kv_heads, head_dim)
    return (rng.standard_normal(shape).astype(dtype),
            rng.standard_normal(shape).astype(dtype))


@pytest.mark.parametrize("page_size", [16, 64])
def test_vllm_decode_shuffled_pages(page_size):
    rng = np.random.default_rng(page_size)
    batch, heads, kv_heads, head_dim, max_pages = 3, 8, 2, 64, 4
    pages = batch * max_pages + 5
    k_cache, v_cache = cache(rng, pages, page_size, kv_heads, head_dim)
    table = rng.permutation(pages)[:batch * max_pages].reshape(
        batch, max_pages).astype(np.int32)
    # Lengths ending inside a page, one of a single key.
    lengths = np.array([1, page_size * 2 + 3, page_size * max_pages - 5],
                       np.int32)
    q = rng.standard_normal((batch, heads, head_dim)).astype(np.float16)
    out = tessel.paged_attention(q, k_cache, v_cache, table, lengths)
    assert out.shape == q.shape and out.dtype == np.float16
    expected = reference(q[:, None], k_cache, v_cache, table, lengths)[:, 0]
    assert np.abs(out - expected).max() < 2e-3 * np.abs(expected).max()


def test_flash_layout_causal_speculative_bf16_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    batch, seq_q, heads, head_dim, page_size, max_pages = 2, 3, 4, 32, 32, 3
    k_cache, v_cache = cache(rng, 8, page_size, 4, head_dim, np.float32)
    table = np.array([[7, 2, 5], [0, 3, 1]], np.int32)
    lengths = np.array([70, 33], np.int32)
    q = rng.standard_normal((batch, seq_q, heads, head_dim)).astype(
        np.float32)
    out = tessel.paged_attention(
        torch.from_numpy(q).bfloat16(), torch.from_numpy(k_cache).bfloat16(),
        torch.from_numpy(v_cache).bfloat16(), torch.from_numpy(table),
        torch.from_numpy(lengths), causal=True)
    assert out.dtype == torch.bfloat16 and tuple(out.shape) == q.shape
    rounded = [torch.from_numpy(x).bfloat16().double().numpy()
               for x in (q, k_cache, v_cache)]
    expected = reference(rounded[0], rounded[1], rounded[2], table, lengths,
                         causal=True)
    assert np.abs(out.double().numpy() - expected).max() < 3e-2


def test_paged_attention_rejects_bad_tables():
    q = np.zeros((2, 4, 32), np.float16)
    k_cache = np.zeros((4, 16, 2, 32), np.float16)
    with pytest.raises(tessel.TesselError, match="block_table"):
        tessel.paged_attention(q, k_cache, k_cache,
                               np.zeros((3, 2), np.int32),
                               np.zeros(2, np.int32))
    with pytest.raises(tessel.TesselError, match="k_cache"):
        tessel.paged_attention(q, k_cache[..., :16], k_cache,
                               np.zeros((2, 2), np.int32),
                               np.zeros(2, np.int32))
