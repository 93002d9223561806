//===- LoopsTest.cpp - Natural loops of a kernel's machine code -----------===//

#include "tessel/Perf/Model.h"
#include "tessel/Target/Chip.h"
#include "tessel/Target/KernelMetadata.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"

#include "gtest/gtest.h"

#include <tuple>

using namespace tessel;

namespace {

/// A kernel from printed instructions, 4 bytes apart: "NAME:" labels the
/// next instruction, a trailing "-> NAME" makes it a conditional branch to
/// it and "=> NAME" an unconditional one.
KernelCode kernel(llvm::ArrayRef<const char *> lines,
                  llvm::StringRef chipName = "gfx942") {
  const Chip &chip = *lookupChip(chipName);
  KernelCode code;
  code.name = "test";
  llvm::StringMap<uint64_t> labels;
  uint64_t address = 0;
  for (llvm::StringRef line : lines) {
    if (line.consume_back(":"))
      labels[line] = address;
    else
      address += 4;
  }
  address = 0;
  for (llvm::StringRef line : lines) {
    if (line.ends_with(":"))
      continue;
    auto [text, target] = line.split(" -> ");
    bool conditional = !target.empty();
    if (!conditional)
      std::tie(text, target) = line.split(" => ");
    Instruction instr = classifyInstruction(text, chip);
    instr.address = address;
    instr.size = 4;
    if (!target.empty()) {
      instr.branchTarget = labels.lookup(target);
      instr.isConditional = conditional;
    }
    code.instructions.push_back(instr);
    address += 4;
  }
  code.instructions.push_back(classifyInstruction("s_endpgm", chip));
  code.instructions.back().address = address;
  return code;
}

// A loop whose rarely taken branch (attention's lazy rescale) LLVM laid out
// after the back edge: the block jumps back into the loop and belongs to
// its natural loop, but does not repeat in its steady state.
TEST(Loops, BlockAfterTheBackEdgeIsNotRepeated) {
  std::vector<LoopRange> loops = findLoops(kernel({
      "v_mov_b32_e32 v0, 0",
      "HEAD:",
      "v_cmp_gt_f32_e32 vcc, v1, v2",
      "s_cbranch_vccnz -> RARE",
      "BODY:",
      "v_add_f32_e32 v0, v0, v1",
      "s_cbranch_scc1 -> HEAD",
      "s_branch => EXIT",
      "RARE:",
      "v_mul_f32_e32 v0, v0, v3",
      "s_branch => BODY",
      "EXIT:",
      "v_mov_b32_e32 v4, v0",
  }));
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0].instructions, (std::vector<size_t>{1, 2, 3, 4}));
  EXPECT_EQ(loops[0].begin, 1u);
  EXPECT_EQ(loops[0].end, 4u);
}

// A block every iteration passes through stays in the loop wherever it is
// laid out: here the latch sits above the header and the body after both.
TEST(Loops, BlockOnEveryPathStaysAfterTheBackEdge) {
  std::vector<LoopRange> loops = findLoops(kernel({
      "s_branch => HEAD",
      "LATCH:",
      "v_add_u32_e32 v5, 1, v5",
      "HEAD:",
      "v_cmp_gt_f32_e32 vcc, v1, v2",
      "s_cbranch_vccnz -> EXIT",
      "BODY:",
      "v_add_f32_e32 v0, v0, v1",
      "s_branch => LATCH",
      "EXIT:",
      "v_mov_b32_e32 v4, v0",
  }));
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0].instructions, (std::vector<size_t>{1, 2, 3, 4, 5}));
}

