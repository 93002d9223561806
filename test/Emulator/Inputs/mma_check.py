#!/usr/bin/env python3
"""End-to-end check of one matrix instruction through tessel-run, against the
lane layouts of docs/hardware.md, written here independently of the C++.

The kernel it writes knows nothing of layouts: lane L loads its own operand
registers from rows a[L], b[L], c[L] of per-lane arrays, runs one amdgpu.mfma
or amdgpu.wmma, and stores its result registers to d[L]. This script then
builds the logical A (MxK), B (KxN) and C (MxN) from those per-lane arrays
with the documented (lane, element) -> (row, col) formulas:

  CDNA (gfx90a/gfx942/gfx950), section 1.0, G = 64/M, KPL = K/G:
    A (L, e) -> (L % M, KPL*(L/M) + e)        B (L, e) -> (KPL*(L/N) + e, L % N)
    C/D 16x16: (L, j) -> (4*(L/16) + j, L % 16)
    C/D 32x32: (L, j) -> (8*(j/4) + 4*(L/32) + j%4, L % 32)
  RDNA3 (gfx11) wave32, section 1.2:
    A (L, e) -> (L % 16, e)   B (L, e) -> (e, L % 16)   (lanes 16-31 repeat 0-15)
    C/D (L, j) -> (2*j + L/16, L % 16)
  RDNA4 (gfx12) wave32, section 1.3:
    16-bit A (L, e) -> (L % 16, 8*(e/4) + 4*(L/16) + e%4), B symmetric
    8-bit  A (L, e) -> (L % 16, 8*(L/16) + e), B symmetric
    C/D (L, j) -> (8*(L/16) + j, L % 16)

computes D = C + A @ B in float64 (exact int for i8; xf32 inputs first rounded
to 10 mantissa bits, nearest-even; fp8 decoded by the decoder below: FNUZ on
gfx942, OCP on gfx950 and gfx12), maps D back to registers with the C/D formula
and compares with what the emulator stored. Inputs are chosen so that every
partial sum is exact in f32 in any summation order (checked before running),
so the float comparison (relative 1e-6) is in effect exact.

usage:
  mma_check.py --tessel-run PATH --chip CHIP --instr NAME --workdir DIR [--seed N]
  mma_check.py ... --cross-chip CHIP2   (fp8/bf8: same bits on both chips;
               each must match its own format, and the two must differ)
  mma_check.py ... --dry-run            (write kernel and inputs, no run)
  mma_check.py --list

Prints 'PASS <instr> <chip>' and exits 0, or 'FAIL ...' naming the first
mismatching lane/register and exits 1. Exit 2: bad usage or internal error.
"""
import argparse
import math
import os
import shutil
import subprocess
import sys

import numpy as np

# ---------------------------------------------------------------------------
# Instruction table (docs/hardware.md sections 3.3-3.5 and 4).
# name: (kind, M, N, K, A format, B format, accumulator, chips)

CDNA = ("gfx90a", "gfx942", "gfx950")
FP8_CHIPS = ("gfx942", "gfx950")

INSTRS = {
    "v_mfma_f32_32x32x8_f16": ("mfma", 32, 32, 8, "f16", "f16", "f32", CDNA),
    "v_mfma_f32_16x16x16_f16": ("mfma", 16, 16, 16, "f16", "f16", "f32", CDNA),
    "v_mfma_f32_32x32x8_bf16": ("mfma", 32, 32, 8, "bf16", "bf16", "f32", CDNA),
    "v_mfma_f32_16x16x16_bf16": ("mfma", 16, 16, 16, "bf16", "bf16", "f32", CDNA),
    "v_mfma_f32_32x32x2_f32": ("mfma", 32, 32, 2, "f32", "f32", "f32", CDNA),
    "v_mfma_f32_16x16x4_f32": ("mfma", 16, 16, 4, "f32", "f32", "f32", CDNA),
    "v_mfma_f32_32x32x16_f16": ("mfma", 32, 32, 16, "f16", "f16", "f32", ("gfx950",)),
    "v_mfma_f32_16x16x32_f16": ("mfma", 16, 16, 32, "f16", "f16", "f32", ("gfx950",)),
    "v_mfma_f32_32x32x16_bf16": ("mfma", 32, 32, 16, "bf16", "bf16", "f32", ("gfx950",)),
    "v_mfma_f32_16x16x32_bf16": ("mfma", 16, 16, 32, "bf16", "bf16", "f32", ("gfx950",)),
    "v_mfma_i32_32x32x8_i8": ("mfma", 32, 32, 8, "i8", "i8", "i32", ("gfx90a",)),
    "v_mfma_i32_16x16x16_i8": ("mfma", 16, 16, 16, "i8", "i8", "i32", ("gfx90a",)),
    "v_mfma_i32_32x32x16_i8": ("mfma", 32, 32, 16, "i8", "i8", "i32", FP8_CHIPS),
    "v_mfma_i32_16x16x32_i8": ("mfma", 16, 16, 32, "i8", "i8", "i32", FP8_CHIPS),
    "v_mfma_i32_32x32x32_i8": ("mfma", 32, 32, 32, "i8", "i8", "i32", ("gfx950",)),
    "v_mfma_i32_16x16x64_i8": ("mfma", 16, 16, 64, "i8", "i8", "i32", ("gfx950",)),
    "v_mfma_f32_32x32x4_xf32": ("mfma", 32, 32, 4, "xf32", "xf32", "f32", ("gfx942",)),
    "v_mfma_f32_16x16x8_xf32": ("mfma", 16, 16, 8, "xf32", "xf32", "f32", ("gfx942",)),
    "v_wmma_f32_16x16x16_f16": ("wmma", 16, 16, 16, "f16", "f16", "f32", ("gfx1100", "gfx1201")),
    "v_wmma_f32_16x16x16_bf16": ("wmma", 16, 16, 16, "bf16", "bf16", "f32", ("gfx1100", "gfx1201")),
}
for _a in ("fp8", "bf8"):
    for _b in ("fp8", "bf8"):
        INSTRS["v_mfma_f32_16x16x32_%s_%s" % (_a, _b)] = (
            "mfma", 16, 16, 32, _a, _b, "f32", FP8_CHIPS)
        INSTRS["v_mfma_f32_32x32x16_%s_%s" % (_a, _b)] = (
            "mfma", 32, 32, 16, _a, _b, "f32", FP8_CHIPS)
        INSTRS["v_wmma_f32_16x16x16_%s_%s" % (_a, _b)] = (
            "wmma", 16, 16, 16, _a, _b, "f32", ("gfx1201",))

