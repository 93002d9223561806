//===- tessel-run.cpp - Run Tessel kernels ----------------------*- C++ -*-===//
//
//   tessel-run kernel.mlir --kernel NAME --grid X,Y,Z --block X,Y,Z
//       --chip gfx942 --arg a.npy --arg b.npy --arg 3.0 --out-dir out/
//
// Compiles the gpu.module holding NAME with the tessel-to-rocdl pipeline,
// lowers it for the emulator (the default device without an AMD GPU) and
// runs it. Memref arguments come from .npy files (their dtype and shape must
// match the memref: f16 as float16, bf16 as uint16, fp8 as uint8), scalars
// from numbers; --out-dir writes every memref argument back afterwards as
// DIR/arg<i>.npy.
//
//===----------------------------------------------------------------------===//

#include "MatmulCheck.h"
#include "tessel/Emulator/Emulator.h"
#include "tessel/Emulator/Passes.h"
#include "tessel/InitAllDialects.h"
#include "tessel/Pipelines/Pipelines.h"
#include "tessel/Support/Npy.h"
#include "tessel/Target/Chip.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <deque>
#include <functional>

using namespace mlir;
using namespace tessel;
namespace cl = llvm::cl;

static cl::OptionCategory category("tessel-run options");
static cl::opt<std::string> inputFilename(cl::Positional,
                                          cl::desc("<input.mlir>"),
                                          cl::init("-"), cl::cat(category));
static cl::opt<std::string> kernelName("kernel",
                                       cl::desc("Kernel (gpu.func) to run"),
                                       cl::cat(category));
static cl::opt<std::string> gridText("grid", cl::desc("Workgroups: X[,Y[,Z]]"),
                                     cl::init("1,1,1"), cl::cat(category));
static cl::opt<std::string>
    blockText("block",
              cl::desc("Lanes per workgroup: X[,Y[,Z]] (default: the "
                       "kernel's known_block_size)"),
              cl::cat(category));
static cl::opt<std::string> chipName("chip", cl::desc("Chip to emulate"),
                                     cl::init("gfx942"), cl::cat(category));
static cl::opt<std::string> device("device", cl::desc("emu (default) or hip"),
                                   cl::init("emu"), cl::cat(category));
static cl::list<std::string>
    argValues("arg",
              cl::desc("One per kernel argument, in order: a .npy file for a "
                       "memref, a number for a scalar"),
              cl::cat(category));
static cl::opt<int64_t> dynamicSize(
    "dynamic-size",
    cl::desc("Size of every dynamic dimension of a problem-level kernel "
             "run on random data"),
    cl::init(77), cl::cat(category));
static cl::opt<unsigned> seed("seed", cl::desc("Random seed of the inputs"),
                              cl::init(1), cl::cat(category));
static cl::opt<std::string>
    outDir("out-dir",
           cl::desc("Write every memref argument to DIR/arg<i>.npy after "
                    "the run"),
           cl::cat(category));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "tessel-run: error: " << message << "\n";
  return 1;
}

static std::optional<std::array<unsigned, 3>> parseDims(llvm::StringRef text) {
  std::array<unsigned, 3> dims = {1, 1, 1};
  llvm::SmallVector<llvm::StringRef, 3> parts;
  text.split(parts, ',');
  if (parts.empty() || parts.size() > 3)
    return std::nullopt;
  for (auto [index, part] : llvm::enumerate(parts))
    if (part.trim().getAsInteger(10, dims[index]) || dims[index] == 0)
      return std::nullopt;
  return dims;
}

/// One memref argument: its host buffer, laid out as the memref's strides
/// say, and the logical array it came from.
struct MemrefArgument {
  MemRefType type;
  NpyArray array;
  std::vector<char> buffer;
  llvm::SmallVector<int64_t, 4> strides;
  int64_t offset = 0;
  unsigned elementBytes = 0;
};

/// Calls `fn(logicalIndex, bufferElement)` for every element of `argument`.
static void forEachElement(const MemrefArgument &argument,
                           llvm::function_ref<void(int64_t, int64_t)> fn) {
  int64_t count = argument.array.getNumElements();
  llvm::ArrayRef<int64_t> shape = argument.array.shape;
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t rest = flat, element = argument.offset;
    for (int d = shape.size() - 1; d >= 0; --d) {
      element += (rest % shape[d]) * argument.strides[d];
      rest /= shape[d];
    }
    fn(flat, element);
  }
}

