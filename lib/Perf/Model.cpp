//===- Model.cpp - Predicting and explaining a kernel's speed -------------===//
//
// Three levels, each built on the one below:
//  1. One wave alone on its SIMD runs a loop body in order: each instruction
//     issues when the wave's issue slot, its pipe (matrix, VALU, LDS, vector
//     memory) and its s_waitcnt are ready. The body is run three times and
//     the last is measured, so loads issued one iteration ahead are waited
//     for as they are in the steady state. Every clock is charged to a cause.
//  2. The waves sharing a SIMD overlap: one wave's waits are covered by the
//     others' work until a shared pipe (the SIMD's matrix or VALU pipe, the
//     CU's LDS or vector-memory path) saturates.
//  3. The grid: which SIMDs hold waves at all, how many rounds of workgroups
//     the chip runs, and the memory floors (L2, last-level cache, HBM).
//
//===----------------------------------------------------------------------===//

#include "tessel/Perf/Model.h"
#include "ControlFlow.h"
#include "tessel/Perf/LdsConflicts.h"
#include "tessel/Target/KernelMetadata.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <deque>
#include <limits>
#include <map>
#include <numeric>
#include <queue>
#include <tuple>

using namespace tessel;
using llvm::StringRef;

//===----------------------------------------------------------------------===//
// Loops
//===----------------------------------------------------------------------===//

/// Dominator sets by the classic iterative data-flow (kernels have at most
/// a few hundred blocks).
static std::vector<llvm::BitVector>
computeDominators(const std::vector<BasicBlock> &blocks) {
  size_t n = blocks.size();
  std::vector<llvm::SmallVector<size_t, 2>> predecessors =
      getPredecessors(blocks);
  std::vector<llvm::BitVector> dominators(n, llvm::BitVector(n, true));
  dominators[0] = llvm::BitVector(n, false);
  dominators[0].set(0);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t b = 1; b < n; ++b) {
      llvm::BitVector next(n, predecessors[b].empty() ? false : true);
      for (size_t p : predecessors[b])
        next &= dominators[p];
      next.set(b);
      if (next != dominators[b]) {
        dominators[b] = std::move(next);
        changed = true;
      }
    }
  }
  return dominators;
}

std::vector<LoopRange> tessel::findLoops(const KernelCode &code) {
  if (code.instructions.empty())
    return {};
  std::vector<BasicBlock> blocks = buildBasicBlocks(code);
  std::vector<llvm::BitVector> dominators = computeDominators(blocks);
  std::vector<llvm::SmallVector<size_t, 2>> predecessors =
      getPredecessors(blocks);
  // A natural loop per header: the header and every block that reaches one
  // of its back edges (an edge to a block that dominates its source) without
  // passing through the header. Blocks laid out after the function's end and
  // jumping back to a join point are not loops: their target does not
  // dominate them.
  std::map<size_t, llvm::BitVector> bodies;
  // Where each loop's last back edge ends (one past its source block's last
  // instruction), and the back edges' sources.
  std::map<size_t, size_t> lastBackEdge;
  std::map<size_t, llvm::SmallVector<size_t, 2>> backEdgeSources;
  for (auto [source, block] : llvm::enumerate(blocks))
    for (size_t header : block.successors) {
      if (!dominators[source].test(header))
        continue;
      llvm::BitVector &body =
          bodies.try_emplace(header, llvm::BitVector(blocks.size()))
              .first->second;
      size_t &backEdgeEnd = lastBackEdge[header];
      backEdgeEnd = std::max(backEdgeEnd, block.end);
      backEdgeSources[header].push_back(source);
      body.set(header);
      llvm::SmallVector<size_t> worklist = {source};
      while (!worklist.empty()) {
        size_t b = worklist.pop_back_val();
        if (body.test(b))
          continue;
        body.set(b);
        llvm::append_range(worklist, predecessors[b]);
      }
    }
  std::vector<LoopRange> loops;
  for (auto &[header, body] : bodies) {
    LoopRange loop;
    loop.begin = blocks[header].begin;
    for (unsigned b : body.set_bits()) {
      loop.begin = std::min(loop.begin, blocks[b].begin);
      loop.end = std::max(loop.end, blocks[b].end - 1);
      for (size_t i = blocks[b].begin; i < blocks[b].end; ++i)
        loop.instructions.push_back(i);
    }
    loops.push_back(std::move(loop));
  }
  for (LoopRange &loop : loops)
    for (const LoopRange &other : loops)
      if (&other != &loop &&
          other.instructions.size() > loop.instructions.size() &&
          llvm::is_contained(other.instructions, loop.instructions.front()))
        ++loop.depth;
  // A block of an innermost loop laid out past its last back edge, on a
  // path the loop can skip (it dominates no back edge's source), is a
  // branch the compiler was told is rarely taken (LLVM's block placement
  // moves such a block out of the loop's line, and it jumps back in): it
  // does not run in the loop's steady state. Attention's lazy rescale is
  // one. (A block every iteration passes through stays, wherever it is
  // laid out; an outer loop's blocks past its back edge are its inner
  // loops' and run.)
  for (auto [loop, entry] : llvm::zip(loops, bodies)) {
    size_t header = entry.first;
    bool innermost = llvm::none_of(loops, [&](const LoopRange &other) {
      return other.depth > loop.depth &&
             llvm::is_contained(loop.instructions, other.instructions.front());
    });
    size_t backEdgeEnd = std::max(lastBackEdge[header], blocks[header].end);
    if (!innermost || loop.end < backEdgeEnd)
      continue;
    auto runsEveryIteration = [&](size_t block) {
      return llvm::any_of(backEdgeSources[header], [&](size_t source) {
        return dominators[source].test(block);
      });
    };
    loop.instructions.clear();
    for (unsigned b : entry.second.set_bits())
      if (blocks[b].begin < backEdgeEnd || runsEveryIteration(b))
        for (size_t i = blocks[b].begin; i < blocks[b].end; ++i)
          loop.instructions.push_back(i);
    loop.end = loop.instructions.back();
  }
  return loops;
}

//===----------------------------------------------------------------------===//
// One wave
//===----------------------------------------------------------------------===//

namespace {

/// The causes a wave's clocks are charged to.
enum class Cause {
  Matrix,
  Valu,
  /// VALU instructions held until their own wave's matrix instruction
  /// finishes (Instruction::waitsForMatrix).
  MatrixCoissue,
  Salu,
  LdsIssue,
  GlobalIssue,
  WaitGlobal,
  WaitLds,
  WaitScalar,
  Barrier,
  Nop,
  Count
};

StringRef causeName(Cause cause) {
  static const char *kNames[] = {"matrix",      "valu",      "matrix-coissue",
                                 "salu",        "lds-issue", "global-issue",
                                 "wait-global", "wait-lds",  "wait-scalar",
                                 "barrier",     "nop"};
  return kNames[static_cast<unsigned>(cause)];
}

/// An outstanding memory operation: when its data arrives, and how many
/// matrix instructions the wave had issued when it was sent.
struct InFlight {
  double completion;
  uint64_t matrixIssuedBefore;
  Cause waitCause;
};

/// The worst wait site of a run: where the wave stalled longest.
struct WaitSite {
  double stall = 0;
  uint64_t matrixBetween = 0; // MFMAs between the load and the wait
  uint64_t address = 0;
};

struct Timeline {
  double cycles = 0;
  std::array<double, static_cast<size_t>(Cause::Count)> byCause{};
  double matrixBusy = 0, valuBusy = 0, issue = 0;
  double ldsBytes = 0, globalBytes = 0;
  /// A wave's stretches between barriers (from a barrier's release to its
  /// arrival at the next), summed apart for those that issued a matrix
  /// instruction and those that did not, and counted: a ping-pong loop's
  /// matrix and softmax phases.
  double matrixPhaseClocks = 0, otherPhaseClocks = 0;
  unsigned matrixPhases = 0, otherPhases = 0;
  std::map<Cause, WaitSite> worstWait;
};

/// One SIMD running `waves` copies of a code sequence. Each wave issues in
/// order, at most one instruction per issue interval; the waves share the
/// SIMD's matrix and VALU pipes and its issue ports (one VALU/matrix, one
/// scalar, one LDS and one vector-memory instruction per issue cycle from
/// different waves), and their share of the CU's LDS and vector-memory
/// bandwidth. Among waves ready at the same time the one with the higher
/// s_setprio, then the older one, issues first. Waves of one workgroup on
/// this SIMD meet at s_barrier.
class SimdSimulator {
public:
  SimdSimulator(const Chip &chip, const ModelParameters &parameters,
                unsigned waveSize, unsigned waves, unsigned wavesPerBarrier,
                unsigned simdsSharingCU)
      : chip(chip), parameters(parameters), waveSize(waveSize),
        wavesPerBarrier(std::max(1u, wavesPerBarrier)),
        state(std::max(1u, waves)) {
    // A CDNA SIMD is 16 lanes wide and considers a wave for issue every 4
    // clocks; an RDNA SIMD is 32 wide and issues every clock.
    unsigned simdWidth = chip.isCDNA() ? 16 : 32;
    valuPass = std::max(1u, waveSize / simdWidth);
    issueInterval = chip.isCDNA() ? 4 : 1;
    double sharing = std::max(1u, simdsSharingCU);
    ldsBytesPerClock = double(chip.ldsBanks) * chip.ldsBankBytes / sharing;
    vmemBytesPerClock = parameters.l1BytesPerClock / sharing;
    // gfx9 counts stores in vmcnt; gfx10+ has a separate store counter.
    storesInVm = chip.isCDNA();
  }

