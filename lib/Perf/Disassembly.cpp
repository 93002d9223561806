//===- Disassembly.cpp - A kernel's machine code, classified --------------===//

#include "tessel/Perf/Disassembly.h"
#include "tessel/Target/Chip.h"
#include "tessel/Target/Mma.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/MC/MCAsmInfo.h"
#include "llvm/MC/MCContext.h"
#include "llvm/MC/MCDisassembler/MCDisassembler.h"
#include "llvm/MC/MCInst.h"
#include "llvm/MC/MCInstPrinter.h"
#include "llvm/MC/MCInstrAnalysis.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCRegisterInfo.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/MCTargetOptions.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Regex.h"
#include "llvm/TargetParser/Triple.h"

#include <mutex>

using namespace tessel;
using llvm::StringRef;

extern "C" {
void LLVMInitializeAMDGPUTargetInfo();
void LLVMInitializeAMDGPUTargetMC();
void LLVMInitializeAMDGPUDisassembler();
}

StringRef tessel::stringifyInstrKind(InstrKind kind) {
  switch (kind) {
  case InstrKind::Matrix:
    return "matrix";
  case InstrKind::Valu:
    return "valu";
  case InstrKind::Transcendental:
    return "transcendental";
  case InstrKind::Salu:
    return "salu";
  case InstrKind::LdsRead:
    return "lds-read";
  case InstrKind::LdsWrite:
    return "lds-write";
  case InstrKind::GlobalLoad:
    return "global-load";
  case InstrKind::GlobalStore:
    return "global-store";
  case InstrKind::ScalarLoad:
    return "scalar-load";
  case InstrKind::Wait:
    return "wait";
  case InstrKind::Barrier:
    return "barrier";
  case InstrKind::Branch:
    return "branch";
  case InstrKind::SetPriority:
    return "setprio";
  case InstrKind::Nop:
    return "nop";
  case InstrKind::EndProgram:
    return "endpgm";
  case InstrKind::Other:
    return "other";
  }
  return "other";
}

std::optional<size_t> KernelCode::indexAt(uint64_t address) const {
  auto it = llvm::partition_point(instructions, [&](const Instruction &instr) {
    return instr.address < address;
  });
  if (it == instructions.end() || it->address != address)
    return std::nullopt;
  return size_t(it - instructions.begin());
}

//===----------------------------------------------------------------------===//
// Classification
//===----------------------------------------------------------------------===//

/// Bytes per lane a memory mnemonic moves, from its width suffix.
static unsigned memoryBytesPerLane(StringRef mnemonic) {
  static const std::pair<StringRef, unsigned> kWidths[] = {
      {"dwordx4", 16},
      {"dwordx3", 12},
      {"dwordx2", 8},
      {"b128", 16},
      {"b96", 12},
      {"read2st64_b64", 16},
      {"write2st64_b64", 16},
      {"read2_b64", 16},
      {"write2_b64", 16},
      {"read2st64_b32", 8},
      {"write2st64_b32", 8},
      {"read2_b32", 8},
      {"write2_b32", 8},
      {"load_2addr_b64", 16},
      {"store_2addr_b64", 16},
      {"load_2addr_b32", 8},
      {"store_2addr_b32", 8},
      {"tr_b16", 8},
      {"tr_b8", 8},
      {"b64", 8},
      {"x2", 8},
      {"dword", 4},
      {"b32", 4},
      {"f32", 4},
      {"u16", 2},
      {"i16", 2},
      {"b16", 2},
      {"short", 2},
      {"d16", 2},
      {"u8", 1},
      {"i8", 1},
      {"byte", 1},
      {"b8", 1},
  };
  for (auto [suffix, bytes] : kWidths)
    if (mnemonic.contains(suffix))
      return bytes;
  return 4;
}

static bool isTranscendental(StringRef mnemonic) {
  for (StringRef prefix :
       {"v_exp_", "v_log_", "v_rcp_", "v_rsq_", "v_sqrt_", "v_sin_", "v_cos_"})
    if (mnemonic.starts_with(prefix))
      return true;
  return false;
}

