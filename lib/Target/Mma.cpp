//===- Mma.cpp - The matrix-instruction catalogue ---------------*- C++ -*-===//
//
// The layouts below are the formulas of docs/hardware.md §3 written as
// functions of (element, lane); LinearLayout::fromFunction turns each into a
// linear layout and checks it is one on every input.
//
//===----------------------------------------------------------------------===//

#include "tessel/Target/Mma.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <array>
#include <functional>
#include <map>
#include <mutex>

using namespace tessel;
using llvm::ArrayRef;
using llvm::SmallVector;
using llvm::StringRef;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

StringRef tessel::stringifyMmaElement(MmaElement element) {
  switch (element) {
  case MmaElement::F32:
    return "f32";
  case MmaElement::Xf32:
    return "xf32";
  case MmaElement::F16:
    return "f16";
  case MmaElement::Bf16:
    return "bf16";
  case MmaElement::Fp8:
    return "fp8";
  case MmaElement::Bf8:
    return "bf8";
  case MmaElement::I8:
    return "i8";
  case MmaElement::I32:
    return "i32";
  }
  llvm_unreachable("unknown element");
}

unsigned tessel::getMmaElementBits(MmaElement element) {
  switch (element) {
  case MmaElement::F32:
  case MmaElement::Xf32:
  case MmaElement::I32:
    return 32;
  case MmaElement::F16:
  case MmaElement::Bf16:
    return 16;
  case MmaElement::Fp8:
  case MmaElement::Bf8:
  case MmaElement::I8:
    return 8;
  }
  llvm_unreachable("unknown element");
}

//===----------------------------------------------------------------------===//
// The catalogue (docs/hardware.md §3.3-§3.5; cycles from AMD's calculator
// listings and LLVM's scheduling models)
//===----------------------------------------------------------------------===//

namespace {
using E = MmaElement;
constexpr MmaFamily kCdna = MmaFamily::Cdna;
constexpr MmaFamily kRdna3 = MmaFamily::Rdna3;
constexpr MmaFamily kRdna4 = MmaFamily::Rdna4;
} // namespace