static llvm::Error loadMemref(MemrefArgument &argument, unsigned index,
                              llvm::StringRef path,
                              std::optional<NpyArray> given = std::nullopt) {
  llvm::Expected<NpyArray> array =
      given ? llvm::Expected<NpyArray>(std::move(*given)) : readNpy(path);
  if (!array)
    return array.takeError();
  MemRefType type = argument.type;
  std::optional<std::string> dtype = getNpyDtype(type.getElementType());
  if (!dtype)
    return llvm::createStringError(
        llvm::formatv("argument {0}: memrefs of {1} are not supported", index,
                      type.getElementType()));
  if (array->dtype != *dtype)
    return llvm::createStringError(
        llvm::formatv("argument {0}: '{1}' has dtype '{2}' but {3} needs '{4}'",
                      index, path, array->dtype, type, *dtype));
  if (int64_t(array->shape.size()) != type.getRank())
    return llvm::createStringError(
        llvm::formatv("argument {0}: '{1}' has rank {2} but {3} has rank {4}",
                      index, path, array->shape.size(), type, type.getRank()));
  for (auto [d, size] : llvm::enumerate(type.getShape()))
    if (!ShapedType::isDynamic(size) && size != array->shape[d])
      return llvm::createStringError(llvm::formatv(
          "argument {0}: '{1}' has shape ({2}) but {3} needs size {4} in "
          "dimension {5}",
          index, path,
          llvm::join(
              llvm::map_range(array->shape,
                              [](int64_t s) { return std::to_string(s); }),
              ", "),
          type, size, d));
  argument.array = std::move(*array);
  argument.elementBytes = argument.array.getElementBytes();

  // Strides from the layout; dynamic ones (and dynamic offsets) as a dense
  // row-major buffer would have them.
  llvm::SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return llvm::createStringError(llvm::formatv(
        "argument {0}: {1} has a layout without strides", index, type));
  int64_t dense = 1;
  argument.strides.assign(strides.size(), 0);
  for (int d = strides.size() - 1; d >= 0; --d) {
    argument.strides[d] =
        ShapedType::isDynamic(strides[d]) ? dense : strides[d];
    dense *= argument.array.shape[d];
  }
  argument.offset = ShapedType::isDynamic(offset) ? 0 : offset;
  int64_t extent = argument.offset + 1;
  for (auto [size, stride] : llvm::zip(argument.array.shape, argument.strides))
    extent += (size - 1) * stride;
  if (argument.array.getNumElements() == 0)
    extent = 0;
  argument.buffer.assign(std::max<int64_t>(extent, 1) * argument.elementBytes,
                         0);
  forEachElement(argument, [&](int64_t logical, int64_t element) {
    std::memcpy(&argument.buffer[element * argument.elementBytes],
                &argument.array.data[logical * argument.elementBytes],
                argument.elementBytes);
  });
  return llvm::Error::success();
}

/// Storage for the lowered kernel's arguments, stable in memory.
struct PackedArguments {
  std::deque<int64_t> integers;
  std::deque<void *> pointers;
  std::deque<double> doubles;
  std::deque<float> floats;
  std::deque<int32_t> ints32;
  std::vector<void *> slots;

  void addPointer(void *value) {
    slots.push_back(&pointers.emplace_back(value));
  }
  void addI64(int64_t value) { slots.push_back(&integers.emplace_back(value)); }
  void addI32(int32_t value) { slots.push_back(&ints32.emplace_back(value)); }
  void addF32(float value) { slots.push_back(&floats.emplace_back(value)); }
  void addF64(double value) { slots.push_back(&doubles.emplace_back(value)); }
};

/// Packs a memref as the LLVM lowering expands it: allocated and aligned
/// pointers, offset, sizes, strides.
static void packMemref(PackedArguments &packed, MemrefArgument &argument) {
  packed.addPointer(argument.buffer.data());
  packed.addPointer(argument.buffer.data());
  packed.addI64(argument.offset);
  for (int64_t size : argument.array.shape)
    packed.addI64(size);
  for (int64_t stride : argument.strides)
    packed.addI64(stride);
}

