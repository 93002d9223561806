//===- Hsaco.cpp - gpu.module to HSACO code objects -------------*- C++ -*-===//

#include "tessel/Target/Hsaco.h"
#include "tessel/Target/Chip.h"
#include "tessel/Target/ChipIntrinsics.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/ROCDL/ROCDLToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "lld/Common/Driver.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/CodeGen/MachineModuleInfo.h"
#include "llvm/CodeGen/Passes.h"
#include "llvm/CodeGen/TargetPassConfig.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/IntrinsicsAMDGPU.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/OptBisect.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/PassRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/Scalar.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <cstring>
#include <mutex>

LLD_HAS_DRIVER(elf)

extern "C" {
void LLVMInitializeAMDGPUTargetInfo();
void LLVMInitializeAMDGPUTarget();
void LLVMInitializeAMDGPUTargetMC();
void LLVMInitializeAMDGPUAsmPrinter();
void LLVMInitializeAMDGPUAsmParser();
}

using namespace mlir;
using namespace tessel;

#ifndef TESSEL_DEFAULT_ROCM_DEVICE_LIBS
#define TESSEL_DEFAULT_ROCM_DEVICE_LIBS                                        \
  "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode"
#endif

static constexpr llvm::StringLiteral kAmdgpuTriple = "amdgcn-amd-amdhsa";

void tessel::registerHsacoTranslations(DialectRegistry &registry) {
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerROCDLDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
}

std::string tessel::resolveDeviceLibsDir(const HsacoOptions &options) {
  if (!options.deviceLibsDir.empty())
    return options.deviceLibsDir;
  if (std::optional<std::string> env =
          llvm::sys::Process::GetEnv("TESSEL_ROCM_DEVICE_LIBS"))
    if (!env->empty())
      return *env;
  return TESSEL_DEFAULT_ROCM_DEVICE_LIBS;
}

void tessel::installFatalErrorHandlerForTools(llvm::StringRef toolName) {
  static std::string name;
  name = toolName.str();
  llvm::install_fatal_error_handler(
      [](void *, const char *reason, bool) {
        llvm::errs() << name << ": error: LLVM backend: " << reason << "\n";
        llvm::errs().flush();
        std::exit(1);
      },
      nullptr);
}

namespace {
/// Collects the LLVM errors reported while compiling one module, so they
/// become MLIR diagnostics instead of being printed (or ignored) by LLVM.
struct LLVMErrorCollector {
  std::vector<std::string> errors;

  static void handle(const llvm::DiagnosticInfo *info, void *context) {
    if (info->getSeverity() != llvm::DS_Error)
      return;
    std::string text;
    llvm::raw_string_ostream os(text);
    llvm::DiagnosticPrinterRawOStream printer(os);
    info->print(printer);
    // Backend diagnostics carry no source location of their own.
    llvm::StringRef message(text);
    message.consume_front("<unknown>:0:0: ");
    static_cast<LLVMErrorCollector *>(context)->errors.push_back(message.str());
  }

  /// Emits the collected errors at `loc`; failure if there were any.
  LogicalResult flush(Location loc, StringRef stage) {
    if (errors.empty())
      return success();
    InFlightDiagnostic diag = emitError(loc) << stage << " failed";
    for (const std::string &error : errors)
      diag.attachNote() << error;
    errors.clear();
    return failure();
  }
};
} // namespace

static void initializeAMDGPUTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
    LLVMInitializeAMDGPUAsmParser();
  });
}

bool tessel::isSupportedCodeObjectVersion(unsigned version) {
  return version >= 4 && version <= 6;
}

unsigned tessel::getCodeObjectVersion(llvm::ArrayRef<char> hsaco) {
  // e_ident: EI_OSABI (7) is ELFOSABI_AMDGPU_HSA (64); EI_ABIVERSION (8) is
  // 2, 3, 4 for code object versions 4, 5, 6.
  constexpr size_t kOsAbi = 7, kAbiVersion = 8;
  if (hsaco.size() < 16 ||
      std::memcmp(hsaco.data(),
                  "\x7f"
                  "ELF",
                  4) != 0 ||
      uint8_t(hsaco[kOsAbi]) != 64)
    return 0;
  unsigned abiVersion = uint8_t(hsaco[kAbiVersion]);
  return abiVersion >= 2 && abiVersion <= 4 ? abiVersion + 2 : 0;
}

