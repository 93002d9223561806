//===- Compiler.cpp - Tessel as an embeddable JIT compiler ----------------===//

#include "tessel/Runtime/Compiler.h"
#include "tessel/Dialect/Tessel/IR/TesselOps.h"
#include "tessel/InitAllDialects.h"
#include "tessel/Pipelines/Pipelines.h"
#include "tessel/Support/InputLimits.h"
#include "tessel/Support/Log.h"
#include "tessel/Support/Version.h"
#include "tessel/Target/Chip.h"
#include "tessel/Target/Hsaco.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstring>
#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

using namespace mlir;
using namespace tessel;

/// Bump when the meaning of compiled output changes without the code that
/// produces it changing (the build identity below covers code changes).
static constexpr llvm::StringLiteral kCompilerVersion = "tessel-0.1";

/// The GNU build id of the loaded image that holds `address` (the linker's
/// hash of its contents), in hex; empty when the image has none.
static std::string getBuildId(const void *address) {
  struct Search {
    uintptr_t address;
    std::string id;
  } search{reinterpret_cast<uintptr_t>(address), {}};
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *data) -> int {
        auto *search = static_cast<Search *>(data);
        auto segments = llvm::ArrayRef(info->dlpi_phdr, info->dlpi_phnum);
        bool holds = llvm::any_of(segments, [&](const ElfW(Phdr) & segment) {
          uintptr_t start = info->dlpi_addr + segment.p_vaddr;
          return segment.p_type == PT_LOAD && search->address >= start &&
                 search->address < start + segment.p_memsz;
        });
        if (!holds)
          return 0;
        for (const ElfW(Phdr) & segment : segments) {
          if (segment.p_type != PT_NOTE)
            continue;
          const char *note =
              reinterpret_cast<const char *>(info->dlpi_addr + segment.p_vaddr);
          const char *end = note + segment.p_memsz;
          while (note + sizeof(ElfW(Nhdr)) <= end) {
            const auto *header = reinterpret_cast<const ElfW(Nhdr) *>(note);
            const char *name = note + sizeof(ElfW(Nhdr));
            const char *desc = name + llvm::alignTo(header->n_namesz, 4);
            if (header->n_type == NT_GNU_BUILD_ID && header->n_namesz == 4 &&
                std::memcmp(name, "GNU", 4) == 0 &&
                desc + header->n_descsz <= end) {
              search->id = llvm::toHex(llvm::StringRef(desc, header->n_descsz),
                                       /*LowerCase=*/true);
              return 1;
            }
            note = desc + llvm::alignTo(header->n_descsz, 4);
          }
        }
        return 1;
      },
      &search);
  return search.id;
}

/// Identifies this build of the compiler: Tessel's version and git revision
/// and the build id of the image holding this code (a tool or
/// libTesselC.so), so a rebuilt compiler never reads entries of an older
/// one, wherever either lives; without a build id, the image's path, size
/// and modification time.
const std::string &tessel::getCompilerBuildIdentity() {
  static const std::string identity = [] {
    std::string result = kCompilerVersion.str() + " " + getFullVersion();
    std::string buildId =
        getBuildId(reinterpret_cast<const void *>(&getCompilerBuildIdentity));
    if (!buildId.empty())
      return result + " build " + buildId;
    Dl_info info;
    struct stat status;
    if (dladdr(reinterpret_cast<void *>(&getCompilerBuildIdentity), &info) &&
        info.dli_fname && stat(info.dli_fname, &status) == 0)
      result +=
          llvm::formatv(" {0} {1} {2}", info.dli_fname,
                        uint64_t(status.st_size), int64_t(status.st_mtime));
    return result;
  }();
  return identity;
}

std::string tessel::computeCacheKey(llvm::StringRef ir,
                                    const CompileOptions &options) {
  llvm::SHA256 hasher;
  auto field = [&](llvm::StringRef text) {
    hasher.update(llvm::formatv("{0}:", text.size()).str());
    hasher.update(text);
  };
  field(getCompilerBuildIdentity());
  field(options.chip);
  field(std::to_string(options.optLevel));
  field("cov" + std::to_string(options.codeObjectVersion));
  field(ir);
  std::array<uint8_t, 32> digest = hasher.final();
  return llvm::toHex(digest, /*LowerCase=*/true);
}