  /// Holds wave `index` back by `clocks` before its first instruction.
  void delayStart(size_t index, double clocks) { state[index].now = clocks; }

  /// Starts wave `index` waiting at a barrier (one only its half of the
  /// workgroup waits at, in front of a ping-pong loop): it starts when the
  /// other waves of its group reach their first barrier, a phase behind.
  void startAtBarrier(size_t index) { state[index].atBarrier = true; }

  /// Runs `body` `iterations` times on every wave and measures the steady
  /// state: the timeline of the iterations after the first `warmup`, summed
  /// over the waves and divided by their count, with `cycles` the time the
  /// SIMD takes for one iteration of every wave (its period). The period is
  /// measured while no wave has finished: a wave that finishes early leaves
  /// the pipes to the others, which then run faster than the steady state.
  Timeline run(llvm::ArrayRef<Instruction> body, unsigned iterations,
               unsigned warmup) {
    Timeline measured;
    if (body.empty() || iterations <= warmup)
      return measured;
    std::vector<double> warmEnd(state.size(), 0);
    std::vector<double> completions;
    while (true) {
      Wave *next = nullptr;
      double nextTime = 0;
      for (Wave &wave : state) {
        if (wave.iteration == iterations || wave.atBarrier)
          continue;
        double time = readyTime(wave, body[wave.pc]);
        if (!next || time < nextTime ||
            (time == nextTime && wave.priority > next->priority)) {
          next = &wave;
          nextTime = time;
        }
      }
      if (!next)
        break;
      Wave &wave = *next;
      execute(wave, body[wave.pc], nextTime,
              wave.iteration >= warmup ? &measured : &scratch);
      if (++wave.pc == body.size()) {
        wave.pc = 0;
        if (++wave.iteration == warmup)
          warmEnd[&wave - state.data()] = wave.now;
        completions.push_back(wave.now);
      }
    }
    double period = steadyPeriod(warmEnd, std::move(completions), warmup,
                                 iterations - warmup);
    // Per iteration of one wave, in the SIMD's time: the waves' charges and
    // busy times are summed over the waves and the measured iterations.
    double scale = 1.0 / (iterations - warmup);
    for (double &cause : measured.byCause)
      cause *= scale;
    measured.matrixBusy *= scale;
    measured.valuBusy *= scale;
    measured.issue *= scale / state.size();
    measured.ldsBytes *= scale / state.size();
    measured.globalBytes *= scale / state.size();
    // The SIMD's matrix and VALU pipes serve every wave: an iteration of all
    // of them takes at least their summed busy time.
    measured.cycles =
        std::max({period, measured.matrixBusy, measured.valuBusy});
    return measured;
  }

private:
  /// The SIMD's time for one iteration of every wave: the rate at which the
  /// SIMD completes iterations while every wave is still running, after
  /// `warmup` iterations per wave have been completed on the SIMD (waves
  /// need not progress evenly: the oldest wave issues first). Falls back to
  /// the waves' average time per measured iteration when that window holds
  /// too few iterations.
  double steadyPeriod(llvm::ArrayRef<double> warmEnd,
                      std::vector<double> completions, unsigned warmup,
                      unsigned measured) const {
    double allRunning = std::numeric_limits<double>::infinity();
    for (const Wave &wave : state)
      allRunning = std::min(allRunning, wave.now);
    llvm::sort(completions);
    size_t done =
        llvm::upper_bound(completions, allRunning) - completions.begin();
    size_t first = std::min<size_t>(state.size() * warmup, done);
    // A whole number of rounds (one completion per wave each): a window cut
    // between two waves' nearly simultaneous completions would otherwise
    // count one of them without the time it took.
    size_t rounds = done > first ? (done - first) / state.size() : 0;
    if (first > 0 && rounds > 0) {
      double start = completions[first - 1];
      return (completions[first - 1 + rounds * state.size()] - start) / rounds;
    }
    double period = 0;
    for (auto [wave, start] : llvm::zip(state, warmEnd))
      period += (wave.now - start) / measured;
    return period / state.size();
  }

  struct Wave {
    double now = 0;
    std::deque<InFlight> vm, lgkm, vs;
    uint64_t matrixIssued = 0;
    /// When the wave's last matrix instruction finishes.
    double matrixDone = 0;
    /// When the wave left its last barrier, and whether it has issued a
    /// matrix instruction since.
    double phaseStart = 0;
    bool phaseHasMatrix = false;
    size_t pc = 0;
    unsigned iteration = 0;
    int priority = 0;
    bool atBarrier = false;
  };

  static void charge(Timeline *timeline, Cause cause, double clocks) {
    if (clocks > 0)
      timeline->byCause[static_cast<size_t>(cause)] += clocks;
  }

  /// When the oldest operation that must finish for at most `count` to stay
  /// outstanding finishes.
  static double completionFor(const std::deque<InFlight> &queue, unsigned count,
                              const InFlight **blocking) {
    double ready = 0;
    for (size_t i = 0; i + count < queue.size(); ++i)
      if (queue[i].completion > ready) {
        ready = queue[i].completion;
        *blocking = &queue[i];
      }
    return ready;
  }

  double waitReady(const Wave &wave, const WaitCounts &wait,
                   const InFlight **blocking) const {
    double ready = wave.now;
    if (wait.vm)
      ready = std::max(ready, completionFor(wave.vm, *wait.vm, blocking));
    if (wait.lgkm)
      ready = std::max(ready, completionFor(wave.lgkm, *wait.lgkm, blocking));
    if (wait.vs)
      ready = std::max(ready, completionFor(wave.vs, *wait.vs, blocking));
    return ready;
  }

  /// The issue port an instruction needs, and its free time.
  double portFree(const Instruction &instr) const {
    switch (instr.kind) {
    case InstrKind::Matrix:
      return std::max(valuPortFree, matrixFree);
    case InstrKind::Valu:
    case InstrKind::Transcendental:
      return std::max(valuPortFree, valuFree);
    case InstrKind::LdsRead:
    case InstrKind::LdsWrite:
      return ldsPortFree;
    case InstrKind::GlobalLoad:
    case InstrKind::GlobalStore:
      return vmemPortFree;
    case InstrKind::Wait:
    case InstrKind::Barrier:
    case InstrKind::Nop:
    case InstrKind::SetPriority:
      return 0; // handled in the instruction buffer, no issue port
    default:
      return saluPortFree;
    }
  }

  double readyTime(const Wave &wave, const Instruction &instr) const {
    if (instr.kind == InstrKind::Wait) {
      const InFlight *blocking = nullptr;
      return waitReady(wave, instr.wait, &blocking);
    }
    double ready = std::max(wave.now, portFree(instr));
    if (heldBehindProduct(instr))
      ready = std::max(ready, wave.matrixDone);
    return ready;
  }

  bool heldBehindProduct(const Instruction &instr) const {
    return instr.waitsForMatrix && parameters.holdBehindOwnProducts;
  }

  static Cause pipeCause(const Instruction &instr) {
    switch (instr.kind) {
    case InstrKind::Matrix:
      return Cause::Matrix;
    case InstrKind::Valu:
    case InstrKind::Transcendental:
      return Cause::Valu;
    case InstrKind::LdsRead:
    case InstrKind::LdsWrite:
      return Cause::LdsIssue;
    case InstrKind::GlobalLoad:
    case InstrKind::GlobalStore:
      return Cause::GlobalIssue;
    default:
      return Cause::Salu;
    }
  }

  void recordWait(Wave &wave, const Instruction &instr, double ready,
                  Timeline *timeline) {
    const InFlight *blocking = nullptr;
    waitReady(wave, instr.wait, &blocking);
    double stall = ready - wave.now;
    if (stall > 0 && blocking) {
      charge(timeline, blocking->waitCause, stall);
      WaitSite &site = timeline->worstWait[blocking->waitCause];
      if (stall > site.stall)
        site = {stall, wave.matrixIssued - blocking->matrixIssuedBefore,
                instr.address};
    }
    auto retire = [&](std::deque<InFlight> &queue,
                      std::optional<unsigned> count) {
      if (!count)
        return;
      while (queue.size() > *count)
        queue.pop_front();
    };
    retire(wave.vm, instr.wait.vm);
    retire(wave.lgkm, instr.wait.lgkm);
    retire(wave.vs, instr.wait.vs);
    wave.now = ready;
  }