static FailureOr<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(Location loc, const Chip &chip, unsigned optLevel) {
  initializeAMDGPUTarget();
  llvm::Triple triple(kAmdgpuTriple);
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return emitError(loc) << "AMDGPU target unavailable in LLVM: " << error;
  // -O2 and -O3 both generate code at LLVM's default level: its aggressive
  // level adds GVN to the code generator's IR passes, whose partial
  // redundancy elimination carries an attention loop's broadcast maximum
  // across the lazy rescale's join as a whole vector, one register a lane
  // (scalarizeSplatPhis undoes that after the IR pipeline, not after the
  // code generator's own GVN). Measured: 48 GEMM kernels byte-identical;
  // gfx950's ping-pong attention up to 4 points better by the model, other
  // attention kernels -0.4 to +2.4 (docs/performance.md, "Ping-pong key
  // loops unrolled by their slots").
  llvm::CodeGenOptLevel level = optLevel == 0 ? llvm::CodeGenOptLevel::None
                                : optLevel == 1
                                    ? llvm::CodeGenOptLevel::Less
                                    : llvm::CodeGenOptLevel::Default;
  std::string features =
      chip.defaultWaveSize == 32 ? "+wavefrontsize32" : "+wavefrontsize64";
  if (chip.isCDNA())
    features.clear(); // CDNA is wave64 only; the feature is implied.
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, chip.name, features, llvm::TargetOptions(), llvm::Reloc::PIC_,
      std::nullopt, level));
  if (!machine)
    return emitError(loc) << "could not create an AMDGPU target machine for "
                          << chip.name;
  return machine;
}

/// Names of functions the module calls but does not define, other than LLVM
/// intrinsics.
static SmallVector<std::string> getUndefinedFunctions(llvm::Module &module) {
  SmallVector<std::string> names;
  for (llvm::Function &function : module)
    if (function.isDeclaration() && !function.isIntrinsic() &&
        !function.use_empty())
      names.push_back(function.getName().str());
  return names;
}

static bool callsDeviceLibs(llvm::Module &module) {
  return llvm::any_of(getUndefinedFunctions(module), [](StringRef name) {
    return name.starts_with("__ocml_") || name.starts_with("__ockl_");
  });
}

/// Gives the device libraries' `__oclc_*` control variables their values
/// (instead of linking the oclc_*.bc files, which exist for only some chips
/// in a given ROCm release). The ABI version is the code object's: ockl
/// reads the implicit kernel arguments in its layout.
static void defineControlVariables(llvm::Module &module, const Chip &chip,
                                   unsigned codeObjectVersion) {
  const std::pair<StringRef, unsigned> i8Controls[] = {
      {"__oclc_finite_only_opt", 0},
      {"__oclc_unsafe_math_opt", 0},
      {"__oclc_daz_opt", 0},
      {"__oclc_correctly_rounded_sqrt32", 1},
      {"__oclc_wavefrontsize64", chip.defaultWaveSize == 64 ? 1u : 0u},
  };
  const std::pair<StringRef, unsigned> i32Controls[] = {
      {"__oclc_ISA_version", chip.isaVersion()},
      {"__oclc_ABI_version", codeObjectVersion * 100},
  };
  auto define = [&](StringRef name, unsigned bits, unsigned value) {
    llvm::GlobalVariable *global = module.getGlobalVariable(name);
    if (!global || !global->isDeclaration())
      return;
    global->setInitializer(llvm::ConstantInt::get(
        llvm::IntegerType::get(module.getContext(), bits), value));
    global->setConstant(true);
    global->setLinkage(llvm::GlobalValue::PrivateLinkage);
  };
  for (auto [name, value] : i8Controls)
    define(name, 8, value);
  for (auto [name, value] : i32Controls)
    define(name, 32, value);
}