// An outer loop's blocks after its back edge are its inner loop's, and
// run: only innermost loops drop such blocks.
TEST(Loops, OuterLoopKeepsItsInnerLoopLaidOutAfterItsBackEdge) {
  std::vector<LoopRange> loops = findLoops(kernel({
      "OUTER:",
      "v_mov_b32_e32 v0, 0",
      "s_cbranch_scc0 -> INNER",
      "LATCH:",
      "v_add_u32_e32 v5, 1, v5",
      "s_cbranch_scc1 -> OUTER",
      "s_branch => EXIT",
      "INNER:",
      "v_add_f32_e32 v0, v0, v1",
      "s_cbranch_vccnz -> INNER",
      "s_branch => LATCH",
      "EXIT:",
      "s_nop 0",
  }));
  ASSERT_EQ(loops.size(), 2u);
  const LoopRange &outer = loops[0].depth == 0 ? loops[0] : loops[1];
  const LoopRange &inner = loops[0].depth == 0 ? loops[1] : loops[0];
  EXPECT_EQ(outer.instructions, (std::vector<size_t>{0, 1, 2, 3, 5, 6, 7}));
  EXPECT_EQ(inner.instructions, (std::vector<size_t>{5, 6}));
}

/// `code` analyzed on `chip` as a kernel of 128 VGPRs and `lanes` lanes per
/// workgroup over `workgroups` workgroups.
PerfReport analyzeOn(llvm::StringRef chip, const KernelCode &code,
                     unsigned lanes, uint64_t workgroups,
                     const ProblemWork &work,
                     const ModelParameters &parameters = ModelParameters()) {
  KernelMetadata metadata;
  metadata.vgprCount = 128;
  metadata.sgprCount = 16;
  metadata.wavefrontSize = 64;
  metadata.maxFlatWorkgroupSize = lanes;
  metadata.reqdWorkgroupSize = {lanes, 1, 1};
  Launch launch;
  launch.grid = {workgroups, 1, 1};
  llvm::Expected<PerfReport> report = analyzeKernel(
      code, metadata, *lookupChip(chip), launch, work, parameters);
  EXPECT_TRUE(bool(report)) << llvm::toString(report.takeError());
  return std::move(*report);
}

PerfReport analyzeOnGfx942(const KernelCode &code, unsigned lanes,
                           uint64_t workgroups, const ProblemWork &work) {
  return analyzeOn("gfx942", code, lanes, workgroups, work);
}

/// A kernel of one loop with one matrix instruction (4 waves, 128 VGPRs:
/// four workgroups fit a CU) analyzed on gfx942 over `workgroups`
/// workgroups, each running the iterations `work` gives.
PerfReport analyzeMatrixLoop(uint64_t workgroups, ProblemWork work) {
  KernelCode code = kernel({
      "s_mov_b32 s0, 0",
      "LOOP:",
      "v_mfma_f32_32x32x8_f16 v[0:15], v[16:17], v[18:19], v[0:15]",
      "s_add_u32 s0, s0, 1",
      "s_cbranch_scc1 -> LOOP",
  });
  return analyzeOnGfx942(code, 256, workgroups, work);
}

/// The clocks the model gives the grid.
double computeClocks(const PerfReport &report) {
  return report.computeSeconds * report.clockMHz * 1e6;
}

ProblemWork iterations(double each) {
  ProblemWork work;
  work.loopIterations = {each};
  return work;
}