//===----------------------------------------------------------------------===//
// Launch facts
//===----------------------------------------------------------------------===//

llvm::Expected<std::array<unsigned, 3>>
CompiledKernel::gridFor(const ProblemSizes &sizes) const {
  auto tilesOf = [](int64_t extent, int64_t tile) -> int64_t {
    return tile > 0 && extent > 0 ? (extent + tile - 1) / tile : 0;
  };
  int64_t batch = sizes.batched ? std::max<int64_t>(sizes.batch, 0)
                                : std::max<int64_t>(sizes.batch, 1);
  // The first stage of a split plan (split-K, split-KV) spreads each
  // workgroup's work over `splits` workgroups along z.
  int64_t splits = grid.stage == 0 ? std::max<int64_t>(grid.splits, 1) : 1;
  int64_t batchSplits = batch > INT32_MAX / splits ? INT64_MAX : batch * splits;
  std::array<int64_t, 3> workgroups;
  if (grid.streamK > 0)
    workgroups = {grid.streamK, 1, 1};
  else if (grid.kind == GridRule::Kind::Matmul)
    workgroups = {tilesOf(sizes.n, grid.tile[1]),
                  tilesOf(sizes.m, grid.tile[0]), batchSplits};
  else if (grid.kind == GridRule::Kind::AttentionKeys)
    workgroups = {tilesOf(sizes.seqKV, grid.tile[0]),
                  std::max<int64_t>(sizes.kvHeads, 0), batchSplits};
  else
    workgroups = {tilesOf(sizes.seqQ * grid.packedHeads, grid.tile[0]),
                  std::max<int64_t>(sizes.heads, 0) / grid.packedHeads,
                  batchSplits};
  // The dispatch packet counts the grid in lanes, 32 bits per dimension.
  std::array<int64_t, 3> lanesPer = {std::max<int64_t>(blockSize, 1), 1, 1};
  std::array<unsigned, 3> result;
  for (int d = 0; d < 3; ++d) {
    if (workgroups[d] > int64_t(UINT32_MAX) / lanesPer[d])
      return llvm::createStringError(llvm::formatv(
          "kernel '{0}': the grid needs {1} workgroups of {2} lanes in "
          "dimension {3}, more than a dispatch's 2^32 - 1 lanes",
          name, workgroups[d], lanesPer[d], "xyz"[d]));
    result[d] = unsigned(workgroups[d]);
  }
  return result;
}

const CompiledKernel *CompiledModule::lookup(llvm::StringRef name) const {
  for (const CompiledKernel &kernel : kernels)
    if (kernel.name == name)
      return &kernel;
  return nullptr;
}

std::vector<const CompiledKernel *>
CompiledModule::launchSequence(llvm::StringRef name) const {
  std::vector<const CompiledKernel *> sequence;
  for (const CompiledKernel &kernel : kernels)
    if (kernel.name == name || kernel.grid.planOf == name)
      sequence.push_back(&kernel);
  llvm::stable_sort(sequence,
                    [](const CompiledKernel *a, const CompiledKernel *b) {
                      return a->grid.stage < b->grid.stage;
                    });
  return sequence;
}

namespace {
/// What a problem function says before lowering: its kind, and per argument
/// what each dimension is and whether the problem writes it.
struct ProblemFacts {
  GridRule::Kind kind = GridRule::Kind::Matmul;
  std::string op; // "matmul", "attention", "attention_grad"
  unsigned arguments = 0;
  std::vector<std::vector<std::string>> dimensions;
  std::vector<bool> written;
};
} // namespace