// Cycles: gfx90a, gfx942, gfx950, gfx1100, gfx1201.
static const MmaInstr kCatalogue[] = {
    // f16 and bf16 (bf16: the gfx90a `_1k` forms; gfx908's bf16 forms are
    // not on any target chip).
    {"v_mfma_f32_32x32x8_f16",
     "v_mfma_f32_32x32x8f16",
     kCdna,
     32,
     32,
     8,
     E::F16,
     E::F16,
     E::F32,
     {64, 32, 32, 0, 0}},
    {"v_mfma_f32_16x16x16_f16",
     "v_mfma_f32_16x16x16f16",
     kCdna,
     16,
     16,
     16,
     E::F16,
     E::F16,
     E::F32,
     {32, 16, 16, 0, 0}},
    {"v_mfma_f32_32x32x8_bf16",
     "v_mfma_f32_32x32x8bf16_1k",
     kCdna,
     32,
     32,
     8,
     E::Bf16,
     E::Bf16,
     E::F32,
     {64, 32, 32, 0, 0}},
    {"v_mfma_f32_16x16x16_bf16",
     "v_mfma_f32_16x16x16bf16_1k",
     kCdna,
     16,
     16,
     16,
     E::Bf16,
     E::Bf16,
     E::F32,
     {32, 16, 16, 0, 0}},
    // gfx950 double-K: the only way to the chip's full f16/bf16 rate.
    {"v_mfma_f32_32x32x16_f16",
     "",
     kCdna,
     32,
     32,
     16,
     E::F16,
     E::F16,
     E::F32,
     {0, 0, 32, 0, 0}},
    {"v_mfma_f32_16x16x32_f16",
     "",
     kCdna,
     16,
     16,
     32,
     E::F16,
     E::F16,
     E::F32,
     {0, 0, 16, 0, 0}},
    {"v_mfma_f32_32x32x16_bf16",
     "",
     kCdna,
     32,
     32,
     16,
     E::Bf16,
     E::Bf16,
     E::F32,
     {0, 0, 32, 0, 0}},
    {"v_mfma_f32_16x16x32_bf16",
     "",
     kCdna,
     16,
     16,
     32,
     E::Bf16,
     E::Bf16,
     E::F32,
     {0, 0, 16, 0, 0}},
    // f32 and xf32 (xf32 is gfx942 only: gfx950 removed it).
    {"v_mfma_f32_32x32x2_f32",
     "v_mfma_f32_32x32x2f32",
     kCdna,
     32,
     32,
     2,
     E::F32,
     E::F32,
     E::F32,
     {64, 64, 64, 0, 0}},
    {"v_mfma_f32_16x16x4_f32",
     "v_mfma_f32_16x16x4f32",
     kCdna,
     16,
     16,
     4,
     E::F32,
     E::F32,
     E::F32,
     {32, 32, 32, 0, 0}},
    {"v_mfma_f32_32x32x4_xf32",
     "",
     kCdna,
     32,
     32,
     4,
     E::Xf32,
     E::Xf32,
     E::F32,
     {0, 32, 0, 0, 0}},
    {"v_mfma_f32_16x16x8_xf32",
     "",
     kCdna,
     16,
     16,
     8,
     E::Xf32,
     E::Xf32,
     E::F32,
     {0, 16, 0, 0, 0}},
    // 8-bit floats: FNUZ on gfx942, OCP on gfx950.
    {"v_mfma_f32_16x16x32_fp8_fp8",
     "",
     kCdna,
     16,
     16,
     32,
     E::Fp8,
     E::Fp8,
     E::F32,
     {0, 16, 16, 0, 0}},
    {"v_mfma_f32_16x16x32_fp8_bf8",
     "",
     kCdna,
     16,
     16,
     32,
     E::Fp8,
     E::Bf8,
     E::F32,
     {0, 16, 16, 0, 0}},
    {"v_mfma_f32_16x16x32_bf8_fp8",
     "",
     kCdna,
     16,
     16,
     32,
     E::Bf8,
     E::Fp8,
     E::F32,
     {0, 16, 16, 0, 0}},
    {"v_mfma_f32_16x16x32_bf8_bf8",
     "",
     kCdna,
     16,
     16,
     32,
     E::Bf8,
     E::Bf8,
     E::F32,
     {0, 16, 16, 0, 0}},
    {"v_mfma_f32_32x32x16_fp8_fp8",
     "",
     kCdna,
     32,
     32,
     16,
     E::Fp8,
     E::Fp8,
     E::F32,
     {0, 32, 32, 0, 0}},
    {"v_mfma_f32_32x32x16_fp8_bf8",
     "",
     kCdna,
     32,
     32,
     16,
     E::Fp8,
     E::Bf8,
     E::F32,
     {0, 32, 32, 0, 0}},
    {"v_mfma_f32_32x32x16_bf8_fp8",
     "",
     kCdna,
     32,
     32,
     16,
     E::Bf8,
     E::Fp8,
     E::F32,
     {0, 32, 32, 0, 0}},
    {"v_mfma_f32_32x32x16_bf8_bf8",
     "",
     kCdna,
     32,
     32,
     16,
     E::Bf8,
     E::Bf8,
     E::F32,
     {0, 32, 32, 0, 0}},
    // i8: 4 bytes per lane on gfx90a, 8 on gfx942+, 16 on gfx950.
    {"v_mfma_i32_32x32x8i8",
     "",
     kCdna,
     32,
     32,
     8,
     E::I8,
     E::I8,
     E::I32,
     {64, 0, 0, 0, 0}},
    {"v_mfma_i32_16x16x16i8",
     "",
     kCdna,
     16,
     16,
     16,
     E::I8,
     E::I8,
     E::I32,
     {32, 0, 0, 0, 0}},
    {"v_mfma_i32_32x32x16_i8",
     "",
     kCdna,
     32,
     32,
     16,
     E::I8,
     E::I8,
     E::I32,
     {0, 32, 32, 0, 0}},
    {"v_mfma_i32_16x16x32_i8",
     "",
     kCdna,
     16,
     16,
     32,
     E::I8,
     E::I8,
     E::I32,
     {0, 16, 16, 0, 0}},
    {"v_mfma_i32_32x32x32_i8",
     "",
     kCdna,
     32,
     32,
     32,
     E::I8,
     E::I8,
     E::I32,
     {0, 0, 32, 0, 0}},
    {"v_mfma_i32_16x16x64_i8",
     "",
     kCdna,
     16,
     16,
     64,
     E::I8,
     E::I8,
     E::I32,
     {0, 0, 16, 0, 0}},
    // gfx950's 8-bit float MFMAs at twice the rate of the ones above: one
    // name for every pair of formats (the instruction's cbsz/blgp fields
    // say which), 32 bytes of A and B per lane. 16 passes for 32x32x64 and
    // 8 for 16x16x128 when an operand is 8-bit.
    {"v_mfma_f32_32x32x64_f8f6f4",
     "",
     kCdna,
     32,
     32,
     64,
     E::Fp8,
     E::Fp8,
     E::F32,
     {0, 0, 64, 0, 0}},
    {"v_mfma_f32_32x32x64_f8f6f4",
     "",
     kCdna,
     32,
     32,
     64,
     E::Fp8,
     E::Bf8,
     E::F32,
     {0, 0, 64, 0, 0}},
    {"v_mfma_f32_32x32x64_f8f6f4",
     "",
     kCdna,
     32,
     32,
     64,
     E::Bf8,
     E::Fp8,
     E::F32,
     {0, 0, 64, 0, 0}},
    {"v_mfma_f32_32x32x64_f8f6f4",
     "",
     kCdna,
     32,
     32,
     64,
     E::Bf8,
     E::Bf8,
     E::F32,
     {0, 0, 64, 0, 0}},
    {"v_mfma_f32_16x16x128_f8f6f4",
     "",
     kCdna,
     16,
     16,
     128,
     E::Fp8,
     E::Fp8,
     E::F32,
     {0, 0, 32, 0, 0}},
    {"v_mfma_f32_16x16x128_f8f6f4",
     "",
     kCdna,
     16,
     16,
     128,
     E::Fp8,
     E::Bf8,
     E::F32,
     {0, 0, 32, 0, 0}},
    {"v_mfma_f32_16x16x128_f8f6f4",
     "",
     kCdna,
     16,
     16,
     128,
     E::Bf8,
     E::Fp8,
     E::F32,
     {0, 0, 32, 0, 0}},
    {"v_mfma_f32_16x16x128_f8f6f4",
     "",
     kCdna,
     16,
     16,
     128,
     E::Bf8,
     E::Bf8,
     E::F32,
     {0, 0, 32, 0, 0}},
    // RDNA3 WMMA: A and B replicated across lane halves.
    {"v_wmma_f32_16x16x16_f16",
     "",
     kRdna3,
     16,
     16,
     16,
     E::F16,
     E::F16,
     E::F32,
     {0, 0, 0, 32, 0}},
    {"v_wmma_f32_16x16x16_bf16",
     "",
     kRdna3,
     16,
     16,
     16,
     E::Bf16,
     E::Bf16,
     E::F32,
     {0, 0, 0, 32, 0}},
    {"v_wmma_f16_16x16x16_f16",
     "",
     kRdna3,
     16,
     16,
     16,
     E::F16,
     E::F16,
     E::F16,
     {0, 0, 0, 32, 0}},
    {"v_wmma_bf16_16x16x16_bf16",
     "",
     kRdna3,
     16,
     16,
     16,
     E::Bf16,
     E::Bf16,
     E::Bf16,
     {0, 0, 0, 32, 0}},
    {"v_wmma_i32_16x16x16_iu8",
     "",
     kRdna3,
     16,
     16,
     16,
     E::I8,
     E::I8,
     E::I32,
     {0, 0, 0, 32, 0}},
    // RDNA4 WMMA: no replication, OCP fp8.
    {"v_wmma_f32_16x16x16_f16",
     "",
     kRdna4,
     16,
     16,
     16,
     E::F16,
     E::F16,
     E::F32,
     {0, 0, 0, 0, 16}},
    {"v_wmma_f32_16x16x16_bf16",
     "",
     kRdna4,
     16,
     16,
     16,
     E::Bf16,
     E::Bf16,
     E::F32,
     {0, 0, 0, 0, 16}},
    {"v_wmma_f16_16x16x16_f16",
     "",
     kRdna4,
     16,
     16,
     16,
     E::F16,
     E::F16,
     E::F16,
     {0, 0, 0, 0, 16}},
    {"v_wmma_bf16_16x16x16_bf16",
     "",
     kRdna4,
     16,
     16,
     16,
     E::Bf16,
     E::Bf16,
     E::Bf16,
     {0, 0, 0, 0, 16}},
    {"v_wmma_i32_16x16x16_iu8",
     "",
     kRdna4,
     16,
     16,
     16,
     E::I8,
     E::I8,
     E::I32,
     {0, 0, 0, 0, 8}},
    {"v_wmma_f32_16x16x16_fp8_fp8",
     "",
     kRdna4,
     16,
     16,
     16,
     E::Fp8,
     E::Fp8,
     E::F32,
     {0, 0, 0, 0, 8}},
    {"v_wmma_f32_16x16x16_fp8_bf8",
     "",
     kRdna4,
     16,
     16,
     16,
     E::Fp8,
     E::Bf8,
     E::F32,
     {0, 0, 0, 0, 8}},
    {"v_wmma_f32_16x16x16_bf8_fp8",
     "",
     kRdna4,
     16,
     16,
     16,
     E::Bf8,
     E::Fp8,
     E::F32,
     {0, 0, 0, 0, 8}},
    {"v_wmma_f32_16x16x16_bf8_bf8",
     "",
     kRdna4,
     16,
     16,
     16,
     E::Bf8,
     E::Bf8,
     E::F32,
     {0, 0, 0, 0, 8}},
};