// Workgroups of unequal work start in id order as slots free (list
// scheduling), and the workgroups of a CU share its SIMDs: with fewer
// running than at full occupancy, each runs its loop at that many waves per
// SIMD. 1824 workgroups on gfx942's 304 CUs x 4 = 1216 slots (one wave per
// SIMD each), the first 1216 round-robin over the CUs: 1216 of one
// iteration and 608 of two. c1 and c2 (a short and a long workgroup at full
// occupancy) come from grids of equal workgroups in two full rounds; a
// workgroup is O clocks outside the loop plus its iterations of tN, so
// tN = c2 - c1, O = c1 - tN; with two workgroups on a CU an iteration takes
// t2 = max(t1, tN / 2) (t1: a wave alone).
// Short ones first: every CU runs four short ones, then two long ones at
// two per CU: c1 + O + 2 t2. Long ones first: every CU runs two long and
// two short ones, two more short ones when those end at c1, the long ones
// end at c2 < 2 c1, and the short ones' last O / c1 of their work then runs
// at two per CU: c2 + O / c1 (O + t2).
TEST(Dispatch, LongestFirstFillsTheSlotsThatFreeFirst) {
  ASSERT_EQ(analyzeMatrixLoop(2432, iterations(1)).rounds, 2u);
  double c1 = computeClocks(analyzeMatrixLoop(2432, iterations(1))) / 2;
  double c2 = computeClocks(analyzeMatrixLoop(2432, iterations(2))) / 2;
  ASSERT_GT(c2, c1);
  ASSERT_GT(2 * c1, c2);
  double tN = c2 - c1, outside = c1 - tN;
  ProblemWork shortFirst = iterations(4.0 / 3);
  shortFirst.workgroupRuns = {{{1}, 1216}, {{2}, 608}};
  ProblemWork longFirst = shortFirst;
  std::swap(longFirst.workgroupRuns[0], longFirst.workgroupRuns[1]);
  double busy = 1216 * c1 + 608 * c2;

  PerfReport grid = analyzeMatrixLoop(1824, shortFirst);
  ASSERT_EQ(grid.loops.size(), 1u);
  EXPECT_EQ(grid.loops[0].wavesPerSimd, 4u);
  double t1 = grid.loops[0].singleWaveCycles;
  ASSERT_GT(t1, 0);
  double t2 = std::max(t1, tN / 2);
  double shortFirstClocks = c1 + outside + 2 * t2;
  EXPECT_NEAR(computeClocks(grid), shortFirstClocks, 1e-6 * c2);
  EXPECT_NEAR(grid.gridEfficiency, busy / (1216 * shortFirstClocks), 1e-6);
  PerfReport longest = analyzeMatrixLoop(1824, longFirst);
  double longFirstClocks = c2 + outside / c1 * (outside + t2);
  EXPECT_NEAR(computeClocks(longest), longFirstClocks, 1e-6 * c2);
  EXPECT_NEAR(longest.gridEfficiency, busy / (1216 * longFirstClocks), 1e-6);
  EXPECT_LT(longFirstClocks, shortFirstClocks);
  // Short ones first leave half the slots idle in the tail.
  auto quantization = llvm::find_if(grid.sources, [](const CycleSource &s) {
    return s.category == "grid-quantization";
  });
  ASSERT_NE(quantization, grid.sources.end()) << grid.gridEfficiency;
  EXPECT_NE(quantization->explanation.find("1 to 2 loop iterations"),
            std::string::npos)
      << quantization->explanation;
}

// Runs repeated over the grid (grid order: every head's query blocks in
// turn) walk the same as the whole sequence written out; runs of equal
// work give the rounds of the uniform grid.
TEST(Dispatch, RepeatedRunsAndEqualWork) {
  ProblemWork repeated = iterations(1.5);
  repeated.workgroupRuns = {{{1}, 1}, {{2}, 1}};
  repeated.workgroupRunRepeats = 912;
  ProblemWork written = repeated;
  written.workgroupRunRepeats = 1;
  written.workgroupRuns.clear();
  for (int i = 0; i < 912; ++i)
    written.workgroupRuns.insert(written.workgroupRuns.end(),
                                 {{{1}, 1}, {{2}, 1}});
  EXPECT_DOUBLE_EQ(computeClocks(analyzeMatrixLoop(1824, repeated)),
                   computeClocks(analyzeMatrixLoop(1824, written)));

  // Equal work in full rounds (2 x 1216 slots): every CU runs four
  // workgroups throughout, as the rounds count them.
  ProblemWork equal = iterations(1);
  equal.workgroupRuns = {{{1}, 2432}};
  PerfReport dispatched = analyzeMatrixLoop(2432, equal);
  PerfReport rounds = analyzeMatrixLoop(2432, iterations(1));
  EXPECT_NEAR(computeClocks(dispatched), computeClocks(rounds),
              1e-9 * computeClocks(rounds));
  EXPECT_NEAR(dispatched.gridEfficiency, rounds.gridEfficiency, 1e-12);
}

// Runs that do not add up to the launch's workgroups are not the grid's:
// the model keeps the rounds of equal workgroups.
TEST(Dispatch, RunsOfAnotherGridAreIgnored) {
  ProblemWork wrong = iterations(1);
  wrong.workgroupRuns = {{{1}, 1000}, {{30}, 1}};
  EXPECT_DOUBLE_EQ(computeClocks(analyzeMatrixLoop(1824, wrong)),
                   computeClocks(analyzeMatrixLoop(1824, iterations(1))));
}

} // namespace

