//===- MmaTest.cpp - The catalogue against AMD's calculator -----*- C++ -*-===//
//
// Every listing of AMD's matrix instruction calculator under calculator/
// (copies of the calculator's output checked into the repository, see
// docs/hardware.md §3.7) is parsed, and the catalogue's A, B and C/D layouts
// are compared with it for every lane and every register element. The gfx950
// instructions, which the calculator does not cover, are checked against the
// formulas of docs/hardware.md §3.2.
//
//===----------------------------------------------------------------------===//

#include "CalculatorListing.h"

#include "tessel/Target/Mma.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

using namespace tessel;
using llvm::SmallVector;

#ifndef TESSEL_CALCULATOR_DIR
#error "TESSEL_CALCULATOR_DIR must name the directory of the listings"
#endif

namespace {

template <typename T> T expectOk(llvm::Expected<T> value) {
  if (!value) {
    ADD_FAILURE() << llvm::toString(value.takeError());
    return T();
  }
  return std::move(*value);
}

std::vector<std::string> listingPaths() {
  std::vector<std::string> paths;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(TESSEL_CALCULATOR_DIR, ec), end;
       it != end && !ec; it.increment(ec))
    if (llvm::StringRef(it->path()).ends_with(".txt"))
      paths.push_back(it->path());
  std::sort(paths.begin(), paths.end());
  return paths;
}

/// Listings of instructions Tessel does not emit: gfx908's bf16 forms, f64
/// and the multi-block instructions.
bool isOutsideCatalogue(llvm::StringRef instruction) {
  return llvm::is_contained({"v_mfma_f32_32x32x4bf16", "v_mfma_f32_16x16x8bf16",
                             "v_mfma_f64_16x16x4f64", "v_mfma_f64_16x16x4_f64",
                             "v_mfma_f32_32x32x1_2b_f32",
                             "v_mfma_f32_4x4x4_16b_f16"},
                            instruction);
}

MmaFamily familyOf(llvm::StringRef architecture) {
  if (architecture == "RDNA3")
    return MmaFamily::Rdna3;
  if (architecture == "RDNA4")
    return MmaFamily::Rdna4;
  return MmaFamily::Cdna;
}

const MmaInstr *findInCatalogue(const calc::Listing &listing) {
  for (const MmaInstr *instr : lookupMmaByName(listing.instruction))
    if (instr->family == familyOf(listing.architecture))
      return instr;
  return nullptr;
}

/// Compares one operand: for every lane, GPR and element inside the GPR, the
/// listing's (row, col) against `layout` at the LLVM vector element the GPR
/// bits hold. Returns the mismatches, described.
std::vector<std::string> compareOperand(llvm::StringRef what,
                                        const calc::ElementExpr &rowExpr,
                                        const calc::ElementExpr &colExpr,
                                        unsigned gprs, unsigned elementBits,
                                        unsigned waveSize,
                                        const LinearLayout &layout) {
  std::vector<std::string> mismatches;
  // A 16-bit value the listing places in bits [15:0] only is, as an LLVM
  // vector, every other element (gfx11 16-bit WMMA results).
  bool lowHalfOnly = rowExpr.low16Only || colExpr.low16Only;
  unsigned perGpr = lowHalfOnly ? 1 : 32 / elementBits;
  unsigned vectorPerGpr = 32 / elementBits;
  unsigned elements = gprs * vectorPerGpr;
  if (layout.getInDimSize(dims::kRegister) != int32_t(elements))
    mismatches.push_back((what + ": the listing holds " +
                          llvm::Twine(elements) +
                          " elements per lane, the catalogue " +
                          llvm::Twine(layout.getInDimSize(dims::kRegister)))
                             .str());
  if (layout.getInDimSize(dims::kLane) != int32_t(waveSize))
    mismatches.push_back((what + ": wrong lane count").str());
  if (!mismatches.empty())
    return mismatches;
  for (unsigned lane = 0; lane < waveSize; ++lane)
    for (unsigned gpr = 0; gpr < gprs; ++gpr)
      for (unsigned sub = 0; sub < perGpr; ++sub) {
        unsigned bits = sub * elementBits;
        long row = rowExpr.evaluate(lane, gpr, bits);
        long col = colExpr.evaluate(lane, gpr, bits);
        int32_t element = gpr * vectorPerGpr + sub;
        SmallVector<int32_t, 4> got = layout.apply({element, int32_t(lane)});
        if (got[0] != row || got[1] != col)
          mismatches.push_back(
              llvm::formatv("{0}: lane {1} GPR {2} bits {3} (element {4}): "
                            "listing ({5}, {6}), catalogue ({7}, {8})",
                            what, lane, gpr, bits, element, row, col, got[0],
                            got[1])
                  .str());
      }
  return mismatches;
}

