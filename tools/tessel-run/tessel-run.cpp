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
// A file with problem-level kernels (tessel.matmul, tessel.attention,
// tessel.attention_grad) runs each on random inputs, or on the arrays given
// with --arg (their shapes then fix the dynamic sizes), and checks it
// against a host reference. Inputs with a meaning are generated with it:
// varlen's cumulative lengths pack the totals into random sequences, a
// paged cache's block table shuffles the pages, and the backward's O and
// logsumexp come from the host forward.
//
//===----------------------------------------------------------------------===//

#include "MatmulCheck.h"
#include "ProblemSizes.h"
#include "tessel/Emulator/Emulator.h"
#include "tessel/Emulator/Passes.h"
#include "tessel/InitAllDialects.h"
#include "tessel/Pipelines/Pipelines.h"
#include "tessel/Support/InputLimits.h"
#include "tessel/Support/Npy.h"
#include "tessel/Support/Strides.h"
#include "tessel/Support/Version.h"
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
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <cstring>
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
static cl::opt<std::string>
    device("device",
           cl::desc("emulator (default) or hip: the device names of the C "
                    "API and Python"),
           cl::init("emulator"), cl::cat(category));
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

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(message.str());
}

//===----------------------------------------------------------------------===//
// Launch limits
//===----------------------------------------------------------------------===//

/// AMD's dispatch packet holds each grid dimension in 32 bits.
static constexpr uint64_t kMaxGridDim = UINT32_MAX;
/// The emulator runs workgroups one after another, about 25 us each for a
/// one-wave kernel that does nothing, far longer for a real one: more than
/// 2^24 workgroups in one launch (7 minutes at that rate, hours for real
/// kernels) is refused as a mistake rather than started.
static constexpr uint64_t kMaxWorkgroups = uint64_t(1) << 24;
/// Generated inputs take about 3 * element bytes + 16 bytes of host memory
/// per element (the array, its doubles, the kernel's buffer and the copies
/// the check reads back); 2^27 elements (4096x4096 f32 matrices are 2^24
/// each) keep a run within a few GiB.
static constexpr int64_t kMaxGeneratedElements = int64_t(1) << 27;

/// X[,Y[,Z]] as three positive sizes, parsed in 64 bits so that no size
/// wraps around before it is checked.
static std::optional<std::array<uint64_t, 3>> parseDims(llvm::StringRef text) {
  std::array<uint64_t, 3> dims = {1, 1, 1};
  llvm::SmallVector<llvm::StringRef, 3> parts;
  text.split(parts, ',');
  if (parts.empty() || parts.size() > 3)
    return std::nullopt;
  for (auto [index, part] : llvm::enumerate(parts))
    if (part.trim().getAsInteger(10, dims[index]) || dims[index] == 0)
      return std::nullopt;
  return dims;
}

/// Fails for a grid the hardware cannot dispatch or the emulator should not
/// try (`what` names where it came from).
static llvm::Error checkGrid(const std::array<uint64_t, 3> &grid,
                             const llvm::Twine &what) {
  uint64_t total = 1;
  for (auto [index, size] : llvm::enumerate(grid)) {
    if (size > kMaxGridDim)
      return makeError(what + ": dimension " + llvm::Twine(index) + " has " +
                       llvm::Twine(size) + " workgroups, over the " +
                       llvm::Twine(kMaxGridDim) + " an AMD dispatch allows");
    total *= size; // at most 2^64 / 2^32: no overflow before the check
    if (total > kMaxWorkgroups)
      break;
  }
  if (total > kMaxWorkgroups)
    return makeError(what + ": " + llvm::Twine(grid[0]) + "x" +
                     llvm::Twine(grid[1]) + "x" + llvm::Twine(grid[2]) +
                     " workgroups are more than the " +
                     llvm::Twine(kMaxWorkgroups) + " one emulator launch runs");
  return llvm::Error::success();
}

/// Fails for a workgroup of more lanes than `chip` allows, before the sizes
/// are narrowed to the 32 bits a launch takes (the emulator then repeats the
/// check, in the same words, on what it is given).
static llvm::Error checkBlock(const std::array<uint64_t, 3> &block,
                              const Chip &chip, llvm::StringRef kernel) {
  uint64_t lanes = 1;
  bool overflow = false;
  for (uint64_t size : block)
    lanes = llvm::SaturatingMultiply(lanes, size, &overflow);
  if (lanes <= chip.maxWorkgroupSize)
    return llvm::Error::success();
  std::string count =
      overflow
          ? llvm::formatv("{0}x{1}x{2}", block[0], block[1], block[2]).str()
          : std::to_string(lanes);
  return makeError(
      llvm::formatv("kernel '{0}': a workgroup of {1} lanes exceeds the {2} "
                    "lanes {3} allows",
                    kernel, count, chip.maxWorkgroupSize, chip.name));
}

static std::array<unsigned, 3> narrow(const std::array<uint64_t, 3> &dims) {
  return {unsigned(dims[0]), unsigned(dims[1]), unsigned(dims[2])};
}

//===----------------------------------------------------------------------===//
// Arguments
//===----------------------------------------------------------------------===//

/// A scalar argument's value as the kernel receives it.
struct ScalarValue {
  int64_t integer = 0; // index, i32, i64
  double real = 0;     // f32 (already rounded to it), f64
};

/// One kernel argument before packing: the logical array of a memref or
/// the value of a scalar, and how diagnostics name it.
struct KernelInput {
  std::optional<NpyArray> array;
  ScalarValue scalar;
  std::string what;
};

static std::string describeGiven(unsigned index) {
  return llvm::formatv("argument {0} ('{1}')", index, argValues[index]);
}

static std::string joinShape(llvm::ArrayRef<int64_t> shape) {
  return llvm::join(
      llvm::map_range(shape, [](int64_t s) { return std::to_string(s); }),
      ", ");
}

/// Fails unless `array` has the dtype and rank `type` needs.
static llvm::Error checkArrayType(MemRefType type, const NpyArray &array,
                                  llvm::StringRef what) {
  std::optional<std::string> dtype = getNpyDtype(type.getElementType());
  if (!dtype)
    return makeError(llvm::formatv("{0}: memrefs of {1} are not supported",
                                   what, type.getElementType()));
  if (array.dtype != *dtype)
    return makeError(llvm::formatv("{0} has dtype '{1}' but {2} needs '{3}'",
                                   what, array.dtype, type, *dtype));
  if (int64_t(array.shape.size()) != type.getRank())
    return makeError(llvm::formatv("{0} has rank {1} but {2} has rank {3}",
                                   what, array.shape.size(), type,
                                   type.getRank()));
  return llvm::Error::success();
}

/// Fails unless `array` has the static sizes of `type`.
static llvm::Error checkStaticShape(MemRefType type, const NpyArray &array,
                                    llvm::StringRef what) {
  for (auto [d, size] : llvm::enumerate(type.getShape()))
    if (!ShapedType::isDynamic(size) && size != array.shape[d])
      return makeError(llvm::formatv(
          "{0} has shape ({1}) but {2} needs size {3} in dimension {4}", what,
          joinShape(array.shape), type, size, d));
  return llvm::Error::success();
}

/// Reads the .npy file given for memref argument `index`.
static llvm::Expected<NpyArray> readGivenArray(MemRefType type,
                                               unsigned index) {
  llvm::Expected<NpyArray> array = readNpy(argValues[index]);
  if (!array)
    return makeError("argument " + llvm::Twine(index) + ": " +
                     llvm::toString(array.takeError()));
  if (llvm::Error error = checkArrayType(type, *array, describeGiven(index)))
    return std::move(error);
  return array;
}

/// Parses the number given for scalar argument `index` as the kernel will
/// receive it.
static llvm::Expected<ScalarValue> parseScalar(Type type, unsigned index) {
  llvm::StringRef text = argValues[index];
  auto bad = [&](llvm::StringRef rule) {
    return makeError(
        llvm::formatv("argument {0}: '{1}' is not {2}", index, text, rule));
  };
  ScalarValue value;
  if (type.isIndex() || type.isInteger(64) || type.isInteger(32)) {
    if (text.getAsInteger(0, value.integer))
      return bad(llvm::formatv("an integer of type {0}", type).str());
    if (type.isInteger(32) &&
        (value.integer < INT32_MIN || value.integer > INT32_MAX))
      return bad("an i32 value (-2147483648 to 2147483647)");
    return value;
  }
  if (type.isF32() || type.isF64()) {
    if (text.getAsDouble(value.real))
      return bad(llvm::formatv("a {0} value", type).str());
    if (type.isF32()) {
      float rounded = value.real;
      if (std::isfinite(value.real) && !std::isfinite(rounded))
        return bad("within f32's range");
      value.real = rounded;
    }
    return value;
  }
  return makeError(llvm::formatv(
      "argument {0}: scalars of type {1} are not supported (index, i32, i64, "
      "f32, f64)",
      index, type));
}