/// Names the dimensions of `value` when it is an argument of `function`.
static void nameDimensions(ProblemFacts &facts, Value value,
                           std::vector<std::string> names,
                           bool written = false) {
  auto argument = dyn_cast_or_null<BlockArgument>(value);
  if (!argument || !argument.getOwner()->isEntryBlock() ||
      argument.getArgNumber() >= facts.arguments)
    return;
  facts.dimensions[argument.getArgNumber()] = std::move(names);
  facts.written[argument.getArgNumber()] = written;
}

static void describeMatmul(MatmulOp op, ProblemFacts &facts) {
  bool batched = op.getA().getType().getRank() == 3;
  auto withBatch = [&](std::vector<std::string> names) {
    if (batched)
      names.insert(names.begin(), "batch");
    return names;
  };
  std::vector<std::string> c = withBatch({"m", "n"});
  nameDimensions(facts, op.getA(), withBatch({"m", "k"}));
  nameDimensions(facts, op.getB(), withBatch({"k", "n"}));
  nameDimensions(facts, op.getC(), c, /*written=*/true);
  // Extras broadcast against C's trailing dimensions; a static 1 is a
  // broadcast, anything else must equal C's size.
  for (Value extra : op.getExtras()) {
    auto memref = dyn_cast<MemRefType>(extra.getType());
    if (!memref)
      continue;
    std::vector<std::string> names;
    for (int64_t d = 0; d < memref.getRank(); ++d) {
      int64_t fromRight = memref.getRank() - 1 - d;
      names.push_back(memref.getDimSize(d) == 1 ? std::string()
                                                : c[c.size() - 1 - fromRight]);
    }
    nameDimensions(facts, extra, names);
  }
}

/// The dimension names of an attention problem's arrays. Q and K share the
/// scores' head dim, V and O the values'. Varlen: the arrays hold the
/// packed sequences along their (total) seq dimension; the batch is the
/// cumulative lengths' size less one and the launch's rows per sequence
/// are scalars (max_seqlen_q, and the backward's max_seqlen_k).
struct AttentionNames {
  explicit AttentionNames(bool varlen)
      : batch(varlen ? "" : "batch"), seqQ(varlen ? "total_q" : "seq_q"),
        seqKV(varlen ? "total_kv" : "seq_kv"),
        q{batch, "heads", seqQ, "head_dim"}, k{batch, "kv_heads", seqKV,
                                               "head_dim"},
        v{batch, "kv_heads", seqKV, "head_dim_v"}, o{batch, "heads", seqQ,
                                                     "head_dim_v"} {}
  std::string batch, seqQ, seqKV;
  std::vector<std::string> q, k, v, o;
};

static void describeAttention(AttentionOp op, ProblemFacts &facts) {
  bool varlen = op.isVarlen();
  AttentionNames names(varlen);
  auto &[batch, seqQ, seqKV, q, k, v, o] = names;
  // A paged cache: pages of page_size keys; the lengths are run-time values.
  if (op.isPaged()) {
    k = {"num_pages", "kv_heads", "page_size", "head_dim"};
    v = {"num_pages", "kv_heads", "page_size", "head_dim_v"};
    nameDimensions(facts, op.getBlockTable(), {"batch", "max_pages"});
    nameDimensions(facts, op.getContextLens(), {"batch"});
  }
  nameDimensions(facts, op.getQ(), q);
  nameDimensions(facts, op.getK(), k);
  nameDimensions(facts, op.getV(), v);
  nameDimensions(facts, op.getO(), o, /*written=*/true);
  if (varlen) {
    nameDimensions(facts, op.getCuSeqlensQ(), {"batch+1"});
    nameDimensions(facts, op.getCuSeqlensK(), {"batch+1"});
    nameDimensions(facts, op.getMaxSeqlenQ(), {"seq_q"});
  }
  if (Value lse = op.getLse())
    nameDimensions(facts, lse, {batch, "heads", seqQ}, /*written=*/true);
  if (Value sinks = op.getSinks())
    nameDimensions(facts, sinks, {"heads"});
}