/// Whether `mnemonic` (of `kind`) waits on `chip` for the matrix
/// instruction its own wave has in flight instead of issuing beside it
/// (docs/hardware.md, "Vector instructions that wait for their wave's
/// product"): on CDNA3 and CDNA4, packed math (`v_pk_*`), dot products and
/// the pair conversions to 8-bit floats; on CDNA3 the transcendentals too.
/// This is LLVM's list for these chips (`SIInstrInfo::isNeverCoissue`,
/// whose packed instructions its code generator splits into unpacked ones
/// where they fall under a product); a measurement on CDNA4 found its
/// transcendentals issuing beside the products.
static bool waitsForOwnMatrix(StringRef mnemonic, InstrKind kind,
                              const Chip &chip) {
  if (!chip.isCDNA() || chip.isaVersion() < 9400)
    return false;
  if (kind == InstrKind::Transcendental)
    return chip.isaVersion() < 9500;
  if (kind != InstrKind::Valu)
    return false;
  for (StringRef prefix :
       {"v_pk_", "v_dot", "v_cvt_pk_fp8_", "v_cvt_pk_bf8_", "v_mqsad_"})
    if (mnemonic.starts_with(prefix))
      return true;
  return false;
}

/// The element class of a matrix mnemonic, for the chip's rate table.
/// FLOPs and pipe cycles of a matrix instruction: from the catalogue when it
/// has the instruction, otherwise derived from its shape (MxNxK, blocks) and
/// the chip's dense rate per SIMD.
static void describeMatrix(Instruction &instr, const Chip &chip) {
  if (const MmaInstr *known = lookupMma(instr.mnemonic, chip)) {
    instr.matrixFlops = known->getFlops();
    instr.matrixCycles = known->getCycles(chip);
    if (instr.matrixCycles)
      return;
  }
  llvm::SmallVector<StringRef, 4> groups;
  static const llvm::Regex kShape("([0-9]+)x([0-9]+)x([0-9]+)");
  uint64_t flops = 0;
  if (kShape.match(instr.mnemonic, &groups)) {
    uint64_t m = 0, n = 0, k = 0;
    groups[1].getAsInteger(10, m);
    groups[2].getAsInteger(10, n);
    groups[3].getAsInteger(10, k);
    uint64_t blocks = 1;
    static const llvm::Regex kBlocks("_([0-9]+)b($|_)");
    llvm::SmallVector<StringRef, 3> blockGroups;
    if (kBlocks.match(instr.mnemonic, &blockGroups))
      blockGroups[1].getAsInteger(10, blocks);
    flops = 2 * m * n * k * blocks;
  }
  instr.matrixFlops = flops;
  std::optional<MatrixType> type = getMatrixType(instr.mnemonic);
  unsigned perSimd =
      type ? chip.matrixOpsPerClock(*type) / std::max(1u, chip.simdsPerCU) : 0;
  instr.matrixCycles =
      perSimd && flops ? std::max<uint64_t>(4, flops / perSimd) : 16;
}

/// The counters an s_waitcnt (gfx9-gfx11) or s_wait_* (gfx12) waits for.
static WaitCounts parseWait(StringRef text, StringRef mnemonic) {
  WaitCounts wait;
  auto counter = [&](StringRef name) -> std::optional<unsigned> {
    size_t at = text.find((name + "(").str());
    if (at == StringRef::npos)
      return std::nullopt;
    unsigned value = 0;
    StringRef digits =
        text.drop_front(at + name.size() + 1).take_while(llvm::isDigit);
    if (digits.getAsInteger(10, value))
      return std::nullopt;
    return value;
  };
  auto immediate = [&]() -> unsigned {
    StringRef operand = text.drop_front(mnemonic.size()).trim();
    if (size_t comma = operand.rfind(','); comma != StringRef::npos)
      operand = operand.drop_front(comma + 1).trim();
    unsigned value = 0;
    if (operand.starts_with_insensitive("0x"))
      operand.drop_front(2).getAsInteger(16, value);
    else
      operand.getAsInteger(10, value);
    return value;
  };
  if (mnemonic == "s_waitcnt") {
    wait.vm = counter("vmcnt");
    wait.lgkm = counter("lgkmcnt");
    wait.vs = counter("vscnt");
  } else if (mnemonic == "s_waitcnt_vmcnt" || mnemonic == "s_wait_loadcnt") {
    wait.vm = immediate();
  } else if (mnemonic == "s_waitcnt_lgkmcnt" || mnemonic == "s_wait_dscnt" ||
             mnemonic == "s_wait_kmcnt") {
    wait.lgkm = immediate();
  } else if (mnemonic == "s_waitcnt_vscnt" || mnemonic == "s_wait_storecnt") {
    wait.vs = immediate();
  } else if (mnemonic == "s_wait_loadcnt_dscnt") {
    unsigned value = immediate();
    wait.vm = (value >> 8) & 0x3f;
    wait.lgkm = value & 0x3f;
  }
  return wait;
}