/// A ping-pong loop on gfx942 (8 waves of 128 VGPRs: two a SIMD, one
/// workgroup): a softmax phase of 8 transcendentals (128 VALU clocks), a
/// barrier, a matrix phase of 4 MFMAs (128 matrix clocks), a barrier. In
/// front of the loop, `skipped` barriers that a conditional branch skips
/// (tessel.phase_barrier half 1 in front of a ping-pong loop, half 0 after
/// one).
PerfReport analyzePhasedLoop(unsigned skipped) {
  static const char *kSkips[][3] = {
      {"s_cbranch_scc1 -> SKIP0", "s_barrier", "SKIP0:"},
      {"s_cbranch_scc0 -> SKIP1", "s_barrier", "SKIP1:"}};
  std::vector<const char *> lines = {"s_mov_b32 s0, 0", "s_cmp_lt_u32 s1, 4"};
  for (unsigned i = 0; i < skipped; ++i)
    lines.insert(lines.end(), std::begin(kSkips[i]), std::end(kSkips[i]));
  for (const char *line :
       {"LOOP:", "v_exp_f32_e32 v20, v20", "v_exp_f32_e32 v21, v21",
        "v_exp_f32_e32 v22, v22", "v_exp_f32_e32 v23, v23",
        "v_exp_f32_e32 v24, v24", "v_exp_f32_e32 v25, v25",
        "v_exp_f32_e32 v26, v26", "v_exp_f32_e32 v27, v27", "s_barrier",
        "v_mfma_f32_32x32x8_f16 v[0:15], v[16:17], v[18:19], v[0:15]",
        "v_mfma_f32_32x32x8_f16 v[0:15], v[16:17], v[18:19], v[0:15]",
        "v_mfma_f32_32x32x8_f16 v[0:15], v[16:17], v[18:19], v[0:15]",
        "v_mfma_f32_32x32x8_f16 v[0:15], v[16:17], v[18:19], v[0:15]",
        "s_barrier", "s_add_u32 s0, s0, 1", "s_cbranch_scc1 -> LOOP"})
    lines.push_back(line);
  return analyzeOnGfx942(kernel(lines), 512, 304, iterations(1000));
}

// The two waves of a SIMD belong to one workgroup and meet at its
// barriers. Started a phase apart (the barrier only some waves wait at in
// front of the loop), one issues its MFMAs while the other runs its
// transcendentals: the matrix pipe is busy most of the time. Started
// together, both run each phase at once and the pipe idles through the
// softmax phases.
TEST(Loops, StaggeredHalvesAlternateTheirPhases) {
  PerfReport staggered = analyzePhasedLoop(1);
  PerfReport together = analyzePhasedLoop(0);
  ASSERT_EQ(staggered.loops.size(), 1u);
  ASSERT_EQ(together.loops.size(), 1u);
  EXPECT_TRUE(staggered.loops[0].staggered);
  EXPECT_FALSE(together.loops[0].staggered);
  EXPECT_EQ(staggered.loops[0].wavesPerSimd, 2u);
  EXPECT_GT(staggered.loops[0].structuralEfficiency, 0.8);
  EXPECT_LT(together.loops[0].structuralEfficiency, 0.6);
  // A staggered loop reports its phases' lengths: the matrix phase at
  // least its products' issue, the softmax phase its transcendentals'.
  EXPECT_GT(staggered.loops[0].matrixPhaseClocks, 0);
  EXPECT_GT(staggered.loops[0].softmaxPhaseClocks, 0);
  EXPECT_EQ(together.loops[0].matrixPhaseClocks, 0);
}

// A second skipped barrier (the lower half's, after an earlier ping-pong
// loop) brings the halves together again: a loop after a stagger and its
// catch-up starts with all waves at once.
TEST(Loops, StaggerAndCatchUpCancel) {
  PerfReport caughtUp = analyzePhasedLoop(2);
  ASSERT_EQ(caughtUp.loops.size(), 1u);
  EXPECT_FALSE(caughtUp.loops[0].staggered);
  EXPECT_LT(caughtUp.loops[0].structuralEfficiency, 0.6);
}