static void describeAttentionGrad(AttentionGradOp op, ProblemFacts &facts) {
  bool varlen = op.isVarlen();
  AttentionNames names(varlen);
  auto &[batch, seqQ, seqKV, q, k, v, o] = names;
  if (varlen) {
    nameDimensions(facts, op.getCuSeqlensQ(), {"batch+1"});
    nameDimensions(facts, op.getCuSeqlensK(), {"batch+1"});
    nameDimensions(facts, op.getMaxSeqlenQ(), {"seq_q"});
    nameDimensions(facts, op.getMaxSeqlenK(), {"seq_kv"});
  }
  nameDimensions(facts, op.getQ(), q);
  nameDimensions(facts, op.getK(), k);
  nameDimensions(facts, op.getV(), v);
  nameDimensions(facts, op.getO(), o);
  nameDimensions(facts, op.getGradO(), o);
  nameDimensions(facts, op.getLse(), {batch, "heads", seqQ});
  nameDimensions(facts, op.getGradQ(), q, /*written=*/true);
  nameDimensions(facts, op.getGradK(), k, /*written=*/true);
  nameDimensions(facts, op.getGradV(), v, /*written=*/true);
}

/// The problem facts of every kernel function, read before lowering.
static llvm::StringMap<ProblemFacts> collectProblemKinds(ModuleOp module) {
  llvm::StringMap<ProblemFacts> kinds;
  module.walk([&](func::FuncOp function) {
    function.walk([&](Operation *op) {
      if (!isa<MatmulOp, AttentionOp, AttentionGradOp>(op))
        return;
      ProblemFacts facts;
      facts.op = op->getName().stripDialect().str();
      facts.arguments = function.getNumArguments();
      facts.dimensions.resize(facts.arguments);
      facts.written.resize(facts.arguments, false);
      if (auto matmul = dyn_cast<MatmulOp>(op)) {
        facts.kind = GridRule::Kind::Matmul;
        describeMatmul(matmul, facts);
      } else if (auto grad = dyn_cast<AttentionGradOp>(op)) {
        facts.kind = GridRule::Kind::Attention;
        describeAttentionGrad(grad, facts);
      } else {
        facts.kind = GridRule::Kind::Attention;
        describeAttention(cast<AttentionOp>(op), facts);
      }
      kinds[function.getName()] = std::move(facts);
    });
  });
  return kinds;
}

static ArgumentType describeArgument(Type type) {
  ArgumentType argument;
  auto bytesOf = [](Type element) {
    return element.isIntOrFloat()
               ? unsigned((element.getIntOrFloatBitWidth() + 7) / 8)
               : 8u; // index
  };
  auto nameOf = [](Type element) {
    std::string name;
    llvm::raw_string_ostream(name) << element;
    return name;
  };
  auto dynamicAsMinusOne = [](int64_t value) {
    return ShapedType::isDynamic(value) ? int64_t(-1) : value;
  };
  if (auto memref = dyn_cast<MemRefType>(type)) {
    argument.isMemref = true;
    argument.elementBytes = bytesOf(memref.getElementType());
    argument.elementType = nameOf(memref.getElementType());
    for (int64_t size : memref.getShape())
      argument.shape.push_back(dynamicAsMinusOne(size));
    SmallVector<int64_t> strides;
    int64_t offset;
    if (succeeded(memref.getStridesAndOffset(strides, offset)))
      for (int64_t stride : strides)
        argument.strides.push_back(dynamicAsMinusOne(stride));
    else
      argument.strides.assign(argument.shape.size(), -1);
  } else {
    argument.elementBytes = bytesOf(type);
    argument.elementType = nameOf(type);
  }
  return argument;
}