ArrayRef<MmaInstr> tessel::getMmaCatalogue() { return kCatalogue; }

static unsigned chipIndex(const Chip &chip) {
  return &chip - getKnownChips().data();
}

bool MmaInstr::isAvailableOn(const Chip &chip) const {
  return getCycles(chip) != 0;
}

unsigned MmaInstr::getCycles(const Chip &chip) const {
  unsigned index = chipIndex(chip);
  return index < std::size(cycles) ? cycles[index] : 0;
}

std::string MmaInstr::getChipNames() const {
  SmallVector<StringRef> names;
  for (const Chip &chip : getKnownChips())
    if (isAvailableOn(chip))
      names.push_back(chip.name);
  return llvm::join(names, ", ");
}

StringRef MmaInstr::getMnemonic(const Chip &chip) const {
  return chip.name == "gfx90a" && !legacyName.empty() ? legacyName : name;
}

std::string MmaInstr::getMlirSpelling() const {
  return llvm::formatv("amdgpu.{0} {1}x{2}x{3}", isWmma() ? "wmma" : "mfma", m,
                       n, k)
      .str();
}

ArrayRef<unsigned> MmaInstr::getWaveSizes() const {
  static const unsigned wave64[] = {64};
  static const unsigned both[] = {32, 64};
  return isWmma() ? ArrayRef<unsigned>(both) : ArrayRef<unsigned>(wave64);
}