static llvm::Error packScalar(PackedArguments &packed, Type type,
                              unsigned index, llvm::StringRef text) {
  auto bad = [&] {
    return llvm::createStringError(llvm::formatv(
        "argument {0}: '{1}' is not a {2} value", index, text, type));
  };
  if (type.isIndex() || type.isInteger(64) || type.isInteger(32)) {
    int64_t value;
    if (text.getAsInteger(0, value))
      return bad();
    type.isInteger(32) ? packed.addI32(value) : packed.addI64(value);
    return llvm::Error::success();
  }
  if (type.isF32() || type.isF64()) {
    double value;
    if (text.getAsDouble(value))
      return bad();
    type.isF32() ? packed.addF32(value) : packed.addF64(value);
    return llvm::Error::success();
  }
  return llvm::createStringError(llvm::formatv(
      "argument {0}: scalars of type {1} are not supported", index, type));
}

/// The logical array the argument's buffer holds now.
static NpyArray gatherArray(const MemrefArgument &argument) {
  NpyArray out = argument.array;
  forEachElement(argument, [&](int64_t logical, int64_t element) {
    std::memcpy(&out.data[logical * argument.elementBytes],
                &argument.buffer[element * argument.elementBytes],
                argument.elementBytes);
  });
  return out;
}

static llvm::Error writeBack(const MemrefArgument &argument, unsigned index,
                             llvm::StringRef dir) {
  NpyArray out = gatherArray(argument);
  llvm::SmallString<128> path(dir);
  llvm::sys::path::append(path, "arg" + std::to_string(index) + ".npy");
  return writeNpy(path, out);
}

static double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

/// Lowers the module's remaining gpu.modules for the emulator and compiles
/// the one named `moduleName`.
static llvm::Expected<std::unique_ptr<emu::Emulator>>
compileForEmulator(ModuleOp module, llvm::StringRef moduleName,
                   const Chip &chip, bool fromL2) {
  PassManager pm(module.getContext());
  TesselToROCDLOptions pipelineOptions;
  pipelineOptions.chip = chip.name.str();
  if (fromL2)
    buildGPUToROCDLPipeline(pm, pipelineOptions);
  else
    buildTesselToROCDLPipeline(pm, pipelineOptions);
  TesselLowerToEmulatorPassOptions emulatorOptions;
  emulatorOptions.chip = chip.name.str();
  pm.addPass(createTesselLowerToEmulatorPass(emulatorOptions));
  if (failed(pm.run(module)))
    return llvm::createStringError("lowering failed");
  for (auto nested : module.getOps<ModuleOp>())
    if (nested.getName() == moduleName)
      return emu::Emulator::create(nested, chip);
  return llvm::createStringError("the lowering produced no host module '" +
                                 moduleName + "'");
}

/// Packs given (`argValues`) or generated (`generated[i]`) arguments.
struct KernelArguments {
  std::vector<MemrefArgument> memrefs;
  PackedArguments packed;
  std::vector<emu::BufferRegion> buffers;
};

static llvm::Error
packArguments(FunctionType signature, KernelArguments &arguments,
              llvm::ArrayRef<std::optional<HostArray>> generated) {
  arguments.memrefs.resize(signature.getNumInputs());
  for (auto [index, type] : llvm::enumerate(signature.getInputs())) {
    bool given = index < argValues.size();
    if (auto memref = dyn_cast<MemRefType>(type)) {
      MemrefArgument &argument = arguments.memrefs[index];
      argument.type = memref;
      std::optional<NpyArray> array;
      if (!given)
        array = generated[index]->npy;
      if (llvm::Error error =
              loadMemref(argument, index, given ? argValues[index] : "", array))
        return error;
      packMemref(arguments.packed, argument);
      arguments.buffers.push_back({"argument " + std::to_string(index),
                                   argument.buffer.data(),
                                   argument.buffer.size()});
      continue;
    }
    std::string text =
        given ? argValues[index]
              : std::to_string(generated[index] ? generated[index]->values[0]
                                                : 0.0);
    if (type.isIndex() || isa<IntegerType>(type))
      text = given ? argValues[index]
                   : std::to_string(int64_t(generated[index]->values[0]));
    if (llvm::Error error = packScalar(arguments.packed, type, index, text))
      return error;
  }
  return llvm::Error::success();
}