/// Launch facts of the lowered (L2) kernels that came from problem ops.
static std::vector<CompiledKernel>
collectLaunchFacts(ModuleOp module,
                   const llvm::StringMap<ProblemFacts> &kinds) {
  std::vector<CompiledKernel> kernels;
  module.walk([&](gpu::GPUFuncOp function) {
    auto tile = function->getAttrOfType<DenseI64ArrayAttr>("tessel.tile");
    std::optional<llvm::ArrayRef<int32_t>> block = function.getKnownBlockSize();
    if (!tile || tile.size() < 2 || !block)
      return;
    CompiledKernel kernel;
    kernel.name = function.getName().str();
    kernel.blockSize = unsigned((*block)[0]);
    kernel.grid.tile = {tile[0], tile[1]};
    for (Type type : function.getArgumentTypes())
      kernel.arguments.push_back(describeArgument(type));
    std::string problem = kernel.name;
    if (auto planOf = function->getAttrOfType<StringAttr>("tessel.plan_of")) {
      problem = planOf.str();
      kernel.grid.planOf = problem;
      if (auto stage =
              function->getAttrOfType<IntegerAttr>("tessel.plan_stage"))
        kernel.grid.stage = stage.getInt();
    }
    if (auto splits = function->getAttrOfType<IntegerAttr>("tessel.splits"))
      kernel.grid.splits = splits.getInt();
    if (auto streamK = function->getAttrOfType<IntegerAttr>("tessel.stream_k"))
      kernel.grid.streamK = streamK.getInt();
    if (auto packed =
            function->getAttrOfType<IntegerAttr>("tessel.packed_heads"))
      kernel.grid.packedHeads = std::max<int64_t>(1, packed.getInt());
    kernel.grid.longestFirst = function->hasAttr("tessel.longest_first");
    if (auto unroll =
            function->getAttrOfType<IntegerAttr>(kKeyLoopUnrollAttrName))
      kernel.grid.keyLoopUnroll = std::max<int64_t>(1, unroll.getInt());
    if (auto merges = function->getAttrOfType<DenseI64ArrayAttr>(
            kMergeLoopIterationsAttrName))
      kernel.grid.mergeLoopIterations.assign(merges.asArrayRef().begin(),
                                             merges.asArrayRef().end());
    ProblemFacts facts = kinds.lookup(problem);
    kernel.grid.kind = facts.kind;
    kernel.problem = facts.op;
    for (auto [argument, value] :
         llvm::zip(kernel.arguments, function.getArguments()))
      argument.used = !value.use_empty();
    if (function->hasAttr("tessel.grid_over_keys"))
      kernel.grid.kind = GridRule::Kind::AttentionKeys;
    kernel.problemArguments = facts.arguments;
    // The dimension names of each workspace, where the compiler gave them.
    auto workspaceDims =
        function->getAttrOfType<ArrayAttr>("tessel.workspace_dims");
    auto zeroed =
        function->getAttrOfType<DenseI64ArrayAttr>("tessel.zeroed_workspaces");
    for (auto [index, argument] : llvm::enumerate(kernel.arguments)) {
      if (index >= facts.arguments) {
        argument.written = true; // a workspace
        unsigned workspace = index - facts.arguments;
        argument.zeroed =
            zeroed && llvm::is_contained(zeroed.asArrayRef(), workspace);
        if (workspaceDims && workspace < workspaceDims.size())
          if (auto names = dyn_cast<ArrayAttr>(workspaceDims[workspace]))
            for (Attribute name : names)
              if (auto text = dyn_cast<StringAttr>(name))
                argument.dimensions.push_back(text.str());
        continue;
      }
      argument.dimensions = facts.dimensions[index];
      argument.written = facts.written[index];
    }
    kernels.push_back(std::move(kernel));
  });
  return kernels;
}

//===----------------------------------------------------------------------===//
// Compiling
//===----------------------------------------------------------------------===//

namespace {
/// Everything one compile needs, owned by the compiling thread.
struct CompileSession {
  DialectRegistry registry;
  std::unique_ptr<MLIRContext> context;
  llvm::SourceMgr sourceMgr;
  std::string diagnostics;
  llvm::raw_string_ostream diagnosticStream{diagnostics};
  std::unique_ptr<SourceMgrDiagnosticHandler> handler;
  bool sawError = false;

