//===- Compiler.h - Tessel as an embeddable JIT compiler --------*- C++ -*-===//
//
// tessel::Compiler turns Tessel IR (problem level L0, or any level the
// tessel-to-rocdl pipeline accepts) into a CompiledModule: one HSACO code
// object plus, per kernel, what a launcher needs (symbol, workgroup size, the
// rule that maps problem sizes to a grid, the kernarg layout read back from
// the code object, LDS bytes, registers). Results go through a KernelCache.
//
// Thread safety: compile() may be called from many threads at once. Each
// compile owns its MLIRContext; the only process-wide state it touches is
// the AMDGPU target registration (once) and the in-process lld (serialized).
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_RUNTIME_COMPILER_H
#define TESSEL_RUNTIME_COMPILER_H

#include "tessel/Problems/Problems.h"
#include "tessel/Runtime/Cache.h"
#include "tessel/Target/Hsaco.h"
#include "tessel/Target/KernelMetadata.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace tessel {

struct CompileOptions {
  std::string chip = "gfx942";
  /// LLVM optimization level of the device code (0-3).
  unsigned optLevel = 3;
  /// AMDHSA code object version, 4 to 6 (tessel/Target/Hsaco.h says which
  /// runtimes load which).
  unsigned codeObjectVersion = kDefaultCodeObjectVersion;
};

/// How a kernel's launch covers its problem. Matmul: x over column tiles,
/// y over row tiles, z over the batch. Attention: x over query-row tiles,
/// y over heads, z over batch (times splits for a split-KV first stage; the
/// matmul's z too for split-K). AttentionKeys (the attention backward's
/// dK/dV kernel): x over key-row tiles, y over key/value heads, z over
/// batch.
struct GridRule {
  enum class Kind { Matmul, Attention, AttentionKeys };
  Kind kind = Kind::Matmul;
  std::array<int64_t, 2> tile = {0, 0}; // rows x columns per workgroup
  /// Split-KV plans: the problem kernel this one is a stage of and its
  /// stage (launched in increasing order). The split count of a split-KV
  /// first stage or of a split-K matmul (one kernel): z is multiplied by it.
  std::string planOf;
  int64_t stage = 0;
  int64_t splits = 1;
  /// Stream-K: this many workgroups along x share all tiles' K steps (a
  /// matmul) or all query blocks' key blocks (attention); 0: one workgroup
  /// per tile.
  int64_t streamK = 0;
  /// Attention: query heads per workgroup (a grouped-query decode's group
  /// stacked along the rows): x counts blocks of packedHeads x seq_q rows,
  /// y heads / packedHeads.
  int64_t packedHeads = 1;
  /// Attention with a right key edge (causal): the flat workgroup id i (x
  /// fastest) runs block position i / (y z) of head and batch i mod (y z),
  /// the longest blocks first: query blocks from the last (x - 1 - i / (y
  /// z)), an AttentionKeys grid's key blocks from the first. The grid is
  /// unchanged; the performance model follows the order.
  bool longestFirst = false;
  /// Attention: the factor its key loop over whole blocks is unrolled by,
  /// a rolled loop after it running the blocks left over (1: not
  /// unrolled). The performance model gives each its iterations.
  int64_t keyLoopUnroll = 1;
  /// Split-KV attention: the iterations of the loops that merge the
  /// splits' partials, in code order (kMergeLoopIterationsAttrName).
  std::vector<int64_t> mergeLoopIterations;
};

/// The sizes a grid rule needs; unused ones stay 0. The runtime derives
/// them from the arrays a problem runs on (see runProblem).
struct ProblemSizes {
  int64_t m = 0, n = 0, batch = 0; // matmul (batch 0: not batched)
  int64_t seqQ = 0, heads = 0;     // attention (batch shared)
  int64_t seqKV = 0, kvHeads = 0;  // attention's keys (AttentionKeys grids)
  int64_t totalQ = 0, totalKV = 0; // varlen: the packed arrays' rows
  /// The problem has a batch dimension, so a batch of 0 is an empty grid
  /// rather than "not batched".
  bool batched = false;
};

/// One argument of a kernel function before lowering: a memref (element
/// type, shape and strides, -1 where dynamic) or a scalar.
struct ArgumentType {
  bool isMemref = false;
  unsigned elementBytes = 0;
  /// The MLIR element type as printed: "f16", "bf16", "f32", "i8", "i32",
  /// "f8E4M3FNUZ", "index", ...
  std::string elementType;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  /// What each dimension is in the problem ("m", "k", "batch", "heads",
  /// "seq_kv", ...; "" for a broadcast dimension): equal names must have
  /// equal sizes at run time, and the grid is derived from them. A
  /// workspace's names (where the compiler gives them) size its dynamic
  /// dimensions.
  std::vector<std::string> dimensions;
  /// The kernel writes it (C of a matmul; O and the logsumexp of an
  /// attention; workspaces).
  bool written = false;
  /// A workspace the runtime zero-fills before the kernel's first launch
  /// (arrival counters; every launch leaves them at zero). Other workspaces
  /// are written before they are read and may hold anything.
  bool zeroed = false;
  /// The kernel reads or writes it at all (a stage of a plan may leave
  /// some of the problem's arrays to the other stages).
  bool used = true;
};

