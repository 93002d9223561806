//===- Chip.cpp - AMD GPU chip table ----------------------------*- C++ -*-===//
//
// Every number here is explained, with its public source, in
// docs/hardware.md §2 (chip table) and §6 (occupancy); the confidence tag of
// a fact there ([S] stated, [D] derived, [2] secondary, [U] unconfirmed) is
// repeated where it is not [S].
//
//===----------------------------------------------------------------------===//

#include "tessel/Target/Chip.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/TargetParser/TargetParser.h"

#include <algorithm>

using namespace tessel;

static constexpr uint64_t MiB = 1024 * 1024;

// Rates are dense matrix operations per clock per CU in the order
// F64, F32, XF32, F16, BF16, FP8, I8 (docs/hardware.md §2.3).
static const Chip kChips[] = {
    // MI250X: a package holds two GCDs and each GCD is a separate device, so
    // the per-device numbers (110 CUs, 1.6 TB/s, 8 MiB L2) are what one kernel
    // launch sees.
    {"gfx90a",
     "MI250X (one GCD)",
     "CDNA2",
     64,
     false,
     110,
     4,
     8,
     65536,
     65536,
     32,
     4,
     512,
     256,
     256,
     512,
     8,
     102,
     1024,
     1.7,
     1.6,
     8 * MiB,
     Fp8Format::None,
     {256, 256, 0, 1024, 1024, 0, 1024}},
    {"gfx942",
     "MI300X",
     "CDNA3",
     64,
     false,
     304,
     4,
     8,
     65536,
     65536,
     32,
     4,
     512,
     256,
     256,
     512,
     8,
     102,
     1024,
     /*[D]*/ 2.1,
     5.3,
     32 * MiB,
     Fp8Format::Fnuz,
     {256, 256, 1024, 2048, 2048, 4096, 4096},
     8,
     256 * MiB,
     17.0},
    // LDS banks: 64, after AMD's CDNA4 blog and a measurement of the
    // ds_read_b128 phases (LLVM still says 32; docs/hardware.md §7).
    {"gfx950",
     "MI355X",
     "CDNA4",
     64,
     false,
     256,
     4,
     8,
     163840,
     163840,
     64,
     4,
     512,
     256,
     256,
     512,
     8,
     102,
     1024,
     /*[D]*/ 2.4,
     8.0,
     32 * MiB,
     Fp8Format::Ocp,
     {128, 256, 0, 4096, 4096, 8192, 8192},
     8,
     256 * MiB,
     /*[A]: no published figure; gfx942's*/ 17.0},
    // RDNA: wave32 by default; LDS is 128 KiB per WGP, 64 KiB per CU-mode
    // half and per workgroup. Clocks and bandwidth are [2].
    {"gfx1100",
     "RX 7900 XTX",
     "RDNA3",
     32,
     true,
     96,
     2,
     16,
     65536,
     65536,
     32,
     4,
     512,
     256,
     0,
     768,
     12,
     106,
     1024,
     2.5,
     0.96,
     6 * MiB,
     Fp8Format::None,
     {0, 0, 0, 512, 512, 0, 512},
     1,
     96 * MiB},
    {"gfx1201",
     "RX 9070 XT",
     "RDNA4",
     32,
     true,
     64,
     2,
     16,
     65536,
     65536,
     32,
     4,
     512,
     256,
     0,
     768,
     12,
     106,
     1024,
     2.97,
     0.64,
     8 * MiB,
     Fp8Format::Ocp,
     {0, 0, 0, 1024, 1024, 2048, 2048},
     1,
     64 * MiB},
};

llvm::ArrayRef<Chip> tessel::getKnownChips() { return kChips; }

/// Whether every feature of a target id ("sramecc+", "xnack-") is one
/// LLVM's target parser says `processor` has, each at most once.
static bool hasTargetIdFeatures(llvm::StringRef processor,
                                llvm::ArrayRef<llvm::StringRef> features) {
  unsigned attributes =
      llvm::AMDGPU::getArchAttrAMDGCN(llvm::AMDGPU::parseArchAMDGCN(processor));
  llvm::SmallVector<llvm::StringRef> seen;
  for (llvm::StringRef feature : features) {
    if (!feature.consume_back("+") && !feature.consume_back("-"))
      return false;
    unsigned needed = llvm::StringSwitch<unsigned>(feature)
                          .Case("sramecc", llvm::AMDGPU::FEATURE_SRAMECC)
                          .Case("xnack", llvm::AMDGPU::FEATURE_XNACK)
                          .Default(0);
    if (!needed || !(attributes & needed) || llvm::is_contained(seen, feature))
      return false;
    seen.push_back(feature);
  }
  return true;
}