  /// Waves of one workgroup on this SIMD: consecutive groups of
  /// `wavesPerBarrier`.
  llvm::MutableArrayRef<Wave> barrierGroup(const Wave &wave) {
    size_t index = &wave - state.data();
    size_t first = index / wavesPerBarrier * wavesPerBarrier;
    return llvm::MutableArrayRef(state).slice(
        first, std::min<size_t>(wavesPerBarrier, state.size() - first));
  }

  void arriveAtBarrier(Wave &wave, Timeline *timeline) {
    wave.atBarrier = true;
    double phase = wave.now - wave.phaseStart;
    if (wave.phaseHasMatrix) {
      timeline->matrixPhaseClocks += phase;
      ++timeline->matrixPhases;
    } else {
      timeline->otherPhaseClocks += phase;
      ++timeline->otherPhases;
    }
    llvm::MutableArrayRef<Wave> group = barrierGroup(wave);
    if (llvm::any_of(group, [](const Wave &w) { return !w.atBarrier; }))
      return;
    double release = 0;
    for (const Wave &w : group)
      release = std::max(release, w.now);
    release += parameters.barrierLatency;
    for (Wave &w : group) {
      // The waves that arrived earlier were blocked at the barrier.
      charge(timeline, Cause::Barrier, release - w.now);
      w.now = release;
      w.atBarrier = false;
      w.phaseStart = release;
      w.phaseHasMatrix = false;
    }
  }

  void execute(Wave &wave, const Instruction &instr, double at,
               Timeline *timeline) {
    double lanes = waveSize;
    // Stalls waiting for a port or pipe are charged to what holds it; an
    // instruction that waits for its wave's product, to that.
    if (instr.kind != InstrKind::Wait) {
      double held = heldBehindProduct(instr)
                        ? std::max(0.0, std::min(at, wave.matrixDone) -
                                            std::max(wave.now, portFree(instr)))
                        : 0.0;
      charge(timeline, Cause::MatrixCoissue, held);
      charge(timeline, pipeCause(instr), at - wave.now - held);
    }
    switch (instr.kind) {
    case InstrKind::Matrix:
      matrixFree = at + instr.matrixCycles;
      wave.matrixDone = matrixFree;
      wave.phaseHasMatrix = true;
      valuPortFree = at + issueInterval;
      // Zeroing an accumulator occupies the pipe but is none of the work.
      if (!instr.zeroesAccumulator)
        timeline->matrixBusy += instr.matrixCycles;
      ++wave.matrixIssued;
      break;
    case InstrKind::Valu:
    case InstrKind::Transcendental: {
      // Transcendentals run at a quarter of the VALU rate (an assumption:
      // ModelParameters::transcendentalPasses).
      double busy = valuPass * (instr.kind == InstrKind::Transcendental
                                    ? parameters.transcendentalPasses
                                    : 1);
      valuFree = at + busy;
      valuPortFree = at + issueInterval;
      timeline->valuBusy += busy;
      break;
    }
    case InstrKind::LdsRead:
    case InstrKind::LdsWrite: {
      double bytes = instr.bytesPerLane * lanes;
      // A bank conflict costs the LDS a cycle of all its banks.
      double conflictBytes = instr.ldsConflictCycles.value_or(0) *
                             chip.ldsBanks * chip.ldsBankBytes;
      ldsFree =
          std::max(ldsFree, at) + (bytes + conflictBytes) / ldsBytesPerClock;
      ldsPortFree = at + issueInterval;
      wave.lgkm.push_back(
          {ldsFree + parameters.ldsLatency, wave.matrixIssued, Cause::WaitLds});
      timeline->ldsBytes += bytes;
      break;
    }
    case InstrKind::GlobalLoad:
    case InstrKind::GlobalStore: {
      double bytes = instr.bytesPerLane * lanes;
      vmemFree = std::max(vmemFree, at) + bytes / vmemBytesPerClock;
      vmemPortFree = at + issueInterval;
      InFlight op{vmemFree + parameters.globalLoadLatency, wave.matrixIssued,
                  Cause::WaitGlobal};
      if (instr.kind == InstrKind::GlobalLoad || storesInVm)
        wave.vm.push_back(op);
      else
        wave.vs.push_back(op);
      timeline->globalBytes += bytes;
      break;
    }
    case InstrKind::ScalarLoad:
      saluPortFree = at + issueInterval;
      wave.lgkm.push_back({at + parameters.scalarLoadLatency, wave.matrixIssued,
                           Cause::WaitScalar});
      break;
    case InstrKind::Wait:
      recordWait(wave, instr, at, timeline);
      return;
    case InstrKind::Barrier:
      wave.now = at;
      arriveAtBarrier(wave, timeline);
      return;
    case InstrKind::Nop:
      charge(timeline, Cause::Nop, instr.nopCycles);
      wave.now = at + instr.nopCycles;
      return;
    case InstrKind::SetPriority: {
      unsigned level = 0;
      StringRef(instr.text)
          .drop_front(instr.mnemonic.size())
          .trim()
          .getAsInteger(0, level);
      wave.priority = int(level);
      wave.now = at;
      return;
    }
    default:
      saluPortFree = at + issueInterval;
      break;
    }
    charge(timeline, pipeCause(instr), issueInterval);
    timeline->issue += issueInterval;
    wave.now = at + issueInterval;
  }

  const Chip &chip;
  const ModelParameters &parameters;
  unsigned waveSize;
  unsigned wavesPerBarrier;
  unsigned valuPass = 4, issueInterval = 4;
  double ldsBytesPerClock = 128, vmemBytesPerClock = 64;
  bool storesInVm = true;
  std::vector<Wave> state;
  double matrixFree = 0, valuFree = 0, ldsFree = 0, vmemFree = 0;
  double valuPortFree = 0, saluPortFree = 0, ldsPortFree = 0, vmemPortFree = 0;
  Timeline scratch;
};

} // namespace

//===----------------------------------------------------------------------===//
// Loops with the waves that share a SIMD
//===----------------------------------------------------------------------===//

/// The loop's LDS bank conflicts from its annotated accesses.
static void summarizeLdsConflicts(LoopReport &loop,
                                  llvm::ArrayRef<Instruction> body) {
  for (const Instruction &instr : body) {
    if (!instr.ldsBankAccess)
      continue;
    ++loop.ldsAccesses;
    if (!instr.ldsConflictCycles)
      continue;
    ++loop.ldsAccessesDerived;
    loop.ldsConflictCyclesPerIteration += *instr.ldsConflictCycles;
    double ways = (instr.ldsPhases + *instr.ldsConflictCycles) /
                  std::max(1u, instr.ldsPhases);
    if (ways > loop.worstConflictWays) {
      loop.worstConflictWays = ways;
      loop.worstConflictAddress = instr.address;
      loop.worstConflictMnemonic = instr.mnemonic;
    }
  }
}

/// The waves sharing a SIMD in their steady state. Started together at the
/// top of the loop, two waves run in lockstep for their first iterations
/// and drift into the phase they keep for the rest of the loop over the
/// next 10 to 40 (a gfx942 GEMM loop 89 % busy in its first 7 iterations
/// after 3 of warm-up and 98 % from the 40th on, an attention loop 79 %
/// and 71 %): 60 iterations are run and the last 40 measured. Waves of
/// different workgroups meet at no barrier and the hardware fixes no phase
/// between them, so the steady states from kStartPhases starts are averaged,
/// wave i held back by (i * p / kStartPhases mod 1) of a lone wave's iteration
/// in start p (their clocks, busy times and causes; the worst waits come
/// from the first): where the loop has more than one steady phase, each
/// counts by how many starts end in it. Waves of one workgroup meet at its
/// barriers, which undo the offsets.
///
/// A staggered loop (isStaggeredLoop) starts the upper half of each group
/// of waves that meet at barriers waiting at one: the halves then stay a
/// phase apart, whatever the start.
static Timeline runWithStartPhases(llvm::ArrayRef<Instruction> body,
                                   const Chip &chip,
                                   const ModelParameters &parameters,
                                   unsigned waveSize, unsigned waves,
                                   unsigned wavesPerBarrier, unsigned simdsBusy,
                                   double loneIteration, bool staggered) {
  constexpr unsigned kStartPhases = 4;
  constexpr unsigned kIterations = 60, kWarmup = 20;
  Timeline average;
  unsigned starts = waves > 1 ? kStartPhases : 1;
  for (unsigned p = 0; p < starts; ++p) {
    SimdSimulator simulator(chip, parameters, waveSize, waves, wavesPerBarrier,
                            simdsBusy);
    for (unsigned i = 1; i < waves; ++i) {
      unsigned phase = (i * p) % kStartPhases;
      simulator.delayStart(i, loneIteration * phase / kStartPhases);
      if (staggered && wavesPerBarrier > 1 &&
          i % wavesPerBarrier >= wavesPerBarrier / 2)
        simulator.startAtBarrier(i);
    }
    Timeline run = simulator.run(body, kIterations, kWarmup);
    if (p == 0)
      average.worstWait = run.worstWait;
    double weight = 1.0 / starts;
    average.cycles += weight * run.cycles;
    for (auto [sum, cause] : llvm::zip(average.byCause, run.byCause))
      sum += weight * cause;
    average.matrixBusy += weight * run.matrixBusy;
    average.valuBusy += weight * run.valuBusy;
    average.issue += weight * run.issue;
    average.ldsBytes += weight * run.ldsBytes;
    average.globalBytes += weight * run.globalBytes;
    average.matrixPhaseClocks += run.matrixPhaseClocks;
    average.otherPhaseClocks += run.otherPhaseClocks;
    average.matrixPhases += run.matrixPhases;
    average.otherPhases += run.otherPhases;
  }
  return average;
}