  CompileSession() {
    registerAllDialects(registry);
    context = std::make_unique<MLIRContext>(registry,
                                            MLIRContext::Threading::DISABLED);
    context->loadAllAvailableDialects();
    context->printOpOnDiagnostic(false);
    handler = std::make_unique<SourceMgrDiagnosticHandler>(
        sourceMgr, context.get(), diagnosticStream);
    // Some conversions report an error yet let the pass succeed.
    context->getDiagEngine().registerHandler([this](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error)
        sawError = true;
      return failure(); // on to the SourceMgr handler, which records it
    });
  }

  llvm::Error error(llvm::StringRef what) {
    std::string message = what.str();
    if (!diagnostics.empty())
      message += ":\n" + llvm::StringRef(diagnostics).rtrim().str();
    return llvm::createStringError(message);
  }
};
} // namespace

/// Where TESSEL_DUMP_DIR puts what one compile produces:
/// <dir>/<chip>-<first 16 hex digits of the cache key>; empty without it.
static std::string getDumpDirectory(llvm::StringRef ir,
                                    const CompileOptions &options) {
  std::optional<std::string> root =
      llvm::sys::Process::GetEnv("TESSEL_DUMP_DIR");
  if (!root || root->empty())
    return {};
  llvm::SmallString<256> path(*root);
  llvm::sys::path::append(path, options.chip + "-" +
                                    computeCacheKey(ir, options).substr(0, 16));
  return std::string(path);
}

/// Writes `text` to `directory`/`name`; a dump that cannot be written is
/// reported once on stderr and does not fail the compile.
static void dumpFile(llvm::StringRef directory, llvm::StringRef name,
                     llvm::StringRef text) {
  llvm::SmallString<256> path(directory);
  llvm::sys::path::append(path, name);
  std::error_code error = llvm::sys::fs::create_directories(directory);
  if (!error) {
    llvm::raw_fd_ostream os(path, error);
    if (!error) {
      os << text;
      os.close();
      if (os.has_error()) {
        error = os.error();
        os.clear_error();
      }
    }
  }
  if (error)
    llvm::errs() << "tessel: cannot write " << path << ": " << error.message()
                 << "\n";
}

