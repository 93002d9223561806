//===- KernelMetadata.h - AMDHSA code object metadata -----------*- C++ -*-===//
//
// Reads the kernel metadata the AMDGPU backend writes into a code object's
// NT_AMDGPU_METADATA note (MessagePack, code object v4+), and prints it as
// the kernel report of `tesselc --emit=report`.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_TARGET_KERNELMETADATA_H
#define TESSEL_TARGET_KERNELMETADATA_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace tessel {
struct Chip;

struct KernelArgument {
  std::string name;
  std::string valueKind; // "global_buffer", "by_value", "hidden_*", ...
  std::string addressSpace;
  uint64_t offset = 0;
  uint64_t size = 0;
};

struct KernelMetadata {
  std::string name;
  std::string symbol;
  uint64_t kernargSegmentSize = 0;
  uint64_t kernargSegmentAlign = 0;
  uint64_t ldsBytes = 0;     // .group_segment_fixed_size
  uint64_t scratchBytes = 0; // .private_segment_fixed_size
  unsigned vgprCount = 0;
  unsigned agprCount = 0;
  unsigned sgprCount = 0;
  unsigned vgprSpillCount = 0;
  unsigned sgprSpillCount = 0;
  unsigned wavefrontSize = 0;
  unsigned maxFlatWorkgroupSize = 0;
  std::array<unsigned, 3> reqdWorkgroupSize = {0, 0, 0}; // 0: not fixed
  bool usesDynamicStack = false;
  std::vector<KernelArgument> args;

  /// Lanes per workgroup: the required size when fixed, else the maximum.
  unsigned workgroupLanes() const;
};

struct CodeObjectMetadata {
  std::string target; // e.g. "amdgcn-amd-amdhsa--gfx942"
  std::vector<KernelMetadata> kernels;

  /// The processor name in `target` ("gfx942"), or empty.
  std::string processor() const;
};

/// Parses the metadata note of an HSACO code object.
llvm::Expected<CodeObjectMetadata>
readCodeObjectMetadata(llvm::ArrayRef<char> hsaco);

/// Prints a readable table per kernel: resources, occupancy on `chip` and
/// arguments.
void printKernelReport(llvm::raw_ostream &os,
                       const CodeObjectMetadata &metadata, const Chip &chip);

/// The same report as JSON.
llvm::json::Value kernelReportToJSON(const CodeObjectMetadata &metadata,
                                     const Chip &chip);

} // namespace tessel

#endif // TESSEL_TARGET_KERNELMETADATA_H