/// Every mismatch between the catalogue's layouts of `instr` and one wave
/// size's mapping of its listing.
std::vector<std::string> compareWithListing(const MmaInstr &instr,
                                            const calc::WaveMapping &mapping,
                                            const MmaLayouts &layouts) {
  std::vector<std::string> all;
  auto append = [&](std::vector<std::string> more) {
    all.insert(all.end(), more.begin(), more.end());
  };
  append(compareOperand("A", mapping.aRow, mapping.aK, mapping.gprsA,
                        getMmaElementBits(instr.a), mapping.waveSize,
                        layouts.a));
  append(compareOperand("B", mapping.bK, mapping.bCol, mapping.gprsB,
                        getMmaElementBits(instr.b), mapping.waveSize,
                        layouts.b));
  append(compareOperand("C/D", mapping.cRow, mapping.cCol, mapping.gprsC,
                        getMmaElementBits(instr.acc), mapping.waveSize,
                        layouts.c));
  if (mapping.gprsD != mapping.gprsC)
    all.push_back("C and D use different register counts");
  return all;
}

TEST(MmaCatalogueTest, EveryListingParsesAndIsCovered) {
  std::vector<std::string> paths = listingPaths();
  ASSERT_GE(paths.size(), 38u)
      << "listings missing under " << TESSEL_CALCULATOR_DIR;
  unsigned checkedWaves = 0;
  for (const std::string &path : paths) {
    calc::ParseResult parsed = calc::parseListingFile(path);
    ASSERT_TRUE(parsed) << parsed.error;
    const calc::Listing &listing = *parsed.listing;
    if (!listing.supported || isOutsideCatalogue(listing.instruction))
      continue;
    const MmaInstr *instr = findInCatalogue(listing);
    ASSERT_NE(instr, nullptr)
        << listing.instruction << " (" << listing.architecture
        << ") is not in the catalogue";
    EXPECT_EQ(instr->m, listing.m) << path;
    EXPECT_EQ(instr->n, listing.n) << path;
    EXPECT_EQ(instr->k, listing.k) << path;
    for (const calc::WaveMapping &mapping : listing.waves) {
      MmaLayouts layouts = expectOk(getMmaLayouts(*instr, mapping.waveSize));
      std::vector<std::string> mismatches =
          compareWithListing(*instr, mapping, layouts);
      EXPECT_TRUE(mismatches.empty())
          << path << " wave" << mapping.waveSize << ": " << mismatches.size()
          << " mismatches, first: " << mismatches.front();
      ++checkedWaves;
    }
  }
  // 24 CDNA listings in the catalogue, plus 3 RDNA3 and 4 RDNA4 with two
  // wave sizes each.
  EXPECT_EQ(checkedWaves, 24u + 2 * (3u + 4u));
}

TEST(MmaCatalogueTest, AWrongLayoutIsCaught) {
  calc::ParseResult parsed = calc::parseListingFile(
      std::string(TESSEL_CALCULATOR_DIR) + "/cdna3_v_mfma_f32_32x32x8_f16.txt");
  ASSERT_TRUE(parsed) << parsed.error;
  const MmaInstr *instr = findInCatalogue(*parsed.listing);
  ASSERT_NE(instr, nullptr);
  MmaLayouts layouts = expectOk(getMmaLayouts(*instr, 64));
  const calc::WaveMapping &mapping = parsed.listing->waves.front();
  ASSERT_TRUE(compareWithListing(*instr, mapping, layouts).empty());

  // The classic bug: the 32x32 accumulator's lane-half bit taken as row bit
  // 3 instead of 2 (rows 4-7 and 8-11 swapped).
  MmaLayouts wrong = layouts;
  SmallVector<LinearLayout::InDim, 4> ins(layouts.c.getInDims().begin(),
                                          layouts.c.getInDims().end());
  std::swap(ins[0].bases[2], ins[1].bases[5]);
  wrong.c = expectOk(LinearLayout::get(ins, layouts.c.getOutDims()));
  std::vector<std::string> mismatches =
      compareWithListing(*instr, mapping, wrong);
  EXPECT_EQ(mismatches.size(), 64u * 16u / 2u);
  EXPECT_NE(mismatches.front().find("C/D"), std::string::npos);

  // And an A operand whose k runs the wrong way inside the lane.
  wrong = layouts;
  SmallVector<LinearLayout::InDim, 4> aIns(layouts.a.getInDims().begin(),
                                           layouts.a.getInDims().end());
  std::swap(aIns[0].bases[0], aIns[0].bases[1]);
  wrong.a = expectOk(LinearLayout::get(aIns, layouts.a.getOutDims()));
  EXPECT_FALSE(compareWithListing(*instr, mapping, wrong).empty());
}