static llvm::Error writeOutputs(const KernelArguments &arguments) {
  if (outDir.empty())
    return llvm::Error::success();
  if (std::error_code ec = llvm::sys::fs::create_directories(outDir))
    return llvm::createStringError("cannot create '" + outDir +
                                   "': " + ec.message());
  for (auto [index, argument] : llvm::enumerate(arguments.memrefs))
    if (argument.type)
      if (llvm::Error error = writeBack(argument, index, outDir))
        return error;
  return llvm::Error::success();
}

/// Runs one gpu.func kernel on the given arguments.
static int runGpuKernel(ModuleOp module, const Chip &chip) {
  std::optional<std::array<unsigned, 3>> grid = parseDims(gridText);
  if (!grid)
    return fail("--grid must be X[,Y[,Z]] with positive sizes, got '" +
                gridText + "'");
  if (kernelName.empty())
    return fail("--kernel NAME is required");
  gpu::GPUFuncOp kernel;
  module.walk([&](gpu::GPUFuncOp function) {
    if (function.getName() == kernelName && function.isKernel())
      kernel = function;
  });
  if (!kernel)
    return fail("no gpu.func kernel named '" + kernelName + "' in '" +
                inputFilename + "'");
  std::string moduleName =
      kernel->getParentOfType<gpu::GPUModuleOp>().getName().str();
  std::array<unsigned, 3> block = {1, 1, 1};
  if (!blockText.empty()) {
    std::optional<std::array<unsigned, 3>> parsed = parseDims(blockText);
    if (!parsed)
      return fail("--block must be X[,Y[,Z]] with positive sizes, got '" +
                  blockText + "'");
    block = *parsed;
  } else if (std::optional<llvm::ArrayRef<int32_t>> known =
                 kernel.getKnownBlockSize()) {
    for (auto [index, size] : llvm::enumerate(*known))
      block[index] = size;
  } else {
    return fail("--block is required: kernel '" + kernelName +
                "' has no known_block_size");
  }
  FunctionType signature = kernel.getFunctionType();
  if (argValues.size() != signature.getNumInputs())
    return fail("kernel '" + kernelName + "' takes " +
                llvm::Twine(signature.getNumInputs()) + " arguments, got " +
                llvm::Twine(argValues.size()) + " --arg");
  KernelArguments arguments;
  if (llvm::Error error = packArguments(signature, arguments, {}))
    return fail(llvm::toString(std::move(error)));

  auto start = std::chrono::steady_clock::now();
  llvm::Expected<std::unique_ptr<emu::Emulator>> emulator =
      compileForEmulator(module, moduleName, chip, /*fromL2=*/false);
  if (!emulator)
    return fail("cannot compile the kernels: " +
                llvm::toString(emulator.takeError()));
  double compileMs = millisecondsSince(start);
  start = std::chrono::steady_clock::now();
  emu::LaunchDims dims;
  dims.grid = *grid;
  dims.block = block;
  emu::LaunchStats stats;
  if (llvm::Error error = (*emulator)->launch(
          kernelName, dims, arguments.packed.slots, arguments.buffers, &stats))
    return fail(llvm::toString(std::move(error)));
  llvm::outs() << llvm::formatv(
      "{0} on emu ({1}): grid {2}x{3}x{4}, block {5}x{6}x{7}: {8} lanes, {9} "
      "barriers, {10} wave collectives; compile {11:f1} ms, run {12:f1} ms\n",
      kernelName, chip.name, dims.grid[0], dims.grid[1], dims.grid[2],
      dims.block[0], dims.block[1], dims.block[2], stats.lanes, stats.barriers,
      stats.collectives, compileMs, millisecondsSince(start));
  if (llvm::Error error = writeOutputs(arguments))
    return fail(llvm::toString(std::move(error)));
  return 0;
}

/// One problem-level kernel and what checking it needs.
struct Problem {
  std::string name;
  Operation *op; // tessel.matmul or tessel.attention, in the unlowered copy
  FunctionType signature;
};