const Chip *tessel::lookupChip(llvm::StringRef name) {
  // A full target id as the HIP runtime and torch report it
  // ("gfx942:sramecc+:xnack-") names the processor's chip; the features
  // do not change the code Tessel emits.
  llvm::SmallVector<llvm::StringRef> parts;
  name.split(parts, ':');
  if (!hasTargetIdFeatures(parts.front(), llvm::ArrayRef(parts).drop_front()))
    return nullptr;
  for (const Chip &chip : kChips)
    if (chip.name == parts.front())
      return &chip;
  return nullptr;
}

std::string tessel::knownChipNames() {
  return llvm::join(
      llvm::map_range(kChips, [](const Chip &chip) { return chip.name; }),
      ", ");
}

unsigned Chip::isaVersion() const {
  // gfx<major><minor><stepping>: the last two characters are minor and
  // stepping (hex digits), the rest is the major version.
  llvm::StringRef digits = name.drop_front(3);
  unsigned major = 0;
  digits.drop_back(2).getAsInteger(10, major);
  auto hexDigit = [](char c) -> unsigned {
    return llvm::isDigit(c) ? c - '0' : llvm::toLower(c) - 'a' + 10;
  };
  unsigned minor = hexDigit(digits[digits.size() - 2]);
  unsigned stepping = hexDigit(digits.back());
  return major * 1000 + minor * 100 + stepping;
}

double Chip::peakMatrixTeraOps(MatrixType type) const {
  return matrixOpsPerClock(type) * static_cast<double>(numCUs) * clockGHz /
         1000.0;
}

llvm::StringRef tessel::stringifyMatrixType(MatrixType type) {
  switch (type) {
  case MatrixType::F64:
    return "f64";
  case MatrixType::F32:
    return "f32";
  case MatrixType::XF32:
    return "xf32";
  case MatrixType::F16:
    return "f16";
  case MatrixType::BF16:
    return "bf16";
  case MatrixType::FP8:
    return "fp8";
  case MatrixType::I8:
    return "i8";
  }
  return "unknown";
}

/// Waves per SIMD allowed by the VGPR file (docs/hardware.md §6).
static unsigned occupancyByVgprs(const Chip &chip,
                                 const KernelResourceUsage &usage) {
  if (chip.isCDNA()) {
    // Unified file: AGPRs start at accum_offset = alignTo(arch, 4).
    unsigned total = usage.accVgprs > 0
                         ? llvm::alignTo(usage.archVgprs, 4) + usage.accVgprs
                         : usage.archVgprs;
    if (total < chip.vgprAllocGranuleWave64)
      return chip.maxWavesPerSimd;
    unsigned allocated = llvm::alignTo(total, chip.vgprAllocGranuleWave64);
    return std::clamp(chip.totalVgprsWave64 / allocated, 1u,
                      chip.maxWavesPerSimd);
  }
  // RDNA: the file holds twice as many wave32 registers as wave64 ones.
  unsigned scale = usage.waveSize == 32 ? 2 : 1;
  unsigned granule = chip.vgprAllocGranuleWave64 * scale;
  unsigned total = chip.totalVgprsWave64 * scale;
  if (usage.archVgprs == 0)
    return chip.maxWavesPerSimd;
  unsigned allocated = llvm::alignTo(usage.archVgprs, granule);
  return std::clamp(total / allocated, 1u, chip.maxWavesPerSimd);
}

/// Waves per SIMD allowed by SGPRs (the GFX8/9 table; no limit on gfx10+).
static unsigned occupancyBySgprs(const Chip &chip, unsigned sgprs) {
  if (chip.isRDNA())
    return chip.maxWavesPerSimd;
  unsigned waves = sgprs <= 80 ? 10 : sgprs <= 88 ? 9 : sgprs <= 100 ? 8 : 7;
  return std::min(waves, chip.maxWavesPerSimd);
}

/// Waves per SIMD allowed by LDS: whole workgroups share a CU's LDS.
static unsigned occupancyByLds(const Chip &chip,
                               const KernelResourceUsage &usage) {
  if (usage.ldsBytes == 0)
    return chip.maxWavesPerSimd;
  unsigned workgroupSize =
      usage.workgroupSize ? usage.workgroupSize : chip.maxWorkgroupSize;
  unsigned wavesPerWorkgroup = llvm::divideCeil(workgroupSize, usage.waveSize);
  unsigned maxWorkgroupsPerCU =
      wavesPerWorkgroup == 1 ? 32 : std::min(32 / wavesPerWorkgroup, 16u);
  // Hardware allocates LDS in granules; LLVM's own model skips the rounding.
  unsigned ldsPerWorkgroup =
      llvm::alignTo(usage.ldsBytes, chip.ldsAllocGranule);
  unsigned workgroupsPerCU =
      std::min(maxWorkgroupsPerCU, chip.ldsBytesPerCU / ldsPerWorkgroup);
  unsigned waves =
      llvm::divideCeil(workgroupsPerCU * wavesPerWorkgroup, chip.simdsPerCU);
  return std::min(waves, chip.maxWavesPerSimd);
}