TEST(MmaCatalogueTest, Gfx950RowsFollowTheReferenceFormulas) {
  // §3.2: A (L % M, KPL * (L / M) + e), B transposed, C/D the 16x16 or 32x32
  // rule; KPL = K * M / 64.
  const Chip *gfx950 = lookupChip("gfx950");
  unsigned checked = 0;
  for (const MmaInstr &instr : getMmaCatalogue()) {
    if (instr.isWmma() || instr.getCycles(*lookupChip("gfx942")) ||
        instr.getCycles(*lookupChip("gfx90a")) || !instr.isAvailableOn(*gfx950))
      continue;
    ++checked;
    int32_t m = instr.m, kpl = instr.k * instr.m / 64;
    MmaLayouts layouts = expectOk(getMmaLayouts(instr, 64));
    ASSERT_EQ(layouts.a.getInDimSize(dims::kRegister), kpl) << instr.name.str();
    for (int32_t lane = 0; lane < 64; ++lane) {
      for (int32_t e = 0; e < kpl; ++e) {
        EXPECT_EQ(layouts.a.apply({e, lane}),
                  (SmallVector<int32_t, 4>{lane % m, kpl * (lane / m) + e}))
            << instr.name.str();
        EXPECT_EQ(layouts.b.apply({e, lane}),
                  (SmallVector<int32_t, 4>{kpl * (lane / m) + e, lane % m}))
            << instr.name.str();
      }
      for (int32_t j = 0; j < m * m / 64; ++j) {
        SmallVector<int32_t, 4> expected =
            m == 16 ? SmallVector<int32_t, 4>{4 * (lane / 16) + j, lane % 16}
                    : SmallVector<int32_t, 4>{
                          8 * (j / 4) + 4 * (lane / 32) + j % 4, lane % 32};
        EXPECT_EQ(layouts.c.apply({j, lane}), expected) << instr.name.str();
      }
    }
  }
  // f16 and bf16 double-K (4), i8 double-K (2), f8f6f4 in two shapes for
  // four pairs of 8-bit formats (8).
  EXPECT_EQ(checked, 14u);
}

TEST(MmaCatalogueTest, F8f6f4IsOneNameForEveryPairOfFormats) {
  const Chip *gfx950 = lookupChip("gfx950");
  using E = MmaElement;
  for (E a : {E::Fp8, E::Bf8}) {
    for (E b : {E::Fp8, E::Bf8}) {
      const MmaInstr *big =
          lookupMma("v_mfma_f32_32x32x64_f8f6f4", *gfx950, a, b);
      const MmaInstr *small =
          lookupMma("v_mfma_f32_16x16x128_f8f6f4", *gfx950, a, b);
      ASSERT_NE(big, nullptr);
      ASSERT_NE(small, nullptr);
      EXPECT_EQ(big->a, a);
      EXPECT_EQ(big->b, b);
      // 16 and 8 passes: twice the FLOPs per clock of the older fp8 ones.
      EXPECT_EQ(big->getCycles(*gfx950), 64u);
      EXPECT_EQ(small->getCycles(*gfx950), 32u);
      EXPECT_EQ(big->getLLVMOperandType(64), "<8 x i32>");
    }
  }
  const MmaInstr *legacy = lookupMma("v_mfma_f32_32x32x16_fp8_fp8", *gfx950);
  ASSERT_NE(legacy, nullptr);
  EXPECT_EQ(
      2 * legacy->getFlops() / legacy->getCycles(*gfx950),
      lookupMma("v_mfma_f32_32x32x64_f8f6f4", *gfx950)->getFlops() /
          lookupMma("v_mfma_f32_32x32x64_f8f6f4", *gfx950)->getCycles(*gfx950));
  EXPECT_EQ(lookupMma("v_mfma_f32_32x32x64_f8f6f4", *lookupChip("gfx942")),
            nullptr);
  EXPECT_EQ(lookupMma("v_mfma_f32_32x32x64_f8f6f4", *gfx950, E::F16, E::F16),
            nullptr);
}

