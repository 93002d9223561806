//===- Collectives.h - Wave-collective semantics ----------------*- C++ -*-===//
//
// What a wave computes when all its lanes reach a collective operation,
// lane for lane, per AMD's documentation: MFMA/WMMA (operand and accumulator
// layouts from the matrix-instruction catalogue), ds_bpermute, ds_swizzle,
// DPP moves, readlane/readfirstlane, ballot and mbcnt; and the 8-bit float
// encodings. Pure functions over per-lane values: the SIMT runtime gathers
// the lanes' operands, calls these, and scatters the results.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_EMULATOR_COLLECTIVES_H
#define TESSEL_EMULATOR_COLLECTIVES_H

#include "tessel/Target/Chip.h"
#include "tessel/Target/Mma.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace tessel::emu {

//===----------------------------------------------------------------------===//
// 8-bit floats
//===----------------------------------------------------------------------===//

/// The four 8-bit float encodings: E4M3/E5M2 in AMD's FNUZ flavour (gfx942:
/// no infinities, no negative zero, the single NaN 0x80, biases 8 and 16) and
/// the OCP flavour (gfx950, gfx12: E4M3FN has no infinities and NaN
/// 0x7f/0xff, bias 7; E5M2 is IEEE-like with infinities, bias 15).
enum class Fp8Kind { E4M3Fnuz, E5M2Fnuz, E4M3Fn, E5M2 };

/// The value of `bits` (exact in float).
float decodeFp8(uint8_t bits, Fp8Kind kind);
/// `value` rounded to nearest even; values beyond the largest finite one
/// saturate to it when `saturate` (what the conversion instructions do with
/// clamping), else become NaN (FNUZ, E4M3FN) or infinity (E5M2).
uint8_t encodeFp8(float value, Fp8Kind kind, bool saturate);

/// The 8-bit kind an MFMA/WMMA operand of `element` (Fp8 or Bf8) means on a
/// chip with `format`.
Fp8Kind fp8KindFor(MmaElement element, Fp8Format format);

/// bf16 <-> f32 (round to nearest even, NaN kept quiet).
float bf16ToFloat(uint16_t bits);
uint16_t floatToBf16(float value);
/// f16 <-> f32 (IEEE binary16, round to nearest even).
float halfToFloat(uint16_t bits);
uint16_t floatToHalf(float value);
/// f32 -> f16 rounded toward zero (v_cvt_pkrtz_f16_f32): a finite value past
/// the f16 range becomes the largest finite one, denormals are kept, a NaN
/// stays quiet as floatToHalf keeps it.
uint16_t floatToHalfTowardZero(float value);
/// `value` with its mantissa rounded to xf32's 10 bits (nearest even), as
/// the xf32 MFMAs read their f32 operands.
float roundToXf32(float value);

//===----------------------------------------------------------------------===//
// Matrix instructions
//===----------------------------------------------------------------------===//

/// One wave's MFMA or WMMA. `a`, `b`, `c` hold each lane's operand bytes
/// back to back (lane L's A operand is a[L * aBytes .. (L + 1) * aBytes),
/// with aBytes = operand elements per lane * element bits / 8, packed
/// little-endian as the LLVM vector operand is); `d` receives the result in
/// the accumulator's layout. Products are exact and the sum of each output
/// element is rounded once to the accumulator type (integers wrap). Returns
/// an error when lanes holding copies of one operand element (gfx11 WMMA
/// A/B) disagree: the hardware may read any of them.
llvm::Error executeMma(const MmaInstr &instr, unsigned waveSize,
                       Fp8Format fp8Format, llvm::ArrayRef<uint8_t> a,
                       llvm::ArrayRef<uint8_t> b, llvm::ArrayRef<uint8_t> c,
                       llvm::MutableArrayRef<uint8_t> d);

/// How 8-bit integer operands are read: MFMA i8 is always signed; WMMA iu8
/// takes the signedness of A and B from its sign operands.
struct MmaSignedness {
  bool unsignedA = false;
  bool unsignedB = false;
};
/// executeMma with I8 operands read as `signedness` says (ignored for other
/// element types).
llvm::Error executeMma(const MmaInstr &instr, unsigned waveSize,
                       Fp8Format fp8Format, llvm::ArrayRef<uint8_t> a,
                       llvm::ArrayRef<uint8_t> b, llvm::ArrayRef<uint8_t> c,
                       llvm::MutableArrayRef<uint8_t> d,
                       MmaSignedness signedness);

