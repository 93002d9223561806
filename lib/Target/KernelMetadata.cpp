//===- KernelMetadata.cpp - AMDHSA code object metadata ---------*- C++ -*-===//

#include "tessel/Target/KernelMetadata.h"
#include "tessel/Target/Chip.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/BinaryFormat/MsgPackDocument.h"
#include "llvm/BinaryFormat/MsgPackReader.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBufferRef.h"
#include "llvm/Support/raw_ostream.h"

using namespace tessel;
using llvm::msgpack::DocNode;
using llvm::msgpack::MapDocNode;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "invalid code object: " + message);
}

unsigned KernelMetadata::workgroupLanes() const {
  if (reqdWorkgroupSize[0] != 0)
    return reqdWorkgroupSize[0] * std::max(reqdWorkgroupSize[1], 1u) *
           std::max(reqdWorkgroupSize[2], 1u);
  return maxFlatWorkgroupSize;
}

std::string CodeObjectMetadata::processor() const {
  llvm::StringRef text(target);
  size_t pos = text.find("gfx");
  if (pos == llvm::StringRef::npos)
    return "";
  return text.substr(pos).split(':').first.str();
}

/// Whether the MessagePack value starting with `object` (its elements read
/// from `reader`) has string keys in all its maps and nests at most 64 deep.
/// llvm::msgpack::Document crashes on a map keyed by an array or a map, and
/// AMDGPU metadata only ever has string keys.
static bool isWellFormedMetadata(llvm::msgpack::Reader &reader,
                                 const llvm::msgpack::Object &object,
                                 unsigned depth = 0) {
  using llvm::msgpack::Type;
  if (object.Kind != Type::Array && object.Kind != Type::Map)
    return true;
  if (depth > 64)
    return false;
  auto next = [&](llvm::msgpack::Object &out) {
    llvm::Expected<bool> read = reader.read(out);
    if (!read) {
      llvm::consumeError(read.takeError());
      return false;
    }
    return *read;
  };
  for (size_t i = 0; i < object.Length; ++i) {
    llvm::msgpack::Object element;
    if (object.Kind == Type::Map &&
        (!next(element) || element.Kind != Type::String))
      return false;
    if (!next(element) || !isWellFormedMetadata(reader, element, depth + 1))
      return false;
  }
  return true;
}

/// The value of `key` in `map`, or null.
static DocNode *lookup(MapDocNode &map, llvm::StringRef key) {
  for (auto &[name, value] : map)
    if (name.getKind() == llvm::msgpack::Type::String &&
        name.getString() == key)
      return &value;
  return nullptr;
}

static uint64_t getUnsigned(MapDocNode &map, llvm::StringRef key) {
  DocNode *node = lookup(map, key);
  if (!node)
    return 0;
  if (node->getKind() == llvm::msgpack::Type::UInt)
    return node->getUInt();
  if (node->getKind() == llvm::msgpack::Type::Int)
    return node->getInt() < 0 ? 0 : node->getInt();
  return 0;
}

static std::string getString(MapDocNode &map, llvm::StringRef key) {
  DocNode *node = lookup(map, key);
  if (!node || node->getKind() != llvm::msgpack::Type::String)
    return "";
  return node->getString().str();
}

static KernelMetadata parseKernel(MapDocNode &map) {
  KernelMetadata kernel;
  kernel.name = getString(map, ".name");
  kernel.symbol = getString(map, ".symbol");
  kernel.kernargSegmentSize = getUnsigned(map, ".kernarg_segment_size");
  kernel.kernargSegmentAlign = getUnsigned(map, ".kernarg_segment_align");
  kernel.ldsBytes = getUnsigned(map, ".group_segment_fixed_size");
  kernel.scratchBytes = getUnsigned(map, ".private_segment_fixed_size");
  kernel.vgprCount = getUnsigned(map, ".vgpr_count");
  kernel.agprCount = getUnsigned(map, ".agpr_count");
  kernel.sgprCount = getUnsigned(map, ".sgpr_count");
  kernel.vgprSpillCount = getUnsigned(map, ".vgpr_spill_count");
  kernel.sgprSpillCount = getUnsigned(map, ".sgpr_spill_count");
  kernel.wavefrontSize = getUnsigned(map, ".wavefront_size");
  kernel.maxFlatWorkgroupSize = getUnsigned(map, ".max_flat_workgroup_size");
  if (DocNode *node = lookup(map, ".uses_dynamic_stack"))
    kernel.usesDynamicStack =
        node->getKind() == llvm::msgpack::Type::Boolean && node->getBool();
  if (DocNode *node = lookup(map, ".reqd_workgroup_size");
      node && node->isArray()) {
    auto &sizes = node->getArray();
    for (size_t i = 0; i < 3 && i < sizes.size(); ++i)
      if (sizes[i].getKind() == llvm::msgpack::Type::UInt)
        kernel.reqdWorkgroupSize[i] = sizes[i].getUInt();
  }
  if (DocNode *node = lookup(map, ".args"); node && node->isArray()) {
    for (DocNode &argNode : node->getArray()) {
      if (!argNode.isMap())
        continue;
      MapDocNode &argMap = argNode.getMap();
      KernelArgument arg;
      arg.name = getString(argMap, ".name");
      arg.valueKind = getString(argMap, ".value_kind");
      arg.addressSpace = getString(argMap, ".address_space");
      arg.offset = getUnsigned(argMap, ".offset");
      arg.size = getUnsigned(argMap, ".size");
      kernel.args.push_back(std::move(arg));
    }
  }
  return kernel;
}

