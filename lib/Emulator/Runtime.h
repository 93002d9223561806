//===- Runtime.h - The SIMT runtime of the emulator -------------*- C++ -*-===//
//
// Runs one launch: every workgroup in turn, every lane of it a fiber with
// its own stack. A lane runs until it reaches a synchronization point (a
// barrier or a wave collective) and yields; when no lane can run, the
// scheduler completes the collectives whose wave has fully arrived, or the
// barrier once the whole workgroup has, and the lanes resume. A barrier
// that part of a wave or of the workgroup skips, or waves waiting at
// different barriers, are errors: s_barrier is convergent.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_LIB_EMULATOR_RUNTIME_H
#define TESSEL_LIB_EMULATOR_RUNTIME_H

#include "Fiber.h"
#include "tessel/Emulator/Emulator.h"
#include "tessel/Target/Mma.h"

#include "llvm/ADT/SmallVector.h"

#include <memory>
#include <string>
#include <vector>

namespace tessel::emu {

using PackedKernel = void (*)(void **);

enum class LaneState { Runnable, AtBarrier, AtCollective, Exited };

enum class CollectiveKind {
  Mma,
  Bpermute,
  Swizzle,
  Dpp,
  Readlane,
  Ballot,
  PermlaneSwap,
  TransposeRead16,
};

/// What a lane brings to a collective and gets back from it.
struct CollectiveRequest {
  CollectiveKind kind;
  int32_t params[6] = {};     // uniform parameters (instruction, pattern)
  const void *inputs[3] = {}; // per-lane operand bytes
  void *output = nullptr;     // where the lane's result goes
  uint32_t value = 0;         // 32-bit operand (bpermute, swizzle, ballot)
  uint32_t address = 0;       // bpermute byte address
  uint64_t result = 0;        // scalar result
};

struct Lane {
  FiberContext context;
  std::unique_ptr<char[]> stack;
  unsigned id[3] = {0, 0, 0};
  unsigned flatId = 0, wave = 0, laneInWave = 0;
  LaneState state = LaneState::Runnable;
  int32_t barrierSite = -1;    // where the lane waits when AtBarrier
  bool atPhaseBarrier = false; // the barrier is a tessel.phase_barrier's
  CollectiveRequest request;
};

/// Shadow state of one LDS byte for race detection: the last write and up
/// to four reads since, each with the synchronization interval it was in.
struct LdsAccess {
  uint32_t lane = ~0u;
  uint32_t barrierEpoch = 0; // 0: none
  uint32_t waveEpoch = 0;
};
struct LdsShadow {
  LdsAccess write;
  LdsAccess reads[4];
};

class SimtRuntime {
public:
  SimtRuntime(const Chip &chip, llvm::StringRef kernel, PackedKernel entry,
              llvm::ArrayRef<void *> args, llvm::ArrayRef<BufferRegion> buffers,
              const LaunchDims &dims, uint64_t ldsBytes,
              llvm::ArrayRef<std::string> sites);

  /// Runs every workgroup; the first error stops the launch.
  llvm::Error run(LaunchStats &stats);

  // Entry points for the lowered kernels (through RuntimeABI.h).
  Lane &currentLane() { return *current; }
  unsigned getWaveSize() const { return waveSize; }
  const Chip &getChip() const { return chip; }
  const unsigned *workgroupId() const { return workgroup; }
  const LaunchDims &getDims() const { return dims; }
  void *ldsAddress(int64_t offset);
  /// Fails the lane unless `bytes` at `pointer` lie in an argument buffer,
  /// the LDS allocation or the lane's stack, at the `alignment` the access
  /// assumes; records LDS accesses for race detection.
  void checkAccess(void *pointer, int64_t bytes, int64_t alignment,
                   int32_t kind);
  /// Fails the lane if `pointer` is not aligned to `alignment`.
  void checkAlignment(void *pointer, int64_t bytes, int64_t alignment,
                      int32_t kind);
  /// Fails the lane with an integer division fault (RuntimeABI.h).
  [[noreturn]] void failDivision(int32_t division, int32_t site);
  /// Suspends the current lane at the barrier `site` or a collective. The
  /// waves of a workgroup may meet at two different phase barriers (a
  /// ping-pong loop's halves a phase apart), never at other different ones.
  void waitAtBarrier(int32_t site, bool phase = false);
  void waitAtCollective(const CollectiveRequest &request);
  /// Reports an error at the current lane and abandons the launch: does
  /// not return to the lane.
  [[noreturn]] void fail(const llvm::Twine &message);
  /// Allocates runtime-owned memory living as long as the launch (buffer
  /// resource descriptors).
  void *allocate(size_t bytes);
  /// The source location of a barrier site ("" if unknown).
  llvm::StringRef getSiteLocation(int32_t site) const;

  static SimtRuntime *active();

private:
  llvm::Error runWorkgroup(unsigned x, unsigned y, unsigned z,
                           LaunchStats &stats);
  /// Completes every collective whose wave has fully arrived; errors on a
  /// wave that arrived at different places.
  llvm::Expected<bool> completeCollectives(LaunchStats &stats);
  llvm::Error executeCollective(llvm::ArrayRef<Lane *> lanes);
  /// Called when every lane still running waits at a barrier: errors unless
  /// each wave waits whole and all at the same barrier.
  llvm::Error checkBarrierArrival();
  /// Records an error found by the scheduler at `lane`.
  llvm::Error failAt(const Lane &lane, const llvm::Twine &message);
  void checkLdsAccess(uint64_t offset, int64_t bytes, bool isWrite);
  bool isLaneMemory(uintptr_t address, int64_t bytes) const;
  /// " at file:line:col" for a site with a known location, else "".
  std::string describeSite(int32_t site) const;
  std::string describeLane(const Lane &lane) const;
  std::string describeBarrier(int32_t site) const;
  std::string describeAddress(uintptr_t address) const;
  static void laneMain();

  const Chip &chip;
  std::string kernel;
  PackedKernel entry;
  std::vector<void *> args;
  std::vector<BufferRegion> buffers;
  std::vector<std::string> sites;
  LaunchDims dims;
  unsigned waveSize;
  unsigned workgroup[3] = {0, 0, 0};

  std::vector<uint8_t> ldsStorage;
  uint8_t *lds = nullptr; // ldsBytes in ldsStorage, at kLdsAlignment
  uint64_t ldsBytes;
  std::vector<LdsShadow> shadow;
  uint32_t barrierEpoch = 0;
  std::vector<uint32_t> waveEpochs;

  std::vector<Lane> lanes;
  Lane *current = nullptr;
  FiberContext scheduler;
  std::string error;
  bool failed = false;
  std::vector<std::unique_ptr<char[]>> allocations;
  uint64_t memoryChecks = 0;
};

} // namespace tessel::emu

#endif // TESSEL_LIB_EMULATOR_RUNTIME_H