static void countInstructions(LoopReport &loop,
                              llvm::ArrayRef<Instruction> body) {
  loop.instructions = body.size();
  summarizeLdsConflicts(loop, body);
  for (const Instruction &instr : body) {
    loop.matrixWaiters += instr.waitsForMatrix;
    switch (instr.kind) {
    case InstrKind::Matrix:
      ++loop.matrixInstructions;
      loop.matrixFlopsPerIteration += instr.matrixFlops;
      break;
    case InstrKind::Valu:
      ++loop.valuInstructions;
      break;
    case InstrKind::Transcendental:
      ++loop.valuInstructions;
      ++loop.transcendentals;
      break;
    case InstrKind::LdsRead:
      ++loop.ldsReads;
      break;
    case InstrKind::LdsWrite:
      ++loop.ldsWrites;
      break;
    case InstrKind::GlobalLoad:
      ++loop.globalLoads;
      break;
    case InstrKind::GlobalStore:
      ++loop.globalStores;
      break;
    case InstrKind::Barrier:
      ++loop.barriers;
      break;
    case InstrKind::Wait:
      ++loop.waits;
      break;
    default:
      break;
    }
  }
}

static std::string explainCause(Cause cause, const Timeline &single,
                                const LoopReport &loop,
                                const ModelParameters &parameters) {
  auto site = single.worstWait.find(cause);
  std::string where;
  if (site != single.worstWait.end() && loop.matrixInstructions == 0)
    where = llvm::formatv(" (worst at +{0:x})", site->second.address).str();
  else if (site != single.worstWait.end())
    where = llvm::formatv(" (worst at +{0:x}: the data was requested {1} "
                          "matrix instruction{2} before the wait)",
                          site->second.address, site->second.matrixBetween,
                          site->second.matrixBetween == 1 ? "" : "s")
                .str();
  switch (cause) {
  case Cause::Matrix:
    return llvm::formatv("matrix pipe: {0} matrix instructions, {1} busy "
                         "clocks per wave",
                         loop.matrixInstructions, loop.matrixCyclesPerIteration)
        .str();
  case Cause::Valu: {
    std::string rate = parameters.transcendentalPasses == 4
                           ? std::string("quarter rate")
                           : llvm::formatv("{0} pass(es) each",
                                           parameters.transcendentalPasses)
                                 .str();
    return llvm::formatv("VALU issue: {0} vector instructions ({1} "
                         "transcendental at {2}) per wave",
                         loop.valuInstructions, loop.transcendentals, rate)
        .str();
  }
  case Cause::MatrixCoissue:
    return llvm::formatv("{0} vector instructions per wave that do not "
                         "issue beside their own wave's matrix instruction "
                         "(packed math, dot products, 8-bit pair "
                         "conversions; gfx942's transcendentals) wait for it "
                         "to finish",
                         loop.matrixWaiters)
        .str();
  case Cause::Salu:
    return "scalar, branch and wait instructions taking issue slots";
  case Cause::LdsIssue:
    return llvm::formatv("LDS instructions: {0} reads, {1} writes per wave",
                         loop.ldsReads, loop.ldsWrites)
        .str();
  case Cause::GlobalIssue:
    return llvm::formatv("vector memory instructions: {0} loads, {1} stores "
                         "per wave",
                         loop.globalLoads, loop.globalStores)
        .str();
  case Cause::WaitGlobal:
    return llvm::formatv("waits on global memory (s_waitcnt vmcnt) that the "
                         "{0} wave(s) per SIMD do not cover; assumed latency "
                         "{1} clocks{2}",
                         loop.wavesPerSimd, parameters.globalLoadLatency, where)
        .str();
  case Cause::WaitLds: {
    std::string conflicts;
    if (loop.ldsConflictCyclesPerIteration > 0)
      conflicts =
          llvm::formatv("; bank conflicts add {0:F0} LDS cycles per "
                        "wave and iteration ({1} at +{2:x} is "
                        "{3:F1}-way)",
                        loop.ldsConflictCyclesPerIteration,
                        loop.worstConflictMnemonic, loop.worstConflictAddress,
                        loop.worstConflictWays)
              .str();
    return llvm::formatv("waits on LDS (s_waitcnt lgkmcnt){0}{1}", where,
                         conflicts)
        .str();
  }
  case Cause::WaitScalar:
    return llvm::formatv("waits on scalar loads{0}", where).str();
  case Cause::Barrier:
    return llvm::formatv("{0} s_barrier per iteration: the workgroup's waves "
                         "synchronise and cannot drift apart to hide latency",
                         loop.barriers)
        .str();
  case Cause::Nop:
    return "s_nop / s_sleep padding";
  case Cause::Count:
    break;
  }
  return "";
}

static void rankSources(std::vector<CycleSource> &sources, double total) {
  for (CycleSource &source : sources)
    source.fraction = total > 0 ? source.cycles / total : 0;
  llvm::erase_if(sources, [](const CycleSource &source) {
    return source.fraction < 0.005;
  });
  llvm::stable_sort(sources, [](const CycleSource &a, const CycleSource &b) {
    return a.cycles > b.cycles;
  });
}

/// Whether `block` is a barrier only some waves wait at: nothing but the
/// barrier and its waits, skipped by a conditional branch right before it
/// (`tessel.phase_barrier half 0|1`).
static bool isSkippableBarrierBlock(const KernelCode &code,
                                    const std::vector<BasicBlock> &blocks,
                                    size_t block) {
  if (block == 0)
    return false;
  bool hasBarrier = false;
  for (size_t i = blocks[block].begin; i < blocks[block].end; ++i) {
    InstrKind kind = code.instructions[i].kind;
    hasBarrier |= kind == InstrKind::Barrier;
    if (kind != InstrKind::Barrier && kind != InstrKind::Wait &&
        kind != InstrKind::Nop)
      return false;
  }
  const BasicBlock &guard = blocks[block - 1];
  const Instruction &branch = code.instructions[guard.end - 1];
  return hasBarrier && branch.kind == InstrKind::Branch &&
         branch.isConditional && guard.end == blocks[block].begin &&
         llvm::is_contained(guard.successors, block + 1);
}

/// Whether the waves enter `range` with the upper half of each group a
/// barrier behind the lower: an odd number of barriers only some waves
/// wait at lie in front of it. A ping-pong loop's upper half waits at one
/// in front of the loop (`tessel.phase_barrier half 1`), its lower half at
/// one after it (`half 0`), which brings the halves together again for
/// what follows.
static bool isStaggeredLoop(const KernelCode &code,
                            const std::vector<BasicBlock> &blocks,
                            const LoopRange &range) {
  unsigned skippable = 0;
  for (size_t block = 0; block < blocks.size(); ++block)
    if (blocks[block].end <= range.begin &&
        isSkippableBarrierBlock(code, blocks, block))
      ++skippable;
  return skippable % 2 == 1;
}