# gfx90a (CDNA2) mnemonics.
ALIASES = {
    "v_mfma_f32_32x32x8f16": "v_mfma_f32_32x32x8_f16",
    "v_mfma_f32_16x16x16f16": "v_mfma_f32_16x16x16_f16",
    "v_mfma_f32_32x32x8bf16_1k": "v_mfma_f32_32x32x8_bf16",
    "v_mfma_f32_16x16x16bf16_1k": "v_mfma_f32_16x16x16_bf16",
    "v_mfma_f32_32x32x2f32": "v_mfma_f32_32x32x2_f32",
    "v_mfma_f32_16x16x4f32": "v_mfma_f32_16x16x4_f32",
    "v_mfma_i32_32x32x8i8": "v_mfma_i32_32x32x8_i8",
    "v_mfma_i32_16x16x16i8": "v_mfma_i32_16x16x16_i8",
}

WAVE = {"gfx90a": 64, "gfx942": 64, "gfx950": 64, "gfx1100": 32, "gfx1201": 32}


class Internal(Exception):
    """A bug or misuse of this script, not of the emulator (exit 2)."""


# ---------------------------------------------------------------------------
# Number formats.

# fp8: name -> (exponent bits, mantissa bits, bias, FNUZ?)
FP8 = {
    "e4m3fnuz": (4, 3, 8, True),   # gfx942 fp8: no inf, 0x80 the only NaN
    "e5m2fnuz": (5, 2, 16, True),  # gfx942 bf8
    "e4m3fn": (4, 3, 7, False),    # OCP fp8 (gfx950, gfx12): S.1111.111 NaN, no inf
    "e5m2": (5, 2, 15, False),     # OCP bf8: exponent 31 is inf (m=0) / NaN
}


def decode_fp8_one(x, fmt):
    eb, mb, bias, fnuz = FP8[fmt]
    sign = -1.0 if x & 0x80 else 1.0
    e = (x >> mb) & ((1 << eb) - 1)
    m = x & ((1 << mb) - 1)
    if fnuz:
        if x == 0x80:
            return math.nan
    elif eb == 4:
        if e == 15 and m == 7:
            return math.nan
    elif e == 31:
        return sign * math.inf if m == 0 else math.nan
    if e == 0:
        return sign * m * 2.0 ** (1 - bias - mb)
    return sign * ((1 << mb) + m) * 2.0 ** (e - bias - mb)


FP8_TABLES = {f: np.array([decode_fp8_one(x, f) for x in range(256)])
              for f in FP8}


def fp8_self_test():
    t = FP8_TABLES
    known = [("e4m3fnuz", 0x7F, 240.0), ("e4m3fnuz", 0x01, 2.0 ** -10),
             ("e4m3fnuz", 0x40, 1.0), ("e4m3fnuz", 0x00, 0.0),
             ("e4m3fn", 0x7E, 448.0), ("e4m3fn", 0x01, 2.0 ** -9),
             ("e4m3fn", 0x38, 1.0), ("e4m3fn", 0xB8, -1.0),
             ("e5m2fnuz", 0x7F, 57344.0), ("e5m2fnuz", 0x01, 2.0 ** -17),
             ("e5m2fnuz", 0x40, 1.0),
             ("e5m2", 0x7B, 57344.0), ("e5m2", 0x01, 2.0 ** -16),
             ("e5m2", 0x3C, 1.0), ("e5m2", 0x7C, math.inf)]
    for fmt, bits, want in known:
        if t[fmt][bits] != want:
            raise Internal("fp8 decoder: %s 0x%02x = %r, want %r"
                           % (fmt, bits, t[fmt][bits], want))
    for fmt in ("e4m3fnuz", "e5m2fnuz"):
        if not math.isnan(t[fmt][0x80]) or np.isnan(t[fmt]).sum() != 1:
            raise Internal("fp8 decoder: %s must have the single NaN 0x80" % fmt)
    if not (t["e4m3fn"][0x80] == 0 and math.copysign(1, t["e4m3fn"][0x80]) < 0):
        raise Internal("fp8 decoder: OCP 0x80 must be -0")
    if np.isnan(t["e4m3fn"]).sum() != 2 or np.isnan(t["e5m2"]).sum() != 6:
        raise Internal("fp8 decoder: wrong NaN count for OCP formats")