llvm::Expected<std::shared_ptr<const CompiledModule>>
tessel::compileUncached(llvm::StringRef ir, const CompileOptions &options,
                        CompileTimings *timings) {
  CompileTimings ignored;
  CompileTimings &times = timings ? *timings : ignored;
  auto start = std::chrono::steady_clock::now();
  // Milliseconds since the previous call (or the start).
  auto lap = [&] {
    auto now = std::chrono::steady_clock::now();
    double ms = std::chrono::duration<double, std::milli>(now - start).count();
    start = now;
    return ms;
  };
  const Chip *chip = lookupChip(options.chip);
  if (!chip)
    return llvm::createStringError("unknown chip '" + options.chip +
                                   "'; known chips: " + knownChipNames());
  if (options.optLevel > 3)
    return llvm::createStringError("optimization level must be 0 to 3");
  if (!isSupportedCodeObjectVersion(options.codeObjectVersion))
    return llvm::createStringError("code object version must be 4, 5 or 6");

  CompileSession session;
  // TESSEL_DUMP_DIR: the input, the IR after every pass (passes/, MLIR's
  // file tree), the LLVM IR, the ISA, the report and the code object.
  std::string dump = getDumpDirectory(ir, options);
  if (!dump.empty()) {
    dumpFile(dump, "0-input.mlir", ir);
    session.context->disableMultithreading();
  }
  // Each pipeline's result is verified once; the IR after every pass only
  // when dumping, to find the pass that broke it. (Verifying after every
  // pass took 17 of the 54 ms of MLIR passes of a 4096^3 GEMM; the lit
  // tests run every pass through tessel-opt, which verifies each.)
  auto verifyResult = [&](ModuleOp lowered, StringRef stage) -> llvm::Error {
    if (!dump.empty() || succeeded(verify(lowered)))
      return llvm::Error::success();
    return session.error(
        (stage + " produced invalid IR (a compiler bug)").str());
  };
  auto printPasses = [&](PassManager &passes) {
    passes.enableVerifier(!dump.empty());
    if (dump.empty())
      return;
    llvm::SmallString<256> tree(dump);
    llvm::sys::path::append(tree, "passes");
    passes.enableIRPrintingToFileTree([](Pass *, Operation *) { return false; },
                                      [](Pass *, Operation *) { return true; },
                                      /*printModuleScope=*/true,
                                      /*printAfterOnlyOnChange=*/true,
                                      /*printAfterOnlyOnFailure=*/false, tree);
  };
  session.sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(ir, "<tessel input>"),
      llvm::SMLoc());
  if (!checkInputLimits(session.sourceMgr, session.diagnosticStream))
    return session.error("cannot parse the input");
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(session.sourceMgr, session.context.get());
  if (!module)
    return session.error("cannot parse the input");
  times.parse = lap();
  llvm::StringMap<ProblemFacts> kinds = collectProblemKinds(*module);

  TesselToROCDLOptions pipelineOptions;
  pipelineOptions.chip = chip->name.str();
  PassManager toGPU(session.context.get());
  buildTesselToGPUPipeline(toGPU, pipelineOptions);
  printPasses(toGPU);
  if (failed(toGPU.run(*module)) || session.sawError)
    return session.error("lowering to GPU kernels failed");
  if (llvm::Error error = verifyResult(*module, "lowering to GPU kernels"))
    return std::move(error);
  std::vector<CompiledKernel> kernels = collectLaunchFacts(*module, kinds);
  times.tesselToGPU = lap();
  PassManager toROCDL(session.context.get());
  buildGPUToROCDLPipeline(toROCDL, pipelineOptions);
  printPasses(toROCDL);
  if (failed(toROCDL.run(*module)) || session.sawError)
    return session.error("lowering to ROCDL failed");
  if (llvm::Error error = verifyResult(*module, "lowering to ROCDL"))
    return std::move(error);
  times.gpuToROCDL = lap();

  std::string emulatorIR;
  llvm::raw_string_ostream(emulatorIR) << *module;
  auto gpuModules = llvm::to_vector(module->getOps<gpu::GPUModuleOp>());
  if (gpuModules.size() != 1)
    return llvm::createStringError(
        llvm::formatv("the input lowers to {0} gpu.modules; a compiled "
                      "module holds one code object",
                      gpuModules.size())
            .str());
  HsacoOptions hsacoOptions;
  hsacoOptions.optLevel = options.optLevel;
  hsacoOptions.codeObjectVersion = options.codeObjectVersion;
  hsacoOptions.keepIntermediates = !dump.empty();
  FailureOr<GpuModuleBinary> binary = compileGpuModule(
      gpuModules.front(), *chip, hsacoOptions, HsacoStage::HSACO);
  if (failed(binary) || session.sawError)
    return session.error("code generation failed");
  times.codegen = lap();

  auto result = std::make_shared<CompiledModule>();
  result->chip = chip->name.str();
  result->emulatorIR = std::move(emulatorIR);
  result->hsaco = std::move(binary->hsaco);
  llvm::Expected<CodeObjectMetadata> metadata =
      readCodeObjectMetadata(result->hsaco);
  if (!metadata)
    return metadata.takeError();
  llvm::raw_string_ostream(result->reportJSON)
      << kernelReportToJSON(*metadata, *chip);
  for (CompiledKernel &kernel : kernels) {
    auto found = llvm::find_if(metadata->kernels, [&](const KernelMetadata &k) {
      return k.name == kernel.name;
    });
    if (found == metadata->kernels.end())
      return llvm::createStringError("kernel '" + kernel.name +
                                     "' is missing from the code object");
    kernel.metadata = *found;
  }
  if (!dump.empty()) {
    dumpFile(dump, "1-rocdl.mlir", result->emulatorIR);
    dumpFile(dump, "2-optimized.ll", binary->llvmIR);
    dumpFile(dump, "3-kernel.s", binary->isa);
    dumpFile(dump, "4-report.json", result->reportJSON);
    dumpFile(dump, "5-kernel.hsaco",
             llvm::StringRef(result->hsaco.data(), result->hsaco.size()));
  }
  result->kernels = std::move(kernels);
  return std::shared_ptr<const CompiledModule>(std::move(result));
}

