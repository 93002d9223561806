"""Attention inputs whose row maxima grow along the keys, for the lazy
rescale of the key loop: writes q, k, v, o (and lse) as .npy files.

    lazy_rescale_inputs.py DIR DTYPE HEADS SEQ_Q SEQ_KV HEAD_DIM MODE [--lse]

MODE "growing" scales key j by 1 + j / 16: a query's scores grow by about
three log2 units a 32-key block, so its maximum crosses the rescale
threshold (8) every few blocks, at different blocks for different queries
of a wave. MODE "spikes" scales one key in 20 by 6 or 12 at random: most
blocks keep the running maximum, some cross the threshold, some raise it
by less. bf16 arrays are stored as their uint16 bits.
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
    k *= (1 + np.arange(seq_kv) / 16)[None, None, :, None]
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
