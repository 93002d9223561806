//===- Perf.cpp - The performance model on compiled Tessel kernels --------===//

#include "tessel/Runtime/Perf.h"
#include "tessel/Perf/MatmulEstimate.h"
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
  return sizes;
}

/// The size named `name`, or `otherwise` when the problem has none.
static int64_t sizeOf(const DimensionSizes &sizes, llvm::StringRef name,
                      int64_t otherwise = 0) {
  auto it = sizes.find(name);
  return it == sizes.end() ? otherwise : it->second;
}

/// (query, key) pairs a causal mask keeps: query row i sees keys up to
/// i + seqKV - seqQ (bottom-right aligned, as the kernels mask).
static double causalPairs(int64_t seqQ, int64_t seqKV) {
  double pairs = 0;
  int64_t offset = seqKV - seqQ + 1; // keys row 0 sees
  for (int64_t i = 0; i < seqQ; ++i)
    pairs += double(std::clamp<int64_t>(i + offset, 0, seqKV));
  return pairs;
}

ProblemWork tessel::getProblemWork(const CompiledKernel &kernel,
                                   const DimensionSizes &sizes, bool causal) {
  auto size = [&](llvm::StringRef name, int64_t otherwise = 0) {
    return double(sizeOf(sizes, name, otherwise));
  };
  ProblemWork work;
  // Only the first stage of a plan multiplies matrices; the others combine.
  if (kernel.grid.stage == 0) {
    if (kernel.grid.kind == GridRule::Kind::Matmul) {
      work.flops = 2 * size("m") * size("n") * size("k") *
                   std::max(1.0, size("batch", 1));
    } else {
      double pairs =
          causal ? causalPairs(int64_t(size("seq_q")), int64_t(size("seq_kv")))
                 : size("seq_q") * size("seq_kv");
      work.flops = 4 * size("batch") * size("heads") * pairs * size("head_dim");
    }
  }
  for (const ArgumentType &argument :
       llvm::ArrayRef(kernel.arguments).take_front(kernel.problemArguments)) {
    if (!argument.isMemref)
      continue;
    double elements = 1;
    for (auto [extent, name] : llvm::zip(argument.shape, argument.dimensions))
      elements *= extent >= 0 ? double(extent) : size(name, 1);
    work.uniqueBytes += elements * argument.elementBytes;
  }
  return work;
}

/// The XCDs' L2 fill traffic of a GEMM kernel (its tiles and operand
/// types from the compiled kernel).
static void addGemmCacheTraffic(PerfReport &report, const Chip &chip,
                                const CompiledKernel &kernel,
                                const DimensionSizes &sizes) {
  auto get = [&](llvm::StringRef name) { return sizeOf(sizes, name); };
  GemmCacheTraffic traffic = estimateGemmL2Fill(
      chip, get("m"), get("n"), get("k"), get("batch"), kernel.grid.tile[0],
      kernel.grid.tile[1], kernel.arguments[0].elementBytes,
      kernel.arguments[1].elementBytes, report.workgroupsPerCU);
  report.l2FillBytes = traffic.l2FillBytes;
  report.operandBytes = traffic.operandBytes;
  report.xcds = traffic.xcds;
}

llvm::Expected<PerfReport>
tessel::predictPerformance(const CompiledModule &module,
                           const CompiledKernel &kernel,
                           const DimensionSizes &sizes, bool causal,
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
  ProblemWork work = getProblemWork(kernel, sizes, causal);
  llvm::Expected<PerfReport> report = analyzeCodeObject(
      module.hsaco, kernel.name, *chip, launch, work, parameters);
  if (report && kernel.grid.kind == GridRule::Kind::Matmul &&
      kernel.arguments.size() >= 2)
    addGemmCacheTraffic(*report, *chip, kernel, sizes);
  return report;
}
