"""The device-resident runtime from Python on the emulator device: device
arrays, streams, events, kernels and problems launched on device memory,
and the misuses that must be errors."""

import os

import numpy as np
import pytest

import tessel


@pytest.fixture(autouse=True, scope="module")
def private_cache(tmp_path_factory):
    os.environ["TESSEL_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))


@pytest.fixture
def dev():
    return tessel.Device("emulator")


def test_device_arrays_round_trip(dev):
    assert dev.kind == "emulator"
    host = np.arange(24, dtype=np.float32).reshape(4, 6)
    array = dev.to_device(host)
    assert array.shape == (4, 6) and array.dtype == np.float32
    assert array.nbytes == host.nbytes
    assert np.array_equal(array.numpy(), host)
    # Fresh device memory is NaN (0xff bytes), zeros() is zero.
    assert np.isnan(dev.empty((3,), np.float16).numpy()).all()
    assert not dev.zeros((3,), "bf16").numpy().any()
    # Views: a transpose is strided (not copied back as is), a reshape of a
    # contiguous array is.
    assert array.T.shape == (6, 4) and not array.T.is_contiguous()
    assert np.array_equal(array.reshape(-1).numpy(), host.reshape(-1))
    with pytest.raises(tessel.TesselError, match="strided"):
        array.T.numpy()


def test_matmul_on_device_arrays_across_streams(dev):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((70, 48)).astype(np.float16)
    b = rng.standard_normal((48, 40)).astype(np.float16)
    bias = rng.standard_normal(40).astype(np.float32)
    upload, compute = dev.stream(), dev.stream()
    da = dev.to_device(a, stream=upload)
    db = dev.to_device(b, stream=upload)
    uploaded = upload.record()
    compute.wait(uploaded)
    start = compute.record()
    dc = tessel.matmul(da, db, bias=bias, activation="relu", stream=compute)
    done = compute.record()
    assert isinstance(dc, tessel.DeviceArray) and dc.shape == (70, 40)
    result = dc.numpy(stream=compute)  # queued after the launch
    compute.synchronize()
    assert done.query()
    assert done.elapsed_ms(start) > 0
    expected = np.maximum(a.astype(np.float64) @ b.astype(np.float64) + bias,
                          0)
    assert np.abs(result - expected).max() < 0.05


def test_kernel_call_on_device_arrays_default_stream(dev):
    a = (np.arange(33 * 20) % 7 - 3).astype(np.float32).reshape(33, 20)
    b = (np.arange(20 * 17) % 5 - 2).astype(np.float32).reshape(20, 17)
    ir = ("func.func @mm(%a: memref<33x20xf32>, %b: memref<20x17xf32>, "
          "%c: memref<33x17xf32>) {\n  tessel.matmul ins(%a, %b : "
          "memref<33x20xf32>, memref<20x17xf32>) outs(%c : "
          "memref<33x17xf32>)\n  return\n}\n")
    kernel = tessel.compile(ir)
    dc = dev.empty((33, 17), np.float32)
    kernel(dev.to_device(a), dev.to_device(b), dc)  # default stream
    assert np.array_equal(dc.numpy(), a @ b)  # a synchronous copy waits


def test_transposed_weight_on_the_device_is_read_in_place(dev):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((64, 32)).astype(np.float32)
    w = rng.standard_normal((48, 32)).astype(np.float32)  # (N, K)
    dc = tessel.matmul(dev.to_device(a), dev.to_device(w).T)
    dev.synchronize()
    assert np.abs(dc.numpy() - a @ w.T).max() < 1e-3


def test_attention_on_device_arrays(dev):
    rng = np.random.default_rng(3)
    q = rng.standard_normal((1, 2, 40, 64)).astype(np.float16)
    k = rng.standard_normal((1, 1, 50, 64)).astype(np.float16)
    v = rng.standard_normal((1, 1, 50, 64)).astype(np.float16)
    stream = dev.stream()
    do = tessel.attention(dev.to_device(q), dev.to_device(k),
                          dev.to_device(v), causal=True, stream=stream)
    stream.synchronize()
    scores = np.einsum("hqd,kd->hqk", q[0].astype(np.float64),
                       k[0, 0].astype(np.float64)) / 8
    visible = np.tril(np.ones((40, 50), bool), 10)
    scores = np.where(visible, scores, -np.inf)
    p = np.exp(scores - scores.max(-1, keepdims=True))
    expected = (p / p.sum(-1, keepdims=True)) @ v[0, 0].astype(np.float64)
    assert np.abs(do.numpy()[0] - expected).max() < 2e-3


def test_device_misuse_is_an_error(dev):
    a = np.ones((8, 8), np.float32)
    da = dev.to_device(a)
    with pytest.raises(tessel.TesselError, match="mixing host and device"):
        tessel.matmul(da, a)
    other = tessel.Device("emulator")
    with pytest.raises(tessel.TesselError, match="two different devices"):
        tessel.matmul(da, other.to_device(a))
    with pytest.raises(tessel.TesselError, match="another device"):
        tessel.matmul(da, dev.to_device(a), stream=other.stream())
    with pytest.raises(tessel.TesselError, match="stream= needs device"):
        tessel.matmul(a, a, stream=dev.stream())
    with pytest.raises(tessel.TesselError, match="no native streams"):
        dev.wrap_stream(0)
    with pytest.raises(tessel.TesselError, match="does not fit"):
        da.copy_from(np.ones((8, 7), np.float32))
    # Host memory passed off as device memory is caught by the emulator.
    fake = dev.wrap(a.ctypes.data, a.shape, a.dtype)
    with pytest.raises(tessel.TesselError, match="not device memory"):
        tessel.matmul(fake, da)
    with pytest.raises(tessel.TesselError, match="device must be one of"):
        tessel.Device("gpu")
    with pytest.raises(tessel.TesselError, match="kernel takes f32"):
        kernel = tessel.compile(
            "func.func @mm(%a: memref<8x8xf32>, %b: memref<8x8xf32>, "
            "%c: memref<8x8xf32>) {\n  tessel.matmul ins(%a, %b : "
            "memref<8x8xf32>, memref<8x8xf32>) outs(%c : memref<8x8xf32>)\n"
            "  return\n}\n")
        kernel(da, da, dev.empty((8, 8), np.float16))


def test_alpha_scalar_on_host_and_device(dev):
    a = (np.arange(40 * 24) % 7 - 3).astype(np.float32).reshape(40, 24)
    b = (np.arange(24 * 16) % 5 - 2).astype(np.float32).reshape(24, 16)
    # Powers of two keep the products exact; one compile serves both.
    assert np.array_equal(tessel.matmul(a, b, alpha=0.25), 0.25 * (a @ b))
    before = tessel.cache_stats()["misses"]
    dc = tessel.matmul(dev.to_device(a), dev.to_device(b), alpha=-2)
    assert np.array_equal(dc.numpy(), -2 * (a @ b))
    assert tessel.cache_stats()["misses"] == before
    kernel = tessel.compile(
        "func.func @mm(%a: memref<8x8xf32>, %b: memref<8x8xf32>, "
        "%c: memref<8x8xf32>, %s: f32) {\n  tessel.matmul ins(%a, %b : "
        "memref<8x8xf32>, memref<8x8xf32>) outs(%c : memref<8x8xf32>) "
        "epilogue(%s : f32) {\n  ^bb0(%x: f32, %y: f32):\n"
        "    %r = arith.mulf %x, %y : f32\n    tessel.yield %r : f32\n  }\n"
        "  return\n}\n")
    ones = np.ones((8, 8), np.float32)
    with pytest.raises(tessel.TesselError, match="expected a f32 scalar"):
        kernel(ones, ones, np.zeros((8, 8), np.float32), ones)
    with pytest.raises(tessel.TesselError, match="expected a f32 scalar"):
        kernel(ones, ones, np.zeros((8, 8), np.float32), "two")
    c = np.zeros((8, 8), np.float32)
    kernel(ones, ones, c, np.float64(3))
    assert (c == 24).all()


def test_out_arrays_must_be_contiguous(dev):
    a = np.ones((8, 16), np.float32)
    b = np.ones((16, 8), np.float32)
    with pytest.raises(tessel.TesselError, match="C-contiguous"):
        tessel.matmul(a, b, out=np.zeros((8, 8), np.float32).T)
    with pytest.raises(tessel.TesselError, match="contiguous device array"):
        tessel.matmul(dev.to_device(a), dev.to_device(b),
                      out=dev.empty((8, 8), np.float32).T)
    out = np.zeros((8, 8), np.float32)
    tessel.matmul(a, b, out=out)
    assert (out == 16).all()
