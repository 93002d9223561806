//===- Perf.cpp - The performance model on compiled Tessel kernels --------===//

#include "tessel/Runtime/Perf.h"
#include "tessel/Perf/CacheTraffic.h"
#include "tessel/Target/Chip.h"

#include "llvm/Support/FormatVariadic.h"

using namespace tessel;

DimensionSizes tessel::getStaticDimensions(const CompiledKernel &kernel) {
  DimensionSizes sizes;
  for (const ArgumentType &argument : kernel.arguments)
    for (auto [size, name] : llvm::zip(argument.shape, argument.dimensions))
      if (!name.empty() && size >= 0)
        sizes[name] = size;
  return sizes;
}

DimensionSizes tessel::getDimensions(const MatmulProblem &problem) {
  DimensionSizes sizes;
  sizes["m"] = problem.m;
  sizes["n"] = problem.n;
  sizes["k"] = problem.k;
  if (problem.batch)
    sizes["batch"] = problem.batch;
  return sizes;
}

DimensionSizes tessel::getDimensions(const AttentionProblem &problem) {
  DimensionSizes sizes;
  sizes["batch"] = problem.batch;
  sizes["heads"] = problem.heads;
  sizes["kv_heads"] = problem.kvHeads ? problem.kvHeads : problem.heads;
  sizes["seq_q"] = problem.seqQ;
  sizes["seq_kv"] = problem.seqKV;
  sizes["head_dim"] = problem.headDim;
  sizes["head_dim_v"] = problem.headDimV ? problem.headDimV : problem.headDim;
  return sizes;
}

/// The size named `name`, or `otherwise` when the problem has none.
static int64_t sizeOf(const DimensionSizes &sizes, llvm::StringRef name,
                      int64_t otherwise = 0) {
  auto it = sizes.find(name);
  return it == sizes.end() ? otherwise : it->second;
}

/// (query, key) pairs the key window keeps (bottom-right aligned, as the
/// kernels mask).
static double windowPairs(int64_t seqQ, int64_t seqKV, KeyWindow window) {
  if (window.isFull())
    return double(seqQ) * double(seqKV);
  double pairs = 0;
  for (int64_t i = 0; i < seqQ; ++i)
    pairs += double(window.visible(i, seqQ, seqKV));
  return pairs;
}

/// Iterations per workgroup of the attention kernel's key loops, averaged
/// over its query blocks, in code order: with a left window edge, the
/// masked blocks before the ones every query of the block sees; those
/// whole, visible blocks; then the masked ones (right edge or causal
/// diagonal, sequence tail). Mirrors the loop bounds tessel-tile builds
/// (AttentionTiler).
static std::vector<double>
attentionLoopIterations(int64_t seqQ, int64_t seqKV, int64_t blockM,
                        int64_t blockN, int64_t packedHeads, KeyWindow window) {
  if (seqQ <= 0 || seqKV <= 0 || blockM <= 0 || blockN <= 0)
    return {};
  int64_t shift = seqKV - seqQ;
  // A block of packed query heads holds all seq_q queries of each head.
  int64_t queriesPerBlock = packedHeads > 1 ? seqQ : blockM;
  int64_t blocks = llvm::divideCeil(seqQ * packedHeads, blockM);
  auto clampKeys = [&](int64_t key) {
    return std::clamp<int64_t>(key, 0, seqKV);
  };
  auto alignDown = [&](int64_t key) { return key / blockN * blockN; };
  double leftMasked = 0, whole = 0, masked = 0;
  for (int64_t block = 0; block < blocks; ++block) {
    int64_t first = block * blockM + shift, last = first + queriesPerBlock - 1;
    int64_t begin = 0, end = seqKV, visibleEnd = alignDown(seqKV);
    if (window.hasLeft())
      begin = alignDown(clampKeys(first - window.left));
    if (window.hasRight()) {
      end = clampKeys(last + window.right + 1);
      visibleEnd =
          std::min(visibleEnd, alignDown(clampKeys(first + window.right + 1)));
    }
    int64_t unmaskedBegin = begin;
    if (window.hasLeft()) {
      int64_t visibleBegin =
          alignDown(clampKeys(last - window.left) + blockN - 1);
      unmaskedBegin = std::max(begin, std::min(visibleBegin, end));
      leftMasked += double(llvm::divideCeil(
          std::max<int64_t>(0, unmaskedBegin - begin), blockN));
    }
    int64_t maskStart = std::max(unmaskedBegin, std::min(visibleEnd, end));
    whole += double(llvm::divideCeil(maskStart - unmaskedBegin, blockN));
    masked +=
        double(llvm::divideCeil(std::max<int64_t>(0, end - maskStart), blockN));
  }
  std::vector<double> iterations;
  if (window.hasLeft())
    iterations.push_back(leftMasked / double(blocks));
  iterations.push_back(whole / double(blocks));
  iterations.push_back(masked / double(blocks));
  return iterations;
}