static llvm::Expected<CodeObjectMetadata>
parseMetadataNote(llvm::StringRef blob) {
  llvm::msgpack::Reader reader(blob);
  llvm::msgpack::Object top;
  llvm::Expected<bool> read = reader.read(top);
  if (!read) {
    llvm::consumeError(read.takeError());
    return makeError("the AMDGPU metadata note is not valid MessagePack");
  }
  if (!*read || !isWellFormedMetadata(reader, top))
    return makeError("the AMDGPU metadata note is not a map with string keys");
  llvm::msgpack::Document document;
  if (!document.readFromBlob(blob, /*Multi=*/false))
    return makeError("the AMDGPU metadata note is not valid MessagePack");
  if (!document.getRoot().isMap())
    return makeError("the AMDGPU metadata note is not a map");
  MapDocNode &root = document.getRoot().getMap();
  CodeObjectMetadata metadata;
  metadata.target = getString(root, "amdhsa.target");
  DocNode *kernels = lookup(root, "amdhsa.kernels");
  if (!kernels || !kernels->isArray())
    return makeError("the AMDGPU metadata note has no amdhsa.kernels list");
  for (DocNode &kernel : kernels->getArray())
    if (kernel.isMap())
      metadata.kernels.push_back(parseKernel(kernel.getMap()));
  return metadata;
}

llvm::Expected<CodeObjectMetadata>
tessel::readCodeObjectMetadata(llvm::ArrayRef<char> hsaco) {
  llvm::MemoryBufferRef buffer(llvm::StringRef(hsaco.data(), hsaco.size()),
                               "hsaco");
  auto object = llvm::object::ELF64LEObjectFile::create(buffer);
  if (!object)
    return makeError(llvm::toString(object.takeError()));
  const auto &elf = object->getELFFile();
  if (elf.getHeader().e_machine != llvm::ELF::EM_AMDGPU)
    return makeError("not an AMDGPU ELF file");
  auto sections = elf.sections();
  if (!sections)
    return makeError(llvm::toString(sections.takeError()));
  for (const auto &section : *sections) {
    if (section.sh_type != llvm::ELF::SHT_NOTE)
      continue;
    llvm::Error error = llvm::Error::success();
    for (const auto &note : elf.notes(section, error)) {
      if (note.getName() != "AMDGPU" ||
          note.getType() != llvm::ELF::NT_AMDGPU_METADATA)
        continue;
      llvm::ArrayRef<uint8_t> desc = note.getDesc(section.sh_addralign);
      llvm::consumeError(std::move(error));
      return parseMetadataNote(llvm::StringRef(
          reinterpret_cast<const char *>(desc.data()), desc.size()));
    }
    if (error)
      return makeError(llvm::toString(std::move(error)));
  }
  return makeError("no NT_AMDGPU_METADATA note (code object v4 or later)");
}

//===----------------------------------------------------------------------===//
// Report
//===----------------------------------------------------------------------===//

static Occupancy occupancyOf(const KernelMetadata &kernel, const Chip &chip) {
  KernelResourceUsage usage;
  usage.archVgprs = kernel.vgprCount;
  usage.accVgprs = kernel.agprCount;
  usage.sgprs = kernel.sgprCount;
  usage.ldsBytes = kernel.ldsBytes;
  usage.workgroupSize = kernel.workgroupLanes();
  usage.waveSize = kernel.wavefrontSize ? kernel.wavefrontSize : 64;
  return computeOccupancy(chip, usage);
}

static std::string formatWorkgroup(const KernelMetadata &kernel) {
  if (kernel.reqdWorkgroupSize[0] == 0)
    return "up to " + std::to_string(kernel.maxFlatWorkgroupSize) + " lanes";
  return std::to_string(kernel.reqdWorkgroupSize[0]) + "x" +
         std::to_string(kernel.reqdWorkgroupSize[1]) + "x" +
         std::to_string(kernel.reqdWorkgroupSize[2]);
}