def fp8_format(elem, chip):
    """fp8 / bf8 operand meaning per chip (section 2.1 and 1.4)."""
    fnuz = chip == "gfx942"
    if elem == "fp8":
        return "e4m3fnuz" if fnuz else "e4m3fn"
    return "e5m2fnuz" if fnuz else "e5m2"


def mlir_elem(elem, chip):
    return {"f16": "f16", "bf16": "bf16", "f32": "f32", "xf32": "f32",
            "i8": "i8", "i32": "i32",
            "fp8": "f8E4M3FNUZ" if chip == "gfx942" else "f8E4M3FN",
            "bf8": "f8E5M2FNUZ" if chip == "gfx942" else "f8E5M2"}[elem]


NPY_DTYPE = {"f16": "<f2", "bf16": "<u2", "f32": "<f4", "xf32": "<f4",
             "i8": "|i1", "i32": "<i4", "fp8": "|u1", "bf8": "|u1"}


def round_xf32(x, mode="rne"):
    """f32 -> f32 keeping 10 mantissa bits (the xf32 input rounding)."""
    bits = np.asarray(x, dtype="<f4").view("<u4").astype(np.uint64)
    if mode == "rne":
        bits = bits + 0x0FFF + ((bits >> 13) & 1)
    elif mode == "half-away":
        bits = bits + 0x1000
    elif mode != "truncate":
        raise Internal("rounding mode " + mode)
    bits = (bits & ~np.uint64(0x1FFF)) & np.uint64(0xFFFFFFFF)
    return bits.astype("<u4").view("<f4")


def decode(raw, elem, chip, fmt_override=None, xf32_mode="rne"):
    """Storage array (npy dtype) -> float64 / int64 values."""
    if elem in ("fp8", "bf8"):
        fmt = fmt_override or fp8_format(elem, chip)
        return FP8_TABLES[fmt][raw.astype(np.int64)]
    if elem == "bf16":
        return (raw.astype("<u4") << 16).view("<f4").astype(np.float64)
    if elem == "xf32":
        if xf32_mode == "none":
            return raw.astype(np.float64)
        return round_xf32(raw, xf32_mode).astype(np.float64)
    if elem in ("i8", "i32"):
        return raw.astype(np.int64)
    return raw.astype(np.float64)


def lowbits(v):
    """Elementwise largest power of two dividing v (inf for 0, NaN, inf)."""
    v = np.asarray(v, dtype=np.float64)
    ok = np.isfinite(v) & (v != 0)
    m, e = np.frexp(np.where(ok, v, 1.0))
    p = np.abs(np.ldexp(m, 53)).astype(np.int64)
    low = np.ldexp((p & -p).astype(np.float64), e - 53)
    return np.where(ok, low, np.inf)


def product_units(A, B):
    """(M, N) array: the unit every product A[m,k]*B[k,n] is a multiple of."""
    la, lb = lowbits(A), lowbits(B)
    return np.min(la[:, :, None] * lb[None, :, :], axis=1)


# ---------------------------------------------------------------------------
# Layouts, straight from docs/hardware.md section 3.