unsigned MmaInstr::getOperandElementsPerLane(unsigned waveSize) const {
  switch (family) {
  case MmaFamily::Cdna:
    return k * m / 64;
  case MmaFamily::Rdna3:
    return k; // a whole row of A (column of B) per lane
  case MmaFamily::Rdna4:
    return k * m / waveSize;
  }
  llvm_unreachable("unknown family");
}

unsigned MmaInstr::getAccumulatorElementsPerLane(unsigned waveSize) const {
  unsigned values = m * n / waveSize;
  // gfx11 16-bit results use the low half of one VGPR each: as an LLVM
  // vector, every other element.
  if (family == MmaFamily::Rdna3 && getMmaElementBits(acc) == 16)
    return 2 * values;
  return values;
}

/// `<count x type>`, or the scalar for one element.
static std::string vectorOf(unsigned count, StringRef type) {
  if (count == 1)
    return type.str();
  return llvm::formatv("<{0} x {1}>", count, type).str();
}

std::string MmaInstr::getLLVMOperandType(unsigned waveSize) const {
  unsigned count = getOperandElementsPerLane(waveSize);
  switch (a) {
  case E::F32:
    return vectorOf(count, "float");
  case E::Xf32:
    return vectorOf(count, "float");
  case E::F16:
    return vectorOf(count, "half");
  case E::Bf16:
    // The gfx950 MFMAs take bfloat; older ones and WMMA take the bits.
    return vectorOf(
        count, family == MmaFamily::Cdna && k * m / 64 == 8 ? "bfloat" : "i16");
  default: {
    // 8-bit operands are passed packed in 32-bit or 64-bit integers.
    unsigned bits = count * 8;
    if (family == MmaFamily::Cdna && bits == 64)
      return "i64";
    return vectorOf(bits / 32, "i32");
  }
  }
}