static InstrKind classifyMnemonic(StringRef m) {
  if (m.starts_with("v_mfma") || m.starts_with("v_smfmac") ||
      m.starts_with("v_wmma") || m.starts_with("v_swmmac"))
    return InstrKind::Matrix;
  if (isTranscendental(m))
    return InstrKind::Transcendental;
  if (m.starts_with("v_"))
    return InstrKind::Valu;
  if (m.starts_with("ds_")) {
    bool returnsData = m.contains("read") || m.contains("load") ||
                       m.contains("permute") || m.contains("swizzle") ||
                       m.contains("_rtn");
    return returnsData ? InstrKind::LdsRead : InstrKind::LdsWrite;
  }
  if (m.starts_with("global_") || m.starts_with("buffer_") ||
      m.starts_with("flat_") || m.starts_with("scratch_")) {
    if (m.contains("store") || (m.contains("atomic") && !m.contains("rtn")))
      return InstrKind::GlobalStore;
    return InstrKind::GlobalLoad;
  }
  if (m.starts_with("s_load") || m.starts_with("s_buffer_load") ||
      m.starts_with("s_scratch_load"))
    return InstrKind::ScalarLoad;
  if (m.starts_with("s_waitcnt") || m.starts_with("s_wait_"))
    return m == "s_wait_event" ? InstrKind::Other : InstrKind::Wait;
  if (m == "s_barrier" || m == "s_barrier_wait")
    return InstrKind::Barrier;
  if (m == "s_branch" || m.starts_with("s_cbranch") ||
      m.starts_with("s_setpc") || m.starts_with("s_swappc"))
    return InstrKind::Branch;
  if (m == "s_setprio")
    return InstrKind::SetPriority;
  if (m == "s_nop" || m == "s_sleep")
    return InstrKind::Nop;
  if (m == "s_endpgm")
    return InstrKind::EndProgram;
  if (m.starts_with("s_"))
    return InstrKind::Salu;
  return InstrKind::Other;
}

Instruction tessel::classifyInstruction(StringRef text, const Chip &chip) {
  Instruction instr;
  instr.text = text.trim().str();
  StringRef trimmed = StringRef(instr.text);
  instr.mnemonic = trimmed.take_until(llvm::isSpace).str();
  StringRef m = instr.mnemonic;
  instr.kind = classifyMnemonic(m);
  instr.waitsForMatrix = waitsForOwnMatrix(m, instr.kind, chip);
  switch (instr.kind) {
  case InstrKind::Matrix:
    describeMatrix(instr, chip);
    break;
  case InstrKind::LdsRead:
  case InstrKind::LdsWrite:
  case InstrKind::GlobalLoad:
  case InstrKind::GlobalStore:
    instr.bytesPerLane = memoryBytesPerLane(m);
    break;
  case InstrKind::Wait:
    instr.wait = parseWait(trimmed, m);
    break;
  case InstrKind::Branch:
    instr.isConditional = m.starts_with("s_cbranch");
    break;
  case InstrKind::Nop: {
    unsigned count = 0;
    trimmed.drop_front(m.size()).trim().getAsInteger(0, count);
    // s_nop N idles N+1 cycles; s_sleep N about 64 N clocks.
    instr.nopCycles = m == "s_sleep" ? 64 * count : count + 1;
    break;
  }
  default:
    break;
  }
  return instr;
}

