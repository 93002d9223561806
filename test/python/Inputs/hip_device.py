"""The HIP device runtime from Python against a stand-in HIP library
(test/tools/Inputs/fake_hip.cpp): memory is host memory and kernels do not
run, so this checks the calls made (the stand-in logs them), not results."""

import numpy as np

import tessel

dev = tessel.Device("hip")
print("device", dev.kind)
x = np.arange(12, dtype=np.float32).reshape(3, 4)
print("round trip", np.array_equal(dev.to_device(x).numpy(), x))

stream = dev.stream()
start = stream.record()
a = dev.to_device(np.ones((16, 2048), np.float32), stream=stream)
b = dev.to_device(np.ones((2048, 64), np.float32), stream=stream)
# 16 rows: M stays static and the compiler splits K. The first launch zeroes
# the arrival counters on the stream (not the partials); the second reuses
# both workspaces and zeroes nothing, as the first left the counters zero.
print("launch 1")
tessel.matmul(a, b, stream=stream)
print("launch 2")
c = tessel.matmul(a, b, stream=stream)
done = stream.record()
stream.synchronize()
print("elapsed ms", round(done.elapsed_ms(start), 3), "query", done.query())
print("output", type(c).__name__, c.shape)

# torch's current stream (a hipStream_t) is wrapped, not owned.
wrapped = dev.wrap_stream(0)
other = dev.stream()
other.wait(done)
tessel.matmul(a, b, stream=wrapped)
wrapped.synchronize()
print("done")
