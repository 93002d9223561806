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

/// Iterations of the attention kernel's key loops for each query block, in
/// code order: with a left window edge, the masked blocks before the ones
/// every query of the block sees; those whole, visible blocks; then the
/// masked ones (right edge or causal diagonal, sequence tail). With
/// `splits` > 1 (split-KV), those of split `split` of the block's keys: a
/// whole number of key blocks each, ceil(keys / splits) rounded up to
/// blocks. Mirrors the loop bounds tessel-tile builds (AttentionTiler).
static std::vector<std::vector<double>>
attentionBlockLoopIterations(int64_t seqQ, int64_t seqKV, int64_t blockM,
                             int64_t blockN, int64_t packedHeads,
                             KeyWindow window, int64_t splits = 1,
                             int64_t split = 0) {
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
  std::vector<std::vector<double>> perBlock;
  for (int64_t block = 0; block < blocks; ++block) {
    double leftMasked = 0, whole = 0, masked = 0;
    int64_t first = block * blockM + shift, last = first + queriesPerBlock - 1;
    int64_t begin = 0, end = seqKV, visibleEnd = alignDown(seqKV);
    if (window.hasLeft())
      begin = alignDown(clampKeys(first - window.left));
    if (window.hasRight()) {
      end = clampKeys(last + window.right + 1);
      visibleEnd =
          std::min(visibleEnd, alignDown(clampKeys(first + window.right + 1)));
    }
    if (splits > 1) {
      int64_t perSplit =
          llvm::divideCeil(std::max<int64_t>(0, end - begin), splits);
      int64_t chunk = llvm::divideCeil(perSplit, blockN) * blockN;
      begin += split * chunk;
      end = std::min(end, begin + chunk);
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
    std::vector<double> &iterations = perBlock.emplace_back();
    if (window.hasLeft())
      iterations.push_back(leftMasked);
    iterations.push_back(whole);
    iterations.push_back(masked);
  }
  return perBlock;
}

/// Splits the iterations of the key loop at `index` of each query block
/// (`perBlock`, as attentionBlockLoopIterations gives them) between that
/// loop unrolled by `factor` (GridRule::keyLoopUnroll) and the rolled loop
/// after it: n / factor and n mod factor.
static void splitUnrolledKeyLoop(std::vector<std::vector<double>> &perBlock,
                                 size_t index, int64_t factor) {
  for (std::vector<double> &iterations : perBlock) {
    if (index >= iterations.size())
      continue;
    double blocks = iterations[index];
    double unrolled = std::floor(blocks / double(factor));
    iterations[index] = unrolled;
    iterations.insert(iterations.begin() + index + 1,
                      blocks - unrolled * double(factor));
  }
}

/// The iterations of each loop averaged over the query blocks.
static std::vector<double>
averageIterations(llvm::ArrayRef<std::vector<double>> perBlock) {
  if (perBlock.empty())
    return {};
  std::vector<double> average(perBlock.front().size(), 0.0);
  for (const std::vector<double> &iterations : perBlock)
    for (auto [sum, count] : llvm::zip(average, iterations))
      sum += count / double(perBlock.size());
  return average;
}

/// The attention workgroups' iterations in dispatch order, where they differ
/// between query blocks (ProblemWork::workgroupRuns): in grid order (x, the
/// query block, fastest) the blocks of one (head, batch) repeated for each;
/// longest first (GridRule::longestFirst), each block (from the last where
/// `fromLast`: query blocks) run by all heads x batches in a row.
static void setWorkgroupRuns(ProblemWork &work,
                             llvm::ArrayRef<std::vector<double>> perBlock,
                             uint64_t headsTimesBatch, bool longestFirst,
                             bool fromLast) {
  if (perBlock.empty() || headsTimesBatch == 0 || llvm::all_equal(perBlock))
    return;
  for (const std::vector<double> &iterations : perBlock)
    work.workgroupRuns.push_back(
        {iterations, longestFirst ? headsTimesBatch : 1});
  if (!longestFirst)
    work.workgroupRunRepeats = headsTimesBatch;
  else if (fromLast)
    std::reverse(work.workgroupRuns.begin(), work.workgroupRuns.end());
}

/// Iterations of each loop of an attention backward kernel (three, in code
/// order: masked, unmasked, masked) for each of its blocks. The dQ kernel
/// (`overKeys` false) owns `own` queries and steps over `step` keys; the dK/dV
/// kernel owns keys and steps over the queries of each of the `group` query
/// heads of its key/value head. Mirrors the ranges tessel-tile builds
/// (AttentionGradTiler).
static std::vector<std::vector<double>>
attentionGradBlockLoopIterations(int64_t seqQ, int64_t seqKV, int64_t own,
                                 int64_t step, bool overKeys, int64_t group,
                                 KeyWindow window) {
  if (seqQ <= 0 || seqKV <= 0 || own <= 0 || step <= 0)
    return {};
  int64_t shift = seqKV - seqQ;
  auto alignDown = [&](int64_t x) { return x / step * step; };
  auto alignUp = [&](int64_t x) { return alignDown(x + step - 1); };
  // The other dimension's length, and the range a block's rows [first,
  // last] reach in it with the bounds each side adds (lower: the first row
  // reached is row - low; upper: row + high), -1 for unbounded.
  int64_t other = overKeys ? seqQ : seqKV;
  int64_t low = overKeys ? window.right : window.left;
  int64_t high = overKeys ? window.left : window.right;
  int64_t offset = overKeys ? -shift : shift;
  bool wholeRows = true;
  std::vector<std::vector<double>> perBlock;
  int64_t blocks = llvm::divideCeil(overKeys ? seqKV : seqQ, own);
  for (int64_t block = 0; block < blocks; ++block) {
    double counts[3] = {0, 0, 0};
    int64_t first = block * own + offset, last = first + own - 1;
    auto clamp = [&](int64_t x) { return std::clamp<int64_t>(x, 0, other); };
    int64_t begin = low >= 0 ? alignDown(clamp(first - low)) : 0;
    int64_t end = high >= 0 ? clamp(last + high + 1) : other;
    int64_t unmaskedBegin = low >= 0 ? alignUp(clamp(last - low)) : begin;
    int64_t unmaskedEnd = alignDown(other);
    if (high >= 0)
      unmaskedEnd = std::min(unmaskedEnd, alignDown(clamp(first + high + 1)));
    // The dK/dV kernel's tail key block is masked everywhere.
    if (overKeys)
      wholeRows = (block + 1) * own <= seqKV;
    unmaskedBegin = std::min(std::max(unmaskedBegin, begin), end);
    if (!wholeRows)
      unmaskedEnd = unmaskedBegin;
    unmaskedEnd = std::min(std::max(unmaskedEnd, unmaskedBegin), end);
    counts[0] += double(llvm::divideCeil(unmaskedBegin - begin, step));
    counts[1] += double(llvm::divideCeil(unmaskedEnd - unmaskedBegin, step));
    counts[2] += double(llvm::divideCeil(end - unmaskedEnd, step));
    // The first loop is empty in the code when the lower bound is
    // unbounded (the backend removes it).
    std::vector<double> &iterations = perBlock.emplace_back();
    for (auto [index, count] : llvm::enumerate(counts))
      if (index != 0 || low >= 0)
        iterations.push_back(count * double(overKeys ? group : 1));
  }
  return perBlock;
}

/// A split-KV attention kernel's loop iterations (ProblemWork): each
/// workgroup runs its split's share of its query block's key blocks, and
/// the merge that ends the (query block, head) loops over all splits. The
/// grid's x counts query blocks, y heads (or groups of packed heads), z
/// batch x splits, split fastest. `runs`: the workgroups' iterations in
/// dispatch order too, where they differ (not for varlen and paged grids,
/// whose sequences' lengths are run-time values).
static void setSplitKeyLoopIterations(ProblemWork &work, const GridRule &grid,
                                      int64_t seqQ, int64_t seqKV,
                                      uint64_t heads, uint64_t batch,
                                      KeyWindow window, bool runs) {
  int64_t splits = grid.splits;
  std::vector<std::vector<std::vector<double>>> perSplit;
  for (int64_t split = 0; split < splits; ++split)
    perSplit.push_back(
        attentionBlockLoopIterations(seqQ, seqKV, grid.tile[0], grid.tile[1],
                                     grid.packedHeads, window, splits, split));
  std::vector<std::vector<double>> all;
  for (const std::vector<std::vector<double>> &blocks : perSplit)
    all.insert(all.end(), blocks.begin(), blocks.end());
  work.loopIterations = averageIterations(all);
  if (!runs || all.empty() || llvm::all_equal(all))
    return;
  for (const std::vector<std::vector<double>> &blocks : perSplit)
    for (uint64_t head = 0; head < heads; ++head)
      for (const std::vector<double> &iterations : blocks) {
        if (!work.workgroupRuns.empty() &&
            work.workgroupRuns.back().iterations == iterations)
          ++work.workgroupRuns.back().count;
        else
          work.workgroupRuns.push_back({iterations, 1});
      }
  work.workgroupRunRepeats = batch;
}

/// Whether the kernel reads or writes argument `index` at all: a stage of a
/// plan leaves some of the problem's arrays to the others.
static bool touchesInHbm(const CompiledKernel &kernel, size_t index) {
  return kernel.arguments[index].used;
}

ProblemWork tessel::getProblemWork(const CompiledKernel &kernel,
                                   const DimensionSizes &sizes,
                                   KeyWindow window) {
  auto size = [&](llvm::StringRef name, int64_t otherwise = 0) {
    return double(sizeOf(sizes, name, otherwise));
  };
  ProblemWork work;
  work.followsKernel = kernel.grid.stage > 0;
  if (kernel.problem == "attention_grad") {
    // The dQ kernel computes S, dP and dQ per visible (query, key) pair;
    // the dK/dV kernel S, dP, dV and dK (the plan recomputes S and dP).
    int64_t seqQ = int64_t(size("seq_q")), seqKV = int64_t(size("seq_kv"));
    double d = size("head_dim"), dv = size("head_dim_v", d);
    bool overKeys = kernel.grid.kind == GridRule::Kind::AttentionKeys;
    work.flops = 2 * size("batch") * size("heads") *
                 windowPairs(seqQ, seqKV, window) *
                 (overKeys ? 2 * d + 2 * dv : 2 * d + dv);
    int64_t kvHeads = int64_t(size("kv_heads", size("heads")));
    std::vector<std::vector<double>> perBlock =
        attentionGradBlockLoopIterations(
            seqQ, seqKV, kernel.grid.tile[0], kernel.grid.tile[1], overKeys,
            kvHeads > 0 ? int64_t(size("heads")) / kvHeads : 1, window);
    work.loopIterations = averageIterations(perBlock);
    // The grid: (blocks, heads, batch), key/value heads for the dK/dV
    // kernel; varlen sequences' lengths are run-time values.
    if (!sizes.count("total_q"))
      setWorkgroupRuns(
          work, perBlock,
          uint64_t((overKeys ? kvHeads : size("heads")) * size("batch", 1)),
          kernel.grid.longestFirst, /*fromLast=*/!overKeys);
  } else if (kernel.grid.stage == 0) {
    // Only the first stage of a split plan multiplies matrices.
    if (kernel.grid.kind == GridRule::Kind::Matmul) {
      work.flops = 2 * size("m") * size("n") * size("k") *
                   std::max(1.0, size("batch", 1));
      // Stream-K: a workgroup runs its share of the tiles plus the piece
      // its boundary cuts off, on average.
      double tiles = std::ceil(size("m") / double(kernel.grid.tile[0])) *
                     std::ceil(size("n") / double(kernel.grid.tile[1]));
      work.kLoopEntries = kernel.grid.streamK > 0
                              ? (tiles + double(kernel.grid.streamK) - 1) /
                                    double(kernel.grid.streamK)
                              : 1;
    } else {
      // A paged cache: every sequence is taken to fill its block table's
      // pages (the lengths are run-time values).
      double keys = sizes.count("page_size")
                        ? size("max_pages") * size("page_size")
                        : size("seq_kv");
      double pairs = windowPairs(int64_t(size("seq_q")), int64_t(keys), window);
      // S = Q K^T over the scores' head dim, O = P V over the values'.
      work.flops = 2 * size("batch") * size("heads") * pairs *
                   (size("head_dim") + size("head_dim_v", size("head_dim")));
      work.mergeLoopIterations.assign(kernel.grid.mergeLoopIterations.begin(),
                                      kernel.grid.mergeLoopIterations.end());
      if (kernel.grid.splits > 1)
        setSplitKeyLoopIterations(
            work, kernel.grid, int64_t(size("seq_q")), int64_t(keys),
            uint64_t(size("heads") / double(kernel.grid.packedHeads)),
            uint64_t(size("batch", 1)), window,
            /*runs=*/!sizes.count("page_size") && !sizes.count("total_q"));
      if (kernel.grid.splits <= 1) {
        std::vector<std::vector<double>> perBlock =
            attentionBlockLoopIterations(
                int64_t(size("seq_q")), int64_t(keys), kernel.grid.tile[0],
                kernel.grid.tile[1], kernel.grid.packedHeads, window);
        // The loop over whole blocks follows the one over a left edge.
        if (kernel.grid.keyLoopUnroll > 1)
          splitUnrolledKeyLoop(perBlock, window.hasLeft() ? 1 : 0,
                               kernel.grid.keyLoopUnroll);
        work.loopIterations = averageIterations(perBlock);
        // Varlen and paged grids' sequence lengths are run-time values.
        if (kernel.grid.streamK == 0 && !sizes.count("page_size") &&
            !sizes.count("total_q"))
          setWorkgroupRuns(
              work, perBlock,
              uint64_t(size("heads") / double(kernel.grid.packedHeads) *
                       size("batch", 1)),
              kernel.grid.longestFirst, /*fromLast=*/true);
      }
      // Stream-K: a workgroup runs its share of all query blocks' key
      // blocks; the longest share, ceil(S / G) of the S steps, sets the
      // round's time.
      if (kernel.grid.streamK > 0) {
        double blocks = std::ceil(size("seq_q") / double(kernel.grid.tile[0]));
        double queryBlocks = size("batch", 1) * size("heads") * blocks;
        // (An iteration of the unrolled loop over whole blocks runs
        // keyLoopUnroll of them.)
        size_t unrolledLoop = window.hasLeft() ? 1 : 0;
        double steps = 0;
        for (auto [index, iterations] : llvm::enumerate(work.loopIterations))
          steps +=
              iterations * queryBlocks *
              double(index == unrolledLoop ? kernel.grid.keyLoopUnroll : 1);
        double workgroups = double(kernel.grid.streamK);
        double share = steps / workgroups;
        double longest = std::ceil(share - 1e-9);
        for (double &iterations : work.loopIterations)
          iterations *=
              share > 0 ? queryBlocks / workgroups * longest / share : 0;
        // Without a mask, a sequence of whole key blocks has no masked loop
        // in the stream-K kernel (static shapes: the tiler leaves it out).
        if (window.isFull() && !work.loopIterations.empty() &&
            work.loopIterations.back() == 0)
          work.loopIterations.pop_back();
      }
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
  // Later stages of a plan, and the attention backward's kernels (whose
  // reuse of Q, K, V and dO the forward's traffic model does not describe):
  // no cache model, the unique bytes only.
  if (kernel.grid.stage != 0 || kernel.problem == "attention_grad")
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
  // Attention: Q, K, V are the first three arguments. A paged cache's
  // gathers are outside the model: the unique bytes only.
  if (kernel.arguments.size() < 3 ||
      (!kernel.arguments[1].dimensions.empty() &&
       kernel.arguments[1].dimensions[0] == "num_pages"))
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
  shape.longestFirst = kernel.grid.longestFirst;
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
  problemSizes.seqKV = get("seq_kv");
  problemSizes.kvHeads =
      sizes.count("kv_heads") ? get("kv_heads") : get("heads");
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