TEST(MmaCatalogueTest, FactsPerChip) {
  const Chip *gfx90a = lookupChip("gfx90a"), *gfx942 = lookupChip("gfx942"),
             *gfx950 = lookupChip("gfx950"), *gfx1100 = lookupChip("gfx1100"),
             *gfx1201 = lookupChip("gfx1201");
  const MmaInstr *bf16 = lookupMma("v_mfma_f32_32x32x8_bf16", *gfx942);
  ASSERT_NE(bf16, nullptr);
  EXPECT_EQ(bf16->getMnemonic(*gfx90a), "v_mfma_f32_32x32x8bf16_1k");
  EXPECT_EQ(bf16->getMnemonic(*gfx942), "v_mfma_f32_32x32x8_bf16");
  EXPECT_EQ(lookupMma("v_mfma_f32_32x32x8bf16_1k", *gfx90a), bf16);
  EXPECT_EQ(bf16->getCycles(*gfx90a), 64u);
  EXPECT_EQ(bf16->getCycles(*gfx942), 32u);
  EXPECT_EQ(bf16->getLLVMOperandType(64), "<4 x i16>");
  EXPECT_EQ(bf16->getLLVMAccumulatorType(64), "<16 x float>");
  EXPECT_EQ(bf16->getMlirSpelling(), "amdgpu.mfma 32x32x8");
  EXPECT_EQ(bf16->getChipNames(), "gfx90a, gfx942, gfx950");

  // xf32 only on gfx942; double-K only on gfx950; fp8 not on gfx90a.
  EXPECT_NE(lookupMma("v_mfma_f32_16x16x8_xf32", *gfx942), nullptr);
  EXPECT_EQ(lookupMma("v_mfma_f32_16x16x8_xf32", *gfx950), nullptr);
  EXPECT_EQ(lookupMma("v_mfma_f32_16x16x32_bf16", *gfx942), nullptr);
  const MmaInstr *doubleK = lookupMma("v_mfma_f32_16x16x32_bf16", *gfx950);
  ASSERT_NE(doubleK, nullptr);
  EXPECT_EQ(doubleK->getLLVMOperandType(64), "<8 x bfloat>");
  EXPECT_EQ(lookupMma("v_mfma_f32_16x16x32_fp8_fp8", *gfx90a), nullptr);
  EXPECT_EQ(
      lookupMma("v_mfma_f32_16x16x32_fp8_fp8", *gfx942)->getLLVMOperandType(64),
      "i64");
  EXPECT_EQ(
      lookupMma("v_mfma_i32_16x16x64_i8", *gfx950)->getLLVMOperandType(64),
      "<4 x i32>");
  EXPECT_EQ(lookupMma("v_mfma_i32_16x16x16i8", *gfx90a)->getLLVMOperandType(64),
            "i32");

  // One WMMA name, two layouts.
  const MmaInstr *rdna3 = lookupMma("v_wmma_f32_16x16x16_f16", *gfx1100);
  const MmaInstr *rdna4 = lookupMma("v_wmma_f32_16x16x16_f16", *gfx1201);
  ASSERT_TRUE(rdna3 && rdna4);
  EXPECT_NE(rdna3, rdna4);
  EXPECT_EQ(rdna3->getLLVMOperandType(32), "<16 x half>");
  EXPECT_EQ(rdna4->getLLVMOperandType(32), "<8 x half>");
  EXPECT_EQ(rdna4->getLLVMOperandType(64), "<4 x half>");
  EXPECT_EQ(lookupMma("v_wmma_f16_16x16x16_f16", *gfx1100)
                ->getLLVMAccumulatorType(32),
            "<16 x half>");
  EXPECT_EQ(lookupMma("v_wmma_f32_16x16x16_fp8_fp8", *gfx1100), nullptr);
  EXPECT_EQ(lookupMma("v_mfma_f32_32x32x8_f16", *gfx1201), nullptr);
}