/// Links ocml/ockl into `module` when it calls them, keeping only what is
/// used.
static LogicalResult linkDeviceLibraries(Location loc, llvm::Module &module,
                                         const Chip &chip,
                                         const HsacoOptions &options,
                                         bool &linked) {
  linked = false;
  if (!callsDeviceLibs(module))
    return success();
  std::string dir = resolveDeviceLibsDir(options);
  for (StringRef library : {"ocml.bc", "ockl.bc"}) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, library);
    llvm::SMDiagnostic parseError;
    std::unique_ptr<llvm::Module> libModule =
        llvm::parseIRFile(path, parseError, module.getContext());
    if (!libModule)
      return emitError(loc)
             << "cannot load ROCm device library '" << path
             << "': " << parseError.getMessage()
             << " (install rocm-device-libs or set TESSEL_ROCM_DEVICE_LIBS)";
    libModule->setTargetTriple(module.getTargetTriple());
    libModule->setDataLayout(module.getDataLayout());
    if (llvm::Linker::linkModules(module, std::move(libModule),
                                  llvm::Linker::Flags::LinkOnlyNeeded))
      return emitError(loc)
             << "linking ROCm device library '" << path << "' failed";
  }
  defineControlVariables(module, chip, options.codeObjectVersion);
  // Only kernels are entry points: everything linked in becomes internal so
  // the optimizer inlines it and drops what is unused.
  for (llvm::Function &function : module)
    if (!function.isDeclaration() &&
        function.getCallingConv() != llvm::CallingConv::AMDGPU_KERNEL)
      function.setLinkage(llvm::GlobalValue::InternalLinkage);
  linked = true;
  return success();
}

static void optimizeModule(llvm::Module &module, llvm::TargetMachine &machine,
                           unsigned optLevel) {
  llvm::LoopAnalysisManager loopAM;
  llvm::FunctionAnalysisManager functionAM;
  llvm::CGSCCAnalysisManager cgsccAM;
  llvm::ModuleAnalysisManager moduleAM;
  // The IR from the MLIR lowering stores each value once: dead-store
  // elimination finds nothing in it, yet its MemorySSA walks over the
  // kernels' long straight-line blocks took 40 % of the optimization time
  // (27 of 70 ms of a 4096^3 GEMM). The emitted code is the same without
  // it (docs/performance.md, "JIT compile latency").
  llvm::PassInstrumentationCallbacks instrumentation;
  instrumentation.registerShouldRunOptionalPassCallback(
      [](llvm::StringRef pass, llvm::Any) { return pass != "DSEPass"; });
  llvm::PassBuilder builder(&machine, llvm::PipelineTuningOptions(),
                            std::nullopt, &instrumentation);
  builder.registerModuleAnalyses(moduleAM);
  builder.registerCGSCCAnalyses(cgsccAM);
  builder.registerFunctionAnalyses(functionAM);
  builder.registerLoopAnalyses(loopAM);
  builder.crossRegisterProxies(loopAM, functionAM, cgsccAM, moduleAM);
  // -O3 runs the IR pipeline of -O2 (and its code generation level, see
  // createTargetMachine): what -O3 adds to it (e.g. argument promotion,
  // call-site splitting, more unswitching, inlining and unrolling) finds
  // nothing in these kernels. The ISA of 58 kernels over the three CDNA
  // chips is byte-identical, and the pipeline 8 % faster.
  llvm::OptimizationLevel level = optLevel == 0   ? llvm::OptimizationLevel::O0
                                  : optLevel == 1 ? llvm::OptimizationLevel::O1
                                                  : llvm::OptimizationLevel::O2;
  llvm::ModulePassManager passes =
      optLevel == 0 ? builder.buildO0DefaultPipeline(level)
                    : builder.buildPerModuleDefaultPipeline(level);
  passes.run(module, moduleAM);
}

