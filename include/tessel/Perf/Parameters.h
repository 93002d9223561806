//===- Parameters.h - The stated assumptions of the model -------*- C++ -*-===//
//
// The performance model's assumptions that are not chip facts: memory
// latencies and cache bandwidths. Both the ISA-level model (Model.h) and the
// analytical form that ranks configs before code exists (MatmulEstimate.h)
// use the same values; docs/performance-model.md explains each.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_PERF_PARAMETERS_H
#define TESSEL_PERF_PARAMETERS_H

#include <cstdint>
#include <optional>

namespace tessel {

/// Stated assumptions of the model, in clocks or bytes per clock. Each is a
/// parameter so a user can set what their measurement says.
struct ModelParameters {
  double clockMHz = 0; ///< 0: the chip's peak engine clock
  /// Latency of a vector memory load that hits L2 (GEMM and attention tiles
  /// are read by many workgroups, so most of their loads hit L2 or the
  /// last-level cache).
  unsigned globalLoadLatency = 500;
  unsigned scalarLoadLatency = 200;
  unsigned ldsLatency = 64;
  /// Clocks from the last wave's arrival at s_barrier to the release.
  unsigned barrierLatency = 16;
  /// VALU passes of a transcendental instruction (`v_exp_f32`, ...): a
  /// quarter of the VALU rate (docs/hardware.md §7a; LLVM's scheduling
  /// models say one pass).
  unsigned transcendentalPasses = 4;
  /// Whether the instructions that do not issue beside their own wave's
  /// matrix instruction (Instruction::waitsForMatrix, docs/hardware.md
  /// §7e) wait for it to finish.
  bool holdBehindOwnProducts = true;
  /// Bytes per clock per CU of the vector L1 / address path and of L2 per
  /// XCD.
  double l1BytesPerClock = 64;
  double l2BytesPerClockPerCU = 64;
  /// Fraction of the spec HBM bandwidth a streaming kernel reaches.
  double hbmEfficiency = 0.88;
  /// Microseconds between the end of a kernel and the start of the next
  /// one that depends on it in the same stream (a plan's second stage).
  double launchGapMicroseconds = 2.0;
  /// Loop trip count when it can neither be given nor derived.
  std::optional<uint64_t> tripCount;
};

} // namespace tessel

#endif // TESSEL_PERF_PARAMETERS_H