std::string MmaInstr::getLLVMAccumulatorType(unsigned waveSize) const {
  unsigned count = getAccumulatorElementsPerLane(waveSize);
  switch (acc) {
  case E::I32:
    return vectorOf(count, "i32");
  case E::F16:
    return vectorOf(count, "half");
  case E::Bf16:
    return vectorOf(count, "i16");
  default:
    return vectorOf(count, "float");
  }
}

const MmaInstr *tessel::lookupMma(StringRef name, const Chip &chip,
                                  std::optional<MmaElement> a,
                                  std::optional<MmaElement> b) {
  for (const MmaInstr &instr : kCatalogue)
    if ((instr.name == name ||
         (!instr.legacyName.empty() && instr.legacyName == name)) &&
        instr.isAvailableOn(chip) && (!a || instr.a == *a) &&
        (!b || instr.b == *b))
      return &instr;
  return nullptr;
}

SmallVector<const MmaInstr *, 2> tessel::lookupMmaByName(StringRef name) {
  SmallVector<const MmaInstr *, 2> found;
  for (const MmaInstr &instr : kCatalogue)
    if (instr.name == name ||
        (!instr.legacyName.empty() && instr.legacyName == name))
      found.push_back(&instr);
  return found;
}

//===----------------------------------------------------------------------===//
// Hardware layouts
//===----------------------------------------------------------------------===//

namespace {
/// (element e, lane L) -> (row, column) of one operand.
using LaneFormula =
    std::function<std::pair<int32_t, int32_t>(int32_t e, int32_t lane)>;
} // namespace

static llvm::Expected<LinearLayout>
layoutFromFormula(unsigned elements, unsigned waveSize, int32_t rows,
                  int32_t cols, const LaneFormula &formula) {
  return LinearLayout::fromFunction(
      {{dims::kRegister.str(), int32_t(elements)},
       {dims::kLane.str(), int32_t(waveSize)}},
      {{dims::tileDim(0), rows}, {dims::tileDim(1), cols}},
      [&](ArrayRef<int32_t> in) -> SmallVector<int32_t, 4> {
        auto [row, col] = formula(in[0], in[1]);
        return {row, col};
      });
}

/// The (row-or-column index, k) of operand A (and, transposed, B) element
/// `e` of `lane`: x is m for A and n for B.
static std::pair<int32_t, int32_t>
operandXK(const MmaInstr &instr, unsigned waveSize, int32_t e, int32_t lane) {
  int32_t x = instr.family == MmaFamily::Cdna ? lane % instr.m : lane % 16;
  switch (instr.family) {
  case MmaFamily::Cdna: {
    int32_t perLane = instr.getOperandElementsPerLane(waveSize);
    return {x, perLane * (lane / instr.m) + e};
  }
  case MmaFamily::Rdna3:
    return {x, e};
  case MmaFamily::Rdna4:
    if (getMmaElementBits(instr.a) == 8)
      return {x, waveSize == 32 ? 8 * (lane / 16) + e
                                : 8 * ((lane / 16) % 2) + 4 * (lane / 32) + e};
    return {x, waveSize == 32 ? 8 * (e / 4) + 4 * (lane / 16) + e % 4
                              : 4 * (lane / 16) + e};
  }
  llvm_unreachable("unknown family");
}