llvm::Expected<std::string>
tessel::generateAssembly(const CompiledModule &compiled, unsigned optLevel) {
  const Chip *chip = lookupChip(compiled.chip);
  if (!chip)
    return llvm::createStringError("unknown chip '" + compiled.chip + "'");
  CompileSession session;
  session.sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(compiled.emulatorIR,
                                           "<compiled module>"),
      llvm::SMLoc());
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(session.sourceMgr, session.context.get());
  if (!module)
    return session.error("cannot parse the compiled module");
  auto gpuModules = llvm::to_vector(module->getOps<gpu::GPUModuleOp>());
  if (gpuModules.size() != 1)
    return llvm::createStringError("the compiled module has no gpu.module");
  HsacoOptions options;
  options.optLevel = optLevel;
  // The same version as the code object (its ELF header says which).
  if (unsigned version = getCodeObjectVersion(compiled.hsaco))
    options.codeObjectVersion = version;
  FailureOr<GpuModuleBinary> binary =
      compileGpuModule(gpuModules.front(), *chip, options, HsacoStage::ISA);
  if (failed(binary) || session.sawError)
    return session.error("code generation failed");
  return std::move(binary->isa);
}

Compiler::Compiler() : Compiler(CacheOptions::fromEnvironment()) {}

llvm::Expected<std::shared_ptr<const CompiledModule>>
Compiler::compile(ModuleOp module, const CompileOptions &options) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  return compile(text, options);
}

llvm::Expected<std::shared_ptr<const CompiledModule>>
Compiler::compile(const MatmulProblem &problem, const CompileOptions &options) {
  llvm::Expected<std::string> ir = printProblem(problem);
  if (!ir)
    return ir.takeError();
  return compile(*ir, options);
}

llvm::Expected<std::shared_ptr<const CompiledModule>>
Compiler::compile(const AttentionProblem &problem,
                  const CompileOptions &options) {
  llvm::Expected<std::string> ir = printProblem(problem);
  if (!ir)
    return ir.takeError();
  return compile(*ir, options);
}

Compiler::Compiler(CacheOptions cacheOptions)
    : cache(std::move(cacheOptions)) {}

llvm::Expected<std::shared_ptr<const CompiledModule>>
Compiler::compile(llvm::StringRef ir, const CompileOptions &options) {
  std::string key = computeCacheKey(ir, options);
  CacheStats before = isLoggingEnabled() ? cache.getStats() : CacheStats();
  if (std::shared_ptr<const CompiledModule> hit = cache.lookup(key)) {
    if (isLoggingEnabled())
      llvm::errs() << "tessel: " << options.chip << " " << key.substr(0, 16)
                   << ": "
                   << (cache.getStats().memoryHits > before.memoryHits
                           ? "memory"
                           : "disk")
                   << " cache hit\n";
    return hit;
  }
  auto start = std::chrono::steady_clock::now();
  llvm::Expected<std::shared_ptr<const CompiledModule>> compiled =
      compileUncached(ir, options);
  if (compiled)
    cache.insert(key, *compiled);
  if (isLoggingEnabled()) {
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    llvm::errs() << "tessel: " << options.chip << " " << key.substr(0, 16)
                 << ": " << (compiled ? "compiled" : "failed") << " in "
                 << llvm::formatv("{0:f1}", ms) << " ms";
    if (compiled)
      llvm::errs() << " (" << (*compiled)->kernels.size() << " kernel(s))";
    std::string dump = getDumpDirectory(ir, options);
    if (!dump.empty())
      llvm::errs() << ", dumped to " << dump;
    llvm::errs() << "\n";
  }
  return compiled;
}