/// Level 1 and 2 for one loop.
static LoopReport analyzeLoop(const KernelCode &code, const LoopRange &range,
                              const Chip &chip,
                              const ModelParameters &parameters,
                              unsigned waveSize, unsigned wavesPerSimd,
                              unsigned wavesPerBarrier, unsigned simdsBusy,
                              bool staggered) {
  std::vector<Instruction> body;
  for (size_t index : range.instructions)
    body.push_back(code.instructions[index]);
  LoopReport loop;
  loop.beginAddress = body.front().address;
  loop.endAddress = body.back().address;
  loop.depth = range.depth;
  loop.wavesPerSimd = wavesPerSimd;
  loop.staggered = staggered && wavesPerBarrier > 1;
  countInstructions(loop, body);

  // One wave alone (what llvm-mca sees, plus memory latency), then the waves
  // that share the SIMD. Earlier iterations fill the pipeline: loads issued
  // one iteration ahead are in flight when the measured one waits.
  Timeline single = SimdSimulator(chip, parameters, waveSize, 1, 1, simdsBusy)
                        .run(body, 5, 2);
  loop.singleWaveCycles = single.cycles;
  ModelParameters noLatency = parameters;
  noLatency.globalLoadLatency = noLatency.ldsLatency =
      noLatency.scalarLoadLatency = noLatency.barrierLatency = 0;
  loop.singleWaveNoLatencyCycles =
      SimdSimulator(chip, noLatency, waveSize, 1, 1, simdsBusy)
          .run(body, 5, 2)
          .cycles;
  loop.issueCycles = single.issue;
  loop.matrixCyclesPerIteration = single.matrixBusy;
  loop.ldsBytesPerIteration = single.ldsBytes;
  loop.globalBytesPerIteration = single.globalBytes;
  Timeline shared = runWithStartPhases(body, chip, parameters, waveSize,
                                       wavesPerSimd, wavesPerBarrier, simdsBusy,
                                       single.cycles, loop.staggered);
  loop.sharedCycles = std::max(shared.cycles, 1.0);
  loop.structuralEfficiency =
      std::min(1.0, shared.matrixBusy / loop.sharedCycles);
  if (loop.staggered && shared.matrixPhases && shared.otherPhases) {
    loop.matrixPhaseClocks = shared.matrixPhaseClocks / shared.matrixPhases;
    loop.softmaxPhaseClocks = shared.otherPhaseClocks / shared.otherPhases;
  }

  // The matrix pipe's busy time, then the rest of the SIMD's clocks in
  // proportion to what the waves were held up by.
  std::vector<CycleSource> sources;
  if (shared.matrixBusy > 0)
    sources.push_back({"matrix", shared.matrixBusy, 0,
                       explainCause(Cause::Matrix, single, loop, parameters)});
  double rest = std::max(0.0, loop.sharedCycles - shared.matrixBusy);
  double weights = 0;
  for (unsigned c = 0; c < unsigned(Cause::Count); ++c)
    if (Cause(c) != Cause::Matrix)
      weights += shared.byCause[c];
  Cause largest = Cause::Count;
  for (unsigned c = 0; c < unsigned(Cause::Count) && weights > 0; ++c) {
    if (Cause(c) == Cause::Matrix || shared.byCause[c] <= 0)
      continue;
    if (largest == Cause::Count ||
        shared.byCause[c] > shared.byCause[unsigned(largest)])
      largest = Cause(c);
    sources.push_back({causeName(Cause(c)).str(),
                       rest * shared.byCause[c] / weights, 0,
                       explainCause(Cause(c), shared, loop, parameters)});
  }
  loop.limit = loop.structuralEfficiency >= 0.9 || largest == Cause::Count
                   ? "matrix pipe"
                   : causeName(largest).str();
  rankSources(sources, loop.sharedCycles);
  loop.sources = std::move(sources);
  return loop;
}

//===----------------------------------------------------------------------===//
// The grid
//===----------------------------------------------------------------------===//

static MatrixType dominantMatrixType(const KernelCode &code) {
  std::map<MatrixType, uint64_t> flops;
  for (const Instruction &instr : code.instructions) {
    if (instr.kind != InstrKind::Matrix)
      continue;
    MatrixType type = getMatrixType(instr.mnemonic).value_or(MatrixType::F32);
    flops[type] += instr.matrixFlops;
  }
  MatrixType best = MatrixType::BF16;
  uint64_t most = 0;
  for (auto [type, amount] : flops)
    if (amount > most) {
      best = type;
      most = amount;
    }
  return best;
}

/// Marks the LDS accesses of `code` with their bank conflicts for a
/// workgroup of `block` lanes.
static void annotateLdsConflicts(KernelCode &code, const Chip &chip,
                                 std::array<uint64_t, 3> block,
                                 unsigned waveSize) {
  for (const LdsConflict &conflict :
       analyzeLdsConflicts(code, chip, block, waveSize)) {
    Instruction &instr = code.instructions[conflict.instruction];
    instr.ldsBankAccess = true;
    if (conflict.derived) {
      instr.ldsConflictCycles = conflict.extraCycles;
      instr.ldsPhases = conflict.phases;
    }
  }
}

/// The XCDs' L2 fill of a kernel whose access pattern is known: a floor at
/// the last-level cache's bandwidth, or HBM traffic on chips without one
/// (then `hbmBytes`, the problem's unique bytes, grows by the re-fetches).
static void addCacheFill(PerfReport &report, const Chip &chip,
                         const CacheTraffic &traffic, double &hbmBytes) {
  report.l2FillBytes = traffic.l2FillBytes;
  report.operandBytes = traffic.operandBytes;
  report.xcds = traffic.xcds;
  if (traffic.l2FillBytes <= 0)
    return;
  if (chip.lastLevelCacheBytes == 0) {
    report.l2FillFromHbm = true;
    hbmBytes = std::max(hbmBytes,
                        hbmBytes - traffic.operandBytes + traffic.l2FillBytes);
    return;
  }
  if (chip.lastLevelCacheBandwidthTBs <= 0) {
    report.notes.push_back(
        llvm::formatv("no last-level-cache bandwidth known for {0}: the L2 "
                      "fill sets no floor",
                      chip.name)
            .str());
    return;
  }
  report.llcSeconds =
      traffic.l2FillBytes / (chip.lastLevelCacheBandwidthTBs * 1e12);
  if (traffic.operandBytes > double(chip.lastLevelCacheBytes))
    report.notes.push_back(
        llvm::formatv("the inputs ({0:F0} MB) exceed the {1} MiB last-level "
                      "cache: the HBM floor counts them once, an optimistic "
                      "bound",
                      traffic.operandBytes / 1e6,
                      chip.lastLevelCacheBytes >> 20)
            .str());
}

namespace {
/// A grid of workgroups whose work differs, as the hardware runs it.
struct DispatchedGrid {
  double makespan = 0;   ///< clocks from the first start to the last end
  double efficiency = 0; ///< the slots' busy share of slots x makespan
  double fewestIterations = 0, mostIterations = 0; ///< per workgroup
};
} // namespace

/// A loop's clocks per iteration for one wave when `resident` of the
/// `perCU` workgroups a CU holds at full occupancy are running, each with
/// one wave on every SIMD: the SIMD retires no more iterations than at full
/// occupancy (the shared clocks at `perCU` waves per SIMD), and a wave runs
/// no faster than alone on its SIMD.
static double loopCyclesWithResidents(const LoopReport &loop, unsigned resident,
                                      unsigned perCU) {
  if (resident >= perCU)
    return loop.sharedCycles;
  return std::min(
      loop.sharedCycles,
      std::max(loop.singleWaveCycles, loop.sharedCycles * resident / perCU));
}

/// The merge loops' trip counts (ProblemWork::mergeLoopIterations) for
/// the `inCode` loops without matrix instructions the code has: the code
/// generator unrolls short loops whole, so where it has fewer, the loops
/// of the fewest iterations are the ones missing (their bodies counted
/// once, as code outside the loops). Empty if the code has more.
static std::vector<double> mergeLoopsInCode(std::vector<double> merges,
                                            size_t inCode) {
  if (merges.size() < inCode || inCode == 0)
    return {};
  while (merges.size() > inCode)
    merges.erase(llvm::min_element(merges));
  return merges;
}

/// `work` with the tile program's loops that the code can lack left out,
/// where the code has `matrixLoops` matrix loops and the tile program
/// more: a loop of a static trip count of 0 or 1 on every workgroup (the
/// remainder loop of a key loop unrolled by its LDS slots) is folded away
/// or inlined by the compiler. The code of an inlined one is counted once
/// as code outside the loops.
static ProblemWork withLoopsInCode(const ProblemWork &work,
                                   size_t matrixLoops) {
  if (work.loopIterations.size() <= matrixLoops)
    return work;
  auto foldable = [&](size_t index) {
    double iterations = work.loopIterations[index];
    return (iterations == 0 || iterations == 1) &&
           llvm::all_of(work.workgroupRuns,
                        [&](const ProblemWork::WorkgroupRun &run) {
                          return index < run.iterations.size() &&
                                 run.iterations[index] == iterations;
                        });
  };
  llvm::SmallVector<size_t> kept;
  for (size_t index = 0; index < work.loopIterations.size(); ++index)
    if (!foldable(index))
      kept.push_back(index);
  if (kept.size() != matrixLoops)
    return work;
  auto keep = [&](const std::vector<double> &iterations) {
    std::vector<double> result;
    for (size_t index : kept)
      result.push_back(iterations[index]);
    return result;
  };
  ProblemWork result = work;
  result.loopIterations = keep(work.loopIterations);
  for (ProblemWork::WorkgroupRun &run : result.workgroupRuns)
    if (run.iterations.size() == work.loopIterations.size())
      run.iterations = keep(run.iterations);
  return result;
}