/// Reads every pointer argument of each kernel once, at the kernel's entry.
/// The AMDGPU code generator loads a kernel argument from the kernarg
/// segment where it is used, and its IR sinking pass moves that scalar load
/// past the K loop when only the epilogue uses it (C's pointer, the scale
/// and bias vectors): every wave then waits for a scalar load after its
/// loop, in front of the epilogue's global loads. A wave-uniform read
/// (`llvm.amdgcn.readfirstlane`, convergent, so never sunk) in the entry
/// block keeps the load in the prologue, where its latency hides under the
/// first tile's loads; the pointer stays in two SGPRs through the loop.
/// All of them are issued before anything else (docs/performance.md,
/// "Decode: the split count by the larger bound").
static void readKernelPointersAtEntry(llvm::Module &module) {
  for (llvm::Function &function : module) {
    if (function.isDeclaration() ||
        function.getCallingConv() != llvm::CallingConv::AMDGPU_KERNEL)
      continue;
    llvm::IRBuilder<> builder(&*function.getEntryBlock().getFirstInsertionPt());
    bool anyRead = false;
    for (llvm::Argument &argument : function.args()) {
      if (!argument.getType()->isPointerTy() || argument.use_empty())
        continue;
      llvm::Value *read = builder.CreateIntrinsic(
          argument.getType(), llvm::Intrinsic::amdgcn_readfirstlane,
          {&argument});
      argument.replaceUsesWithIf(
          read, [&](llvm::Use &use) { return use.getUser() != read; });
      anyRead = true;
    }
    // A scheduling barrier behind the reads: the machine scheduler kept
    // some of them after the first wait for kernel arguments (a second
    // scalar-load latency in front of a split-KV decode's K and V loads).
    if (anyRead)
      builder.CreateIntrinsic(llvm::Intrinsic::amdgcn_sched_barrier, {},
                              {builder.getInt32(0)});
  }
}

/// Runs every kernel with the mode register's IEEE bit clear
/// ("amdgpu-ieee"="false"). With the bit set, `v_max_f32`/`v_min_f32`
/// quiet a signaling NaN input, and the backend makes every operand of a
/// maxnum it cannot prove quiet canonical first (a `v_max_f32 x, x`): four
/// to six extra VALU instructions per key block of an attention loop's
/// row maxima. Without it a signaling NaN among the inputs of a maximum is
/// ignored like a quiet one; NaN still reaches every result that
/// arithmetic makes from it (attention's sums and output through its
/// exp2), and no Tessel kernel tells the two kinds of NaN apart.
static void clearIeeeMode(llvm::Module &module) {
  for (llvm::Function &function : module)
    if (!function.isDeclaration() &&
        function.getCallingConv() == llvm::CallingConv::AMDGPU_KERNEL)
      function.addFnAttr("amdgpu-ieee", "false");
}

/// Whether every kernel of `gpuModule` carries the unit attribute `mark`
/// (and there is one).
static bool allKernelsMarked(gpu::GPUModuleOp gpuModule, llvm::StringRef mark) {
  bool anyKernel = false;
  for (auto function : gpuModule.getOps<LLVM::LLVMFuncOp>()) {
    if (function.isExternal())
      continue;
    if (!function->hasAttr(mark))
      return false;
    anyKernel = true;
  }
  return anyKernel;
}

namespace {
/// Keeps code generation passes from running (an LLVMContext's pass gate,
/// which the legacy pass manager's passes ask; a context belongs to one
/// compile, so compiles on other threads are not affected).
///
/// Loop strength reduction, for GEMM kernels: they address their operands
/// through buffer offsets the lowering already steps once per K step.
/// Without the pass the K loops of 20 GEMM kernels on gfx942 and gfx950
/// keep their length within 5 instructions and their llvm-mca density
/// within -0.5..+6.7 points (docs/performance.md, "JIT compile latency"),
/// and it took about a sixth of their code generation time. Attention's
/// key loops do gain from it (gfx942 head dim 128: 86.7 % without it
/// against 89.1 % by the model), so they keep it.
///
/// Machine sinking, for attention kernels with an unlikely rescale branch
/// in their key loops: the pass moved the LDS reads the lowering issues
/// ahead of the branch into the block after it, where the scheduler then
/// spread them over the softmax phase (docs/performance.md, "K read in the
/// softmax phase").
class SkippedCodegenPasses : public llvm::OptPassGate {
public:
  bool loopStrengthReduction = false;
  bool machineSinking = false;