/// The line tessel-run prints for one checked kernel.
static void printVerdict(llvm::StringRef name, llvm::StringRef what,
                         const Chip &chip, ConfigAttr config,
                         const Comparison &comparison,
                         const emu::LaunchStats &stats, double runMs) {
  llvm::outs() << llvm::formatv(
      "{0}: {1} on {2} (emu){3}: max abs error {4:e2}, max rel error {5:e2} "
      "(tolerance {6:e1}), {7} workgroups, run {8:f1} ms: {9}\n",
      name, what, chip.name,
      config ? " " + std::string(llvm::formatv("{0}", Attribute(config)))
             : std::string(),
      comparison.maxAbsError, comparison.maxRelError, comparison.tolerance,
      stats.workgroups, runMs, comparison.passed ? "PASS" : "FAIL");
}

/// Compiles every problem-level kernel of `module`, runs each on random (or
/// given) inputs and checks it against the host reference.
static int runProblems(ModuleOp module, ArrayRef<Problem> problems,
                       const Chip &chip) {
  if (!argValues.empty() && problems.size() > 1 && kernelName.empty())
    return fail("--arg needs --kernel NAME when the file holds several "
                "kernels");
  PassManager toGPU(module.getContext());
  TesselToROCDLOptions options;
  options.chip = chip.name.str();
  buildTesselToGPUPipeline(toGPU, options);
  auto start = std::chrono::steady_clock::now();
  if (failed(toGPU.run(module)))
    return 1;
  // Launch facts from the lowered kernels.
  // Launch facts from the lowered kernels: a problem is one kernel of its
  // name, or the stages of a plan (split-KV attention).
  struct KernelLaunch {
    std::string name;
    unsigned block;
    std::array<int64_t, 2> tile;
    FunctionType signature;
    std::string planOf;
    int64_t stage = 0, splits = 1;
  };
  std::vector<KernelLaunch> kernels;
  module.walk([&](gpu::GPUFuncOp kernel) {
    auto tile = kernel->getAttrOfType<DenseI64ArrayAttr>("tessel.tile");
    std::optional<llvm::ArrayRef<int32_t>> block = kernel.getKnownBlockSize();
    if (!tile || !block)
      return;
    KernelLaunch launch{kernel.getName().str(),
                        unsigned((*block)[0]),
                        {tile[0], tile[1]},
                        kernel.getFunctionType()};
    if (auto planOf = kernel->getAttrOfType<StringAttr>("tessel.plan_of")) {
      launch.planOf = planOf.str();
      launch.stage =
          kernel->getAttrOfType<IntegerAttr>("tessel.plan_stage").getInt();
      launch.splits =
          kernel->getAttrOfType<IntegerAttr>("tessel.splits").getInt();
    }
    kernels.push_back(launch);
  });
  llvm::Expected<std::unique_ptr<emu::Emulator>> emulator =
      compileForEmulator(module, "tessel_kernels", chip, /*fromL2=*/true);
  if (!emulator)
    return fail("cannot compile the kernels: " +
                llvm::toString(emulator.takeError()));
  double compileMs = millisecondsSince(start);

  bool allPassed = true;
  std::mt19937 rng(seed);
  for (const Problem &problem : problems) {
    if (!kernelName.empty() && problem.name != kernelName)
      continue;
    auto matmul = dyn_cast<MatmulOp>(problem.op);
    auto attention = dyn_cast<AttentionOp>(problem.op);
    auto function = problem.op->getParentOfType<func::FuncOp>();
    // The concrete shape each argument plays, by role.
    MatmulSizes sizes;
    AttentionSizes attentionSizes;
    std::function<SmallVector<int64_t>(Value)> roleOf;
    if (matmul) {
      sizes = getMatmulSizes(matmul, dynamicSize);
      auto withBatch = [&](SmallVector<int64_t> shape) {
        if (sizes.batch)
          shape.insert(shape.begin(), sizes.batch);
        return shape;
      };
      roleOf = [&, withBatch](Value value) -> SmallVector<int64_t> {
        if (value == matmul.getA())
          return withBatch({sizes.m, sizes.k});
        if (value == matmul.getB())
          return withBatch({sizes.k, sizes.n});
        return withBatch({sizes.m, sizes.n});
      };
    } else {
      attentionSizes = getAttentionSizes(attention, dynamicSize);
      const AttentionSizes &a = attentionSizes;
      roleOf = [&](Value value) -> SmallVector<int64_t> {
        if (value == attention.getK() || value == attention.getV())
          return {a.batch, a.kvHeads, a.seqKV, a.headDim};
        if (value == attention.getLse())
          return {a.batch, a.heads, a.seqQ};
        return {a.batch, a.heads, a.seqQ, a.headDim};
      };
    }
    // The kernels to launch, in order.
    SmallVector<const KernelLaunch *> steps;
    for (const KernelLaunch &kernel : kernels)
      if (kernel.name == problem.name || kernel.planOf == problem.name)
        steps.push_back(&kernel);
    llvm::sort(steps, [](const KernelLaunch *x, const KernelLaunch *y) {
      return x->stage < y->stage;
    });
    if (steps.empty())
      return fail("kernel '" + problem.name + "' was not lowered");
    FunctionType signature = steps.front()->signature;
    std::vector<std::optional<HostArray>> generated(signature.getNumInputs());
    // Workspace arguments past the problem's own start zeroed.
    for (unsigned index = function.getNumArguments();
         index < signature.getNumInputs(); ++index) {
      auto memref = cast<MemRefType>(signature.getInput(index));
      SmallVector<int64_t> role = {attentionSizes.batch, attentionSizes.heads,
                                   steps.front()->splits, attentionSizes.seqQ,
                                   attentionSizes.headDim};
      role.resize(memref.getRank());
      HostArray zeros = makeRandomArray(memref.getElementType(),
                                        concreteShape(memref, role), rng);
      std::fill(zeros.npy.data.begin(), zeros.npy.data.end(), 0);
      generated[index] = std::move(zeros);
    }
    for (BlockArgument argument : function.getArguments()) {
      Type type = argument.getType();
      if (auto memref = dyn_cast<MemRefType>(type))
        generated[argument.getArgNumber()] =
            makeRandomArray(memref.getElementType(),
                            concreteShape(memref, roleOf(argument)), rng);
      else
        generated[argument.getArgNumber()] = makeRandomArray(type, {1}, rng);
    }
    if (!argValues.empty() && argValues.size() != function.getNumArguments())
      return fail("kernel '" + problem.name + "' takes " +
                  llvm::Twine(function.getNumArguments()) + " arguments, got " +
                  llvm::Twine(argValues.size()) + " --arg");
    KernelArguments arguments;
    if (llvm::Error error = packArguments(signature, arguments, generated))
      return fail(llvm::toString(std::move(error)));
    // What the kernel actually reads (given files or generated data).
    auto hostOf = [&](Value value) -> HostArray {
      auto argument = cast<BlockArgument>(value);
      MemrefArgument &memref = arguments.memrefs[argument.getArgNumber()];
      if (memref.type) {
        NpyArray now = gatherArray(memref);
        std::vector<double> values =
            decodeArray(memref.type.getElementType(), now);
        return {std::move(now), std::move(values)};
      }
      return *generated[argument.getArgNumber()];
    };

    auto runStart = std::chrono::steady_clock::now();
    emu::LaunchStats stats;
    for (const KernelLaunch *step : steps) {
      emu::LaunchDims dims;
      const std::array<int64_t, 2> &tile = step->tile;
      if (matmul)
        dims.grid = {unsigned(llvm::divideCeil(sizes.n, tile[1])),
                     unsigned(llvm::divideCeil(sizes.m, tile[0])),
                     unsigned(std::max<int64_t>(sizes.batch, 1))};
      else
        dims.grid = {unsigned(llvm::divideCeil(attentionSizes.seqQ, tile[0])),
                     unsigned(attentionSizes.heads),
                     unsigned(attentionSizes.batch *
                              (step->stage == 0 ? step->splits : 1))};
      dims.block = {step->block, 1, 1};
      if (dims.grid[0] && dims.grid[1] && dims.grid[2])
        if (llvm::Error error =
                (*emulator)->launch(step->name, dims, arguments.packed.slots,
                                    arguments.buffers, &stats))
          return fail(llvm::toString(std::move(error)));
    }
    double runMs = millisecondsSince(runStart);
    if (llvm::Error error = writeOutputs(arguments))
      return fail(llvm::toString(std::move(error)));

    if (attention) {
      std::vector<double> expectedO, expectedLse;
      computeAttentionReference(
          attentionSizes, attention.getEffectiveScale(), attention.getCausal(),
          hostOf(attention.getQ()), hostOf(attention.getK()),
          hostOf(attention.getV()), expectedO, expectedLse);
      Type oElement = attention.getO().getType().getElementType();
      Comparison comparison =
          compareResults(oElement, hostOf(attention.getO()).values, expectedO,
                         attentionSizes.seqKV);
      if (Value lse = attention.getLse()) {
        Comparison lseComparison = compareResults(
            Float32Type::get(module.getContext()), hostOf(lse).values,
            expectedLse, attentionSizes.seqKV);
        comparison.passed &= lseComparison.passed;
        comparison.maxRelError =
            std::max(comparison.maxRelError, lseComparison.maxRelError);
      }
      allPassed &= comparison.passed;
      const AttentionSizes &a = attentionSizes;
      std::string what = llvm::formatv(
          "{0}x{1}x{2}x{3} (kv heads {4}, kv length {5}{6}{7}) {8}", a.batch,
          a.heads, a.seqQ, a.headDim, a.kvHeads, a.seqKV,
          attention.getCausal() ? ", causal" : "",
          steps.size() > 1
              ? ", split-KV " + std::to_string(steps.front()->splits) +
                    " ways + combine"
              : std::string(),
          oElement);
      printVerdict(problem.name, what, chip, attention.getConfigAttr(),
                   comparison, stats, runMs);
      continue;
    }
    HostArray a = hostOf(matmul.getA()), b = hostOf(matmul.getB());
    std::vector<HostArray> extras;
    for (Value extra : matmul.getExtras())
      extras.push_back(hostOf(extra));
    SmallVector<const HostArray *> extraPointers;
    for (const HostArray &extra : extras)
      extraPointers.push_back(&extra);
    FailureOr<std::vector<double>> expected =
        computeMatmulReference(matmul, sizes, a, b, extraPointers);
    if (failed(expected))
      return 1;
    Type cElement = matmul.getC().getType().getElementType();
    HostArray c = hostOf(matmul.getC());
    ConfigAttr config = matmul.getConfigAttr();
    bool xf32 = config && config.getInstr() &&
                config.getInstr().getValue().ends_with("_xf32");
    Comparison comparison =
        compareResults(cElement, c.values, *expected, sizes.k, xf32);
    allPassed &= comparison.passed;
    std::string what = llvm::formatv(
        "{0}{1}x{2}x{3} {4} x {5} -> {6}",
        sizes.batch ? std::to_string(sizes.batch) + "x" : "", sizes.m, sizes.n,
        sizes.k, matmul.getA().getType().getElementType(),
        matmul.getB().getType().getElementType(), cElement);
    printVerdict(problem.name, what, chip, config, comparison, stats, runMs);
  }
  llvm::outs() << llvm::formatv("compile {0:f1} ms\n", compileMs);
  return allPassed ? 0 : 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv, "Tessel kernel runner\n");

  if (device == "hip")
    return fail("--device=hip is not available in this build: the HIP "
                "runtime is part of the JIT library; use --device=emu");
  if (device != "emu")
    return fail("unknown device '" + device + "'; expected emu or hip");
  const Chip *chip = lookupChip(chipName);
  if (!chip)
    return fail("unknown chip '" + chipName +
                "'; known chips: " + knownChipNames());

  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &errorMessage);
  if (!input)
    return fail(errorMessage);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  context.printOpOnDiagnostic(false);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  // Problem-level kernels are checked against the host reference; the
  // unlowered copy keeps their ops for it.
  OwningOpRef<ModuleOp> original(cast<ModuleOp>((*module)->clone()));
  SmallVector<Problem> problems;
  original->walk([&](func::FuncOp function) {
    function.walk([&](Operation *op) {
      if (isa<MatmulOp, AttentionOp>(op))
        problems.push_back(
            {function.getName().str(), op, function.getFunctionType()});
    });
  });
  if (!problems.empty())
    return runProblems(*module, problems, *chip);
  return runGpuKernel(*module, *chip);
}
