//===- Chip.h - AMD GPU chip table ------------------------------*- C++ -*-===//
//
// Facts about the chips Tessel targets. docs/hardware.md explains every
// field and value with its public source (§2 the table, §2.3 rates, §6
// occupancy rules). Plain C++: no MLIR types.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_TARGET_CHIP_H
#define TESSEL_TARGET_CHIP_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace tessel {

/// The element type classes matrix instructions are rated by.
enum class MatrixType { F64, F32, XF32, F16, BF16, FP8, I8 };

/// Which 8-bit float encoding a chip's matrix instructions interpret.
enum class Fp8Format { None, Fnuz, Ocp };

struct Chip {
  llvm::StringRef name;         // LLVM processor name, e.g. "gfx942"
  llvm::StringRef product;      // e.g. "MI300X"
  llvm::StringRef architecture; // e.g. "CDNA3"
  unsigned defaultWaveSize;     // 64 on CDNA, 32 on RDNA
  bool supportsWave32;
  unsigned numCUs;
  unsigned simdsPerCU;
  unsigned maxWavesPerSimd;
  unsigned ldsBytesPerCU;
  unsigned maxLdsBytesPerWorkgroup;
  unsigned ldsBanks;
  unsigned ldsBankBytes;
  unsigned ldsAllocGranule;  // bytes
  unsigned maxArchVgprs;     // addressable per lane
  unsigned maxAccVgprs;      // 0 where the chip has no AccVGPRs
  unsigned totalVgprsWave64; // unified file per lane slot (wave64)
  unsigned vgprAllocGranuleWave64;
  unsigned maxSgprs;         // addressable per wave
  unsigned maxWorkgroupSize; // lanes
  double clockGHz;           // peak engine clock
  double memoryBandwidthTBs; // peak DRAM bandwidth
  uint64_t l2Bytes;
  Fp8Format fp8Format;
  // Dense matrix FLOPs (or integer ops) per clock per CU, 0 if unsupported.
  unsigned matrixOpsPerClockPerCU[7];
  // Accelerator complex dies, each with its own L2 (l2Bytes / numXCDs);
  // consecutive workgroups are dispatched round-robin over them.
  unsigned numXCDs = 1;
  // The memory-side last-level cache (AMD Infinity Cache, "MALL") that the
  // L2s fill from, shared by all XCDs; 0 bytes where the chip has none, 0
  // TB/s where no bandwidth is published (docs/hardware.md §2).
  uint64_t lastLevelCacheBytes = 0;
  double lastLevelCacheBandwidthTBs = 0;

  bool isCDNA() const { return maxAccVgprs != 0; }
  bool isRDNA() const { return !isCDNA(); }
  /// The numeric part of the name as LLVM encodes `__oclc_ISA_version`
  /// (gfx942 -> 9402, gfx90a -> 9010, gfx1100 -> 11000).
  unsigned isaVersion() const;
  /// Whether the chip converts f32 to bf16 in one instruction
  /// (v_cvt_pk_bf16_f32, gfx950); elsewhere the backend rounds in software.
  bool convertsToBf16() const { return isCDNA() && isaVersion() >= 9500; }
  /// Whether a VALU instruction adds 64-bit integers of register pairs
  /// (v_lshl_add_u64, gfx942 and gfx950; gfx90a takes a carry chain of two).
  bool hasVectorAdd64() const { return isCDNA() && isaVersion() >= 9400; }
  /// Whether LDS reads can transpose 16-bit data on the way to the lanes
  /// (ds_read_b64_tr_b16, gfx950; docs/hardware.md §7b).
  bool hasLdsTransposeReads() const { return isCDNA() && isaVersion() >= 9500; }
  /// Whether a lane can load 16 bytes from global memory straight into LDS
  /// (global_load_lds_dwordx4, gfx950; gfx90a/gfx942 move at most 4 bytes
  /// a lane that way; docs/hardware.md §7c).
  bool hasLdsDirectLoads16() const { return isCDNA() && isaVersion() >= 9500; }

  /// Dense matrix rate per CU per clock for `type` (0 if unsupported).
  unsigned matrixOpsPerClock(MatrixType type) const {
    return matrixOpsPerClockPerCU[static_cast<unsigned>(type)];
  }
  /// Peak dense matrix throughput of the whole chip in TFLOP/s (TOP/s for i8).
  double peakMatrixTeraOps(MatrixType type) const;
};

/// All chips Tessel knows, in a stable order.
llvm::ArrayRef<Chip> getKnownChips();

/// The chip named `name`, or null.
const Chip *lookupChip(llvm::StringRef name);

/// "gfx90a, gfx942, gfx950, gfx1100, gfx1201": for error messages.
std::string knownChipNames();

llvm::StringRef stringifyMatrixType(MatrixType type);

/// What a kernel uses of a compute unit, as read from its code object.
struct KernelResourceUsage {
  unsigned archVgprs = 0;
  unsigned accVgprs = 0;
  unsigned sgprs = 0;
  unsigned ldsBytes = 0;
  unsigned workgroupSize = 0; // lanes; 0 when unknown (then the maximum)
  unsigned waveSize = 64;
};

/// Waves per SIMD a kernel can keep resident, and which resource limits it.
struct Occupancy {
  unsigned wavesPerSimd = 0;
  unsigned byVgprs = 0;
  unsigned bySgprs = 0;
  unsigned byLds = 0;
  llvm::StringRef limiter; // "VGPRs", "SGPRs", "LDS" or "wave slots"
};

/// Occupancy by LLVM's AMDGPUBaseInfo rules (docs/hardware.md §6).
Occupancy computeOccupancy(const Chip &chip, const KernelResourceUsage &usage);

/// How many workgroups of a kernel a CU holds at once, and what stops it
/// holding more.
struct WorkgroupPlacement {
  unsigned wavesPerWorkgroup = 1;
  unsigned workgroupsPerCU = 0;
  std::string limit; ///< "LDS (...)", "registers (...)" or "workgroup slots"
};

/// The placement of `usage`'s workgroups on a CU of `chip`: registers (by
/// `occupancy`), LDS with its allocation granule, and the CU's workgroup
/// slots.
WorkgroupPlacement placeWorkgroups(const Chip &chip,
                                   const KernelResourceUsage &usage,
                                   const Occupancy &occupancy);

/// Where the workgroups of a matmul grid go (docs/architecture.md, the
/// tile order). The hardware hands consecutive workgroup ids round-robin to
/// the chip's XCDs, each with its own L2, so neighbouring tiles would land
/// on different L2s. Tessel's matmul kernels renumber them: the ids one XCD
/// receives become a contiguous range, and that range walks the tiles in
/// groups of kTileGroupRows tile rows, column by column inside a group, so
/// an XCD's resident workgroups share A row panels and B column panels.
constexpr int64_t kTileGroupRows = 8;

struct TilePosition {
  int64_t row = 0, col = 0; ///< tile indices along M and N
};

/// The tile that workgroup `id` (x + gridX * y in dispatch order) computes
/// in a `gridY` x `gridX` grid of tiles on a chip with `xcds` XCDs. A
/// bijection of [0, gridX * gridY); the tile pass builds the same
/// arithmetic in IR.
TilePosition getMatmulTilePosition(int64_t id, int64_t gridX, int64_t gridY,
                                   unsigned xcds);

} // namespace tessel

#endif // TESSEL_TARGET_CHIP_H
