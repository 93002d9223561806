//===- Mma.h - The matrix-instruction catalogue -----------------*- C++ -*-===//
//
// Every MFMA (gfx90a, gfx942, gfx950) and WMMA (gfx11, gfx12) instruction
// Tessel can emit, with its shape, types, LLVM operand types, cost, the chips
// that have it, and the lane layouts of its A, B and C/D operands as linear
// layouts. The facts and their sources are in docs/hardware.md (§3 layouts,
// cycles and availability, §4 fp8 formats); the layouts are checked for every
// lane and register against AMD's matrix instruction calculator listings by
// unittests/Target/MmaTest.cpp.
//
// Layout conventions: inputs `register` (the element index in the LLVM
// vector operand, as the intrinsic sees it) and `lane`; outputs `dim0`,
// `dim1` = (m, k) for A, (k, n) for B and (m, n) for C/D.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_TARGET_MMA_H
#define TESSEL_TARGET_MMA_H

#include "tessel/Layout/LinearLayout.h"
#include "tessel/Target/Chip.h"

#include <optional>

namespace tessel {

/// Instruction families whose layouts differ for the same mnemonic.
enum class MmaFamily { Cdna, Rdna3, Rdna4 };

/// Element types of matrix-instruction operands. Fp8/Bf8 are E4M3/E5M2: FNUZ
/// on gfx942, OCP on gfx950 and gfx12 (Chip::fp8Format).
enum class MmaElement { F32, Xf32, F16, Bf16, Fp8, Bf8, I8, I32 };

llvm::StringRef stringifyMmaElement(MmaElement element);
unsigned getMmaElementBits(MmaElement element);

/// The element class a matrix mnemonic is rated by (bf16, fp8, ...), from
/// its spelling: works for instructions the catalogue lacks.
std::optional<MatrixType> getMatrixType(llvm::StringRef mnemonic);

struct MmaInstr {
  llvm::StringRef name;       ///< gfx942+ spelling: "v_mfma_f32_32x32x8_bf16"
  llvm::StringRef legacyName; ///< gfx90a spelling where it differs, else ""
  MmaFamily family;
  unsigned m, n, k;
  MmaElement a, b, acc;
  /// Issue cycles per chip in getKnownChips() order (gfx90a, gfx942, gfx950,
  /// gfx1100, gfx1201); 0 where the chip lacks the instruction.
  unsigned cycles[5];

  bool isWmma() const { return family != MmaFamily::Cdna; }
  bool isAvailableOn(const Chip &chip) const;
  /// Issue cycles on `chip` (0 if unavailable).
  unsigned getCycles(const Chip &chip) const;
  /// The chips that have it: "gfx942, gfx950".
  std::string getChipNames() const;
  /// The mnemonic `chip`'s assembler prints.
  llvm::StringRef getMnemonic(const Chip &chip) const;
  /// `amdgpu.mfma 32x32x8` / `amdgpu.wmma 16x16x16`.
  std::string getMlirSpelling() const;
  /// A or B elements per lane, and the LLVM vector types of A/B and C/D.
  unsigned getOperandElementsPerLane(unsigned waveSize) const;
  unsigned getAccumulatorElementsPerLane(unsigned waveSize) const;
  std::string getLLVMOperandType(unsigned waveSize) const;
  std::string getLLVMAccumulatorType(unsigned waveSize) const;
  /// Wave sizes it runs at: {64} for MFMA, {32, 64} for WMMA.
  llvm::ArrayRef<unsigned> getWaveSizes() const;
  /// Multiply-adds per instruction times two.
  uint64_t getFlops() const { return 2ull * m * n * k; }
};

/// The whole catalogue.
llvm::ArrayRef<MmaInstr> getMmaCatalogue();

/// The instruction named `name` (either spelling) for `chip`'s family, or
/// null when the chip does not have it. One name can multiply several pairs
/// of 8-bit formats (gfx950's `v_mfma_f32_32x32x64_f8f6f4`): `a` and `b`
/// pick the entry; without them the first is returned.
const MmaInstr *lookupMma(llvm::StringRef name, const Chip &chip,
                          std::optional<MmaElement> a = std::nullopt,
                          std::optional<MmaElement> b = std::nullopt);
/// The instructions named `name` in any family (a WMMA name has a gfx11 and
/// a gfx12 entry; an f8f6f4 MFMA one per pair of operand formats).
llvm::SmallVector<const MmaInstr *, 2> lookupMmaByName(llvm::StringRef name);
/// The mnemonic a ROCDL matrix op spells: `rocdl.mfma.f32.32x32x8bf16.1k` ->
/// `v_mfma_f32_32x32x8bf16_1k` (the gfx90a spelling of its instruction).
std::string getRocdlOpMnemonic(llvm::StringRef opName);

/// The hardware layouts of one instruction at one wave size.
struct MmaLayouts {
  LinearLayout a, b, c;
};
llvm::Expected<MmaLayouts> getMmaLayouts(const MmaInstr &instr,
                                         unsigned waveSize);

/// Which operand of a dot a layout feeds.
enum class MmaOperand { A, B };

/// The accumulator layout of a workgroup tile `shape` = [M, N] computed by
/// `wavesM` x `wavesN` waves with `instr`: waves tile the instruction's C
/// block (wave index = waveM * wavesN + waveN), then each wave repeats its
/// block along N and then M in further registers. `transposed`: every
/// instruction is issued with its operands swapped (a square MFMA), so its
/// block is the transpose of the hardware's accumulator layout.
llvm::Expected<LinearLayout>
mmaAccumulatorLayout(const MmaInstr &instr, unsigned waveSize, int64_t wavesM,
                     int64_t wavesN, llvm::ArrayRef<int64_t> shape,
                     bool transposed = false);

/// The register layout of operand `operand` of the same dot over a tile of
/// `shape` ([M, K] for A, [K, N] for B). Each lane holds `kWidth` consecutive
/// K elements per instruction group; kWidth equal to the instruction's
/// elements per lane is the hardware layout, a multiple of it (MFMA only)
/// packs several instructions' K into one lane run, a fraction of it (MFMA
/// only) gives one instruction several runs from successive lane passes, the
/// K order of an MFMA accumulator (the same permutation of K applies to A
/// and B, so the product is unchanged). Operand tiles repeat
/// along K, then along M (N); waves along the other dimension replicate them.
llvm::Expected<LinearLayout>
mmaOperandLayout(const MmaInstr &instr, unsigned waveSize, int64_t wavesM,
                 int64_t wavesN, MmaOperand operand, int64_t kWidth,
                 llvm::ArrayRef<int64_t> shape);

} // namespace tessel

#endif // TESSEL_TARGET_MMA_H
