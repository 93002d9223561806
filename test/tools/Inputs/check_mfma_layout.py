"""Checks tessel-layout CSV output (stdin) against the CDNA MFMA formulas of
docs/hardware.md section 3.2, for every row, and that every (lane,
register) of one wave appears exactly once.

usage: check_mfma_layout.py a|b|c|ct M K

ct is the transposed accumulator (#tessel.mma<..., transposed>): the
instruction issued with its operands swapped computes C^T, so element
(row, column) of the hardware's layout is (column, row) of C.
"""
import sys

operand, m, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
groups = 64 // m
kpl = k // groups


def expected(lane, e):
    if operand == "a":
        return (lane % m, kpl * (lane // m) + e)
    if operand == "b":
        return (kpl * (lane // m) + e, lane % m)
    if m == 16:
        row, column = 4 * (lane // 16) + e, lane % 16
    else:
        row, column = 8 * (e // 4) + 4 * (lane // 32) + e % 4, lane % 32
    return (column, row) if operand == "ct" else (row, column)


lines = sys.stdin.read().split("\n")
if lines[0] != "wave,lane,register,dim0,dim1":
    sys.exit("bad header: " + lines[0])
seen = set()
for line in filter(None, lines[1:]):
    wave, lane, reg, d0, d1 = map(int, line.split(","))
    if (d0, d1) != expected(lane, reg):
        sys.exit("lane %d register %d holds (%d, %d), the reference says %s"
                 % (lane, reg, d0, d1, expected(lane, reg)))
    seen.add((wave, lane, reg))
regs = m * m // 64 if operand in ("c", "ct") else kpl
if len(seen) != 64 * regs:
    sys.exit("expected %d (lane, register) rows, got %d" % (64 * regs, len(seen)))
print("OK %s %dx%d: %d rows" % (operand, m, k, len(seen)))