/// The (m, n) of accumulator element `e` of `lane`.
static std::pair<int32_t, int32_t> accumulatorMN(const MmaInstr &instr,
                                                 unsigned waveSize, int32_t e,
                                                 int32_t lane) {
  switch (instr.family) {
  case MmaFamily::Cdna:
    if (instr.m == 16)
      return {4 * (lane / 16) + e, lane % 16};
    return {8 * (e / 4) + 4 * (lane / 32) + e % 4, lane % 32};
  case MmaFamily::Rdna3: {
    // 16-bit results sit in every other vector element (OPSEL[2] = 0).
    int32_t j = getMmaElementBits(instr.acc) == 16 ? e / 2 : e;
    return {(waveSize == 32 ? 2 : 4) * j + lane / 16, lane % 16};
  }
  case MmaFamily::Rdna4:
    if (waveSize == 32)
      return {8 * (lane / 16) + e, lane % 16};
    return {8 * ((lane / 16) % 2) + 4 * (lane / 32) + e, lane % 16};
  }
  llvm_unreachable("unknown family");
}

/// Builds the layouts of one instruction (checked on every input).
static llvm::Expected<MmaLayouts> buildMmaLayouts(const MmaInstr &instr,
                                                  unsigned waveSize) {
  if (!llvm::is_contained(instr.getWaveSizes(), waveSize))
    return makeError(instr.name + " does not run in wave" +
                     llvm::Twine(waveSize));
  unsigned operandElements = instr.getOperandElementsPerLane(waveSize);
  auto a = layoutFromFormula(operandElements, waveSize, instr.m, instr.k,
                             [&](int32_t e, int32_t lane) {
                               return operandXK(instr, waveSize, e, lane);
                             });
  auto b = layoutFromFormula(operandElements, waveSize, instr.k, instr.n,
                             [&](int32_t e, int32_t lane) {
                               auto [n, k] =
                                   operandXK(instr, waveSize, e, lane);
                               return std::pair{k, n};
                             });
  auto c =
      layoutFromFormula(instr.getAccumulatorElementsPerLane(waveSize), waveSize,
                        instr.m, instr.n, [&](int32_t e, int32_t lane) {
                          return accumulatorMN(instr, waveSize, e, lane);
                        });
  if (!a || !b || !c) {
    llvm::Error error = llvm::joinErrors(
        a ? llvm::Error::success() : a.takeError(),
        llvm::joinErrors(b ? llvm::Error::success() : b.takeError(),
                         c ? llvm::Error::success() : c.takeError()));
    return std::move(error);
  }
  return MmaLayouts{std::move(*a), std::move(*b), std::move(*c)};
}

llvm::Expected<MmaLayouts> tessel::getMmaLayouts(const MmaInstr &instr,
                                                 unsigned waveSize) {
  // Building checks every (element, lane): done once per instruction and
  // wave size, since the emulator asks for every MFMA it executes.
  static std::mutex mutex;
  static std::map<std::pair<const MmaInstr *, unsigned>, MmaLayouts> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_pair(&instr, waveSize);
  auto it = cache.find(key);
  if (it != cache.end())
    return it->second;
  llvm::Expected<MmaLayouts> layouts = buildMmaLayouts(instr, waveSize);
  if (!layouts)
    return layouts.takeError();
  cache.emplace(key, *layouts);
  return layouts;
}

//===----------------------------------------------------------------------===//
// Workgroup tile layouts
//===----------------------------------------------------------------------===//

/// Appends bases for `count` (a power of two) steps of `stride` along
/// output `dim` to input `in` of `ins`.
static void appendSteps(SmallVector<LinearLayout::InDim, 4> &ins, StringRef in,
                        unsigned dim, int64_t count, int64_t stride) {
  auto *it = llvm::find_if(
      ins, [&](const LinearLayout::InDim &d) { return d.name == in; });
  for (int64_t step = 1; step < count; step *= 2) {
    SmallVector<int32_t, 4> basis(2, 0);
    basis[dim] = stride * step;
    it->bases.push_back(basis);
  }
}

/// The same layout over the transposed tile: (dim0, dim1) values swapped,
/// names kept in place.
static llvm::Expected<LinearLayout> swapTileDims(const LinearLayout &layout) {
  LinearLayout swapped = layout.transposeOuts({1, 0});
  return LinearLayout::get(swapped.getInDims(),
                           {{dims::tileDim(0), swapped.getOutDims()[0].size},
                            {dims::tileDim(1), swapped.getOutDims()[1].size}});
}