  bool isEnabled() const override {
    return loopStrengthReduction || machineSinking;
  }
  bool shouldRunPass(llvm::StringRef pass, llvm::StringRef) const override {
    if (loopStrengthReduction && pass == getLoopStrengthReductionName())
      return false;
    return !(machineSinking && isMachineSinking(pass));
  }

private:
  /// The legacy pass's name, as it reports it to the gate.
  static llvm::StringRef getLoopStrengthReductionName() {
    static const std::string name = [] {
      std::unique_ptr<llvm::Pass> pass(llvm::createLoopStrengthReducePass());
      return pass->getPassName().str();
    }();
    return name;
  }
  /// A machine function pass reports its command-line argument
  /// ("machine-sink"); the registry knows it once code generation runs.
  static bool isMachineSinking(llvm::StringRef pass) {
    const llvm::PassInfo *info =
        llvm::PassRegistry::getPassRegistry()->getPassInfo(
            &llvm::MachineSinkingLegacyID);
    return info &&
           (pass == info->getPassArgument() || pass == info->getPassName());
  }
};
} // namespace

/// Runs the AMDGPU backend over `module` to `fileType` (assembly text or a
/// relocatable object). The pass list is what TargetMachine's
/// addPassesToEmitFile builds, with the matrix clusters' wave priority
/// (MatrixPriority.cpp) inserted after the backend's last pass, before the
/// asm printer, so that both kinds of output carry it.
static FailureOr<std::string> runCodegen(Location loc, llvm::Module &module,
                                         llvm::TargetMachine &machine,
                                         llvm::CodeGenFileType fileType) {
  std::string buffer;
  {
    llvm::raw_string_ostream stream(buffer);
    llvm::buffer_ostream pstream(stream);
    llvm::legacy::PassManager passes;
    llvm::TargetPassConfig *config = machine.createPassConfig(passes);
    config->setDisableVerify(true);
    passes.add(config);
    auto *moduleInfo = new llvm::MachineModuleInfoWrapperPass(&machine);
    passes.add(moduleInfo);
    if (config->addISelPasses())
      return emitError(loc) << "the AMDGPU backend cannot select instructions";
    config->addMachinePasses();
    config->setInitialized();
    passes.add(createMatrixClusterPriorityPass());
    if (machine.addAsmPrinter(passes, pstream, nullptr, fileType,
                              moduleInfo->getMMI().getContext()))
      return emitError(loc) << "the AMDGPU backend cannot emit this file type";
    passes.add(llvm::createFreeMachineFunctionPass());
    passes.run(module);
  }
  return buffer;
}

/// Links a relocatable AMDGPU object into an HSACO shared object with the lld
/// library. lld keeps global state, so links are serialized. Note that lld
/// resets every llvm::cl option of the process to its default when it links:
/// callers must read their command line before compiling.
static FailureOr<std::vector<char>> linkWithLld(Location loc,
                                                StringRef object) {
  static std::mutex lldMutex;
  llvm::SmallString<128> objectPath, hsacoPath;
  if (llvm::sys::fs::createTemporaryFile("tessel", "o", objectPath) ||
      llvm::sys::fs::createTemporaryFile("tessel", "hsaco", hsacoPath))
    return emitError(loc) << "cannot create temporary files for linking";
  llvm::FileRemover removeObject(objectPath), removeHsaco(hsacoPath);
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(objectPath, ec);
    if (ec)
      return emitError(loc)
             << "cannot write '" << objectPath << "': " << ec.message();
    os << object;
  }
  std::string diagnostics;
  llvm::raw_string_ostream diagStream(diagnostics);
  {
    std::lock_guard<std::mutex> lock(lldMutex);
    const char *args[] = {"ld.lld", "-shared",         objectPath.c_str(),
                          "-o",     hsacoPath.c_str(), "--no-undefined"};
    lld::Result result = lld::lldMain(args, diagStream, diagStream,
                                      {{lld::Gnu, &lld::elf::link}});
    if (result.retCode != 0)
      return emitError(loc) << "lld failed to link the code object: "
                            << llvm::StringRef(diagnostics).trim();
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(hsacoPath);
  if (!buffer)
    return emitError(loc) << "cannot read the linked code object: "
                          << buffer.getError().message();
  StringRef bytes = (*buffer)->getBuffer();
  return std::vector<char>(bytes.begin(), bytes.end());
}