/// The grid's time when its workgroups run different numbers of loop
/// iterations (ProblemWork::workgroupRuns): the dispatcher starts workgroup
/// i as soon as a slot frees, in id order, so each goes to the CU whose
/// workgroup ends first (list scheduling); the first `cus` x `perCU` go
/// round-robin over the CUs. A workgroup's clocks are a round's with its
/// own iterations for the matrix loops. Where each workgroup puts one wave
/// on every SIMD, the workgroups of a CU share its SIMDs: with fewer than
/// `perCU` of them left (the grid's tail), each runs its loops at the rate
/// of that many waves per SIMD (loopCyclesWithResidents), so a long
/// workgroup left alone at the end runs faster; otherwise every slot keeps
/// the steady state's shared rate. The XCDs form one pool. None where the
/// runs do not describe the grid, or the grid is too large to walk (its
/// many rounds then average out).
static std::optional<DispatchedGrid>
dispatchUnequalWorkgroups(const PerfReport &report, const ProblemWork &work,
                          unsigned cus, unsigned perCU, double roundCycles) {
  constexpr uint64_t kMaxWalkedWorkgroups = uint64_t(1) << 20;
  uint64_t slots = uint64_t(cus) * perCU;
  uint64_t perRepeat = 0;
  for (const ProblemWork::WorkgroupRun &run : work.workgroupRuns)
    perRepeat += run.count;
  if (work.workgroupRuns.empty() || slots == 0 ||
      perRepeat * work.workgroupRunRepeats != report.workgroups ||
      report.workgroups > kMaxWalkedWorkgroups)
    return std::nullopt;
  std::vector<const LoopReport *> matrixLoops;
  for (const LoopReport &loop : report.loops)
    if (loop.matrixFlopsPerIteration > 0)
      matrixLoops.push_back(&loop);
  bool sharesSimds = llvm::all_of(matrixLoops, [&](const LoopReport *loop) {
    return loop->wavesPerSimd == perCU && loop->singleWaveCycles > 0;
  });
  unsigned rates = sharesSimds ? perCU : 1;
  double averageMatrixLoopCycles = 0;
  for (const LoopReport *loop : matrixLoops)
    averageMatrixLoopCycles += loop->tripCount * loop->sharedCycles;
  DispatchedGrid grid;
  grid.fewestIterations = std::numeric_limits<double>::infinity();
  // runCycles[run][r - 1]: the run's clocks with r workgroups on its CU
  // (only r = perCU, the last entry, without SIMD sharing).
  std::vector<std::vector<double>> runCycles;
  for (const ProblemWork::WorkgroupRun &run : work.workgroupRuns) {
    if (run.iterations.size() != matrixLoops.size())
      return std::nullopt;
    std::vector<double> byResidents(rates,
                                    roundCycles - averageMatrixLoopCycles);
    double iterations = 0;
    for (auto [loop, count] : llvm::zip(matrixLoops, run.iterations)) {
      for (unsigned r = 0; r < rates; ++r)
        byResidents[r] += count * loopCyclesWithResidents(
                                      *loop, perCU - rates + r + 1, perCU);
      iterations += count;
    }
    runCycles.push_back(std::move(byResidents));
    grid.fewestIterations = std::min(grid.fewestIterations, iterations);
    grid.mostIterations = std::max(grid.mostIterations, iterations);
  }
  // Each CU's running workgroups as (run, fraction of its work left); a
  // CU's rates change only when one of its own workgroups ends, so each CU
  // is advanced at its own events (earliest first, stale entries skipped).
  struct Cu {
    double updated = 0;
    uint64_t version = 0;
    std::vector<std::pair<size_t, double>> running;
  };
  std::vector<Cu> cu(cus);
  auto cyclesOf = [&](size_t run, size_t residents) {
    return runCycles[run][sharesSimds ? residents - 1 : 0];
  };
  auto nextEnd = [&](const Cu &unit) {
    double soonest = std::numeric_limits<double>::infinity();
    for (auto [run, left] : unit.running)
      soonest = std::min(soonest, left * cyclesOf(run, unit.running.size()));
    return unit.updated + soonest;
  };
  using Event = std::tuple<double, unsigned, uint64_t>; // time, CU, version
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
  // The workgroups in id order: (run index, repeat) walked lazily.
  size_t nextRun = 0, repeat = 0;
  uint64_t nextInRun = 0;
  double busy = 0;
  auto takeNext = [&]() -> std::optional<size_t> {
    while (repeat < work.workgroupRunRepeats) {
      if (nextRun == work.workgroupRuns.size()) {
        nextRun = 0;
        ++repeat;
        continue;
      }
      if (nextInRun == work.workgroupRuns[nextRun].count) {
        ++nextRun;
        nextInRun = 0;
        continue;
      }
      ++nextInRun;
      busy += runCycles[nextRun][rates - 1];
      return nextRun;
    }
    return std::nullopt;
  };
  // Slots freed at one time go round-robin over their CUs, one workgroup
  // per CU in turn (the first slots.size() workgroups: i to CU i mod cus).
  std::vector<unsigned> freeSlots(cus, perCU);
  auto dispatch = [&](llvm::ArrayRef<unsigned> freed) {
    for (bool placed = true; placed;) {
      placed = false;
      for (unsigned c : freed) {
        if (freeSlots[c] == 0)
          continue;
        std::optional<size_t> run = takeNext();
        if (!run)
          return;
        cu[c].running.push_back({*run, 1.0});
        --freeSlots[c];
        placed = true;
      }
    }
  };
  auto schedule = [&](unsigned c) {
    ++cu[c].version;
    if (!cu[c].running.empty())
      events.push({nextEnd(cu[c]), c, cu[c].version});
  };
  std::vector<unsigned> touched(cus);
  std::iota(touched.begin(), touched.end(), 0u);
  dispatch(touched);
  for (unsigned c : touched)
    schedule(c);
  double makespan = 0;
  while (!events.empty()) {
    double time = std::get<0>(events.top());
    touched.clear();
    // Every CU whose workgroup ends now (up to rounding): advance its
    // workgroups; those whose work is done leave and free their slots.
    while (!events.empty() &&
           std::get<0>(events.top()) <= time + 1e-9 * (1 + time)) {
      auto [at, c, version] = events.top();
      events.pop();
      Cu &unit = cu[c];
      if (version != unit.version)
        continue;
      size_t residents = unit.running.size();
      double elapsed = time - unit.updated;
      std::vector<std::pair<size_t, double>> still;
      for (auto [run, left] : unit.running) {
        left -= elapsed / cyclesOf(run, residents);
        if (left > 1e-9)
          still.push_back({run, left});
      }
      freeSlots[c] += residents - still.size();
      unit.running = std::move(still);
      unit.updated = time;
      touched.push_back(c);
    }
    makespan = std::max(makespan, time);
    dispatch(touched);
    for (unsigned c : touched)
      schedule(c);
  }
  grid.makespan = makespan;
  if (grid.makespan <= 0)
    return std::nullopt;
  grid.efficiency = busy / (double(slots) * grid.makespan);
  return grid;
}