struct CompiledKernel {
  std::string name; // the kernel symbol in the code object
  /// The problem op it computes (a stage of): "matmul", "attention" or
  /// "attention_grad".
  std::string problem;
  /// The function's arguments: the problem's own, then any workspaces the
  /// compiler added (split-KV partial results).
  std::vector<ArgumentType> arguments;
  /// How many of `arguments` the problem function itself has; the rest are
  /// workspaces.
  unsigned problemArguments = 0;
  unsigned blockSize = 0; // lanes per workgroup (x; y = z = 1)
  GridRule grid;
  KernelMetadata metadata; // kernarg layout, LDS, registers, spills

  /// Workgroups per dimension for a launch over `sizes`, or an error when a
  /// dimension does not fit the dispatch packet's 32-bit grid (counted in
  /// lanes).
  llvm::Expected<std::array<unsigned, 3>>
  gridFor(const ProblemSizes &sizes) const;
};

struct CompiledModule {
  std::string chip;
  std::vector<char> hsaco;
  std::vector<CompiledKernel> kernels;
  /// The resource report of every kernel (tesselc --emit=report JSON).
  std::string reportJSON;
  /// The gpu.module at the LLVM/ROCDL level (MLIR text): what the emulator
  /// runs when there is no GPU.
  std::string emulatorIR;

  const CompiledKernel *lookup(llvm::StringRef name) const;
  /// The kernels that make up problem `name`, in launch order: the kernel
  /// of that name, or the stages of its plan.
  std::vector<const CompiledKernel *>
  launchSequence(llvm::StringRef name) const;
};

class Compiler {
public:
  /// A compiler with the cache configured from the environment
  /// (TESSEL_CACHE_DIR).
  Compiler();
  explicit Compiler(CacheOptions cacheOptions);

  /// Compiles `ir` (MLIR text) for `options.chip`, or returns the cached
  /// result. Errors carry the diagnostics with their locations.
  llvm::Expected<std::shared_ptr<const CompiledModule>>
  compile(llvm::StringRef ir, const CompileOptions &options = {});

  /// Compiles `module` (left unchanged: it is printed, and the text is what
  /// is compiled and cached, so any context may own it).
  llvm::Expected<std::shared_ptr<const CompiledModule>>
  compile(mlir::ModuleOp module, const CompileOptions &options = {});

  /// Compiles a problem description (see tessel/Problems/Problems.h): its
  /// problem-level IR goes through compile() above, cache included.
  llvm::Expected<std::shared_ptr<const CompiledModule>>
  compile(const MatmulProblem &problem, const CompileOptions &options = {});
  llvm::Expected<std::shared_ptr<const CompiledModule>>
  compile(const AttentionProblem &problem, const CompileOptions &options = {});

  KernelCache &getCache() { return cache; }

private:
  KernelCache cache;
};

/// The cache key of compiling `ir` with `options` by this build of Tessel.
std::string computeCacheKey(llvm::StringRef ir, const CompileOptions &options);
/// What identifies this build of the compiler in every cache key: Tessel's
/// version and git revision and the GNU build id of the image holding the
/// compiler (its path, size and modification time without one).
const std::string &getCompilerBuildIdentity();

/// The AMDGPU assembly of `module`'s code object, generated on request from
/// its LLVM/ROCDL form (same input and options as the code object, so the
/// same instructions; a second backend run, not paid by compile()).
llvm::Expected<std::string> generateAssembly(const CompiledModule &module,
                                             unsigned optLevel = 3);

/// Where a cold compile's time goes, in milliseconds.
struct CompileTimings {
  double parse = 0;       // MLIRContext set-up and MLIR text to module
  double tesselToGPU = 0; // L0 to per-lane kernels (L2)
  double gpuToROCDL = 0;  // L2 to the LLVM and ROCDL dialects
  double codegen = 0;     // LLVM IR, AMDGPU backend, lld
};

/// Compiles without the cache (what a cache miss runs).
llvm::Expected<std::shared_ptr<const CompiledModule>>
compileUncached(llvm::StringRef ir, const CompileOptions &options,
                CompileTimings *timings = nullptr);

} // namespace tessel

#endif // TESSEL_RUNTIME_COMPILER_H