/// One wave's loop of a 32x32x8 product (32 clocks) followed by `count`
/// copies of `after`, which does not depend on it, on `chip`.
PerfReport
analyzeProductThen(llvm::StringRef chip, const char *after, unsigned count,
                   const ModelParameters &parameters = ModelParameters()) {
  std::vector<const char *> lines = {
      "s_mov_b32 s0, 0",
      "LOOP:", "v_mfma_f32_32x32x8_f16 v[0:15], v[16:17], v[18:19], v[0:15]"};
  lines.insert(lines.end(), count, after);
  lines.insert(lines.end(), {"s_add_u32 s0, s0, 1", "s_cbranch_scc1 -> LOOP"});
  return analyzeOn(chip, kernel(lines, chip), 64, 1, iterations(100),
                   parameters);
}

// On gfx942 a transcendental or packed instruction waits for its own
// wave's product to finish; a plain VALU instruction issues beside it. On
// gfx950 the transcendentals issue beside it too. The wait shows as its own
// cycle source.
TEST(Loops, PackedAndTranscendentalInstructionsWaitForTheWavesProduct) {
  const char *exp = "v_exp_f32_e32 v20, v21";
  PerfReport plain =
      analyzeProductThen("gfx942", "v_fma_f32 v20, v21, v22, v23", 4);
  PerfReport exp942 = analyzeProductThen("gfx942", exp, 1);
  PerfReport exp950 = analyzeProductThen("gfx950", exp, 1);
  PerfReport packed = analyzeProductThen(
      "gfx942", "v_pk_fma_f32 v[20:21], v[22:23], v[24:25], v[26:27]", 4);
  for (const PerfReport *report : {&plain, &exp942, &exp950, &packed})
    ASSERT_EQ(report->loops.size(), 1u);
  double product = plain.loops[0].matrixCyclesPerIteration;
  // Beside the product (16 clocks of VALU work): the product's time.
  EXPECT_LE(plain.loops[0].singleWaveCycles, product + 8);
  EXPECT_LE(exp950.loops[0].singleWaveCycles, product + 8);
  // After it: the product's time, then their issue (a transcendental's
  // quarter-rate work overlaps the next iteration's product).
  EXPECT_GE(exp942.loops[0].singleWaveCycles, product + 8);
  EXPECT_GE(packed.loops[0].singleWaveCycles, product + 4 * 4);
  EXPECT_EQ(exp942.loops[0].matrixWaiters, 1u);
  EXPECT_EQ(exp950.loops[0].matrixWaiters, 0u);
  auto hasSource = [](const LoopReport &loop, llvm::StringRef category) {
    return llvm::any_of(loop.sources, [&](const CycleSource &source) {
      return source.category == category;
    });
  };
  EXPECT_TRUE(hasSource(exp942.loops[0], "matrix-coissue"));
  EXPECT_FALSE(hasSource(plain.loops[0], "matrix-coissue"));
}

// Both assumptions are parameters: without the hold, gfx942's
// transcendental issues beside the product; at one pass, four
// transcendentals after a product fit in its 32 clocks, at the default
// four passes they do not.
TEST(Loops, HoldAndTranscendentalRateAreParameters) {
  const char *exp = "v_exp_f32_e32 v20, v21";
  ModelParameters noHold;
  noHold.holdBehindOwnProducts = false;
  PerfReport held = analyzeProductThen("gfx942", exp, 1);
  PerfReport free = analyzeProductThen("gfx942", exp, 1, noHold);
  ModelParameters onePass;
  onePass.transcendentalPasses = 1;
  PerfReport quarter = analyzeProductThen("gfx950", exp, 4);
  PerfReport full = analyzeProductThen("gfx950", exp, 4, onePass);
  for (const PerfReport *report : {&held, &free, &quarter, &full})
    ASSERT_EQ(report->loops.size(), 1u);
  double product = held.loops[0].matrixCyclesPerIteration;
  EXPECT_GE(held.loops[0].singleWaveCycles, product + 8);
  EXPECT_LE(free.loops[0].singleWaveCycles, product + 8);
  EXPECT_GE(quarter.loops[0].singleWaveCycles, 4 * 16.0);
  EXPECT_LE(full.loops[0].singleWaveCycles, product + 8);
}