llvm::Expected<PerfReport>
tessel::analyzeKernel(const KernelCode &input, const KernelMetadata &metadata,
                      const Chip &chip, const Launch &launch,
                      const ProblemWork &work,
                      const ModelParameters &parameters) {
  PerfReport report;
  report.kernel = input.name;
  report.chip = chip.name.str();
  report.clockMHz =
      parameters.clockMHz > 0 ? parameters.clockMHz : chip.clockGHz * 1000;
  report.launch = launch;
  report.work = work;
  if (!work.typeGiven)
    report.work.type = dominantMatrixType(input);

  // Resources.
  KernelResourceUsage &usage = report.usage;
  usage.archVgprs = metadata.vgprCount;
  usage.accVgprs = metadata.agprCount;
  usage.sgprs = metadata.sgprCount;
  usage.waveSize =
      metadata.wavefrontSize ? metadata.wavefrontSize : chip.defaultWaveSize;
  uint64_t lanes = launch.block[0]
                       ? launch.block[0] *
                             std::max<uint64_t>(1, launch.block[1]) *
                             std::max<uint64_t>(1, launch.block[2])
                       : metadata.workgroupLanes();
  if (lanes == 0 || lanes > chip.maxWorkgroupSize)
    return llvm::createStringError(
        llvm::formatv("workgroup of {0} lanes: give --block (1 to {1} lanes)",
                      lanes, chip.maxWorkgroupSize)
            .str());
  if (metadata.maxFlatWorkgroupSize && lanes > metadata.maxFlatWorkgroupSize)
    return llvm::createStringError(
        llvm::formatv("workgroup of {0} lanes exceeds the kernel's maximum "
                      "of {1}",
                      lanes, metadata.maxFlatWorkgroupSize)
            .str());
  usage.workgroupSize = lanes;
  KernelCode code = input;
  std::array<uint64_t, 3> block = {lanes, 1, 1};
  if (launch.block[0])
    block = launch.block;
  annotateLdsConflicts(code, chip, block, usage.waveSize);
  uint64_t lds = metadata.ldsBytes + launch.dynamicLdsBytes;
  if (lds > chip.maxLdsBytesPerWorkgroup)
    return llvm::createStringError(
        llvm::formatv("{0} bytes of LDS exceed the {1} a workgroup may use",
                      lds, chip.maxLdsBytesPerWorkgroup)
            .str());
  usage.ldsBytes = lds;
  report.occupancy = computeOccupancy(chip, usage);

  // Placement on the chip.
  WorkgroupPlacement placement = placeWorkgroups(chip, usage, report.occupancy);
  if (placement.workgroupsPerCU == 0)
    return llvm::createStringError(
        "the kernel's registers or LDS leave no room for one workgroup");
  report.wavesPerWorkgroup = placement.wavesPerWorkgroup;
  report.workgroupsPerCU = placement.workgroupsPerCU;
  report.workgroupsPerCULimit = placement.limit;
  report.workgroups = launch.grid[0] * launch.grid[1] * launch.grid[2];
  if (report.workgroups == 0)
    return llvm::createStringError("empty grid");
  // Workgroups a CU actually holds (fewer than its slots on a small grid),
  // and the rounds of the grid over all CUs.
  unsigned residentPerCU = unsigned(
      std::min<uint64_t>(placement.workgroupsPerCU,
                         llvm::divideCeil(report.workgroups, chip.numCUs)));
  uint64_t slots = uint64_t(chip.numCUs) * residentPerCU;
  report.rounds = llvm::divideCeil(report.workgroups, slots);
  report.gridEfficiency =
      double(report.workgroups) / double(report.rounds * slots);
  unsigned wavesPerCU = residentPerCU * placement.wavesPerWorkgroup;
  report.simdsPerCU = chip.simdsPerCU;
  report.simdsBusy = std::min(chip.simdsPerCU, wavesPerCU);
  report.wavesPerBusySimd = llvm::divideCeil(wavesPerCU, report.simdsBusy);
  // Waves of one workgroup that share a SIMD (and so meet at its barriers).
  unsigned wavesPerBarrier =
      llvm::divideCeil(placement.wavesPerWorkgroup, chip.simdsPerCU);

  // Loops: the innermost ones carry the time.
  std::vector<LoopRange> ranges = findLoops(code);
  std::vector<BasicBlock> blocks = buildBasicBlocks(code);
  std::vector<bool> inLoop(code.instructions.size(), false);
  uint64_t loopFlopsPerWave = 0;
  std::vector<const LoopRange *> loopRanges; // report.loops' ranges
  for (const LoopRange &range : ranges) {
    bool innermost = llvm::none_of(ranges, [&](const LoopRange &other) {
      return other.depth > range.depth &&
             llvm::is_contained(range.instructions, other.instructions.front());
    });
    if (!innermost)
      continue;
    for (size_t i : range.instructions)
      inLoop[i] = true;
    report.loops.push_back(analyzeLoop(code, range, chip, parameters,
                                       usage.waveSize, report.wavesPerBusySimd,
                                       wavesPerBarrier, report.simdsBusy,
                                       isStaggeredLoop(code, blocks, range)));
    loopRanges.push_back(&range);
    loopFlopsPerWave += report.loops.back().matrixFlopsPerIteration;
  }
  if (llvm::any_of(ranges, [](const LoopRange &r) { return r.depth > 0; }))
    report.notes.push_back("nested loops: only innermost loops repeat; "
                           "outer loop bodies are counted once");

  // Straight-line code outside the loops, run once per wave.
  std::vector<Instruction> outside;
  uint64_t outsideFlopsPerWave = 0;
  for (auto [i, instr] : llvm::enumerate(code.instructions))
    if (!inLoop[i]) {
      outside.push_back(instr);
      if (instr.kind == InstrKind::Matrix)
        outsideFlopsPerWave += instr.matrixFlops;
    }
  Timeline outsideTimeline =
      SimdSimulator(chip, parameters, usage.waveSize, 1, 1, report.simdsBusy)
          .run(outside, 1, 0);

  // Trip counts: given, known from the tile program, or the count that
  // makes the matrix work equal the problem's FLOPs (every MFMA loop
  // assumed to run equally often).
  uint64_t totalWaves = report.workgroups * placement.wavesPerWorkgroup;
  size_t matrixLoops = llvm::count_if(report.loops, [](const LoopReport &l) {
    return l.matrixFlopsPerIteration > 0;
  });
  ProblemWork codeWork = withLoopsInCode(work, matrixLoops);
  bool iterationsKnown = !codeWork.loopIterations.empty() &&
                         codeWork.loopIterations.size() == matrixLoops;
  // A matmul's K loop unrolled by two and its one-step remainder: the
  // remainder runs on half of the loop's entries, the main loop the rest.
  LoopReport *remainder = nullptr;
  double remainderTrips = 0;
  llvm::SmallVector<LoopReport *, 2> withMatrix;
  for (LoopReport &loop : report.loops)
    if (loop.matrixFlopsPerIteration > 0)
      withMatrix.push_back(&loop);
  if (work.kLoopEntries > 0 && withMatrix.size() == 2 &&
      withMatrix[1]->matrixFlopsPerIteration * 2 ==
          withMatrix[0]->matrixFlopsPerIteration) {
    remainder = withMatrix[1];
    remainderTrips = std::max(1.0, std::round(0.5 * work.kLoopEntries));
  }
  size_t matrixLoop = 0, mergeLoop = 0;
  std::vector<double> merges = mergeLoopsInCode(
      work.mergeLoopIterations,
      report.loops.size() -
          size_t(llvm::count_if(report.loops, [](const LoopReport &l) {
            return l.matrixFlopsPerIteration > 0;
          })));
  bool mergesKnown = !merges.empty();
  for (LoopReport &loop : report.loops) {
    if (parameters.tripCount) {
      loop.tripCount = *parameters.tripCount;
      loop.tripCountSource = "given";
    } else if (mergesKnown && loop.matrixFlopsPerIteration == 0) {
      loop.tripCount = uint64_t(std::llround(merges[mergeLoop++]));
      loop.tripCountSource = "the merge of the splits";
      loop.merge = true;
    } else if (iterationsKnown && loop.matrixFlopsPerIteration > 0) {
      loop.tripCount =
          uint64_t(std::llround(codeWork.loopIterations[matrixLoop++]));
      loop.tripCountSource = "from the tile program";
    } else if (work.flops > 0 && remainder && loop.matrixFlopsPerIteration) {
      double perWave = work.flops / double(totalWaves) - outsideFlopsPerWave;
      if (&loop == remainder)
        loop.tripCount = uint64_t(remainderTrips);
      else
        loop.tripCount = uint64_t(std::max(
            1.0, std::round((perWave - remainderTrips *
                                           remainder->matrixFlopsPerIteration) /
                            double(loop.matrixFlopsPerIteration))));
      loop.tripCountSource =
          &loop == remainder ? "the K loop's one-step remainder" : "from FLOPs";
    } else if (work.flops > 0 && loop.matrixFlopsPerIteration > 0) {
      double perWave = work.flops / double(totalWaves) - outsideFlopsPerWave;
      loop.tripCount = uint64_t(
          std::max(1.0, std::round(perWave / double(loopFlopsPerWave))));
      loop.tripCountSource = "from FLOPs";
    } else {
      loop.tripCount = 1;
      loop.tripCountSource = "assumed";
      report.notes.push_back(
          llvm::formatv("loop at +{0:x}: trip count unknown, assumed 1 (give "
                        "--trip-count or --flops)",
                        loop.beginAddress)
              .str());
    }
  }

  // The merge loops run in the tail, when the other workgroups are done:
  // the merging workgroup's waves share the CU's SIMDs and vector-memory
  // path among themselves only (wavesPerBarrier of them to a SIMD).
  unsigned mergingSimds =
      std::min(placement.wavesPerWorkgroup, chip.simdsPerCU);
  for (auto [loop, range] : llvm::zip(report.loops, loopRanges)) {
    if (!loop.merge)
      continue;
    LoopReport alone =
        analyzeLoop(code, *range, chip, parameters, usage.waveSize,
                    wavesPerBarrier, wavesPerBarrier, mergingSimds,
                    /*staggered=*/false);
    alone.tripCount = loop.tripCount;
    alone.tripCountSource = loop.tripCountSource;
    alone.merge = true;
    loop = std::move(alone);
  }

  // Time per round of workgroups, then the grid, then the memory floors.
  // A split-KV kernel's merge runs once per block, in the last split to
  // arrive, once all of the block's splits have streamed their keys: one
  // wave's time after the rest, not part of every workgroup's round.
  double loopCycles = 0, matrixCyclesPerWave = outsideTimeline.matrixBusy;
  double globalBytesPerWave = outsideTimeline.globalBytes, mergeCycles = 0;
  for (const LoopReport &loop : report.loops) {
    if (loop.merge) {
      mergeCycles += loop.tripCount * loop.singleWaveCycles;
      continue;
    }
    loopCycles += loop.tripCount * loop.sharedCycles;
    matrixCyclesPerWave += loop.tripCount * loop.matrixCyclesPerIteration;
    globalBytesPerWave += loop.tripCount * loop.globalBytesPerIteration;
  }
  double roundCycles = outsideTimeline.cycles + loopCycles;
  double clockHz = report.clockMHz * 1e6;
  double computeCycles = report.rounds * roundCycles;
  std::optional<DispatchedGrid> dispatched;
  if (iterationsKnown && !parameters.tripCount)
    dispatched = dispatchUnequalWorkgroups(report, codeWork, chip.numCUs,
                                           residentPerCU, roundCycles);
  if (dispatched) {
    computeCycles = dispatched->makespan;
    report.gridEfficiency = dispatched->efficiency;
  }
  report.computeSeconds = computeCycles / clockHz;
  double l2Bytes = globalBytesPerWave * double(totalWaves);
  report.l2Seconds =
      l2Bytes / (parameters.l2BytesPerClockPerCU * chip.numCUs * clockHz);
  if (work.followsKernel)
    report.launchGapSeconds = parameters.launchGapMicroseconds * 1e-6;
  double hbmBytes = work.uniqueBytes;
  if (work.cacheTraffic)
    addCacheFill(report, chip, work.cacheTraffic(residentPerCU), hbmBytes);
  if (hbmBytes > 0)
    report.hbmSeconds =
        hbmBytes / (chip.memoryBandwidthTBs * 1e12 * parameters.hbmEfficiency);
  else
    report.notes.push_back("unique bytes not given: no HBM floor (--bytes)");
  double floor = std::max({report.computeSeconds, report.l2Seconds,
                           report.hbmSeconds, report.llcSeconds});
  report.mergeTailSeconds = mergeCycles / clockHz;
  report.predictedSeconds = floor + report.mergeTailSeconds;
  if (floor == report.computeSeconds)
    report.bindingLimit = report.loops.empty()
                              ? "compute"
                              : "compute: " + report.loops.front().limit;
  else if (floor == report.hbmSeconds)
    report.bindingLimit = "HBM bandwidth";
  else if (floor == report.llcSeconds)
    report.bindingLimit = "last-level cache bandwidth (the L2s' fill)";
  else
    report.bindingLimit = "L2 bandwidth";
  for (const LoopReport &loop : report.loops)
    if (loop.tripCount * loop.sharedCycles > 0.5 * loopCycles &&
        floor == report.computeSeconds)
      report.bindingLimit = "compute: " + loop.limit;

  // Structural efficiency: the matrix pipes' busy share of all SIMD clocks.
  double simdClocks =
      double(chip.numCUs) * chip.simdsPerCU * report.predictedSeconds * clockHz;
  report.structuralEfficiency =
      simdClocks > 0 ? matrixCyclesPerWave * totalWaves / simdClocks : 0;
  bool hasMatrix = llvm::any_of(code.instructions, [](const Instruction &i) {
    return i.kind == InstrKind::Matrix;
  });
  if (!hasMatrix && !work.typeGiven)
    report.notes.push_back("no matrix instructions: % of the matrix peak "
                           "is not a meaningful measure of this kernel");
  if (work.flops > 0) {
    report.tflops = work.flops / report.predictedSeconds / 1e12;
    double peak = chip.peakMatrixTeraOps(report.work.type);
    if (hasMatrix || work.typeGiven)
      report.percentOfPeak = peak > 0 ? 100 * report.tflops / peak : 0;
  }

  // Kernel-level sources: where the chip's SIMD clocks go.
  std::vector<CycleSource> &sources = report.sources;
  double total = 1.0;
  double idleSimds = 1.0 - double(report.simdsBusy) / chip.simdsPerCU;
  // What keeps SIMDs idle: the kernel's resources, or a grid too small to
  // give each CU the workgroups they would allow.
  if (idleSimds > 0 && residentPerCU < placement.workgroupsPerCU)
    sources.push_back(
        {"idle-simds", idleSimds, 0,
         llvm::formatv("{0} of {1} SIMDs idle: {2} workgroups of {3} wave{4} "
                       "on {5} CUs give each CU {6} ({7} allow{8} {9})",
                       chip.simdsPerCU - report.simdsBusy, chip.simdsPerCU,
                       report.workgroups, placement.wavesPerWorkgroup,
                       placement.wavesPerWorkgroup == 1 ? "" : "s", chip.numCUs,
                       residentPerCU, placement.limit,
                       placement.limit == "workgroup slots" ? "" : "s",
                       placement.workgroupsPerCU)
             .str()});
  else if (idleSimds > 0)
    sources.push_back(
        {"idle-simds", idleSimds, 0,
         llvm::formatv("{0} of {1} SIMDs idle: {2} allow{3} {4} workgroup{5} "
                       "of {6} wave{7} per CU",
                       chip.simdsPerCU - report.simdsBusy, chip.simdsPerCU,
                       placement.limit,
                       placement.limit == "workgroup slots" ? "" : "s",
                       residentPerCU, residentPerCU == 1 ? "" : "s",
                       placement.wavesPerWorkgroup,
                       placement.wavesPerWorkgroup == 1 ? "" : "s")
             .str()});
  double busy = 1.0 - idleSimds;
  if (dispatched && report.gridEfficiency < 1.0)
    sources.push_back(
        {"grid-quantization", busy * (1.0 - report.gridEfficiency), 0,
         llvm::formatv("{0} workgroups of {1:f0} to {2:f0} loop iterations "
                       "started in id order as {3} slots ({4} CUs x {5}) "
                       "free: the slots are busy {6:P0} of the kernel's time",
                       report.workgroups, dispatched->fewestIterations,
                       dispatched->mostIterations, slots, chip.numCUs,
                       residentPerCU, report.gridEfficiency)
             .str()});
  else if (report.gridEfficiency < 1.0)
    sources.push_back(
        {"grid-quantization", busy * (1.0 - report.gridEfficiency), 0,
         llvm::formatv(
             "{0} workgroups in {1} round(s) of {2} "
             "({3} CUs x {4}): the last round is {5:P0} full",
             report.workgroups, report.rounds, slots, chip.numCUs,
             residentPerCU,
             1.0 - (double(report.rounds * slots) - double(report.workgroups)) /
                       double(slots))
             .str()});
  busy *= report.gridEfficiency;
  double memoryShare =
      1.0 - report.computeSeconds / std::max(report.predictedSeconds, 1e-30);
  if (memoryShare > 0.005) {
    StringRef memory = "l2";
    if (report.predictedSeconds == report.hbmSeconds)
      memory = "hbm";
    else if (report.predictedSeconds == report.llcSeconds)
      memory = "llc";
    sources.push_back({memory.str(), busy * memoryShare, 0,
                       "the SIMDs wait on " + report.bindingLimit});
  }
  busy *= 1.0 - memoryShare;
  if (roundCycles > 0) {
    sources.push_back(
        {"outside-loops", busy * outsideTimeline.cycles / roundCycles, 0,
         llvm::formatv("prologue and epilogue: {0} clocks per wave outside "
                       "the loops",
                       outsideTimeline.cycles)
             .str()});
    for (const LoopReport &loop : report.loops) {
      double share = busy * loop.tripCount * loop.sharedCycles / roundCycles;
      for (const CycleSource &source : loop.sources)
        sources.push_back({source.category, share * source.fraction, 0,
                           llvm::formatv("loop +{0:x}: {1}", loop.beginAddress,
                                         source.explanation)
                               .str()});
    }
  }
  rankSources(sources, total);
  for (CycleSource &source : sources)
    source.cycles = source.fraction * computeCycles;
  return report;
}