void tessel::printKernelReport(llvm::raw_ostream &os,
                               const CodeObjectMetadata &metadata,
                               const Chip &chip) {
  auto row = [&](llvm::StringRef key, const llvm::Twine &value) {
    os << "  " << llvm::left_justify(key, 18) << value << "\n";
  };
  for (const KernelMetadata &kernel : metadata.kernels) {
    Occupancy occupancy = occupancyOf(kernel, chip);
    os << "kernel " << kernel.name << " (" << metadata.target << ")\n";
    row("wavefront size", llvm::Twine(kernel.wavefrontSize));
    row("workgroup", formatWorkgroup(kernel));
    row("VGPRs", llvm::Twine(kernel.vgprCount));
    row("AGPRs", llvm::Twine(kernel.agprCount));
    row("SGPRs", llvm::Twine(kernel.sgprCount));
    row("LDS bytes", llvm::Twine(kernel.ldsBytes));
    row("scratch bytes", llvm::Twine(kernel.scratchBytes));
    row("VGPR spills", llvm::Twine(kernel.vgprSpillCount));
    row("SGPR spills", llvm::Twine(kernel.sgprSpillCount));
    row("kernarg bytes", llvm::Twine(kernel.kernargSegmentSize));
    row("occupancy", llvm::Twine(occupancy.wavesPerSimd) + " waves/SIMD of " +
                         llvm::Twine(chip.maxWavesPerSimd) + ", limited by " +
                         occupancy.limiter + " (VGPRs " +
                         llvm::Twine(occupancy.byVgprs) + ", LDS " +
                         llvm::Twine(occupancy.byLds) + ", SGPRs " +
                         llvm::Twine(occupancy.bySgprs) + ")");
    os << "  arguments:\n";
    for (const KernelArgument &arg : kernel.args) {
      if (llvm::StringRef(arg.valueKind).starts_with("hidden_"))
        continue;
      os << "    offset " << llvm::right_justify(std::to_string(arg.offset), 4)
         << "  size " << llvm::right_justify(std::to_string(arg.size), 2)
         << "  " << arg.valueKind;
      if (!arg.addressSpace.empty())
        os << " (" << arg.addressSpace << ")";
      if (!arg.name.empty())
        os << "  " << arg.name;
      os << "\n";
    }
  }
}

llvm::json::Value tessel::kernelReportToJSON(const CodeObjectMetadata &metadata,
                                             const Chip &chip) {
  llvm::json::Array kernels;
  for (const KernelMetadata &kernel : metadata.kernels) {
    Occupancy occupancy = occupancyOf(kernel, chip);
    llvm::json::Array args;
    for (const KernelArgument &arg : kernel.args)
      args.push_back(llvm::json::Object{{"name", arg.name},
                                        {"value_kind", arg.valueKind},
                                        {"address_space", arg.addressSpace},
                                        {"offset", arg.offset},
                                        {"size", arg.size}});
    llvm::json::Array reqd;
    for (unsigned size : kernel.reqdWorkgroupSize)
      reqd.push_back(size);
    kernels.push_back(llvm::json::Object{
        {"name", kernel.name},
        {"symbol", kernel.symbol},
        {"wavefront_size", kernel.wavefrontSize},
        {"max_flat_workgroup_size", kernel.maxFlatWorkgroupSize},
        {"reqd_workgroup_size", std::move(reqd)},
        {"vgpr_count", kernel.vgprCount},
        {"agpr_count", kernel.agprCount},
        {"sgpr_count", kernel.sgprCount},
        {"vgpr_spill_count", kernel.vgprSpillCount},
        {"sgpr_spill_count", kernel.sgprSpillCount},
        {"lds_bytes", kernel.ldsBytes},
        {"scratch_bytes", kernel.scratchBytes},
        {"kernarg_segment_size", kernel.kernargSegmentSize},
        {"uses_dynamic_stack", kernel.usesDynamicStack},
        {"occupancy",
         llvm::json::Object{{"waves_per_simd", occupancy.wavesPerSimd},
                            {"max_waves_per_simd", chip.maxWavesPerSimd},
                            {"limited_by", occupancy.limiter},
                            {"by_vgprs", occupancy.byVgprs},
                            {"by_lds", occupancy.byLds},
                            {"by_sgprs", occupancy.bySgprs}}},
        {"args", std::move(args)}});
  }
  return llvm::json::Object{{"target", metadata.target},
                            {"chip", chip.name},
                            {"kernels", std::move(kernels)}};
}
