"""Attention inputs whose row maxima grow along the keys, for the lazy
rescale of the key loop: writes q, k, v, o (and lse) as .npy files.

    lazy_rescale_inputs.py DIR DTYPE HEADS SEQ_Q SEQ_KV HEAD_DIM MODE [--lse]

MODE "growing" scales key j by 1 + j / 128: the queries' maxima grow
steadily, and a wave of 32 queries rescales (some query's block maximum
exceeds its running one by more than 8 log2 units) in about a third of
the blocks at head dim 128 with 32-key blocks (42 of 120 after the first),
three quarters at head dim 64 with 64-key blocks (65 of 88); in most of
the others some query's maximum grew by less, and its weights exceed 1
(78 and 23 blocks). MODE "spikes" scales one key in 20 by 6 or 12 at
random (72 of 120 blocks rescale at head dim 128 over 512 keys). bf16
arrays are stored as their uint16 bits.
"""
import sys

import numpy as np

directory, dtype, heads, seq_q, seq_kv, head_dim, mode = sys.argv[1:8]
heads, seq_q, seq_kv, head_dim = map(int, (heads, seq_q, seq_kv, head_dim))
rng = np.random.default_rng(7)
q = rng.standard_normal((1, heads, seq_q, head_dim))
k = rng.standard_normal((1, heads, seq_kv, head_dim))
v = rng.standard_normal((1, heads, seq_kv, head_dim))
if mode == "growing":
    k *= (1 + np.arange(seq_kv) / 128)[None, None, :, None]
elif mode == "spikes":
    spikes = rng.choice([1.0, 6.0, 12.0], size=seq_kv, p=[0.95, 0.03, 0.02])
    k *= spikes[None, None, :, None]
else:
    sys.exit("unknown mode " + mode)


def stored(x):
    if dtype == "f16":
        return x.astype(np.float16)
    bits = x.astype(np.float32).view(np.uint32)
    return (bits >> 16).astype(np.uint16)


for name, x in (("q", q), ("k", k), ("v", v), ("o", np.zeros_like(q))):
    np.save("%s/%s.npy" % (directory, name), stored(x))
if "--lse" in sys.argv:
    np.save("%s/lse.npy" % directory,
            np.zeros((1, heads, seq_q), np.float32))