static llvm::Error checkTileShape(ArrayRef<int64_t> shape, int64_t rows,
                                  int64_t cols, StringRef what) {
  if (shape.size() != 2)
    return makeError(what + " tiles are 2-D, got rank " +
                     llvm::Twine(shape.size()));
  for (auto [size, unit] : llvm::zip(shape, std::array{rows, cols}))
    if (size <= 0 || !llvm::isPowerOf2_64(size) || size % unit)
      return makeError("the " + what + " tile " + llvm::Twine(shape[0]) + "x" +
                       llvm::Twine(shape[1]) +
                       " is not a power-of-two multiple of " +
                       llvm::Twine(rows) + "x" + llvm::Twine(cols));
  return llvm::Error::success();
}

static llvm::Error checkWaves(int64_t wavesM, int64_t wavesN) {
  if (wavesM <= 0 || wavesN <= 0 || !llvm::isPowerOf2_64(wavesM) ||
      !llvm::isPowerOf2_64(wavesN))
    return makeError("waves must be powers of two, got [" +
                     llvm::Twine(wavesM) + ", " + llvm::Twine(wavesN) + "]");
  return llvm::Error::success();
}

llvm::Expected<LinearLayout>
tessel::mmaAccumulatorLayout(const MmaInstr &instr, unsigned waveSize,
                             int64_t wavesM, int64_t wavesN,
                             ArrayRef<int64_t> shape, bool transposed) {
  if (llvm::Error error = checkWaves(wavesM, wavesN))
    return std::move(error);
  if (transposed && (instr.isWmma() || instr.m != instr.n))
    return makeError(llvm::Twine(instr.name) +
                     " cannot be transposed: not a square MFMA");
  if (llvm::Error error = checkTileShape(shape, instr.m * wavesM,
                                         instr.n * wavesN, "accumulator"))
    return std::move(error);
  llvm::Expected<MmaLayouts> base = getMmaLayouts(instr, waveSize);
  if (!base)
    return base.takeError();
  // Swapped operands compute the block's transpose: the hardware's
  // (row, column) of an element is its (n, m).
  llvm::Expected<LinearLayout> block =
      transposed ? swapTileDims(base->c) : LinearLayout(base->c);
  if (!block)
    return block.takeError();
  SmallVector<LinearLayout::InDim, 4> ins(block->getInDims().begin(),
                                          block->getInDims().end());
  ins.push_back({dims::kWave.str(), {}});
  appendSteps(ins, dims::kWave, 1, wavesN, instr.n);
  appendSteps(ins, dims::kWave, 0, wavesM, instr.m);
  appendSteps(ins, dims::kRegister, 1, shape[1] / (instr.n * wavesN),
              instr.n * wavesN);
  appendSteps(ins, dims::kRegister, 0, shape[0] / (instr.m * wavesM),
              instr.m * wavesM);
  return LinearLayout::get(ins, {{dims::tileDim(0), int32_t(shape[0])},
                                 {dims::tileDim(1), int32_t(shape[1])}});
}