//===----------------------------------------------------------------------===//
// Disassembly
//===----------------------------------------------------------------------===//

namespace {
/// LLVM's MC objects for one chip.
struct McTools {
  llvm::Triple triple{"amdgcn-amd-amdhsa"};
  std::unique_ptr<llvm::MCRegisterInfo> registers;
  std::unique_ptr<llvm::MCAsmInfo> asmInfo;
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget;
  std::unique_ptr<llvm::MCInstrInfo> instrInfo;
  std::unique_ptr<llvm::MCContext> context;
  std::unique_ptr<llvm::MCDisassembler> disassembler;
  std::unique_ptr<llvm::MCInstPrinter> printer;
  std::unique_ptr<llvm::MCInstrAnalysis> analysis;
};
} // namespace

static llvm::Expected<McTools> createMcTools(StringRef processor) {
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUDisassembler();
  });
  McTools tools;
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(tools.triple, error);
  if (!target)
    return llvm::createStringError(error);
  llvm::MCTargetOptions options;
  tools.registers.reset(target->createMCRegInfo(tools.triple));
  tools.asmInfo.reset(
      target->createMCAsmInfo(*tools.registers, tools.triple, options));
  tools.subtarget.reset(
      target->createMCSubtargetInfo(tools.triple, processor, ""));
  tools.instrInfo.reset(target->createMCInstrInfo());
  if (!tools.registers || !tools.asmInfo || !tools.subtarget ||
      !tools.instrInfo)
    return llvm::createStringError("cannot create the AMDGPU MC layer for " +
                                   processor);
  tools.context = std::make_unique<llvm::MCContext>(
      tools.triple, tools.asmInfo.get(), tools.registers.get(),
      tools.subtarget.get());
  tools.disassembler.reset(
      target->createMCDisassembler(*tools.subtarget, *tools.context));
  tools.printer.reset(target->createMCInstPrinter(
      tools.triple, tools.asmInfo->getAssemblerDialect(), *tools.asmInfo,
      *tools.instrInfo, *tools.registers));
  tools.analysis.reset(target->createMCInstrAnalysis(tools.instrInfo.get()));
  if (!tools.disassembler || !tools.printer)
    return llvm::createStringError("cannot create the AMDGPU disassembler");
  return std::move(tools);
}

namespace {
struct KernelBytes {
  llvm::ArrayRef<uint8_t> bytes;
  uint64_t entry = 0; // the symbol's address
};
} // namespace

/// The kernels of an object: functions that have a `.kd` descriptor.
static std::vector<std::string>
listKernels(const llvm::object::ELFObjectFileBase &object) {
  llvm::StringSet<> descriptors;
  for (const llvm::object::ELFSymbolRef &symbol : object.symbols())
    if (llvm::Expected<StringRef> name = symbol.getName())
      descriptors.insert(*name);
    else
      llvm::consumeError(name.takeError());
  std::vector<std::string> kernels;
  for (const llvm::object::ELFSymbolRef &symbol : object.symbols()) {
    llvm::Expected<StringRef> name = symbol.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    if (descriptors.contains((*name + ".kd").str()))
      kernels.push_back(name->str());
  }
  return kernels;
}

static llvm::Expected<KernelBytes>
findKernelBytes(const llvm::object::ELFObjectFileBase &object,
                StringRef kernel) {
  for (const llvm::object::ELFSymbolRef &symbol : object.symbols()) {
    llvm::Expected<StringRef> name = symbol.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    if (*name != kernel || symbol.getELFType() != llvm::ELF::STT_FUNC)
      continue;
    llvm::Expected<llvm::object::section_iterator> section =
        symbol.getSection();
    llvm::Expected<uint64_t> address = symbol.getAddress();
    if (!section || !address || *section == object.section_end()) {
      if (!section)
        llvm::consumeError(section.takeError());
      if (!address)
        llvm::consumeError(address.takeError());
      break;
    }
    llvm::Expected<StringRef> contents = (*section)->getContents();
    if (!contents)
      return contents.takeError();
    uint64_t begin = *address - (*section)->getAddress();
    uint64_t size = symbol.getSize();
    if (begin > contents->size() || size > contents->size() - begin)
      return llvm::createStringError("kernel '" + kernel +
                                     "' lies outside its section");
    return KernelBytes{
        llvm::ArrayRef(
            reinterpret_cast<const uint8_t *>(contents->data()) + begin, size),
        *address};
  }
  std::vector<std::string> kernels = listKernels(object);
  return llvm::createStringError(
      "no kernel '" + kernel + "' in the code object (kernels: " +
      (kernels.empty() ? std::string("none") : llvm::join(kernels, ", ")) +
      ")");
}