/// Reads every --arg as `signature` says.
static llvm::Expected<std::vector<KernelInput>>
readGivenInputs(FunctionType signature) {
  std::vector<KernelInput> inputs(signature.getNumInputs());
  for (auto [index, type] : llvm::enumerate(signature.getInputs())) {
    KernelInput &input = inputs[index];
    input.what = describeGiven(index);
    if (auto memref = dyn_cast<MemRefType>(type)) {
      llvm::Expected<NpyArray> array = readGivenArray(memref, index);
      if (!array)
        return array.takeError();
      if (llvm::Error error = checkStaticShape(memref, *array, input.what))
        return std::move(error);
      input.array = std::move(*array);
      continue;
    }
    llvm::Expected<ScalarValue> scalar = parseScalar(type, index);
    if (!scalar)
      return scalar.takeError();
    input.scalar = *scalar;
  }
  return inputs;
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

/// Whether distinct elements of `shape` land on distinct buffer elements
/// with `strides`: ordered by stride, each dimension that has more than one
/// element must step over everything the ones inside it span.
static bool stridesAreDisjoint(llvm::ArrayRef<int64_t> shape,
                               llvm::ArrayRef<int64_t> strides) {
  llvm::SmallVector<std::pair<int64_t, int64_t>> dims; // (stride, size)
  for (auto [size, stride] : llvm::zip(shape, strides)) {
    if (size == 0)
      return true; // no element at all
    if (size > 1)
      dims.push_back({stride, size});
  }
  llvm::sort(dims);
  int64_t spanned = 1; // elements the inner dimensions span
  for (auto [stride, size] : dims) {
    if (stride < spanned)
      return false;
    spanned = stride * size; // within the buffer's extent: no overflow
  }
  return true;
}

/// Lays `array` out in a buffer as memref `argument.type` says: static
/// strides as they are, dynamic ones (and a dynamic offset, as 0) dense in
/// the order the static ones imply, so a column-major operand stays
/// column-major.
static llvm::Error loadMemref(MemrefArgument &argument, NpyArray array,
                              llvm::StringRef what) {
  MemRefType type = argument.type;
  llvm::SmallVector<int64_t> layoutStrides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(layoutStrides, offset)))
    return makeError(
        llvm::formatv("{0}: {1} has a layout without strides", what, type));
  // kDynamic is negative: denseStrides fills exactly those.
  std::optional<llvm::SmallVector<int64_t, 4>> strides =
      denseStrides(array.shape, layoutStrides);
  argument.offset = ShapedType::isDynamic(offset) ? 0 : offset;
  std::optional<int64_t> extent =
      strides ? stridedExtent(array.shape, *strides) : std::nullopt;
  int64_t bytes = 0;
  if (!extent ||
      llvm::AddOverflow(*extent, *extent ? argument.offset : 0, *extent) ||
      llvm::MulOverflow(std::max<int64_t>(*extent, 1),
                        int64_t(array.getElementBytes()), bytes))
    return makeError(llvm::formatv(
        "{0}: an array of shape ({1}) laid out as {2} spans more than 2^63 "
        "bytes",
        what, joinShape(array.shape), type));
  if (!stridesAreDisjoint(array.shape, *strides))
    return makeError(llvm::formatv(
        "{0}: the strides [{1}] of {2} make distinct elements of shape ({3}) "
        "overlap",
        what, joinShape(*strides), type, joinShape(array.shape)));
  argument.strides = std::move(*strides);
  argument.array = std::move(array);
  argument.elementBytes = argument.array.getElementBytes();
  argument.buffer.assign(bytes, 0);
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

static void packScalar(PackedArguments &packed, Type type,
                       const ScalarValue &value) {
  if (type.isInteger(32))
    packed.addI32(int32_t(value.integer));
  else if (type.isIndex() || type.isInteger(64))
    packed.addI64(value.integer);
  else if (type.isF32())
    packed.addF32(float(value.real));
  else
    packed.addF64(value.real);
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
    return makeError("lowering failed");
  for (auto nested : module.getOps<ModuleOp>())
    if (nested.getName() == moduleName)
      return emu::Emulator::create(nested, chip);
  return makeError("the lowering produced no host module '" + moduleName + "'");
}

/// A kernel's arguments, packed for a launch.
struct KernelArguments {
  std::vector<MemrefArgument> memrefs; // type null for scalars
  PackedArguments packed;
  std::vector<emu::BufferRegion> buffers;
};