FailureOr<GpuModuleBinary> tessel::compileGpuModule(gpu::GPUModuleOp gpuModule,
                                                    const Chip &chip,
                                                    const HsacoOptions &options,
                                                    HsacoStage stage) {
  Location loc = gpuModule.getLoc();
  if (!isSupportedCodeObjectVersion(options.codeObjectVersion))
    return emitError(loc) << "code object version " << options.codeObjectVersion
                          << " is not one LLVM emits (4, 5 or 6)";
  if (failed(verifyIntrinsicsForChip(gpuModule, chip)))
    return failure();
  FailureOr<std::unique_ptr<llvm::TargetMachine>> machine =
      createTargetMachine(loc, chip, options.optLevel);
  if (failed(machine))
    return failure();

  SkippedCodegenPasses skippedPasses;
  skippedPasses.loopStrengthReduction =
      allKernelsMarked(gpuModule, kSkipLoopStrengthReductionAttrName);
  skippedPasses.machineSinking =
      allKernelsMarked(gpuModule, kSkipMachineSinkingAttrName);
  llvm::LLVMContext llvmContext;
  if (skippedPasses.isEnabled())
    llvmContext.setOptPassGate(skippedPasses);
  LLVMErrorCollector collector;
  llvmContext.setDiagnosticHandlerCallBack(&LLVMErrorCollector::handle,
                                           &collector);
  std::unique_ptr<llvm::Module> module =
      translateModuleToLLVMIR(gpuModule, llvmContext, gpuModule.getName());
  if (!module)
    return emitError(loc) << "cannot translate gpu.module '"
                          << gpuModule.getName()
                          << "' to LLVM IR (is it fully lowered to the LLVM "
                             "and ROCDL dialects?)";
  module->setTargetTriple(llvm::Triple(kAmdgpuTriple));
  module->setDataLayout((*machine)->createDataLayout());
  // The backend reads the version from this module flag (as clang's
  // -mcode-object-version sets it).
  module->addModuleFlag(llvm::Module::Error, "amdhsa_code_object_version",
                        options.codeObjectVersion * 100);

  GpuModuleBinary binary;
  if (failed(linkDeviceLibraries(loc, *module, chip, options,
                                 binary.linkedDeviceLibs)))
    return failure();
  SmallVector<std::string> undefined = getUndefinedFunctions(*module);
  if (!undefined.empty())
    return emitError(loc) << "gpu.module '" << gpuModule.getName()
                          << "' calls undefined function(s): "
                          << llvm::join(undefined, ", ");

  optimizeModule(*module, **machine, options.optLevel);
  if (failed(collector.flush(loc, "LLVM optimization")))
    return failure();
  if (options.optLevel > 0) {
    // After inlining (the device libraries' functions were compiled for
    // the default mode).
    clearIeeeMode(*module);
    readKernelPointersAtEntry(*module);
    xorLdsOffsetsInBytes(*module);
    scalarizeSplatPhis(*module);
    scopeLdsReadsBesideCopies(*module);
  }
  if (stage == HsacoStage::LLVMIR || options.keepIntermediates)
    llvm::raw_string_ostream(binary.llvmIR) << *module;
  if (stage == HsacoStage::LLVMIR)
    return binary;

  // Code generation consumes the module: a compile that keeps the ISA text
  // besides the code object generates code from a copy for the text.
  if (stage == HsacoStage::ISA || options.keepIntermediates) {
    std::unique_ptr<llvm::Module> copy;
    if (stage != HsacoStage::ISA)
      copy = llvm::CloneModule(*module);
    FailureOr<std::string> isa =
        runCodegen(loc, copy ? *copy : *module, **machine,
                   llvm::CodeGenFileType::AssemblyFile);
    if (failed(isa) || failed(collector.flush(loc, "AMDGPU code generation")))
      return failure();
    binary.isa = std::move(*isa);
    if (stage == HsacoStage::ISA)
      return binary;
  }
  FailureOr<std::string> object =
      runCodegen(loc, *module, **machine, llvm::CodeGenFileType::ObjectFile);
  if (failed(object) || failed(collector.flush(loc, "AMDGPU code generation")))
    return failure();
  FailureOr<std::vector<char>> hsaco = linkWithLld(loc, *object);
  if (failed(hsaco))
    return failure();
  binary.hsaco = std::move(*hsaco);
  return binary;
}