llvm::Expected<LinearLayout>
tessel::mmaOperandLayout(const MmaInstr &instr, unsigned waveSize,
                         int64_t wavesM, int64_t wavesN, MmaOperand operand,
                         int64_t kWidth, ArrayRef<int64_t> shape) {
  if (llvm::Error error = checkWaves(wavesM, wavesN))
    return std::move(error);
  bool isA = operand == MmaOperand::A;
  int64_t x = isA ? instr.m : instr.n;
  int64_t wavesX = isA ? wavesM : wavesN, wavesOther = isA ? wavesN : wavesM;
  int64_t perLane = instr.getOperandElementsPerLane(waveSize);
  if (kWidth <= 0 || !llvm::isPowerOf2_64(kWidth))
    return makeError("kWidth " + llvm::Twine(kWidth) + " of " + instr.name +
                     " must be a power of two");
  if (kWidth != perLane && instr.isWmma())
    return makeError("WMMA operands hold exactly " + llvm::Twine(perLane) +
                     " elements per lane: kWidth must be " +
                     llvm::Twine(perLane));
  // Work in (x, k) coordinates; A is (m, k) already, B is transposed at the
  // end.
  int64_t groupK = kWidth * (waveSize / x); // K covered by one lane pass
  if (instr.isWmma())
    groupK = instr.k;
  SmallVector<int64_t, 2> xk =
      isA ? SmallVector<int64_t, 2>{shape[0], shape[1]}
          : SmallVector<int64_t, 2>{shape[1], shape[0]};
  if (shape.size() != 2)
    return makeError("operand tiles are 2-D");
  // Below the instruction's elements per lane, one instruction takes
  // several lane passes of kWidth (the K order of an accumulator fed to the
  // next product): the tile holds whole instructions.
  int64_t kPerInstruction = groupK * std::max<int64_t>(1, perLane / kWidth);
  if (llvm::Error error =
          checkTileShape(xk, x * wavesX, kPerInstruction,
                         isA ? "A operand ([M, K])" : "B operand ([K, N])"))
    return std::move(error);

  SmallVector<LinearLayout::InDim, 4> ins;
  // gfx12's 16-bit WMMA operands interleave K in runs of 4 between the two
  // half-waves (k = 8 (e / 4) + 4 (lane / 16) + e % 4). A and B share that
  // order, and a product sums over K whatever its order, so the operands
  // may take any order both agree on: runs of kWidth consecutive K per
  // lane, which LDS reads as one 16-byte access and which is the order of
  // the accumulator another product feeds (attention's P).
  bool hardwareOrder = kWidth == perLane && instr.family != MmaFamily::Rdna4;
  if (hardwareOrder) {
    llvm::Expected<MmaLayouts> base = getMmaLayouts(instr, waveSize);
    if (!base)
      return base.takeError();
    llvm::Expected<LinearLayout> hw = isA ? base->a : swapTileDims(base->b);
    if (!hw)
      return hw.takeError();
    ins.assign(hw->getInDims().begin(), hw->getInDims().end());
  } else {
    // kWidth consecutive k per lane, lane groups of `x` lanes step by kWidth.
    ins = {{dims::kRegister.str(), {}}, {dims::kLane.str(), {}}};
    appendSteps(ins, dims::kRegister, 1, kWidth, 1);
    appendSteps(ins, dims::kLane, 0, x, 1);
    appendSteps(ins, dims::kLane, 1, waveSize / x, kWidth);
  }
  // Waves: wave index = waveM * wavesN + waveN; the other operand's waves
  // hold copies.
  ins.push_back({dims::kWave.str(), {}});
  if (isA) {
    appendSteps(ins, dims::kWave, 0, wavesOther, 0);
    appendSteps(ins, dims::kWave, 0, wavesX, x);
  } else {
    appendSteps(ins, dims::kWave, 0, wavesX, x);
    appendSteps(ins, dims::kWave, 0, wavesOther, 0);
  }
  appendSteps(ins, dims::kRegister, 1, xk[1] / groupK, groupK);
  appendSteps(ins, dims::kRegister, 0, xk[0] / (x * wavesX), x * wavesX);
  llvm::Expected<LinearLayout> layout =
      LinearLayout::get(ins, {{dims::tileDim(0), int32_t(xk[0])},
                              {dims::tileDim(1), int32_t(xk[1])}});
  if (!layout || isA)
    return layout;
  return swapTileDims(*layout);
}

std::string tessel::getRocdlOpMnemonic(llvm::StringRef opName) {
  opName.consume_front("rocdl.");
  std::string name = ("v_" + opName).str();
  for (char &c : name)
    if (c == '.')
      c = '_';
  return name;
}

std::optional<MatrixType> tessel::getMatrixType(llvm::StringRef mnemonic) {
  if (mnemonic.contains("fp8") || mnemonic.contains("bf8") ||
      mnemonic.contains("f8f6f4"))
    return MatrixType::FP8;
  if (mnemonic.contains("bf16"))
    return MatrixType::BF16;
  if (mnemonic.contains("f16"))
    return MatrixType::F16;
  if (mnemonic.contains("i8") || mnemonic.contains("iu8"))
    return MatrixType::I8;
  if (mnemonic.contains("xf32"))
    return MatrixType::XF32;
  if (mnemonic.contains("f64"))
    return MatrixType::F64;
  if (mnemonic.contains("f32"))
    return MatrixType::F32;
  return std::nullopt;
}
