//===- Model.h - Predicting and explaining a kernel's speed -----*- C++ -*-===//
//
// The performance model: from a kernel's machine code, its resources and its
// launch, it predicts the time on a chip and says where the cycles go. It is
// built on documented hardware facts (the chip table, the matrix-instruction
// catalogue) and a few stated assumptions (memory latencies, cache
// bandwidths; ModelParameters), never fitted to Tessel's own kernels.
// docs/performance-model.md describes it and its limits.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_PERF_MODEL_H
#define TESSEL_PERF_MODEL_H

#include "tessel/Perf/CacheTraffic.h"
#include "tessel/Perf/Disassembly.h"
#include "tessel/Perf/Parameters.h"
#include "tessel/Target/Chip.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <functional>
#include <vector>

namespace tessel {

struct KernelMetadata;

/// How the kernel is launched.
struct Launch {
  std::array<uint64_t, 3> grid = {1, 1, 1};  ///< workgroups
  std::array<uint64_t, 3> block = {0, 0, 0}; ///< lanes; 0: from metadata
  uint64_t dynamicLdsBytes = 0;
};

/// What the problem asks for, for "% of peak" and the memory floor.
struct ProblemWork {
  double flops = 0;       ///< useful FLOPs (0: unknown)
  double uniqueBytes = 0; ///< bytes that must cross HBM at least once
  /// The problem's own arrays once each (no workspaces): what "% of HBM
  /// bandwidth" of a whole problem counts; 0 for foreign code.
  double problemBytes = 0;
  /// Stage of a plan launched after another kernel it depends on: the
  /// launch gap (ModelParameters) it waits before starting.
  bool followsKernel = false;
  MatrixType type = MatrixType::BF16;
  bool typeGiven = false; ///< else taken from the kernel's matrix instructions
  /// For kernels whose access pattern is known (Tessel's GEMMs and
  /// attention): what the XCDs' L2 caches fetch, given the workgroups each
  /// CU holds at a time (CacheTraffic.h). Empty for other code.
  std::function<CacheTraffic(unsigned workgroupsPerCU)> cacheTraffic;
  /// Iterations per wave of each loop with matrix instructions, in code
  /// order, where the compiler knows them (Tessel's attention: the key loop
  /// over whole blocks, then the masked one over the causal diagonal and
  /// the tail). Empty, or not one per such loop: trip counts come from the
  /// FLOPs, every matrix loop assumed to run equally often.
  std::vector<double> loopIterations;
  /// Iterations of the loops without matrix instructions, in code order,
  /// where the compiler knows them: a split-KV attention kernel's merge of
  /// the splits' partial results. Empty, or not one per such loop: they
  /// are assumed to run once.
  std::vector<double> mergeLoopIterations;
  /// Workgroups whose loops run different numbers of iterations (attention
  /// with a causal or window mask: query blocks see different numbers of
  /// keys), in the order their ids are dispatched: runs of `count`
  /// consecutive workgroups with the same iterations per loop (as
  /// loopIterations), the whole sequence repeated `workgroupRunRepeats`
  /// times. Empty: every workgroup runs loopIterations.
  struct WorkgroupRun {
    std::vector<double> iterations;
    uint64_t count = 1;
  };
  std::vector<WorkgroupRun> workgroupRuns;
  uint64_t workgroupRunRepeats = 1;
  /// Tessel's matmuls: how often each wave enters its K loop on average (1,
  /// or the pieces of tiles a stream-K workgroup runs). A K loop unrolled by
  /// two is followed by a loop of one step for an odd step count, which
  /// then runs about once every other entry rather than as often as the
  /// main loop. 0: unknown.
  double kLoopEntries = 0;
};

/// One named share of a loop's (or kernel's) cycles.
struct CycleSource {
  std::string category; ///< "matrix", "wait-global", "valu", ...
  double cycles = 0;
  double fraction = 0;
  std::string explanation; ///< a sentence a performance engineer can act on
};

struct LoopReport {
  uint64_t beginAddress = 0, endAddress = 0;
  unsigned depth = 0;
  unsigned instructions = 0, matrixInstructions = 0, valuInstructions = 0,
           transcendentals = 0, ldsReads = 0, ldsWrites = 0, globalLoads = 0,
           globalStores = 0, barriers = 0, waits = 0;
  /// VALU instructions that wait for their wave's matrix instruction
  /// (Instruction::waitsForMatrix).
  unsigned matrixWaiters = 0;
  double matrixCyclesPerIteration = 0;                          ///< one wave
  uint64_t matrixFlopsPerIteration = 0;                         ///< one wave
  double ldsBytesPerIteration = 0, globalBytesPerIteration = 0; ///< one wave
  /// LDS bank conflicts of one wave's iteration: the LDS cycles they add,
  /// the LDS accesses whose addresses were derived (of those that address
  /// banks), and the worst access.
  double ldsConflictCyclesPerIteration = 0;
  unsigned ldsAccesses = 0, ldsAccessesDerived = 0;
  uint64_t worstConflictAddress = 0;
  double worstConflictWays = 1;
  std::string worstConflictMnemonic;
  /// One wave alone on its SIMD: what llvm-mca would model, plus memory
  /// latency.
  double singleWaveCycles = 0;
  /// The same without memory and barrier latency: only issue, pipes and
  /// bandwidth, which is what llvm-mca models.
  double singleWaveNoLatencyCycles = 0;
  double issueCycles = 0; ///< one wave's own issue, no waits
  /// With the waves that share a SIMD: cycles for each of them to run one
  /// iteration.
  double sharedCycles = 0;
  unsigned wavesPerSimd = 1;
  /// The waves of a workgroup on one SIMD run the loop a phase apart (a
  /// barrier only half of them wait at in front of it: ping-pong).
  bool staggered = false;
  /// A staggered loop: a wave's average clocks from leaving a barrier to
  /// arriving at the next, in its matrix phases and in the others (its
  /// softmax). One wave's matrix phase runs beside the other's softmax, so
  /// the longer of the two sets the pair's pace.
  double matrixPhaseClocks = 0, softmaxPhaseClocks = 0;
  double structuralEfficiency = 0; ///< matrix-pipe busy fraction
  std::string limit;               ///< what binds the loop
  uint64_t tripCount = 0;
  std::string tripCountSource; ///< "given", "from FLOPs", "assumed"
  /// A split-KV kernel's merge of the splits' partials
  /// (ProblemWork::mergeLoopIterations): run by the last split of each
  /// block to arrive, after every split has streamed its keys.
  bool merge = false;
  std::vector<CycleSource> sources; ///< ranked, largest first
};

struct PerfReport {
  std::string kernel, chip;
  double clockMHz = 0;
  Launch launch;
  ProblemWork work;
  // Resources and placement.
  KernelResourceUsage usage;
  Occupancy occupancy;
  unsigned wavesPerWorkgroup = 0;
  unsigned workgroupsPerCU = 0;
  std::string workgroupsPerCULimit;
  unsigned simdsPerCU = 4;
  unsigned simdsBusy = 0;        ///< SIMDs of a CU that hold any wave
  unsigned wavesPerBusySimd = 0; ///< waves sharing each busy SIMD
  uint64_t workgroups = 0;
  uint64_t rounds = 0;       ///< ceil(workgroups / resident workgroups)
  double gridEfficiency = 0; ///< workgroups / (rounds * resident slots)
  // Time.
  double computeSeconds = 0, hbmSeconds = 0, l2Seconds = 0;
  /// For problems whose access pattern is known (ProblemWork::cacheTraffic):
  /// what the XCDs' L2 caches fetch of the inputs given the grid's order
  /// over the XCDs, against the inputs' own bytes; 0 if unknown. The fill
  /// comes from the last-level cache (its floor: llcSeconds) or, on chips
  /// without one, from HBM (it raises hbmSeconds).
  double l2FillBytes = 0, operandBytes = 0;
  double llcSeconds = 0;
  /// A later stage of a plan: the gap before it starts (not part of
  /// predictedSeconds; a whole plan's time adds it).
  double launchGapSeconds = 0;
  /// A split-KV kernel's merge loops, one wave's time: a tail after the
  /// splits' compute and memory floors, which they cannot overlap (part of
  /// predictedSeconds).
  double mergeTailSeconds = 0;
  bool l2FillFromHbm = false; ///< the chip has no last-level cache
  unsigned xcds = 1;
  double predictedSeconds = 0;
  double tflops = 0, percentOfPeak = 0;
  double structuralEfficiency = 0; ///< whole kernel, clock-free
  std::string bindingLimit;
  std::vector<CycleSource> sources; ///< kernel-level, ranked
  std::vector<LoopReport> loops;
  std::vector<std::string> notes;
};

/// Predicts and explains `code` (resources from `metadata`) on `chip`.
llvm::Expected<PerfReport> analyzeKernel(const KernelCode &code,
                                         const KernelMetadata &metadata,
                                         const Chip &chip, const Launch &launch,
                                         const ProblemWork &work,
                                         const ModelParameters &parameters);

/// Reads the code object, disassembles `kernel` and analyzes it.
llvm::Expected<PerfReport>
analyzeCodeObject(llvm::ArrayRef<char> codeObject, llvm::StringRef kernel,
                  const Chip &chip, const Launch &launch,
                  const ProblemWork &work, const ModelParameters &parameters);

void printPerfReport(llvm::raw_ostream &os, const PerfReport &report);
llvm::json::Value perfReportToJSON(const PerfReport &report);

/// Draws `report` as SVG: the kernel on `chip`'s roofline (matrix peak of
/// its type, HBM and assumed L2 bandwidth) and a stacked bar of cycle
/// sources for the kernel and each loop.
void writePerfPlot(llvm::raw_ostream &os, const PerfReport &report,
                   const Chip &chip, const ModelParameters &parameters);

/// A natural loop of a kernel's control-flow graph: its instructions in
/// address order (first and last index in begin/end) and its nesting depth;
/// exposed for tests.
struct LoopRange {
  size_t begin = 0, end = 0;
  std::vector<size_t> instructions;
  unsigned depth = 0;
};
std::vector<LoopRange> findLoops(const KernelCode &code);

} // namespace tessel

#endif // TESSEL_PERF_MODEL_H