/// Whether the kernel reads or writes argument `index`: a kernel alone
/// touches all its arguments (split-K: the workspaces too); in a split
/// plan the first stage reads the inputs and writes the workspaces, and the
/// later ones read the workspaces and write the outputs.
static bool touchesInHbm(const CompiledKernel &kernel, size_t index) {
  bool workspace = index >= kernel.problemArguments;
  if (kernel.grid.planOf.empty() || workspace)
    return true;
  bool written = kernel.arguments[index].written;
  return kernel.grid.stage == 0 ? !written : written;
}

ProblemWork tessel::getProblemWork(const CompiledKernel &kernel,
                                   const DimensionSizes &sizes,
                                   KeyWindow window) {
  auto size = [&](llvm::StringRef name, int64_t otherwise = 0) {
    return double(sizeOf(sizes, name, otherwise));
  };
  ProblemWork work;
  work.followsKernel = kernel.grid.stage > 0;
  // Only the first stage of a plan multiplies matrices; the others combine.
  if (kernel.grid.stage == 0) {
    if (kernel.grid.kind == GridRule::Kind::Matmul) {
      work.flops = 2 * size("m") * size("n") * size("k") *
                   std::max(1.0, size("batch", 1));
    } else {
      double pairs =
          windowPairs(int64_t(size("seq_q")), int64_t(size("seq_kv")), window);
      // S = Q K^T over the scores' head dim, O = P V over the values'.
      work.flops = 2 * size("batch") * size("heads") * pairs *
                   (size("head_dim") + size("head_dim_v", size("head_dim")));
      if (kernel.grid.splits <= 1)
        work.loopIterations = attentionLoopIterations(
            int64_t(size("seq_q")), int64_t(size("seq_kv")),
            kernel.grid.tile[0], kernel.grid.tile[1], kernel.grid.packedHeads,
            window);
    }
  }
  for (auto [index, argument] : llvm::enumerate(kernel.arguments)) {
    if (!argument.isMemref)
      continue;
    // Workspaces have no dimension names: their dynamic extents count 1.
    double elements = 1;
    for (auto [d, extent] : llvm::enumerate(argument.shape))
      elements *= extent >= 0 ? double(extent)
                  : d < argument.dimensions.size()
                      ? size(argument.dimensions[d], 1)
                      : 1.0;
    if (touchesInHbm(kernel, index))
      work.uniqueBytes += elements * argument.elementBytes;
    if (index < kernel.problemArguments)
      work.problemBytes += elements * argument.elementBytes;
  }
  return work;
}

/// The size of dimension `index` of argument `argument`: static, or from
/// the problem's sizes by its name.
static int64_t argumentDimension(const CompiledKernel &kernel,
                                 const DimensionSizes &sizes, size_t argument,
                                 size_t index) {
  const ArgumentType &type = kernel.arguments[argument];
  if (index >= type.shape.size())
    return 0;
  if (type.shape[index] >= 0)
    return type.shape[index];
  return index < type.dimensions.size() ? sizeOf(sizes, type.dimensions[index])
                                        : 0;
}