TEST(MmaTileLayoutTest, AccumulatorTilesWavesThenRepeats) {
  const MmaInstr *instr =
      lookupMma("v_mfma_f32_32x32x8_f16", *lookupChip("gfx942"));
  // 2x2 waves over a 128x128 tile: each wave repeats its 32x32 block 2x2.
  LinearLayout acc =
      expectOk(mmaAccumulatorLayout(*instr, 64, 2, 2, {128, 128}));
  EXPECT_EQ(acc.getInDimSize("register"), 64);
  EXPECT_EQ(acc.getInDimSize("wave"), 4);
  EXPECT_TRUE(acc.isInjective() && acc.isSurjective());
  // Register 4 of lane 32 of wave 0 is (12, 0), as in the instruction.
  EXPECT_EQ(acc.apply({4, 32, 0}), (SmallVector<int32_t, 4>{12, 0}));
  // Wave 1 is the next block along N, wave 2 along M.
  EXPECT_EQ(acc.apply({0, 0, 1}), (SmallVector<int32_t, 4>{0, 32}));
  EXPECT_EQ(acc.apply({0, 0, 2}), (SmallVector<int32_t, 4>{32, 0}));
  // Register 16 repeats along N past both waves, register 32 along M.
  EXPECT_EQ(acc.apply({16, 0, 0}), (SmallVector<int32_t, 4>{0, 64}));
  EXPECT_EQ(acc.apply({32, 0, 0}), (SmallVector<int32_t, 4>{64, 0}));
  EXPECT_FALSE(bool(mmaAccumulatorLayout(*instr, 64, 2, 2, {96, 128})));
  llvm::consumeError(
      mmaAccumulatorLayout(*instr, 64, 2, 2, {96, 128}).takeError());
}

TEST(MmaTileLayoutTest, OperandsPackKWidth) {
  const Chip *gfx942 = lookupChip("gfx942");
  const MmaInstr *instr = lookupMma("v_mfma_f32_16x16x16_f16", *gfx942);
  MmaLayouts hw = expectOk(getMmaLayouts(*instr, 64));
  // kWidth = 4 on one instruction tile is the hardware layout plus a wave.
  LinearLayout a =
      expectOk(mmaOperandLayout(*instr, 64, 1, 1, MmaOperand::A, 4, {16, 16}));
  EXPECT_EQ(a.sublayout({"register", "lane"}, {"dim0", "dim1"}), hw.a);
  LinearLayout b =
      expectOk(mmaOperandLayout(*instr, 64, 1, 1, MmaOperand::B, 4, {16, 16}));
  EXPECT_EQ(b.sublayout({"register", "lane"}, {"dim0", "dim1"}), hw.b);
  // kWidth = 8: lane 16 holds k = 8..15 of row 0, two instructions' worth.
  LinearLayout packed =
      expectOk(mmaOperandLayout(*instr, 64, 1, 1, MmaOperand::A, 8, {16, 32}));
  EXPECT_EQ(packed.apply({5, 16, 0}), (SmallVector<int32_t, 4>{0, 13}));
  // B of a 2x2-wave dot: waves along M hold copies.
  LinearLayout b22 =
      expectOk(mmaOperandLayout(*instr, 64, 2, 2, MmaOperand::B, 4, {32, 64}));
  EXPECT_EQ(b22.apply({0, 0, 1}), (SmallVector<int32_t, 4>{0, 16}));
  EXPECT_EQ(b22.apply({0, 0, 2}), b22.apply({0, 0, 0}));
  EXPECT_EQ(b22.getReplication(), 2);
  // kWidth must be a power of two.
  llvm::Expected<LinearLayout> bad =
      mmaOperandLayout(*instr, 64, 1, 1, MmaOperand::A, 3, {16, 16});
  ASSERT_FALSE(bool(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("kWidth 3"),
            std::string::npos);
}

// Below the instruction's elements per lane, kWidth gives one instruction
// runs from successive lane passes: with runs of 4 the B operand of
// gfx950's v_mfma_f32_32x32x16_f16 is exactly its accumulator layout (4
// rows per lane run, the half-waves 4 rows apart), so that attention's P^T
// feeds the next product from its registers.
TEST(MmaLayouts, FractionalKWidthIsTheAccumulatorLayout) {
  const Chip *gfx950 = lookupChip("gfx950");
  const MmaInstr *instr = lookupMma("v_mfma_f32_32x32x16_f16", *gfx950);
  ASSERT_NE(instr, nullptr);
  LinearLayout acc = expectOk(mmaAccumulatorLayout(*instr, 64, 1, 2, {64, 64}));
  LinearLayout b =
      expectOk(mmaOperandLayout(*instr, 64, 1, 2, MmaOperand::B, 4, {64, 64}));
  EXPECT_EQ(acc, b);
  // The hardware packing (kWidth 8) is not.
  LinearLayout hardware =
      expectOk(mmaOperandLayout(*instr, 64, 1, 2, MmaOperand::B, 8, {64, 64}));
  EXPECT_NE(acc, hardware);
  // A tile shorter than one instruction's K (16) is refused.
  llvm::Expected<LinearLayout> shortK =
      mmaOperandLayout(*instr, 64, 1, 2, MmaOperand::B, 4, {8, 64});
  ASSERT_FALSE(bool(shortK));
  llvm::consumeError(shortK.takeError());
}

} // namespace