llvm::Expected<KernelCode>
tessel::disassembleKernel(llvm::ArrayRef<char> codeObject, StringRef kernel,
                          const Chip &chip) {
  llvm::MemoryBufferRef buffer(StringRef(codeObject.data(), codeObject.size()),
                               "code object");
  llvm::Expected<std::unique_ptr<llvm::object::ObjectFile>> object =
      llvm::object::ObjectFile::createObjectFile(buffer);
  if (!object)
    return object.takeError();
  auto *elf = llvm::dyn_cast<llvm::object::ELFObjectFileBase>(object->get());
  if (!elf || elf->getArch() != llvm::Triple::amdgcn)
    return llvm::createStringError("not an AMDGPU ELF code object");
  llvm::Expected<KernelBytes> bytes = findKernelBytes(*elf, kernel);
  if (!bytes)
    return bytes.takeError();
  llvm::Expected<McTools> tools = createMcTools(chip.name);
  if (!tools)
    return tools.takeError();

  KernelCode code;
  code.name = kernel.str();
  code.processor = chip.name.str();
  uint64_t offset = 0;
  while (offset < bytes->bytes.size()) {
    llvm::MCInst inst;
    uint64_t size = 0;
    auto status = tools->disassembler->getInstruction(
        inst, size, bytes->bytes.drop_front(offset), offset, llvm::nulls());
    if (status != llvm::MCDisassembler::Success || size == 0) {
      // Padding after s_endpgm (s_code_end, zeros) ends the kernel.
      if (!code.instructions.empty() &&
          llvm::any_of(code.instructions, [](const Instruction &instr) {
            return instr.kind == InstrKind::EndProgram;
          }))
        break;
      return llvm::createStringError(
          llvm::formatv("cannot decode the instruction at offset {0:x} of "
                        "kernel '{1}' for {2}",
                        offset, kernel, chip.name)
              .str());
    }
    std::string text;
    llvm::raw_string_ostream os(text);
    tools->printer->printInst(&inst, offset, "", *tools->subtarget, os);
    Instruction instr = classifyInstruction(text, chip);
    instr.address = offset;
    instr.size = size;
    uint64_t target = 0;
    if (instr.kind == InstrKind::Branch && tools->analysis &&
        tools->analysis->evaluateBranch(inst, offset, size, target))
      instr.branchTarget = target;
    code.instructions.push_back(std::move(instr));
    offset += size;
  }
  markAccumulatorZeroing(code.instructions);
  return code;
}

/// The operands of a printed instruction: the comma-separated fields after
/// the mnemonic, each up to its first space (modifiers follow the last).
static llvm::SmallVector<StringRef> printedOperands(const Instruction &instr) {
  llvm::SmallVector<StringRef> fields;
  StringRef(instr.text)
      .drop_front(instr.mnemonic.size())
      .split(fields, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (StringRef &field : fields)
    field = field.trim().take_until(llvm::isSpace);
  return fields;
}

void tessel::markAccumulatorZeroing(std::vector<Instruction> &instructions) {
  StringRef zeroed; // the destination of the chain's last instruction
  for (Instruction &instr : instructions) {
    if (instr.kind != InstrKind::Matrix)
      continue;
    llvm::SmallVector<StringRef> operands = printedOperands(instr);
    bool zeroes =
        operands.size() >= 4 && operands[1] == operands[2] &&
        (operands[3] == "0" || (!zeroed.empty() && operands[3] == zeroed));
    if (!zeroes) {
      zeroed = StringRef();
      continue;
    }
    instr.zeroesAccumulator = true;
    instr.matrixFlops = 0;
    zeroed = operands[0];
  }
}