static llvm::Error packArguments(FunctionType signature,
                                 std::vector<KernelInput> inputs,
                                 KernelArguments &arguments) {
  arguments.memrefs.resize(signature.getNumInputs());
  for (auto [index, type] : llvm::enumerate(signature.getInputs())) {
    KernelInput &input = inputs[index];
    auto memref = dyn_cast<MemRefType>(type);
    if (!memref) {
      packScalar(arguments.packed, type, input.scalar);
      continue;
    }
    MemrefArgument &argument = arguments.memrefs[index];
    argument.type = memref;
    if (llvm::Error error =
            loadMemref(argument, std::move(*input.array), input.what))
      return error;
    packMemref(arguments.packed, argument);
    arguments.buffers.push_back({"argument " + std::to_string(index),
                                 argument.buffer.data(),
                                 argument.buffer.size()});
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// --out-dir
//===----------------------------------------------------------------------===//

/// Fails early, before anything runs, when --out-dir cannot be a directory
/// tessel-run writes into: its nearest existing ancestor (or itself) must
/// be a writable directory.
static llvm::Error checkOutDir() {
  if (outDir.empty())
    return llvm::Error::success();
  llvm::SmallString<128> existing(outDir);
  llvm::sys::fs::make_absolute(existing);
  while (!llvm::sys::fs::exists(existing) &&
         llvm::sys::path::has_parent_path(existing))
    llvm::sys::path::remove_filename(existing);
  if (!llvm::sys::fs::is_directory(existing))
    return makeError("--out-dir '" + outDir + "': '" + existing +
                     "' is not a directory");
  if (llvm::sys::fs::access(existing, llvm::sys::fs::AccessMode::Write))
    return makeError("--out-dir '" + outDir + "': cannot write into '" +
                     existing + "'");
  return llvm::Error::success();
}

/// Writes memref arguments [0, count) to DIR/arg<i>.npy, all or none: each
/// goes to a temporary file first and replaces its arg<i>.npy only once
/// every one is written.
static llvm::Error writeOutputs(const KernelArguments &arguments,
                                unsigned count) {
  if (outDir.empty())
    return llvm::Error::success();
  bool existed = llvm::sys::fs::is_directory(outDir);
  if (std::error_code ec = llvm::sys::fs::create_directories(outDir))
    return makeError("--out-dir '" + outDir +
                     "': cannot create it: " + ec.message());
  llvm::SmallVector<std::pair<std::string, std::string>> staged;
  auto discard = [&](const llvm::Twine &message) {
    for (auto &[temporary, target] : staged)
      llvm::sys::fs::remove(temporary);
    if (!existed)
      llvm::sys::fs::remove(outDir); // only removes it while empty
    return makeError(message);
  };
  for (auto [index, argument] :
       llvm::enumerate(llvm::ArrayRef<MemrefArgument>(arguments.memrefs)
                           .take_front(count))) {
    if (!argument.type)
      continue;
    llvm::SmallString<128> target(outDir), temporary;
    llvm::sys::path::append(target, "arg" + std::to_string(index) + ".npy");
    if (std::error_code ec = llvm::sys::fs::getPotentiallyUniqueFileName(
            llvm::Twine(target) + ".partial-%%%%%%", temporary))
      return discard("--out-dir: cannot name a file in '" + outDir +
                     "': " + ec.message());
    staged.push_back({temporary.str().str(), target.str().str()});
    if (llvm::Error error = writeNpy(temporary, gatherArray(argument)))
      return discard("--out-dir: " + llvm::toString(std::move(error)));
  }
  for (auto &[temporary, target] : staged)
    if (std::error_code ec = llvm::sys::fs::rename(temporary, target))
      return discard("--out-dir: cannot write '" + target +
                     "': " + ec.message());
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// gpu.func kernels
//===----------------------------------------------------------------------===//

/// Runs one gpu.func kernel on the given arguments.
static int runGpuKernel(ModuleOp module, const Chip &chip) {
  std::optional<std::array<uint64_t, 3>> grid = parseDims(gridText);
  if (!grid)
    return fail("--grid must be X[,Y[,Z]] with positive sizes, got '" +
                gridText + "'");
  if (llvm::Error error = checkGrid(*grid, "--grid " + gridText))
    return fail(llvm::toString(std::move(error)));
  if (kernelName.empty())
    return fail("--kernel NAME is required: '" + inputFilename +
                "' holds no problem-level kernel (tessel.matmul, "
                "tessel.attention) to check");
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
  std::array<uint64_t, 3> block = {1, 1, 1};
  if (!blockText.empty()) {
    std::optional<std::array<uint64_t, 3>> parsed = parseDims(blockText);
    if (!parsed)
      return fail("--block must be X[,Y[,Z]] with positive sizes, got '" +
                  blockText + "'");
    if (llvm::Error error = checkBlock(*parsed, chip, kernelName))
      return fail(llvm::toString(std::move(error)));
    block = *parsed;
  } else if (std::optional<llvm::ArrayRef<int32_t>> known =
                 kernel.getKnownBlockSize()) {
    // The emulator checks these against the chip itself.
    for (auto [index, size] : llvm::enumerate(*known))
      block[index] = uint32_t(size);
  } else {
    return fail("--block is required: kernel '" + kernelName +
                "' has no known_block_size");
  }
  FunctionType signature = kernel.getFunctionType();
  if (argValues.size() != signature.getNumInputs())
    return fail("kernel '" + kernelName + "' takes " +
                llvm::Twine(signature.getNumInputs()) + " arguments, got " +
                llvm::Twine(argValues.size()) + " --arg");
  if (llvm::Error error = checkOutDir())
    return fail(llvm::toString(std::move(error)));
  llvm::Expected<std::vector<KernelInput>> inputs = readGivenInputs(signature);
  if (!inputs)
    return fail(llvm::toString(inputs.takeError()));
  KernelArguments arguments;
  if (llvm::Error error =
          packArguments(signature, std::move(*inputs), arguments))
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
  dims.grid = narrow(*grid);
  dims.block = narrow(block);
  emu::LaunchStats stats;
  if (llvm::Error error = (*emulator)->launch(
          kernelName, dims, arguments.packed.slots, arguments.buffers, &stats))
    return fail(llvm::toString(std::move(error)));
  double runMs = millisecondsSince(start);
  if (llvm::Error error = writeOutputs(arguments, signature.getNumInputs()))
    return fail(llvm::toString(std::move(error)));
  llvm::outs() << llvm::formatv(
      "{0} on emu ({1}): grid {2}x{3}x{4}, block {5}x{6}x{7}: {8} lanes, {9} "
      "barriers, {10} wave collectives; compile {11:f1} ms, run {12:f1} ms\n",
      kernelName, chip.name, dims.grid[0], dims.grid[1], dims.grid[2],
      dims.block[0], dims.block[1], dims.block[2], stats.lanes, stats.barriers,
      stats.collectives, compileMs, runMs);
  return 0;
}

//===----------------------------------------------------------------------===//
// Problem-level kernels
//===----------------------------------------------------------------------===//

/// One problem-level kernel and what checking it needs.
struct Problem {
  std::string name;
  Operation *op; // tessel.matmul or tessel.attention, in the unlowered copy
  FunctionType signature;
};

/// A problem with its sizes fixed and its given inputs read (before any
/// compile, so that bad input fails fast).
struct PreparedProblem {
  const Problem *problem;
  ProblemSizes sizes;
  std::vector<std::optional<KernelInput>> given; // per function argument
  /// Varlen attention: max_seqlen_q as the inputs give it (the grid's
  /// queries per sequence).
  int64_t varlenMaxSeqQ = 0;
  /// The backward's max_seqlen_k (the dK/dV grid's keys per sequence).
  int64_t varlenMaxSeqKV = 0;
};

static HostArray sliceRows(const HostArray &array, int64_t heads, int64_t rows,
                           int64_t columns, int64_t start, int64_t length);

/// Sequence `s`'s rows (start, length) of a packed array of `total` rows,
/// from cumulative lengths, clamped as the kernels clamp them.
static std::pair<int64_t, int64_t> getSequenceRows(const HostArray &cumulative,
                                                   int64_t s, int64_t total) {
  auto bound = [&](int64_t i) {
    return std::clamp<int64_t>(int64_t(cumulative.values[i]), 0, total);
  };
  int64_t end = bound(s + 1);
  int64_t start = std::min(bound(s), end);
  return {start, end - start};
}

/// Sequence `s` of a varlen problem: its first query and key rows in the
/// packed arrays and the sizes of a one-sequence problem over them.
struct SequenceSlice {
  int64_t qStart, qLength, kStart, kLength;
  AttentionSizes sizes;
};
static SequenceSlice getSequenceSlice(const AttentionSizes &a,
                                      const HostArray &cuQ,
                                      const HostArray &cuK, int64_t s) {
  SequenceSlice slice;
  std::tie(slice.qStart, slice.qLength) = getSequenceRows(cuQ, s, a.seqQ);
  std::tie(slice.kStart, slice.kLength) = getSequenceRows(cuK, s, a.seqKV);
  slice.sizes = a;
  slice.sizes.batch = 1;
  slice.sizes.seqQ = slice.qLength;
  slice.sizes.seqKV = slice.kLength;
  return slice;
}
static LogicalResult computeVarlenReference(
    Operation *attention, double scale, KeyWindow window,
    const AttentionSizes &a, const HostArray &q, const HostArray &k,
    const HostArray &v, const HostArray *sinks, const HostArray &cuQ,
    const HostArray &cuK, std::vector<double> &o, std::vector<double> &lse,
    std::vector<bool> &uncovered, std::array<double, 3> descale);

/// Launch facts of one lowered kernel: a problem is one kernel of its name,
/// or the stages of a plan (split-KV attention, split-K matmul).
struct KernelLaunch {
  std::string name;
  unsigned block;
  std::array<int64_t, 2> tile;
  FunctionType signature;
  std::string planOf;
  int64_t stage = 0, splits = 1;
  int64_t streamK = 0;     // stream-K: workgroups along x
  int64_t packedHeads = 1; // query heads per workgroup (GridRule)
  bool overKeys = false;   // x over key blocks, y over key/value heads
  /// The workspaces (counted from the first) the kernel needs zero-filled;
  /// the others are filled with all-one bytes (NaN, -1), so that a kernel
  /// reading a workspace it did not write fails its check.
  llvm::SmallVector<int64_t> zeroedWorkspaces;
};

/// Fails when the arrays tessel-run would generate for `kernel` hold more
/// than kMaxGeneratedElements elements, saying how much memory they need.
static llvm::Error checkGeneratedSize(
    llvm::StringRef kernel,
    llvm::ArrayRef<std::pair<Type, llvm::SmallVector<int64_t>>> arrays) {
  int64_t elements = 0;
  double bytes = 0; // an estimate: no overflow to guard
  bool overflow = false;
  for (const auto &[type, shape] : arrays) {
    int64_t count = 1;
    double approximate = 1;
    for (int64_t size : shape) {
      overflow |= llvm::MulOverflow(count, size, count);
      approximate *= double(size);
    }
    overflow |= llvm::AddOverflow(elements, count, elements);
    unsigned elementBytes = std::max(type.getIntOrFloatBitWidth() / 8, 1u);
    bytes += approximate * (3.0 * elementBytes + 16);
  }
  if (!overflow && elements <= kMaxGeneratedElements)
    return llvm::Error::success();
  std::string prefix, hint;
  if (argValues.empty()) {
    prefix = "--dynamic-size " + std::to_string(dynamicSize) + ": ";
    hint = "; use a smaller --dynamic-size or give the arrays with --arg";
  }
  double gib = bytes / double(1 << 30);
  std::string memory = gib < 1e6 ? llvm::formatv("{0:f1}", gib).str()
                                 : llvm::formatv("{0:e1}", gib).str();
  return makeError(llvm::formatv(
      "{0}kernel '{1}' would generate {2} elements of input (about {3} GiB "
      "of host memory), over tessel-run's limit of {4} elements{5}",
      prefix, kernel,
      overflow ? std::string("more than 2^63") : std::to_string(elements),
      memory, kMaxGeneratedElements, hint));
}

/// Fixes the sizes of `problem` and reads its given inputs.
static llvm::Expected<PreparedProblem> prepareProblem(const Problem &problem) {
  llvm::Expected<ProblemSizes> sizes = ProblemSizes::get(problem.op);
  if (!sizes)
    return sizes.takeError();
  PreparedProblem prepared{&problem, std::move(*sizes), {}};
  FunctionType signature = problem.signature;
  prepared.given.resize(signature.getNumInputs());
  if (argValues.empty()) {
    prepared.sizes.bindUnknown(dynamicSize, "--dynamic-size");
  } else {
    if (argValues.size() != signature.getNumInputs())
      return makeError("kernel '" + problem.name + "' takes " +
                       llvm::Twine(signature.getNumInputs()) +
                       " arguments, got " + llvm::Twine(argValues.size()) +
                       " --arg");
    // Sizes from the arrays, in argument order: the first array to show a
    // size fixes it and every later one must agree.
    for (auto [index, type] : llvm::enumerate(signature.getInputs())) {
      KernelInput input;
      input.what = describeGiven(index);
      if (auto memref = dyn_cast<MemRefType>(type)) {
        llvm::Expected<NpyArray> array = readGivenArray(memref, index);
        if (!array)
          return array.takeError();
        if (llvm::Error error =
                prepared.sizes.bindArray(index, array->shape, input.what))
          return std::move(error);
        input.array = std::move(*array);
      } else {
        llvm::Expected<ScalarValue> scalar = parseScalar(type, index);
        if (!scalar)
          return scalar.takeError();
        input.scalar = *scalar;
      }
      prepared.given[index] = std::move(input);
    }
  }
  if (llvm::Error error = prepared.sizes.verify())
    return std::move(error);
  llvm::SmallVector<std::pair<Type, llvm::SmallVector<int64_t>>> generated;
  for (auto [index, type] : llvm::enumerate(signature.getInputs())) {
    if (!isa<MemRefType>(type)) {
      if (!prepared.given[index] &&
          !(type.isIndex() || type.isInteger(32) || type.isInteger(64) ||
            type.isF32() || type.isF64()))
        return makeError(llvm::formatv(
            "kernel '{0}': argument {1}: scalars of type {2} are not "
            "supported (index, i32, i64, f32, f64)",
            problem.name, index, type));
      continue;
    }
    if (const std::optional<KernelInput> &input = prepared.given[index]) {
      if (llvm::Error error = prepared.sizes.checkShape(
              index, input->array->shape, input->what))
        return std::move(error);
    } else {
      generated.push_back({cast<MemRefType>(type).getElementType(),
                           prepared.sizes.getShape(index)});
    }
  }
  // The memory generated inputs need first: it says more about a huge
  // --dynamic-size than the size limit.
  if (llvm::Error error = checkGeneratedSize(problem.name, generated))
    return std::move(error);
  if (llvm::Error error = prepared.sizes.checkLimits())
    return std::move(error);
  return prepared;
}

/// The line tessel-run prints for one checked kernel.
static void printVerdict(llvm::StringRef name, llvm::StringRef what,
                         const Chip &chip, ConfigAttr config,
                         const Comparison &comparison,
                         const emu::LaunchStats &stats, double runMs) {
  std::string poison = comparison.poisonCount
                           ? llvm::formatv(", {0} poison elements not compared",
                                           comparison.poisonCount)
                                 .str()
                           : std::string();
  llvm::outs() << llvm::formatv(
      "{0}: {1} on {2} (emu){3}: max abs error {4:e2}, max rel error {5:e2} "
      "(tolerance {6:e1}), {7} workgroups, run {8:f1} ms{9}: {10}\n",
      name, what, chip.name,
      config ? " " + std::string(llvm::formatv("{0}", Attribute(config)))
             : std::string(),
      comparison.maxAbsError, comparison.maxRelError, comparison.tolerance,
      stats.workgroups, runMs, poison, comparison.passed ? "PASS" : "FAIL");
}

/// The grid of one step of `problem`.
static std::array<uint64_t, 3> getProblemGrid(const PreparedProblem &prepared,
                                              const KernelLaunch &step) {
  const std::array<int64_t, 2> &tile = step.tile;
  // The first stage of a split plan (split-K, split-KV) spreads each
  // workgroup's work over `splits` workgroups along z.
  uint64_t splits = step.stage == 0 ? uint64_t(step.splits) : 1;
  if (step.streamK > 0)
    return {uint64_t(step.streamK), 1, 1};
  if (isa<MatmulOp>(prepared.problem->op)) {
    MatmulSizes sizes = prepared.sizes.getMatmulSizes();
    return {uint64_t(llvm::divideCeil(sizes.n, tile[1])),
            uint64_t(llvm::divideCeil(sizes.m, tile[0])),
            uint64_t(std::max<int64_t>(sizes.batch, 1)) * splits};
  }
  AttentionSizes sizes = prepared.sizes.getAttentionSizes();
  bool varlen = false;
  if (auto attention = dyn_cast<AttentionOp>(prepared.problem->op))
    varlen = attention.isVarlen();
  if (auto grad = dyn_cast<AttentionGradOp>(prepared.problem->op))
    varlen = grad.isVarlen();
  if (varlen && step.overKeys)
    return {uint64_t(llvm::divideCeil(prepared.varlenMaxSeqKV, tile[0])),
            uint64_t(sizes.kvHeads),
            uint64_t(prepared.sizes.getVarlenSequences())};
  if (varlen)
    return {uint64_t(llvm::divideCeil(prepared.varlenMaxSeqQ, tile[0])),
            uint64_t(sizes.heads),
            uint64_t(prepared.sizes.getVarlenSequences())};
  if (step.overKeys)
    return {uint64_t(llvm::divideCeil(sizes.seqKV, tile[0])),
            uint64_t(sizes.kvHeads), uint64_t(sizes.batch)};
  return {uint64_t(llvm::divideCeil(sizes.seqQ * step.packedHeads, tile[0])),
          uint64_t(sizes.heads / step.packedHeads),
          uint64_t(sizes.batch) * splits};
}

/// What running one problem came to.
enum class Outcome { Pass, Fail, Error };

static Outcome fatal(const llvm::Twine &message) {
  fail(message);
  return Outcome::Error;
}

/// The kernels that make up `problem`, in launch order: the kernel of its
/// name, or the stages of its plan.
static SmallVector<const KernelLaunch *>
getLaunchSteps(const Problem &problem, llvm::ArrayRef<KernelLaunch> kernels) {
  SmallVector<const KernelLaunch *> steps;
  for (const KernelLaunch &kernel : kernels)
    if (kernel.name == problem.name || kernel.planOf == problem.name)
      steps.push_back(&kernel);
  llvm::sort(steps, [](const KernelLaunch *x, const KernelLaunch *y) {
    return x->stage < y->stage;
  });
  return steps;
}

/// The shapes of the workspace arguments the compiler appended after the
/// problem's own, as split-KV attention lays them out: partial O [batch,
/// heads, splits, seq-q, head dim], log2-sum-exps [batch, heads, splits,
/// seq-q] and arrivals [batch, heads, query blocks of `blockRows`] (static
/// dimensions as the type says; split-K matmuls have static ones only).
static llvm::SmallVector<std::pair<Type, llvm::SmallVector<int64_t>>>
getWorkspaceShapes(const PreparedProblem &prepared, FunctionType signature,
                   unsigned numArguments, int64_t splits, int64_t blockRows) {
  AttentionSizes a = isa<AttentionOp, AttentionGradOp>(prepared.problem->op)
                         ? prepared.sizes.getAttentionSizes()
                         : AttentionSizes();
  SmallVector<int64_t> role = {a.batch, a.heads, splits, a.seqQ, a.headDimV};
  // The backward's one workspace: D [batch, heads, seq-q].
  if (isa<AttentionGradOp>(prepared.problem->op))
    role = {a.batch, a.heads, a.seqQ};
  SmallVector<int64_t> arrivalRole = {
      a.batch, a.heads,
      int64_t(llvm::divideCeil(a.seqQ, std::max<int64_t>(1, blockRows)))};
  llvm::SmallVector<std::pair<Type, llvm::SmallVector<int64_t>>> workspaces;
  for (Type type : signature.getInputs().drop_front(numArguments)) {
    auto memref = cast<MemRefType>(type);
    ArrayRef<int64_t> roles =
        memref.getElementType().isInteger(32) ? arrivalRole : role;
    SmallVector<int64_t> shape;
    for (int64_t d = 0; d < memref.getRank(); ++d)
      shape.push_back(memref.isDynamicDim(d) ? roles[d] : memref.getDimSize(d));
    workspaces.push_back({memref.getElementType(), shape});
  }
  return workspaces;
}

/// An array of `element` in `shape` whose every byte is `byte`.
static NpyArray makeFilledArray(Type element, llvm::ArrayRef<int64_t> shape,
                                uint8_t byte) {
  NpyArray array;
  array.dtype = *getNpyDtype(element); // workspaces are f32 or i32
  array.shape.assign(shape.begin(), shape.end());
  array.data.assign(array.getNumElements() * array.getElementBytes(),
                    char(byte));
  return array;
}

/// Replaces generated O and logsumexp inputs of an attention backward by
/// the forward's (from the generated Q, K and V, O rounded to its type), so
/// that the gradients are those of a real forward pass. Given ones stay.
static llvm::Error makeForwardInputs(const PreparedProblem &prepared,
                                     std::vector<KernelInput> &inputs) {
  auto grad = dyn_cast<AttentionGradOp>(prepared.problem->op);
  if (!grad)
    return llvm::Error::success();
  auto argumentOf = [](Value value) {
    return cast<BlockArgument>(value).getArgNumber();
  };
  unsigned oIndex = argumentOf(grad.getO()),
           lseIndex = argumentOf(grad.getLse());
  if (prepared.given[oIndex] || prepared.given[lseIndex])
    return llvm::Error::success();
  auto values = [&](Value value) {
    unsigned index = argumentOf(value);
    HostArray host;
    host.npy = *inputs[index].array;
    host.values = decodeArray(
        cast<MemRefType>(value.getType()).getElementType(), host.npy);
    return host;
  };
  AttentionSizes sizes = prepared.sizes.getAttentionSizes();
  std::vector<double> o, lse;
  std::vector<bool> uncovered;
  LogicalResult forward =
      grad.isVarlen()
          ? computeVarlenReference(
                grad, grad.getEffectiveScale(), grad.getKeyWindow(), sizes,
                values(grad.getQ()), values(grad.getK()), values(grad.getV()),
                nullptr, values(grad.getCuSeqlensQ()),
                values(grad.getCuSeqlensK()), o, lse, uncovered,
                {1.0, 1.0, 1.0})
          : computeAttentionReference(grad, grad.getEffectiveScale(),
                                      grad.getKeyWindow(), sizes,
                                      values(grad.getQ()), values(grad.getK()),
                                      values(grad.getV()), nullptr, o, lse);
  if (failed(forward))
    return makeError("cannot compute the forward pass for the backward's "
                     "inputs");
  inputs[oIndex].array =
      makeArrayFromValues(grad.getO().getType().getElementType(),
                          inputs[oIndex].array->shape, o)
          .npy;
  inputs[lseIndex].array =
      makeArrayFromValues(grad.getLse().getType().getElementType(),
                          inputs[lseIndex].array->shape, lse)
          .npy;
  return llvm::Error::success();
}

/// Cumulative lengths of `sequences` sequences that pack `total` rows: cut
/// points drawn at random (a sequence may be empty), as int32.
static std::vector<double>
makeCumulativeLengths(int64_t sequences, int64_t total, std::mt19937 &rng) {
  std::uniform_int_distribution<int64_t> cut(0, total);
  std::vector<double> lengths = {0.0};
  std::vector<int64_t> cuts;
  for (int64_t s = 1; s < sequences; ++s)
    cuts.push_back(cut(rng));
  llvm::sort(cuts);
  for (int64_t c : cuts)
    lengths.push_back(double(c));
  lengths.push_back(double(total));
  return lengths;
}

/// Varlen attention: generated cumulative lengths split the packed totals
/// into the batch's sequences at random, and a generated max_seqlen_q is
/// the longest query sequence. Given ones stay (max_seqlen_q given or not,
/// the grid takes its value).
static void makeVarlenInputs(PreparedProblem &prepared,
                             std::vector<KernelInput> &inputs,
                             std::vector<HostArray> &scalars,
                             std::mt19937 &rng) {
  Value cuQ, cuK, maxQ, maxK; // maxK: the backward's
  if (auto attention = dyn_cast<AttentionOp>(prepared.problem->op);
      attention && attention.isVarlen()) {
    cuQ = attention.getCuSeqlensQ();
    cuK = attention.getCuSeqlensK();
    maxQ = attention.getMaxSeqlenQ();
  } else if (auto grad = dyn_cast<AttentionGradOp>(prepared.problem->op);
             grad && grad.isVarlen()) {
    cuQ = grad.getCuSeqlensQ();
    cuK = grad.getCuSeqlensK();
    maxQ = grad.getMaxSeqlenQ();
    maxK = grad.getMaxSeqlenK();
  } else {
    return;
  }
  auto argumentOf = [](Value value) {
    return cast<BlockArgument>(value).getArgNumber();
  };
  AttentionSizes sizes = prepared.sizes.getAttentionSizes();
  int64_t sequences = prepared.sizes.getVarlenSequences();
  Type i32 = IntegerType::get(cuQ.getContext(), 32);
  // Each side's lengths, and its longest sequence for a generated maximum.
  auto side = [&](Value lengths, int64_t total, Value max, int64_t &bound) {
    unsigned index = argumentOf(lengths);
    if (!prepared.given[index])
      inputs[index].array =
          makeArrayFromValues(i32, {sequences + 1},
                              makeCumulativeLengths(sequences, total, rng))
              .npy;
    if (!max)
      return;
    std::vector<double> cumulative = decodeArray(i32, *inputs[index].array);
    int64_t longest = 0;
    for (size_t s = 0; s + 1 < cumulative.size(); ++s)
      longest = std::max<int64_t>(longest,
                                  int64_t(cumulative[s + 1] - cumulative[s]));
    unsigned maxIndex = argumentOf(max);
    if (!prepared.given[maxIndex]) {
      inputs[maxIndex].scalar.integer = longest;
      scalars[maxIndex] = makeScalarArray(max.getType(), double(longest));
    }
    bound = std::max<int64_t>(inputs[maxIndex].scalar.integer, 0);
  };
  side(cuQ, sizes.seqQ, maxQ, prepared.varlenMaxSeqQ);
  side(cuK, sizes.seqKV, maxK, prepared.varlenMaxSeqKV);
}

/// Paged attention: a generated block table gives each sequence its pages
/// in a shuffled order (pages are shared between sequences only when the
/// cache has fewer than the table's entries), and generated context
/// lengths are random in [1, pages per sequence x page size], so that most
/// end inside a page. Given ones stay.
static void makePagedInputs(const PreparedProblem &prepared,
                            std::vector<KernelInput> &inputs,
                            std::mt19937 &rng) {
  auto attention = dyn_cast<AttentionOp>(prepared.problem->op);
  if (!attention || !attention.isPaged())
    return;
  auto argumentOf = [](Value value) {
    return cast<BlockArgument>(value).getArgNumber();
  };
  PagedSizes paged = prepared.sizes.getPagedSizes();
  int64_t batch = prepared.sizes.getAttentionSizes().batch;
  Type i32 = IntegerType::get(attention.getContext(), 32);
  unsigned tableIndex = argumentOf(attention.getBlockTable());
  if (!prepared.given[tableIndex]) {
    std::vector<double> pages(std::max<int64_t>(paged.pages, 1));
    for (auto [index, page] : llvm::enumerate(pages))
      page = double(index);
    std::shuffle(pages.begin(), pages.end(), rng);
    std::vector<double> table;
    for (int64_t entry = 0; entry < batch * paged.maxPages; ++entry)
      table.push_back(pages[entry % pages.size()]);
    inputs[tableIndex].array =
        makeArrayFromValues(i32, {batch, paged.maxPages}, table).npy;
  }
  unsigned lengthsIndex = argumentOf(attention.getContextLens());
  if (!prepared.given[lengthsIndex]) {
    std::uniform_int_distribution<int64_t> length(
        1, std::max<int64_t>(paged.maxPages * paged.pageSize, 1));
    std::vector<double> lengths;
    for (int64_t b = 0; b < batch; ++b)
      lengths.push_back(double(length(rng)));
    inputs[lengthsIndex].array = makeArrayFromValues(i32, {batch}, lengths).npy;
  }
}

/// Every argument of the lowered kernel (`signature`): given inputs as
/// read, other problem arguments random, the workspaces in `zeroed` zeroed
/// and the others all-one bytes. `scalars[i]`
/// holds scalar argument i as the self-check reads it (the value given or
/// generated, rounded to its type).
static llvm::Error
makeKernelInputs(PreparedProblem &prepared, FunctionType signature,
                 unsigned numArguments, int64_t splits, int64_t blockRows,
                 llvm::ArrayRef<int64_t> zeroed, std::mt19937 &rng,
                 std::vector<KernelInput> &inputs,
                 std::vector<HostArray> &scalars) {
  auto workspaces =
      getWorkspaceShapes(prepared, signature, numArguments, splits, blockRows);
  if (llvm::Error error =
          checkGeneratedSize(prepared.problem->name, workspaces))
    return error;
  inputs.assign(signature.getNumInputs(), KernelInput());
  scalars.assign(signature.getNumInputs(), HostArray());
  for (auto [index, type] : llvm::enumerate(signature.getInputs())) {
    KernelInput &input = inputs[index];
    if (index < numArguments && prepared.given[index]) {
      input = std::move(*prepared.given[index]);
      if (!input.array)
        scalars[index] = makeScalarArray(
            type, isa<FloatType>(type) ? input.scalar.real
                                       : double(input.scalar.integer));
      continue;
    }
    input.what = "argument " + std::to_string(index);
    auto memref = dyn_cast<MemRefType>(type);
    if (index >= numArguments) {
      int64_t workspace = index - numArguments;
      auto &[element, shape] = workspaces[workspace];
      input.array = makeFilledArray(
          element, shape, llvm::is_contained(zeroed, workspace) ? 0 : 0xff);
    } else if (memref) {
      input.array = makeRandomArray(memref.getElementType(),
                                    prepared.sizes.getShape(index), rng)
                        .npy;
    } else {
      scalars[index] = makeRandomArray(type, {1}, rng);
      if (isa<FloatType>(type))
        input.scalar.real = scalars[index].values[0];
      else
        input.scalar.integer = int64_t(scalars[index].values[0]);
    }
  }
  makeVarlenInputs(prepared, inputs, scalars, rng);
  makePagedInputs(prepared, inputs, rng);
  return makeForwardInputs(prepared, inputs);
}

/// Launches each step of a problem over `arguments`; a zero-size problem
/// launches nothing.
static llvm::Error launchSteps(const PreparedProblem &prepared,
                               llvm::ArrayRef<const KernelLaunch *> steps,
                               emu::Emulator &emulator,
                               KernelArguments &arguments,
                               emu::LaunchStats &stats) {
  for (const KernelLaunch *step : steps) {
    std::array<uint64_t, 3> grid = getProblemGrid(prepared, *step);
    if (!grid[0] || !grid[1] || !grid[2])
      continue;
    emu::LaunchDims dims;
    dims.grid = narrow(grid);
    dims.block = {step->block, 1, 1};
    if (llvm::Error error =
            emulator.launch(step->name, dims, arguments.packed.slots,
                            arguments.buffers, &stats))
      return error;
  }
  return llvm::Error::success();
}

/// What the self-check of one problem found, and how to name the problem.
struct Verdict {
  Comparison comparison;
  std::string what;
};

/// The array (or scalar) argument `value` holds now: inputs as the kernel
/// read them, outputs as it wrote them.
static HostArray readHost(Value value, const KernelArguments &arguments,
                          llvm::ArrayRef<HostArray> scalars) {
  unsigned index = cast<BlockArgument>(value).getArgNumber();
  const MemrefArgument &memref = arguments.memrefs[index];
  if (!memref.type)
    return scalars[index];
  NpyArray now = gatherArray(memref);
  std::vector<double> values = decodeArray(memref.type.getElementType(), now);
  return {std::move(now), std::move(values)};
}

/// ", causal", ", window [left, right]", ", sinks" as the op has them.
static std::string describeMasks(AttentionOp attention) {
  std::string masks = attention.getCausal() ? ", causal" : "";
  if (std::optional<ArrayRef<int64_t>> window = attention.getWindow())
    masks += llvm::formatv(", window [{0}, {1}]", (*window)[0], (*window)[1]);
  if (attention.getSinks())
    masks += ", sinks";
  return masks;
}

/// Rows [start, start + length) of dimension 2 of `array`, a [1, heads,
/// rows, columns] array of `rows` rows.
static HostArray sliceRows(const HostArray &array, int64_t heads, int64_t rows,
                           int64_t columns, int64_t start, int64_t length) {
  HostArray slice;
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t r = start; r < start + length; ++r)
      for (int64_t c = 0; c < columns; ++c)
        slice.values.push_back(array.values[(h * rows + r) * columns + c]);
  return slice;
}

/// The varlen reference: each sequence of the packed batch (rows cu[b] to
/// cu[b + 1] of Q and O, cu_k[b] to cu_k[b + 1] of K and V, clamped as the
/// kernel clamps them) through the dense reference. Rows no sequence
/// covers are marked in `uncovered` (the kernel does not write them).
static LogicalResult computeVarlenReference(
    Operation *attention, double scale, KeyWindow window,
    const AttentionSizes &a, const HostArray &q, const HostArray &k,
    const HostArray &v, const HostArray *sinks, const HostArray &cuQ,
    const HostArray &cuK, std::vector<double> &o, std::vector<double> &lse,
    std::vector<bool> &uncovered, std::array<double, 3> descale) {
  o.assign(a.heads * a.seqQ * a.headDimV, 0.0);
  lse.assign(a.heads * a.seqQ, 0.0);
  uncovered.assign(o.size(), true);
  std::vector<bool> lseUncovered(lse.size(), true);
  int64_t sequences = int64_t(cuQ.values.size()) - 1;
  for (int64_t s = 0; s < sequences; ++s) {
    auto [qStart, qLength, kStart, kLength, one] =
        getSequenceSlice(a, cuQ, cuK, s);
    std::vector<double> sequenceO, sequenceLse;
    if (failed(computeAttentionReference(
            attention, scale, window, one,
            sliceRows(q, a.heads, a.seqQ, a.headDim, qStart, qLength),
            sliceRows(k, a.kvHeads, a.seqKV, a.headDim, kStart, kLength),
            sliceRows(v, a.kvHeads, a.seqKV, a.headDimV, kStart, kLength),
            sinks, sequenceO, sequenceLse, descale)))
      return failure();
    for (int64_t h = 0; h < a.heads; ++h)
      for (int64_t r = 0; r < qLength; ++r) {
        int64_t row = h * a.seqQ + qStart + r;
        lse[row] = sequenceLse[h * qLength + r];
        for (int64_t c = 0; c < a.headDimV; ++c) {
          o[row * a.headDimV + c] =
              sequenceO[(h * qLength + r) * a.headDimV + c];
          uncovered[row * a.headDimV + c] = false;
        }
      }
  }
  return success();
}

/// The paged reference: each sequence's keys gathered from the cache
/// through its block table (lengths and page numbers clamped as the kernel
/// clamps them), then the dense reference.
static LogicalResult
computePagedReference(AttentionOp attention, const AttentionSizes &a,
                      const PagedSizes &paged, const HostArray &q,
                      const HostArray &k, const HostArray &v,
                      const HostArray *sinks, const HostArray &table,
                      const HostArray &lengths, std::vector<double> &o,
                      std::vector<double> &lse, std::array<double, 3> descale) {
  o.clear();
  lse.clear();
  int64_t capacity = paged.maxPages * paged.pageSize;
  for (int64_t b = 0; b < a.batch; ++b) {
    int64_t length =
        std::clamp<int64_t>(int64_t(lengths.values[b]), 0, capacity);
    // Rows of a [pages, kv heads, page size, columns] cache.
    auto gather = [&](const HostArray &cache, int64_t columns) {
      HostArray dense;
      for (int64_t h = 0; h < a.kvHeads; ++h)
        for (int64_t j = 0; j < length; ++j) {
          int64_t page = std::clamp<int64_t>(
              int64_t(table.values[b * paged.maxPages + j / paged.pageSize]), 0,
              paged.pages - 1);
          int64_t row = j % paged.pageSize;
          for (int64_t c = 0; c < columns; ++c)
            dense.values.push_back(
                cache.values[((page * a.kvHeads + h) * paged.pageSize + row) *
                                 columns +
                             c]);
        }
      return dense;
    };
    HostArray queries;
    int64_t perBatch = a.heads * a.seqQ * a.headDim;
    queries.values.assign(q.values.begin() + b * perBatch,
                          q.values.begin() + (b + 1) * perBatch);
    AttentionSizes one = a;
    one.batch = 1;
    one.seqKV = length;
    std::vector<double> sequenceO, sequenceLse;
    if (failed(computeAttentionReference(
            attention, one, queries, gather(k, a.headDim),
            gather(v, a.headDimV), sinks, sequenceO, sequenceLse, descale)))
      return failure();
    o.insert(o.end(), sequenceO.begin(), sequenceO.end());
    lse.insert(lse.end(), sequenceLse.begin(), sequenceLse.end());
  }
  return success();
}

static FailureOr<Verdict>
checkAttention(AttentionOp attention, const AttentionSizes &a,
               const PagedSizes &pagedSizes, const KernelArguments &arguments,
               llvm::ArrayRef<HostArray> scalars, int64_t splits) {
  auto host = [&](Value value) { return readHost(value, arguments, scalars); };
  std::vector<double> expectedO, expectedLse;
  std::optional<HostArray> sinks;
  if (attention.getSinks())
    sinks = host(attention.getSinks());
  std::array<double, 3> descale = {1.0, 1.0, 1.0};
  for (auto [index, value] : llvm::enumerate(attention.getDescale()))
    descale[index] = host(value).values.front();
  std::vector<bool> uncovered;
  if (attention.isPaged()) {
    if (failed(computePagedReference(
            attention, a, pagedSizes, host(attention.getQ()),
            host(attention.getK()), host(attention.getV()),
            sinks ? &*sinks : nullptr, host(attention.getBlockTable()),
            host(attention.getContextLens()), expectedO, expectedLse, descale)))
      return failure();
  } else if (attention.isVarlen()) {
    if (failed(computeVarlenReference(
            attention, attention.getEffectiveScale(), attention.getKeyWindow(),
            a, host(attention.getQ()), host(attention.getK()),
            host(attention.getV()), sinks ? &*sinks : nullptr,
            host(attention.getCuSeqlensQ()), host(attention.getCuSeqlensK()),
            expectedO, expectedLse, uncovered, descale)))
      return failure();
  } else if (failed(computeAttentionReference(
                 attention, a, host(attention.getQ()), host(attention.getK()),
                 host(attention.getV()), sinks ? &*sinks : nullptr, expectedO,
                 expectedLse, descale))) {
    return failure();
  }
  // P reaches the second product in Q's type: an O wider than Q (f32 O of
  // f16 inputs) is only as exact as Q's type.
  Type oElement = attention.getO().getType().getElementType();
  Type qElement = attention.getQ().getType().getElementType();
  Type toleranceElement =
      qElement.getIntOrFloatBitWidth() < oElement.getIntOrFloatBitWidth()
          ? qElement
          : oElement;
  Verdict verdict;
  verdict.comparison =
      compareResults(toleranceElement, host(attention.getO()).values, expectedO,
                     a.seqKV, false, uncovered);
  // With 8-bit inputs P is rounded to Q's 8-bit type (3 mantissa bits) for
  // the second product, as FlashAttention-3 does: each probability carries
  // up to 2^-4 relative error, which the exact reference does not have.
  if (attention.getQ().getType().getElementType().getIntOrFloatBitWidth() ==
      8) {
    Comparison &c = verdict.comparison;
    c.tolerance = std::max(c.tolerance, 0.0625);
    c.passed = c.maxRelError <= c.tolerance;
  }
  if (Value lse = attention.getLse()) {
    std::vector<bool> lseUncovered;
    for (size_t row = 0; row < expectedLse.size() && !uncovered.empty(); ++row)
      lseUncovered.push_back(uncovered[row * a.headDimV]);
    Comparison lseComparison = compareResults(
        Float32Type::get(attention.getContext()), host(lse).values, expectedLse,
        a.seqKV, false, lseUncovered);
    verdict.comparison.passed &= lseComparison.passed;
    verdict.comparison.maxRelError =
        std::max(verdict.comparison.maxRelError, lseComparison.maxRelError);
  }
  verdict.what = llvm::formatv(
      "{0}x{1}x{2}x{3} (kv heads {4}, kv length {5}{9}{6}{7}) {8}", a.batch,
      a.heads, a.seqQ, a.headDim, a.kvHeads, a.seqKV, describeMasks(attention),
      splits > 1 ? ", split-KV " + std::to_string(splits) +
                       " ways, last split combines"
                 : std::string(),
      oElement,
      (a.headDimV != a.headDim ? ", v head dim " + std::to_string(a.headDimV)
                               : std::string()) +
          (attention.isPaged()
               ? llvm::formatv(", paged: {0} pages of {1} keys, {2} per "
                               "sequence",
                               pagedSizes.pages, pagedSizes.pageSize,
                               pagedSizes.maxPages)
                     .str()
               : std::string()) +
          (attention.isVarlen()
               ? llvm::formatv(
                     ", varlen: {0} packed sequences",
                     int64_t(host(attention.getCuSeqlensQ()).values.size()) - 1)
                     .str()
               : std::string()));
  return verdict;
}

/// The varlen backward's reference: each sequence's rows through the dense
/// reference (rows no sequence covers are marked in `uncovered`).
static LogicalResult
computeVarlenGradReference(AttentionGradOp grad, const AttentionSizes &a,
                           llvm::function_ref<HostArray(Value)> host,
                           std::vector<double> expected[3],
                           std::vector<bool> uncovered[3]) {
  HostArray q = host(grad.getQ()), k = host(grad.getK()), v = host(grad.getV()),
            o = host(grad.getO()), gradO = host(grad.getGradO()),
            lse = host(grad.getLse()), cuQ = host(grad.getCuSeqlensQ()),
            cuK = host(grad.getCuSeqlensK());
  int64_t rows[3] = {a.seqQ, a.seqKV, a.seqKV};
  int64_t heads[3] = {a.heads, a.kvHeads, a.kvHeads};
  int64_t columns[3] = {a.headDim, a.headDim, a.headDimV};
  for (int i = 0; i < 3; ++i) {
    expected[i].assign(heads[i] * rows[i] * columns[i], 0.0);
    uncovered[i].assign(expected[i].size(), true);
  }
  for (int64_t s = 0; s + 1 < int64_t(cuQ.values.size()); ++s) {
    auto [qStart, qLength, kStart, kLength, one] =
        getSequenceSlice(a, cuQ, cuK, s);
    std::vector<double> part[3];
    if (failed(computeAttentionGradReference(
            grad, one,
            sliceRows(q, a.heads, a.seqQ, a.headDim, qStart, qLength),
            sliceRows(k, a.kvHeads, a.seqKV, a.headDim, kStart, kLength),
            sliceRows(v, a.kvHeads, a.seqKV, a.headDimV, kStart, kLength),
            sliceRows(o, a.heads, a.seqQ, a.headDimV, qStart, qLength),
            sliceRows(gradO, a.heads, a.seqQ, a.headDimV, qStart, qLength),
            sliceRows(lse, a.heads, a.seqQ, 1, qStart, qLength), part[0],
            part[1], part[2])))
      return failure();
    int64_t starts[3] = {qStart, kStart, kStart};
    int64_t lengths[3] = {qLength, kLength, kLength};
    for (int i = 0; i < 3; ++i)
      for (int64_t h = 0; h < heads[i]; ++h)
        for (int64_t r = 0; r < lengths[i]; ++r)
          for (int64_t c = 0; c < columns[i]; ++c) {
            int64_t at = ((h * rows[i]) + starts[i] + r) * columns[i] + c;
            expected[i][at] = part[i][(h * lengths[i] + r) * columns[i] + c];
            uncovered[i][at] = false;
          }
  }
  return success();
}

static FailureOr<Verdict>
checkAttentionGrad(AttentionGradOp grad, const AttentionSizes &a,
                   const KernelArguments &arguments,
                   llvm::ArrayRef<HostArray> scalars) {
  auto host = [&](Value value) { return readHost(value, arguments, scalars); };
  std::vector<double> expected[3];
  std::vector<bool> uncovered[3];
  if (grad.isVarlen()) {
    if (failed(computeVarlenGradReference(grad, a, host, expected, uncovered)))
      return failure();
  } else if (failed(computeAttentionGradReference(
                 grad, a, host(grad.getQ()), host(grad.getK()),
                 host(grad.getV()), host(grad.getO()), host(grad.getGradO()),
                 host(grad.getLse()), expected[0], expected[1], expected[2]))) {
    return failure();
  }
  // Each gradient against its reference; the verdict shows the one furthest
  // from its tolerance (all must pass). dQ sums over keys, dK and dV over
  // the group's queries.
  Value outputs[] = {grad.getGradQ(), grad.getGradK(), grad.getGradV()};
  int64_t sums[] = {a.seqKV,
                    a.seqQ * (a.heads / std::max<int64_t>(a.kvHeads, 1)),
                    a.seqQ * (a.heads / std::max<int64_t>(a.kvHeads, 1))};
  static constexpr llvm::StringLiteral names[] = {"dq", "dk", "dv"};
  Verdict verdict;
  std::string worst;
  double worstRatio = -1;
  bool passed = true;
  std::string errors;
  for (unsigned i = 0; i < 3; ++i) {
    // P and dS are rounded to the inputs' type for the products: an f32
    // gradient is as exact as that type allows, not as f32.
    Type element = cast<MemRefType>(outputs[i].getType()).getElementType();
    if (element.isF32())
      element = grad.getQ().getType().getElementType();
    Comparison comparison =
        compareResults(element, host(outputs[i]).values, expected[i], sums[i],
                       false, uncovered[i]);
    passed &= comparison.passed;
    errors += llvm::formatv("{0}{1} {2:e2}", i ? ", " : "", names[i],
                            comparison.maxRelError);
    double ratio =
        comparison.maxRelError / std::max(comparison.tolerance, 1e-30);
    if (ratio > worstRatio) {
      worstRatio = ratio;
      verdict.comparison = comparison;
    }
  }
  verdict.comparison.passed = passed;
  std::string masks = grad.getCausal() ? ", causal" : "";
  if (std::optional<ArrayRef<int64_t>> window = grad.getWindow())
    masks += llvm::formatv(", window [{0}, {1}]", (*window)[0], (*window)[1]);
  verdict.what = llvm::formatv(
      "backward {0}x{1}x{2}x{3} (kv heads {4}, kv length {5}{6}{7}; rel "
      "errors {8}) {9}",
      a.batch, a.heads, a.seqQ, a.headDim, a.kvHeads, a.seqKV,
      a.headDimV != a.headDim ? ", v head dim " + std::to_string(a.headDimV)
                              : std::string(),
      masks, errors, grad.getQ().getType().getElementType());
  return verdict;
}

static FailureOr<Verdict> checkMatmul(MatmulOp matmul, const MatmulSizes &sizes,
                                      const KernelArguments &arguments,
                                      llvm::ArrayRef<HostArray> scalars) {
  auto host = [&](Value value) { return readHost(value, arguments, scalars); };
  std::vector<HostArray> extras;
  for (Value extra : matmul.getExtras())
    extras.push_back(host(extra));
  SmallVector<const HostArray *> extraPointers;
  for (const HostArray &extra : extras)
    extraPointers.push_back(&extra);
  FailureOr<MatmulReference> expected = computeMatmulReference(
      matmul, sizes, host(matmul.getA()), host(matmul.getB()), extraPointers);
  if (failed(expected))
    return failure();
  Type cElement = matmul.getC().getType().getElementType();
  ConfigAttr config = matmul.getConfigAttr();
  bool xf32 = config && config.getInstr() &&
              config.getInstr().getValue().ends_with("_xf32");
  Verdict verdict;
  verdict.comparison =
      compareResults(cElement, host(matmul.getC()).values, expected->values,
                     sizes.k, xf32, expected->poison);
  verdict.what = llvm::formatv(
      "{0}{1}x{2}x{3} {4} x {5} -> {6}",
      sizes.batch ? std::to_string(sizes.batch) + "x" : "", sizes.m, sizes.n,
      sizes.k, matmul.getA().getType().getElementType(),
      matmul.getB().getType().getElementType(), cElement);
  return verdict;
}

/// Runs one prepared problem on its given or generated inputs and checks it
/// against the host reference (an error is diagnosed).
static Outcome runProblem(PreparedProblem &prepared,
                          llvm::ArrayRef<KernelLaunch> kernels,
                          emu::Emulator &emulator, const Chip &chip,
                          std::mt19937 &rng) {
  const Problem &problem = *prepared.problem;
  SmallVector<const KernelLaunch *> steps = getLaunchSteps(problem, kernels);
  if (steps.empty())
    return fatal("kernel '" + problem.name + "' was not lowered");
  // Launchable grids before any array is made.
  for (const KernelLaunch *step : steps) {
    std::array<uint64_t, 3> grid = getProblemGrid(prepared, *step);
    if (grid[0] && grid[1] && grid[2])
      if (llvm::Error error = checkGrid(grid, "kernel '" + step->name + "'"))
        return fatal(llvm::toString(std::move(error)));
  }
  FunctionType signature = steps.front()->signature;
  unsigned numArguments = problem.signature.getNumInputs();
  int64_t splits = steps.front()->splits;
  std::vector<KernelInput> inputs;
  std::vector<HostArray> scalars;
  KernelArguments arguments;
  if (llvm::Error error = makeKernelInputs(
          prepared, signature, numArguments, splits, steps.front()->tile[0],
          steps.front()->zeroedWorkspaces, rng, inputs, scalars))
    return fatal(llvm::toString(std::move(error)));
  if (llvm::Error error =
          packArguments(signature, std::move(inputs), arguments))
    return fatal(llvm::toString(std::move(error)));

  auto runStart = std::chrono::steady_clock::now();
  emu::LaunchStats stats;
  if (llvm::Error error =
          launchSteps(prepared, steps, emulator, arguments, stats))
    return fatal(llvm::toString(std::move(error)));
  double runMs = millisecondsSince(runStart);

  FailureOr<Verdict> verdict = failure();
  ConfigAttr config;
  if (auto attention = dyn_cast<AttentionOp>(problem.op)) {
    verdict = checkAttention(attention, prepared.sizes.getAttentionSizes(),
                             prepared.sizes.getPagedSizes(), arguments, scalars,
                             splits);
    config = attention.getConfigAttr();
  } else if (auto grad = dyn_cast<AttentionGradOp>(problem.op)) {
    verdict = checkAttentionGrad(grad, prepared.sizes.getAttentionSizes(),
                                 arguments, scalars);
    config = grad.getConfigAttr();
  } else {
    auto matmul = cast<MatmulOp>(problem.op);
    verdict = checkMatmul(matmul, prepared.sizes.getMatmulSizes(), arguments,
                          scalars);
    config = matmul.getConfigAttr();
  }
  if (failed(verdict))
    return Outcome::Error;
  // Split-K, split-KV and stream-K promise their arrival counters (the
  // last workspace) back at zero, so that the next launch on the same
  // workspaces counts from zero.
  if ((splits > 1 || steps.front()->streamK) &&
      llvm::any_of(arguments.memrefs.back().buffer,
                   [](char byte) { return byte != 0; }))
    return fatal("kernel '" + steps.front()->name +
                 "' left its arrival counters non-zero");
  // Outputs once the check has run (a failing kernel's outputs are what one
  // wants to look at), never after an error.
  if (llvm::Error error = writeOutputs(arguments, numArguments))
    return fatal(llvm::toString(std::move(error)));
  printVerdict(problem.name, verdict->what, chip, config, verdict->comparison,
               stats, runMs);
  return verdict->comparison.passed ? Outcome::Pass : Outcome::Fail;
}

/// Fails for options that do not apply to problem-level kernels or
/// contradict each other.
static llvm::Error checkProblemOptions(llvm::ArrayRef<Problem> problems,
                                       size_t selected) {
  std::string names = llvm::join(
      llvm::map_range(problems, [](const Problem &p) { return p.name; }), ", ");
  if (!kernelName.empty() && !selected)
    return makeError("no problem-level kernel named '" + kernelName + "' in '" +
                     inputFilename + "'; its kernels: " + names);
  if (gridText.getNumOccurrences() || blockText.getNumOccurrences())
    return makeError("--grid and --block launch gpu.func kernels; the "
                     "problem-level kernels of '" +
                     inputFilename + "' (" + names +
                     ") run on the grid their sizes need");
  if (!argValues.empty() && selected > 1)
    return makeError("--arg needs --kernel NAME when the file holds several "
                     "kernels (" +
                     names + ")");
  if (!outDir.empty() && selected > 1)
    return makeError("--out-dir needs --kernel NAME when the file holds "
                     "several kernels (" +
                     names + "): each writes DIR/arg<i>.npy");
  if (!argValues.empty() && dynamicSize.getNumOccurrences())
    return makeError("--dynamic-size sizes generated inputs; with --arg the "
                     "sizes come from the arrays given");
  if (dynamicSize < 0)
    return makeError("--dynamic-size must be 0 or more, got " +
                     std::to_string(dynamicSize));
  return checkOutDir();
}

/// Compiles every problem-level kernel of `module`, runs each selected one
/// on random (or given) inputs and checks it against the host reference.
static int runProblems(ModuleOp module, ArrayRef<Problem> problems,
                       const Chip &chip) {
  SmallVector<const Problem *> selected;
  for (const Problem &problem : problems)
    if (kernelName.empty() || problem.name == kernelName)
      selected.push_back(&problem);
  if (llvm::Error error = checkProblemOptions(problems, selected.size()))
    return fail(llvm::toString(std::move(error)));
  // Sizes and given inputs first: bad input fails before the compile.
  std::vector<PreparedProblem> prepared;
  for (const Problem *problem : selected) {
    llvm::Expected<PreparedProblem> one = prepareProblem(*problem);
    if (!one)
      return fail(llvm::toString(one.takeError()));
    prepared.push_back(std::move(*one));
  }

  PassManager toGPU(module.getContext());
  TesselToROCDLOptions options;
  options.chip = chip.name.str();
  buildTesselToGPUPipeline(toGPU, options);
  auto start = std::chrono::steady_clock::now();
  if (failed(toGPU.run(module)))
    return 1;
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
    }
    if (auto splits = kernel->getAttrOfType<IntegerAttr>("tessel.splits"))
      launch.splits = splits.getInt();
    if (auto streamK = kernel->getAttrOfType<IntegerAttr>("tessel.stream_k"))
      launch.streamK = streamK.getInt();
    if (auto packed = kernel->getAttrOfType<IntegerAttr>("tessel.packed_heads"))
      launch.packedHeads = std::max<int64_t>(1, packed.getInt());
    launch.overKeys = kernel->hasAttr("tessel.grid_over_keys");
    if (auto zeroed = kernel->getAttrOfType<DenseI64ArrayAttr>(
            "tessel.zeroed_workspaces"))
      llvm::append_range(launch.zeroedWorkspaces, zeroed.asArrayRef());
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
  for (PreparedProblem &problem : prepared) {
    Outcome outcome = runProblem(problem, kernels, **emulator, chip, rng);
    if (outcome == Outcome::Error)
      return 1;
    allPassed &= outcome == Outcome::Pass;
  }
  llvm::outs() << llvm::formatv("compile {0:f1} ms\n", compileMs);
  return allPassed ? 0 : 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(category);
  tessel::registerVersionPrinter();
  cl::ParseCommandLineOptions(argc, argv, "Tessel kernel runner\n");

  if (device == "hip")
    return fail("--device=hip is not available in tessel-run: it runs "
                "kernels on the emulator (the C API and Python run them "
                "through HIP); use --device=emulator");
  if (device != "emulator")
    return fail("unknown device '" + device + "'; expected emulator or hip");
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
  // Nesting deep enough to overflow the parser's stack, and input known to
  // crash it, are diagnosed before parsing.
  if (!checkInputLimits(sourceMgr, llvm::errs()))
    return 1;
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  // Problem-level kernels are checked against the host reference; the
  // unlowered copy keeps their ops for it.
  OwningOpRef<ModuleOp> original(cast<ModuleOp>((*module)->clone()));
  SmallVector<Problem> problems;
  original->walk([&](func::FuncOp function) {
    function.walk([&](Operation *op) {
      if (isa<MatmulOp, AttentionOp, AttentionGradOp>(op))
        problems.push_back(
            {function.getName().str(), op, function.getFunctionType()});
    });
  });
  if (!problems.empty())
    return runProblems(*module, problems, *chip);
  return runGpuKernel(*module, *chip);
}