llvm::Expected<PerfReport>
tessel::analyzeCodeObject(llvm::ArrayRef<char> codeObject, StringRef kernel,
                          const Chip &chip, const Launch &launch,
                          const ProblemWork &work,
                          const ModelParameters &parameters) {
  llvm::Expected<CodeObjectMetadata> metadata =
      readCodeObjectMetadata(codeObject);
  if (!metadata)
    return metadata.takeError();
  std::string processor = metadata->processor();
  if (!processor.empty() && processor != chip.name)
    return llvm::createStringError("the code object is for " + processor +
                                   ", not " + chip.name.str());
  const KernelMetadata *kernelMetadata = nullptr;
  for (const KernelMetadata &candidate : metadata->kernels)
    if (candidate.name == kernel || candidate.symbol == kernel ||
        candidate.symbol == (kernel + ".kd").str())
      kernelMetadata = &candidate;
  if (!kernelMetadata) {
    std::string names;
    for (const KernelMetadata &candidate : metadata->kernels)
      names += (names.empty() ? "" : ", ") + candidate.name;
    return llvm::createStringError("no kernel '" + kernel +
                                   "' in the code object (kernels: " +
                                   (names.empty() ? "none" : names) + ")");
  }
  std::string symbol = kernelMetadata->symbol;
  StringRef function = symbol;
  function.consume_back(".kd");
  llvm::Expected<KernelCode> code =
      disassembleKernel(codeObject, function.empty() ? kernel : function, chip);
  if (!code)
    return code.takeError();
  code->name = kernelMetadata->name;
  return analyzeKernel(*code, *kernelMetadata, chip, launch, work, parameters);
}