class Spec:
    def __init__(self, name, chip):
        canon = ALIASES.get(name, name)
        if canon not in INSTRS:
            raise Internal("unknown instruction %s (try --list)" % name)
        (self.kind, self.M, self.N, self.K, self.a_elem, self.b_elem,
         self.acc, chips) = INSTRS[canon]
        if chip not in WAVE:
            raise Internal("unknown chip %s (one of %s)"
                           % (chip, ", ".join(sorted(WAVE))))
        if chip not in chips:
            raise Internal("%s does not exist on %s (only %s)"
                           % (name, chip, ", ".join(chips)))
        self.name, self.canon, self.chip = name, canon, chip
        self.wave = WAVE[chip]
        M, N, K = self.M, self.N, self.K
        if self.kind == "mfma":
            kpl = K * M // 64
            self.kpl = kpl
            self.a_map = lambda L, e: (L % M, kpl * (L // M) + e)
            self.b_map = lambda L, e: (kpl * (L // N) + e, L % N)
            if M == 16:
                self.c_map = lambda L, j: (4 * (L // 16) + j, L % 16)
            else:
                self.c_map = lambda L, j: (8 * (j // 4) + 4 * (L // 32) + j % 4,
                                           L % 32)
            self.replicas = 1
        elif chip.startswith("gfx11"):
            self.kpl = 16
            self.a_map = lambda L, e: (L % 16, e)
            self.b_map = lambda L, e: (e, L % 16)
            self.c_map = lambda L, j: (2 * j + L // 16, L % 16)
            self.replicas = 2  # lanes 16-31 hold copies of lanes 0-15
        else:  # gfx12, wave32
            self.kpl = 8
            if self.a_elem in ("fp8", "bf8", "i8"):
                self.a_map = lambda L, e: (L % 16, 8 * (L // 16) + e)
                self.b_map = lambda L, e: (8 * (L // 16) + e, L % 16)
            else:
                self.a_map = lambda L, e: (L % 16, 8 * (e // 4) + 4 * (L // 16) + e % 4)
                self.b_map = lambda L, e: (8 * (e // 4) + 4 * (L // 16) + e % 4, L % 16)
            self.c_map = lambda L, j: (8 * (L // 16) + j, L % 16)
            self.replicas = 1
        self.nacc = M * N // self.wave
        self.scalar_ab = self.kpl == 1

    def fp8_formats(self, chip=None):
        chip = chip or self.chip
        return tuple(fp8_format(e, chip) if e in ("fp8", "bf8") else None
                     for e in (self.a_elem, self.b_elem))


# Spot values from AMD's calculator listings (docs/hardware.md section 3.7):
# (instr, chip, operand, lane, [(row, col) for registers 0, 1, ...]).
SPOT = [
    ("v_mfma_f32_32x32x8_f16", "gfx942", "a", 32, [(0, 4), (0, 5), (0, 6), (0, 7)]),
    ("v_mfma_f32_32x32x8_f16", "gfx942", "b", 63, [(4, 31), (5, 31), (6, 31), (7, 31)]),
    ("v_mfma_f32_32x32x8_f16", "gfx942", "c", 32,
     [(4, 0), (5, 0), (6, 0), (7, 0), (12, 0), (13, 0), (14, 0), (15, 0),
      (20, 0), (21, 0), (22, 0), (23, 0), (28, 0), (29, 0), (30, 0), (31, 0)]),
    ("v_mfma_f32_16x16x16_f16", "gfx942", "a", 47, [(15, 8), (15, 9), (15, 10), (15, 11)]),
    ("v_mfma_f32_16x16x16_f16", "gfx942", "b", 16, [(4, 0), (5, 0), (6, 0), (7, 0)]),
    ("v_mfma_f32_16x16x16_f16", "gfx942", "c", 47, [(8, 15), (9, 15), (10, 15), (11, 15)]),
    ("v_mfma_f32_16x16x32_fp8_fp8", "gfx942", "a", 63,
     [(15, 24), (15, 25), (15, 26), (15, 27), (15, 28), (15, 29), (15, 30), (15, 31)]),
    ("v_mfma_f32_16x16x32_fp8_fp8", "gfx942", "b", 16,
     [(8, 0), (9, 0), (10, 0), (11, 0), (12, 0), (13, 0), (14, 0), (15, 0)]),
    ("v_wmma_f32_16x16x16_f16", "gfx1100", "a", 16, [(0, k) for k in range(16)]),
    ("v_wmma_f32_16x16x16_f16", "gfx1100", "b", 31, [(k, 15) for k in range(16)]),
    ("v_wmma_f32_16x16x16_f16", "gfx1100", "c", 16,
     [(1, 0), (3, 0), (5, 0), (7, 0), (9, 0), (11, 0), (13, 0), (15, 0)]),
    ("v_wmma_f32_16x16x16_f16", "gfx1201", "a", 16,
     [(0, 4), (0, 5), (0, 6), (0, 7), (0, 12), (0, 13), (0, 14), (0, 15)]),
    ("v_wmma_f32_16x16x16_f16", "gfx1201", "b", 15,
     [(0, 15), (1, 15), (2, 15), (3, 15), (8, 15), (9, 15), (10, 15), (11, 15)]),
    ("v_wmma_f32_16x16x16_f16", "gfx1201", "c", 31,
     [(8, 15), (9, 15), (10, 15), (11, 15), (12, 15), (13, 15), (14, 15), (15, 15)]),
]


def layout_self_test():
    for name, chip, operand, lane, want in SPOT:
        spec = Spec(name, chip)
        fn = {"a": spec.a_map, "b": spec.b_map, "c": spec.c_map}[operand]
        got = [fn(lane, r) for r in range(len(want))]
        if got != want:
            raise Internal("layout formula disagrees with the calculator: %s %s "
                           "%s lane %d: %s, want %s"
                           % (name, chip, operand, lane, got, want))


def build_index(fn, nlanes, nregs, shape, replicas):
    """(row, col) -> list of (lane, reg) holding it; checks coverage."""
    holders = {}
    for L in range(nlanes):
        for r in range(nregs):
            rc = fn(L, r)
            if not (0 <= rc[0] < shape[0] and 0 <= rc[1] < shape[1]):
                raise Internal("layout maps lane %d reg %d outside %s: %s"
                               % (L, r, shape, rc))
            holders.setdefault(rc, []).append((L, r))
    for i in range(shape[0]):
        for j in range(shape[1]):
            n = len(holders.get((i, j), []))
            if n != replicas:
                raise Internal("layout: element (%d, %d) held %d times, want %d"
                               % (i, j, n, replicas))
    return holders


def gather(raw, holders, shape):
    """Per-lane storage -> logical storage matrix, checking replicas agree."""
    flat = raw.reshape(raw.shape[0], -1)
    out = np.zeros(shape, dtype=raw.dtype)
    for (i, j), hs in holders.items():
        L0, r0 = hs[0]
        v = flat[L0, r0]
        for L, r in hs[1:]:
            if flat[L, r].tobytes() != v.tobytes():
                raise Internal("replicated operand differs: lane %d reg %d vs "
                               "lane %d reg %d" % (L, r, L0, r0))
        out[i, j] = v
    return out


# ---------------------------------------------------------------------------
# Inputs.

def k_index(spec, which):
    """k of every (lane, reg) of A ('a') or B ('b')."""
    fn = spec.a_map if which == "a" else spec.b_map
    k = np.zeros((spec.wave, spec.kpl), dtype=np.int64)
    for L in range(spec.wave):
        for e in range(spec.kpl):
            rc = fn(L, e)
            k[L, e] = rc[1] if which == "a" else rc[0]
    return k


def gen_fp8(elem, partner, primary, rng):
    """fp8 bits; primary elements from a low exponent-field window (with the
    subnormals), the others from a high one; A is primary at even k and B at
    odd k, so every product is low*high, all within a few binades, and every
    sum is exact. With a partner of the other format (bf8 x fp8) the bf8 high
    window is lowered so both pairings land in the same binades. No encoding
    that is NaN or inf in either the FNUZ or the OCP reading (0x80,
    E4M3 S.1111.111, E5M2 exponent 31)."""
    shape = primary.shape
    if elem == "fp8":
        mb, low, high = 3, (0, 4), (11, 15)
    elif partner == "bf8":
        mb, low, high = 2, (0, 5), (25, 30)
    else:
        mb, low, high = 2, (0, 5), (13, 18)
    e_lo = rng.integers(low[0], low[1] + 1, shape)
    e_hi = rng.integers(high[0], high[1] + 1, shape)
    exp = np.where(primary, e_lo, e_hi)
    man = rng.integers(0, 1 << mb, shape)
    sign = rng.integers(0, 2, shape)
    bits = (sign << 7) | (exp << mb) | man
    if elem == "fp8":  # 0x7F/0xFF: NaN in OCP E4M3FN -> make it 0x7E/0xFE
        bits = np.where((bits & 0x7F) == 0x7F, bits - 1, bits)
    zero = rng.random(shape) < 0.08
    bits = np.where(zero, 0, bits)
    bits = np.where(bits == 0x80, 0, bits)
    return bits.astype(np.uint8)


def gen_xf32(primary, rng):
    """f32 values t + delta whose xf32 rounding is known: t = q * 2^s with a
    6-bit q (mantissa bits 13..17 zero, so t is 'even'), delta chosen to land
    below/at/above the half-ulp points. Primary elements get every kind
    (results t - 2ulp .. t + 2ulp), the others only kinds rounding back to t,
    so each product has at most one 11-bit factor."""
    shape = primary.shape
    q = rng.integers(33, 64, shape)
    s = rng.integers(-7, -5, shape)
    sign = np.where(rng.integers(0, 2, shape) == 1, -1.0, 1.0)
    t = (sign * np.ldexp(q.astype(np.float64), s)).astype("<f4")
    h = 1 << 12  # half an xf32 ulp in f32 mantissa units
    kinds_all = [
        lambda n: np.zeros(n, np.int64),
        lambda n: rng.integers(1, h, n),           # -> t
        lambda n: -rng.integers(1, h, n),          # -> t
        lambda n: np.full(n, h),                   # tie -> t (even)
        lambda n: np.full(n, -h),                  # tie -> t (even)
        lambda n: rng.integers(h + 1, 3 * h, n),   # -> t + ulp
        lambda n: -rng.integers(h + 1, 3 * h, n),  # -> t - ulp
        lambda n: np.full(n, 3 * h),               # tie -> t + 2ulp (even)
        lambda n: np.full(n, -3 * h),              # tie -> t - 2ulp (even)
    ]
    n = int(np.prod(shape))
    kind = np.where(primary.ravel(), rng.integers(0, 9, n), rng.integers(0, 5, n))
    delta = np.zeros(n, np.int64)
    for i, f in enumerate(kinds_all):
        sel = kind == i
        delta[sel] = f(int(sel.sum()))
    bits = t.view("<u4").ravel().astype(np.int64) + delta
    x = bits.astype("<u4").view("<f4").reshape(shape)
    zero = rng.random(shape) < 0.05
    return np.where(zero, np.float32(0), x).astype("<f4")


def gen_operand(spec, which, rng):
    elem = spec.a_elem if which == "a" else spec.b_elem
    lanes = spec.wave // spec.replicas
    shape = (lanes, spec.kpl)
    k = k_index(spec, which)[:lanes]
    primary = (k % 2 == 0) if which == "a" else (k % 2 == 1)
    if elem == "f16":
        raw = (rng.integers(-32, 33, shape) / 8.0).astype("<f2")
    elif elem == "bf16":
        v = (rng.integers(-128, 129, shape) / 16.0).astype("<f4")
        raw = (v.view("<u4") >> 16).astype("<u2")
        if not np.array_equal(decode(raw, "bf16", spec.chip), v):
            raise Internal("bf16 inputs not exact")
    elif elem == "f32":
        raw = (rng.integers(-512, 513, shape) / 16.0).astype("<f4")
    elif elem == "xf32":
        raw = gen_xf32(primary, rng)
    elif elem == "i8":
        raw = rng.integers(-128, 128, shape).astype("|i1")
    else:
        raw = gen_fp8(elem, spec.b_elem if which == "a" else spec.a_elem,
                      primary, rng)
    if spec.replicas > 1:  # gfx11: as a correct compiler would, copy lanes
        raw = np.concatenate([raw] * spec.replicas, axis=0)
    if spec.scalar_ab:
        raw = raw.reshape(spec.wave)
    return np.ascontiguousarray(raw)


def gen_acc(spec, logical_ab, rng):
    """C: integers for i32; else random multiples of the coarsest unit the
    products of some output share (over every chip's reading), so that C
    matters but keeps the sums exact."""
    shape = (spec.wave, spec.nacc)
    if spec.acc == "i32":
        return rng.integers(-(1 << 20), (1 << 20) + 1, shape).astype("<i4")
    unit = max(float(np.min(product_units(A, B))) for A, B in logical_ab)
    if not math.isfinite(unit):
        unit = 1.0
    c = rng.integers(-(1 << 12), (1 << 12) + 1, shape) * unit
    c32 = c.astype("<f4")
    if not np.array_equal(c32.astype(np.float64), c):
        raise Internal("accumulator inputs not exact in f32")
    return c32


# ---------------------------------------------------------------------------
# Reference.

class Reference:
    """Logical matrices and the expected per-lane D for one chip."""

    def __init__(self, spec, a, b, c, fmt_override=(None, None),
                 xf32_mode="rne", check_exact=True):
        M, N, K = spec.M, spec.N, spec.K
        ha = build_index(spec.a_map, spec.wave, spec.kpl, (M, K), spec.replicas)
        hb = build_index(spec.b_map, spec.wave, spec.kpl, (K, N), spec.replicas)
        hc = build_index(spec.c_map, spec.wave, spec.nacc, (M, N), 1)
        self.hc = hc
        A = decode(gather(a.reshape(spec.wave, spec.kpl), ha, (M, K)),
                   spec.a_elem, spec.chip, fmt_override[0], xf32_mode)
        B = decode(gather(b.reshape(spec.wave, spec.kpl), hb, (K, N)),
                   spec.b_elem, spec.chip, fmt_override[1], xf32_mode)
        C = decode(gather(c, hc, (M, N)), spec.acc, spec.chip)
        self.A, self.B, self.C = A, B, C
        if spec.acc == "i32":
            D = C + A @ B
            if np.abs(D).max() >= 2 ** 31:
                raise Internal("i32 result overflows")
        else:
            with np.errstate(invalid="ignore"):
                D = C + A @ B
            if check_exact:
                self.check_exact()
        self.D = D
        d = np.zeros((spec.wave, spec.nacc), dtype=np.float64 if spec.acc == "f32"
                     else np.int64)
        for (i, j), hs in hc.items():
            for L, r in hs:
                d[L, r] = D[i, j]
        self.d = d

    def check_exact(self):
        """For every output, all partial sums of C + sum_k A*B are multiples
        of one unit u with magnitude < 2^24 u: exact in f32 in any order."""
        A = np.nan_to_num(self.A, nan=0.0)
        B = np.nan_to_num(self.B, nan=0.0)
        unit = np.minimum(product_units(A, B), lowbits(self.C))
        bound = np.abs(self.C) + np.abs(A) @ np.abs(B)
        with np.errstate(invalid="ignore"):
            ratio = np.where(np.isfinite(unit), bound / unit, 0.0)
        if ratio.max() >= 2.0 ** 24:
            raise Internal("inputs are not exactly summable in f32 (%g units)"
                           % ratio.max())


def compare(spec, ref, got):
    """List of (lane, reg, expected, got) mismatches."""
    exp = ref.d
    if spec.acc == "i32":
        bad = got.astype(np.int64) != exp
    else:
        g = got.astype(np.float64)
        with np.errstate(invalid="ignore"):
            ok = np.abs(g - exp) <= 1e-6 * np.abs(exp)
        ok |= np.isnan(exp) & np.isnan(g)
        ok &= ~(np.isnan(g) & ~np.isnan(exp))
        bad = ~ok
    out = []
    for L, r in zip(*np.nonzero(bad)):
        out.append((int(L), int(r), exp[L, r], got[L, r]))
    return out


def fmt_num(x):
    if isinstance(x, (float, np.floating)):
        return repr(float(x))
    return str(int(x))


# ---------------------------------------------------------------------------
# Kernel and run.

def kernel_text(spec, chip):
    W, R = spec.wave, spec.kpl
    ta, tb = mlir_elem(spec.a_elem, chip), mlir_elem(spec.b_elem, chip)
    tc = spec.acc
    if spec.scalar_ab:
        mta, mtb = "memref<%dx%s>" % (W, ta), "memref<%dx%s>" % (W, tb)
        va, vb = ta, tb
        loads = ("    %%va = memref.load %%a[%%lane] : %s\n"
                 "    %%vb = memref.load %%b[%%lane] : %s\n" % (mta, mtb))
    else:
        mta, mtb = "memref<%dx%dx%s>" % (W, R, ta), "memref<%dx%dx%s>" % (W, R, tb)
        va, vb = "vector<%dx%s>" % (R, ta), "vector<%dx%s>" % (R, tb)
        loads = ("    %%va = vector.load %%a[%%lane, %%c0] : %s, %s\n"
                 "    %%vb = vector.load %%b[%%lane, %%c0] : %s, %s\n"
                 % (mta, va, mtb, vb))
    mtc, vc = "memref<%dx%dx%s>" % (W, spec.nacc, tc), "vector<%dx%s>" % (spec.nacc, tc)
    shape = "%dx%dx%d" % (spec.M, spec.N, spec.K)
    if spec.kind == "mfma":
        attrs = " {reducePrecision}" if spec.a_elem == "xf32" else ""
        op = ("    %%r = amdgpu.mfma %s %%va * %%vb + %%vc%s blgp = none : %s, %s, %s\n"
              % (shape, attrs, va, vb, vc))
    else:
        op = ("    %%r = amdgpu.wmma %s %%va * %%vb + %%vc : %s, %s, %s\n"
              % (shape, va, vb, vc))
    return (
        "// %s on %s: each lane loads its own registers; no layout knowledge.\n"
        "gpu.module @mma {\n"
        "  gpu.func @kernel(%%a: %s, %%b: %s, %%c: %s, %%d: %s) kernel attributes "
        "{known_block_size = array<i32: %d, 1, 1>} {\n"
        "    %%lane = gpu.thread_id x\n"
        "    %%c0 = arith.constant 0 : index\n"
        "%s"
        "    %%vc = vector.load %%c[%%lane, %%c0] : %s, %s\n"
        "%s"
        "    vector.store %%r, %%d[%%lane, %%c0] : %s, %s\n"
        "    gpu.return\n"
        "  }\n"
        "}\n" % (spec.name, chip, mta, mtb, mtc, mtc, W, loads, mtc, vc, op, mtc, vc))


def sentinel(c):
    if c.dtype.kind == "f":
        return np.full(c.shape, np.nan, dtype=c.dtype)
    return np.full(c.shape, 0x5A5A5A5A, dtype=c.dtype)


def write_inputs(spec, chip, workdir, a, b, c):
    os.makedirs(workdir, exist_ok=True)
    kpath = os.path.join(workdir, "kernel.mlir")
    with open(kpath, "w") as f:
        f.write(kernel_text(spec, chip))
    paths = []
    for name, arr in (("a", a), ("b", b), ("c", c), ("d", sentinel(c))):
        p = os.path.join(workdir, name + ".npy")
        np.save(p, arr)
        paths.append(p)
    return kpath, paths


def run_tool(tool, spec, chip, workdir, kpath, paths):
    """Runs tessel-run; returns (outputs list, None) or (None, error text)."""
    out = os.path.join(workdir, "out")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    cmd = [tool, kpath, "--kernel", "kernel", "--chip", chip]
    for p in paths:
        cmd += ["--arg", p]
    cmd += ["--out-dir", out]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, "cannot run %s: %s" % (tool, e)
    if r.returncode != 0:
        how = ("died of signal %d" % -r.returncode if r.returncode < 0
               else "exited %d" % r.returncode)
        text = (r.stderr or r.stdout).strip()
        return None, "tessel-run %s\n%s" % (how, text[-3000:])
    res = []
    for i in range(4):
        p = os.path.join(out, "arg%d.npy" % i)
        if not os.path.exists(p):
            return None, "tessel-run wrote no %s" % p
        res.append(np.load(p))
    return res, None


def check_outputs(spec, chip, ref, inputs, outs):
    """Returns None if all good, else a failure message."""
    for i, (name, arr) in enumerate(zip("abc", inputs)):
        o = outs[i]
        if o.dtype != arr.dtype or o.shape != arr.shape:
            return ("arg%d (%s) comes back as %s %s, was %s %s"
                    % (i, name, o.dtype.str, o.shape, arr.dtype.str, arr.shape))
        if o.tobytes() != arr.tobytes():
            return "the kernel changed input %s" % name
    got = outs[3]
    if got.dtype != inputs[2].dtype or got.shape != inputs[2].shape:
        return ("d comes back as %s %s, want %s %s"
                % (got.dtype.str, got.shape, inputs[2].dtype.str, inputs[2].shape))
    bad = compare(spec, ref, got)
    if not bad:
        return None
    L, r, e, g = bad[0]
    m, n = spec.c_map(L, r)
    return ("d lane %d register %d = D[%d][%d]: expected %s, got %s "
            "(%d of %d registers differ)"
            % (L, r, m, n, fmt_num(e), fmt_num(g), len(bad), got.size))


def diagnose(spec, chip, a, b, c, got):
    """On failure: which plausible alternative reading the output matches."""
    notes = []
    alts = []
    if "fp8" in (spec.a_elem, spec.b_elem) or "bf8" in (spec.a_elem, spec.b_elem):
        other = "gfx950" if chip == "gfx942" else "gfx942"
        alts.append(("fp8 operands read in the %s format"
                     % ("OCP" if chip == "gfx942" else "FNUZ"),
                     dict(fmt_override=spec.fp8_formats(other))))
        fa, fb = spec.fp8_formats()
        if fa != fb:
            alts.append(("A and B formats swapped",
                         dict(fmt_override=(fb, fa))))
    if spec.a_elem == "xf32":
        for mode in ("none", "truncate", "half-away"):
            alts.append(("xf32 inputs rounded '%s'" % mode, dict(xf32_mode=mode)))
    for text, kw in alts:
        try:
            ref = Reference(spec, a, b, c, check_exact=False, **kw)
        except Internal:
            continue
        if not compare(spec, ref, got):
            notes.append("note: the output is what the reference gives with " + text)
    # Layout-independent hint: does each register hold *some* correct value?
    ref = Reference(spec, a, b, c, check_exact=False)
    if spec.acc == "f32":
        vals = np.sort(ref.D[np.isfinite(ref.D)].ravel())
        g = got.astype(np.float64).ravel()
        gf = g[np.isfinite(g)]
        if gf.size == g.size and vals.size:
            idx = np.clip(np.searchsorted(vals, gf), 0, vals.size - 1)
            idx2 = np.clip(idx - 1, 0, vals.size - 1)
            hit = (vals[idx] == gf) | (vals[idx2] == gf)
            if hit.all():
                notes.append("note: every result register holds a correct D "
                             "element, but in the wrong place (C/D layout?)")
    return notes


# ---------------------------------------------------------------------------

def generate(spec, rng, chips):
    a = gen_operand(spec, "a", rng)
    b = gen_operand(spec, "b", rng)
    logical = []
    for ch in chips:
        s = Spec(spec.name, ch)
        ha = build_index(s.a_map, s.wave, s.kpl, (s.M, s.K), s.replicas)
        hb = build_index(s.b_map, s.wave, s.kpl, (s.K, s.N), s.replicas)
        A = decode(gather(a.reshape(s.wave, s.kpl), ha, (s.M, s.K)), s.a_elem, ch)
        B = decode(gather(b.reshape(s.wave, s.kpl), hb, (s.K, s.N)), s.b_elem, ch)
        logical.append((A, B))
    c = gen_acc(spec, logical, rng)
    return a, b, c


def plant_specials(spec, a, b):
    """Cross-chip fp8 case: 0x80 in A (FNUZ NaN, OCP -0) and, where B is
    fp8, 0x7F (OCP NaN, FNUZ 240) in B at an even k (high exponent window)."""
    a = a.copy()
    b = b.copy()
    a2 = a.reshape(spec.wave, spec.kpl)
    b2 = b.reshape(spec.wave, spec.kpl)
    m0, k0 = 3 % spec.M, 5 % spec.K
    for L in range(spec.wave):
        for e in range(spec.kpl):
            if spec.a_map(L, e) == (m0, k0):
                a2[L, e] = 0x80
    if spec.b_elem == "fp8":
        k1, n1 = 2, 7 % spec.N
        for L in range(spec.wave):
            for e in range(spec.kpl):
                if spec.b_map(L, e) == (k1, n1):
                    b2[L, e] = 0x7F
    return a, b


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tessel-run", default="tessel-run")
    ap.add_argument("--chip")
    ap.add_argument("--instr")
    ap.add_argument("--workdir")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cross-chip", help="fp8/bf8: also run the same bits on "
                    "this chip; each must match its own format and differ")
    ap.add_argument("--dry-run", action="store_true",
                    help="write the kernel, inputs and expected d; no run")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args(argv)
    fp8_self_test()
    layout_self_test()
    if args.list:
        for name, v in sorted(INSTRS.items()):
            print("%-32s %s" % (name, " ".join(v[7])))
        return 0
    if not (args.chip and args.instr and args.workdir):
        ap.error("--chip, --instr and --workdir are required")

    spec = Spec(args.instr, args.chip)
    chips = [args.chip]
    if args.cross_chip:
        spec2 = Spec(args.instr, args.cross_chip)
        if spec.fp8_formats() == spec2.fp8_formats():
            raise Internal("--cross-chip needs chips that read %s's operands "
                           "differently" % args.instr)
        chips.append(args.cross_chip)
    rng = np.random.default_rng(args.seed)
    a, b, c = generate(spec, rng, chips)
    if args.cross_chip:
        a, b = plant_specials(spec, a, b)
    specs = [Spec(args.instr, ch) for ch in chips]
    refs = [Reference(s, a, b, c) for s in specs]
    if args.cross_chip:
        e0, e1 = refs[0].d, refs[1].d
        same = (e0 == e1) | (np.isnan(e0) & np.isnan(e1))
        if same.all():
            raise Internal("the two formats predict the same result")

    label = "%s %s" % (args.instr, " vs ".join(chips))
    outs_d = []
    for s, ref in zip(specs, refs):
        wd = args.workdir if len(specs) == 1 else os.path.join(args.workdir, s.chip)
        kpath, paths = write_inputs(s, s.chip, wd, a, b, c)
        np.save(os.path.join(wd, "expected_d.npy"), ref.d)
        if args.dry_run:
            continue
        outs, err = run_tool(args.tessel_run, s, s.chip, wd, kpath, paths)
        if err is None:
            err = check_outputs(s, s.chip, ref, (a, b, c), outs)
        if err is not None:
            print("FAIL %s %s: %s" % (args.instr, s.chip, err))
            if outs is not None and outs[3].shape == c.shape:
                for note in diagnose(s, s.chip, a, b, c, outs[3]):
                    print(note)
            return 1
        outs_d.append(outs[3])
    if args.dry_run:
        print("DRY %s: wrote %s" % (label, args.workdir))
        return 0
    if args.cross_chip:
        g0, g1 = (o.astype(np.float64) for o in outs_d)
        if ((g0 == g1) | (np.isnan(g0) & np.isnan(g1))).all():
            print("FAIL %s: identical results on both chips" % label)
            return 1
        nd = int((~((g0 == g1) | (np.isnan(g0) & np.isnan(g1)))).sum())
        print("PASS %s (%s vs %s: %d of %d registers differ, as predicted)"
              % (label, "/".join(f for f in specs[0].fp8_formats() if f),
                 "/".join(f for f in specs[1].fp8_formats() if f), nd, g0.size))
        return 0
    print("PASS %s %s" % (args.instr, args.chip))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Internal as e:
        print("ERROR (mma_check.py): %s" % e, file=sys.stderr)
        sys.exit(2)