/// What the XCDs' L2 caches fetch for a GEMM or attention kernel (its tiles
/// and operand types from the compiled kernel), as a function of the
/// workgroups resident per CU; empty for other kernels.
static std::function<CacheTraffic(unsigned)>
getCacheTraffic(const Chip &chip, const CompiledKernel &kernel,
                const DimensionSizes &sizes, KeyWindow window) {
  auto get = [&](llvm::StringRef name) { return sizeOf(sizes, name); };
  // A later stage of a multi-kernel plan (none today) reads only the
  // workspaces.
  if (kernel.grid.stage != 0)
    return {};
  int64_t splits = std::max<int64_t>(1, kernel.grid.splits);
  if (kernel.grid.kind == GridRule::Kind::Matmul) {
    if (kernel.arguments.size() < 2)
      return {};
    int64_t m = get("m"), n = get("n"), k = get("k"), batch = get("batch");
    // Split-K: each split reads its own K range, as a batch of `splits`
    // GEMMs of a K chunk would.
    if (splits > 1) {
      k = llvm::divideCeil(k, splits);
      batch = std::max<int64_t>(batch, 1) * splits;
    }
    int64_t tileM = kernel.grid.tile[0], tileN = kernel.grid.tile[1];
    unsigned aBytes = kernel.arguments[0].elementBytes,
             bBytes = kernel.arguments[1].elementBytes;
    return [=, &chip](unsigned workgroupsPerCU) {
      return estimateGemmL2Fill(chip, m, n, k, batch, tileM, tileN, aBytes,
                                bBytes, workgroupsPerCU);
    };
  }
  // Attention: Q, K, V are the first three arguments.
  if (kernel.arguments.size() < 3)
    return {};
  AttentionTrafficShape shape;
  shape.batch = argumentDimension(kernel, sizes, 0, 0);
  shape.heads = argumentDimension(kernel, sizes, 0, 1);
  shape.seqQ = argumentDimension(kernel, sizes, 0, 2);
  shape.headDim = argumentDimension(kernel, sizes, 0, 3);
  shape.kvHeads = argumentDimension(kernel, sizes, 1, 1);
  shape.seqKV = argumentDimension(kernel, sizes, 1, 2);
  shape.headDimV = argumentDimension(kernel, sizes, 2, 3);
  shape.elementBytes = kernel.arguments[0].elementBytes;
  shape.tileM = kernel.grid.tile[0];
  shape.blockN = kernel.grid.tile[1];
  shape.splits = splits;
  shape.window = window;
  // Packed query heads: a workgroup reads its key/value head once for the
  // group's stacked rows, all in one query block, as one query head per
  // key/value head would.
  if (int64_t packed = kernel.grid.packedHeads; packed > 1)
    shape.heads /= packed;
  return [=, &chip](unsigned workgroupsPerCU) {
    return estimateAttentionL2Fill(chip, shape, workgroupsPerCU);
  };
}

llvm::Expected<PerfReport>
tessel::predictPerformance(const CompiledModule &module,
                           const CompiledKernel &kernel,
                           const DimensionSizes &sizes, KeyWindow window,
                           const ModelParameters &parameters) {
  const Chip *chip = lookupChip(module.chip);
  if (!chip)
    return llvm::createStringError("unknown chip '" + module.chip + "'");
  ProblemSizes problemSizes;
  auto get = [&](llvm::StringRef name) { return sizeOf(sizes, name); };
  problemSizes.m = get("m");
  problemSizes.n = get("n");
  problemSizes.batch = get("batch");
  problemSizes.batched = sizes.count("batch");
  problemSizes.seqQ = get("seq_q");
  problemSizes.heads = get("heads");
  llvm::Expected<std::array<unsigned, 3>> grid = kernel.gridFor(problemSizes);
  if (!grid)
    return grid.takeError();
  Launch launch;
  launch.grid = {(*grid)[0], (*grid)[1], (*grid)[2]};
  launch.block = {kernel.blockSize, 1, 1};
  ProblemWork work = getProblemWork(kernel, sizes, window);
  work.cacheTraffic = getCacheTraffic(*chip, kernel, sizes, window);
  return analyzeCodeObject(module.hsaco, kernel.name, *chip, launch, work,
                           parameters);
}