Occupancy tessel::computeOccupancy(const Chip &chip,
                                   const KernelResourceUsage &usage) {
  Occupancy occupancy;
  occupancy.byVgprs = occupancyByVgprs(chip, usage);
  occupancy.bySgprs = occupancyBySgprs(chip, usage.sgprs);
  occupancy.byLds = occupancyByLds(chip, usage);
  occupancy.wavesPerSimd = chip.maxWavesPerSimd;
  occupancy.limiter = "wave slots";
  // The first limiter to reach the minimum names it; VGPRs win ties because
  // they are what a kernel author can most directly change.
  for (auto [waves, name] :
       {std::pair<unsigned, llvm::StringRef>{occupancy.byVgprs, "VGPRs"},
        {occupancy.byLds, "LDS"},
        {occupancy.bySgprs, "SGPRs"}}) {
    if (waves < occupancy.wavesPerSimd) {
      occupancy.wavesPerSimd = waves;
      occupancy.limiter = name;
    }
  }
  return occupancy;
}

WorkgroupPlacement tessel::placeWorkgroups(const Chip &chip,
                                           const KernelResourceUsage &usage,
                                           const Occupancy &occupancy) {
  WorkgroupPlacement placement;
  placement.wavesPerWorkgroup =
      llvm::divideCeil(usage.workgroupSize, usage.waveSize);
  unsigned waves = placement.wavesPerWorkgroup;
  // Hardware limits on workgroups per CU (as in computeOccupancy).
  unsigned bySlots = waves == 1 ? 32 : std::min(32 / waves, 16u);
  unsigned registerWaves = std::min(occupancy.byVgprs, occupancy.bySgprs);
  registerWaves = std::min(registerWaves, chip.maxWavesPerSimd);
  unsigned byRegisters = registerWaves * chip.simdsPerCU / waves;
  unsigned byLds =
      usage.ldsBytes
          ? chip.ldsBytesPerCU /
                unsigned(llvm::alignTo(usage.ldsBytes, chip.ldsAllocGranule))
          : bySlots;
  placement.workgroupsPerCU = std::min({bySlots, byRegisters, byLds});
  if (placement.workgroupsPerCU == byLds && byLds < bySlots)
    placement.limit = llvm::formatv("LDS ({0} KiB per workgroup of {1} KiB)",
                                    llvm::divideCeil(usage.ldsBytes, 1024),
                                    chip.ldsBytesPerCU / 1024)
                          .str();
  else if (placement.workgroupsPerCU == byRegisters && byRegisters < bySlots)
    placement.limit =
        llvm::formatv("registers ({0} VGPRs + {1} AGPRs, {2} SGPRs: {3} "
                      "waves per SIMD)",
                      usage.archVgprs, usage.accVgprs, usage.sgprs,
                      registerWaves)
            .str();
  else
    placement.limit = "workgroup slots";
  return placement;
}

TilePosition tessel::getMatmulTilePosition(int64_t id, int64_t gridX,
                                           int64_t gridY, unsigned xcds) {
  int64_t total = gridX * gridY;
  if (total <= 0)
    return {};
  // Renumber: XCD x receives ids x, x + xcds, ...; give them the contiguous
  // range that starts after the ranges of XCDs 0 .. x-1. The first `tall`
  // XCDs receive one workgroup more than the others when xcds does not
  // divide the total.
  int64_t linear = id;
  if (xcds > 1) {
    int64_t perXcd = (total + xcds - 1) / xcds;
    int64_t tall = total - int64_t(xcds) * (perXcd - 1);
    int64_t xcd = id % xcds, local = id / xcds;
    linear = xcd < tall ? xcd * perXcd + local
                        : tall * perXcd + (xcd - tall) * (perXcd - 1) + local;
  }
  // Grouped order: kTileGroupRows tile rows at a time, down a column of the
  // group before moving to the next column.
  int64_t perGroup = kTileGroupRows * gridX;
  int64_t firstRow = linear / perGroup * kTileGroupRows;
  int64_t rows = std::min(kTileGroupRows, gridY - firstRow);
  int64_t inGroup = linear % perGroup;
  return {firstRow + inGroup % rows, inGroup / rows};
}