/// Bytes per lane of an MFMA/WMMA operand (A/B) and of its accumulator.
unsigned getMmaOperandBytes(const MmaInstr &instr, unsigned waveSize);
unsigned getMmaAccumulatorBytes(const MmaInstr &instr, unsigned waveSize);

//===----------------------------------------------------------------------===//
// Lane exchanges (32-bit values, one per lane, `values.size()` = wave size)
//===----------------------------------------------------------------------===//

/// ds_bpermute_b32: lane L receives the value of lane (addresses[L] / 4) %
/// wave size (a "pull" through the LDS crossbar, no LDS memory used).
llvm::SmallVector<uint32_t, 64> dsBpermute(llvm::ArrayRef<uint32_t> addresses,
                                           llvm::ArrayRef<uint32_t> values);

/// ds_swizzle_b32 with the 16-bit `pattern` (offset field): bit 15 set is
/// the quad-permute mode (lanes in groups of 4, each taking lane
/// pattern[2i+1:2i] of its group); otherwise the bit-masks mode over groups
/// of 32 lanes: and_mask = pattern[4:0], or_mask = pattern[9:5], xor_mask =
/// pattern[14:10], source lane = ((L & and) | or) ^ xor within the group.
llvm::SmallVector<uint32_t, 64> dsSwizzle(llvm::ArrayRef<uint32_t> values,
                                          uint32_t pattern);

/// v_mov_b32_dpp / update.dpp (GFX9 DPP8/DPP16 controls): quad_perm
/// (0x00-0xff), row_shl 1-15 (0x101-0x10f), row_shr 1-15 (0x111-0x11f),
/// row_ror 1-15 (0x121-0x12f), wave_shl1 0x130, wave_rol1 0x134, wave_shr1
/// 0x138, wave_ror1 0x13c, row_mirror 0x140, row_half_mirror 0x141,
/// row_bcast15 0x142, row_bcast31 0x143. Rows are 16 lanes. A lane whose
/// row (rowMask bit row) or bank (bankMask bit (L % 16) / 4) is disabled
/// keeps `old`; a lane reading an invalid source lane gets 0 when
/// `boundCtrl`, else keeps `old`. Unknown controls are an error.
llvm::Expected<llvm::SmallVector<uint32_t, 64>>
updateDpp(llvm::ArrayRef<uint32_t> old, llvm::ArrayRef<uint32_t> src,
          uint32_t dppCtrl, uint32_t rowMask, uint32_t bankMask,
          bool boundCtrl);

/// v_permlane16_swap_b32 / v_permlane32_swap_b32 (gfx950), `rows` 16 or
/// 32: the odd `rows`-lane rows of `old` trade places with the even rows of
/// `src` (lane L of an odd row of the new `old` gets lane L - rows of `src`,
/// lane L of an even row of the new `src` gets lane L + rows of `old`).
/// Returns the new (old, src).
std::pair<llvm::SmallVector<uint32_t, 64>, llvm::SmallVector<uint32_t, 64>>
permlaneSwap(llvm::ArrayRef<uint32_t> old, llvm::ArrayRef<uint32_t> src,
             unsigned rows);

/// ds_read_b64_tr_b16 (gfx950) after each lane read four 16-bit elements
/// (`loaded[L]`, 64 bits) at its own address: in each group of 16 lanes,
/// lane j receives as element e element j % 4 of what lane 4e + j / 4 of
/// its group read (a 16 x 4 block of the lanes' reads, transposed). The
/// wave size must be a multiple of 16.
llvm::SmallVector<uint64_t, 64>
transposeRead16(llvm::ArrayRef<uint64_t> loaded);

/// mbcnt_lo(mask, add) for lane L: add + popcount(mask & ((1 << min(L, 32))
/// - 1)) over the low 32 lanes; mbcnt_hi(mask, add): add + popcount(mask &
/// ((1 << max(L - 32, 0)) - 1)) over the high 32 lanes.
uint32_t mbcntLo(unsigned lane, uint32_t mask, uint32_t add);
uint32_t mbcntHi(unsigned lane, uint32_t mask, uint32_t add);

} // namespace tessel::emu

#endif // TESSEL_EMULATOR_COLLECTIVES_H
