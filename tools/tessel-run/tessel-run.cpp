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

#include "tessel/Emulator/Emulator.h"
#include "tessel/Emulator/Passes.h"
#include "tessel/InitAllDialects.h"
#include "tessel/Pipelines/Pipelines.h"
#include "tessel/Support/Npy.h"
#include "tessel/Target/Chip.h"

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
static cl::opt<std::string> gridText("grid",
                                     cl::desc("Workgroups: X[,Y[,Z]]"),
                                     cl::init("1,1,1"), cl::cat(category));
static cl::opt<std::string>
    blockText("block",
              cl::desc("Lanes per workgroup: X[,Y[,Z]] (default: the "
                       "kernel's known_block_size)"),
              cl::cat(category));
static cl::opt<std::string> chipName("chip", cl::desc("Chip to emulate"),
                                     cl::init("gfx942"), cl::cat(category));
static cl::opt<std::string> device("device",
                                   cl::desc("emu (default) or hip"),
                                   cl::init("emu"), cl::cat(category));
static cl::list<std::string>
    argValues("arg",
              cl::desc("One per kernel argument, in order: a .npy file for a "
                       "memref, a number for a scalar"),
              cl::cat(category));
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

/// The .npy dtype that holds `type`'s elements.
static std::optional<std::string> dtypeFor(Type type) {
  if (type.isF32())
    return "<f4";
  if (type.isF64())
    return "<f8";
  if (type.isF16())
    return "<f2";
  if (type.isBF16())
    return "<u2"; // bf16 bits
  if (isa<FloatType>(type) && type.getIntOrFloatBitWidth() == 8)
    return "|u1"; // fp8 bits
  if (type.isInteger(8))
    return "|i1";
  if (type.isInteger(16))
    return "<i2";
  if (type.isInteger(32))
    return "<i4";
  if (type.isInteger(64))
    return "<i8";
  return std::nullopt;
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
                              llvm::StringRef path) {
  llvm::Expected<NpyArray> array = readNpy(path);
  if (!array)
    return array.takeError();
  MemRefType type = argument.type;
  std::optional<std::string> dtype = dtypeFor(type.getElementType());
  if (!dtype)
    return llvm::createStringError(llvm::formatv(
        "argument {0}: memrefs of {1} are not supported", index,
        type.getElementType()));
  if (array->dtype != *dtype)
    return llvm::createStringError(llvm::formatv(
        "argument {0}: '{1}' has dtype '{2}' but {3} needs '{4}'", index, path,
        array->dtype, type, *dtype));
  if (int64_t(array->shape.size()) != type.getRank())
    return llvm::createStringError(llvm::formatv(
        "argument {0}: '{1}' has rank {2} but {3} has rank {4}", index, path,
        array->shape.size(), type, type.getRank()));
  for (auto [d, size] : llvm::enumerate(type.getShape()))
    if (!ShapedType::isDynamic(size) && size != array->shape[d])
      return llvm::createStringError(llvm::formatv(
          "argument {0}: '{1}' has shape ({2}) but {3} needs size {4} in "
          "dimension {5}",
          index, path, llvm::join(llvm::map_range(array->shape, [](int64_t s) {
                                    return std::to_string(s);
                                  }),
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
    argument.strides[d] = ShapedType::isDynamic(strides[d]) ? dense : strides[d];
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

  void addPointer(void *value) { slots.push_back(&pointers.emplace_back(value)); }
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

static llvm::Error writeBack(const MemrefArgument &argument, unsigned index,
                             llvm::StringRef dir) {
  NpyArray out = argument.array;
  forEachElement(argument, [&](int64_t logical, int64_t element) {
    std::memcpy(&out.data[logical * argument.elementBytes],
                &argument.buffer[element * argument.elementBytes],
                argument.elementBytes);
  });
  llvm::SmallString<128> path(dir);
  llvm::sys::path::append(path, "arg" + std::to_string(index) + ".npy");
  return writeNpy(path, out);
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
  std::optional<std::array<unsigned, 3>> grid = parseDims(gridText);
  if (!grid)
    return fail("--grid must be X[,Y[,Z]] with positive sizes, got '" +
                gridText + "'");
  if (kernelName.empty())
    return fail("--kernel NAME is required");

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

  // The kernel, and the gpu.module holding it.
  gpu::GPUFuncOp kernel;
  gpu::GPUModuleOp kernelModule;
  module->walk([&](gpu::GPUFuncOp function) {
    if (function.getName() == kernelName && function.isKernel()) {
      kernel = function;
      kernelModule = function->getParentOfType<gpu::GPUModuleOp>();
    }
  });
  if (!kernel)
    return fail("no gpu.func kernel named '" + kernelName + "' in '" +
                inputFilename + "'");
  std::string moduleName = kernelModule.getName().str();
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

  std::vector<MemrefArgument> memrefs(signature.getNumInputs());
  PackedArguments packed;
  std::vector<emu::BufferRegion> buffers;
  for (auto [index, type] : llvm::enumerate(signature.getInputs())) {
    if (auto memref = dyn_cast<MemRefType>(type)) {
      memrefs[index].type = memref;
      if (llvm::Error error = loadMemref(memrefs[index], index, argValues[index]))
        return fail(llvm::toString(std::move(error)));
      packMemref(packed, memrefs[index]);
      buffers.push_back({"argument " + std::to_string(index),
                         memrefs[index].buffer.data(),
                         memrefs[index].buffer.size()});
      continue;
    }
    if (llvm::Error error = packScalar(packed, type, index, argValues[index]))
      return fail(llvm::toString(std::move(error)));
  }

  // Lower exactly as tesselc does, then for the host.
  PassManager pm(&context);
  TesselToROCDLOptions pipelineOptions;
  pipelineOptions.chip = chip->name.str();
  buildTesselToROCDLPipeline(pm, pipelineOptions);
  TesselLowerToEmulatorPassOptions emulatorOptions;
  emulatorOptions.chip = chip->name.str();
  pm.addPass(createTesselLowerToEmulatorPass(emulatorOptions));
  if (failed(pm.run(*module)))
    return 1;
  ModuleOp host;
  for (auto nested : module->getOps<ModuleOp>())
    if (nested.getName() == moduleName)
      host = nested;
  if (!host)
    return fail("the lowering produced no host module '" + moduleName + "'");

  auto start = std::chrono::steady_clock::now();
  llvm::Expected<std::unique_ptr<emu::Emulator>> emulator =
      emu::Emulator::create(host, *chip);
  if (!emulator)
    return fail("cannot JIT-compile the kernels: " +
                llvm::toString(emulator.takeError()));
  auto compiled = std::chrono::steady_clock::now();
  emu::LaunchDims dims;
  dims.grid = *grid;
  dims.block = block;
  emu::LaunchStats stats;
  if (llvm::Error error = (*emulator)->launch(kernelName, dims, packed.slots,
                                              buffers, &stats))
    return fail(llvm::toString(std::move(error)));
  auto ran = std::chrono::steady_clock::now();
  auto ms = [](auto from, auto to) {
    return std::chrono::duration<double, std::milli>(to - from).count();
  };
  llvm::outs() << llvm::formatv(
      "{0} on emu ({1}): grid {2}x{3}x{4}, block {5}x{6}x{7}: {8} lanes, {9} "
      "barriers, {10} wave collectives; compile {11:f1} ms, run {12:f1} ms\n",
      kernelName, chip->name, dims.grid[0], dims.grid[1], dims.grid[2],
      dims.block[0], dims.block[1], dims.block[2], stats.lanes, stats.barriers,
      stats.collectives, ms(start, compiled), ms(compiled, ran));

  if (!outDir.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(outDir))
      return fail("cannot create '" + outDir + "': " + ec.message());
    for (auto [index, argument] : llvm::enumerate(memrefs))
      if (argument.type)
        if (llvm::Error error = writeBack(argument, index, outDir))
          return fail(llvm::toString(std::move(error)));
  }
  return 0;
}
