//===- Device.cpp - Launching compiled kernels through HIP ----------------===//

#include "tessel/Runtime/Device.h"
#include "tessel/Runtime/Compiler.h"
#include "tessel/Support/Strides.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/xxhash.h"

#include <cstring>
#include <dlfcn.h>
#include <random>

using namespace tessel;

//===----------------------------------------------------------------------===//
// Kernel arguments
//===----------------------------------------------------------------------===//

KernelArgumentValue KernelArgumentValue::memref(const void *address,
                                                size_t bytes,
                                                llvm::ArrayRef<int64_t> shape,
                                                llvm::ArrayRef<int64_t> strides,
                                                int64_t offset) {
  KernelArgumentValue value;
  value.isMemref = true;
  value.address = address;
  value.bytes = bytes;
  value.shape.assign(shape.begin(), shape.end());
  if (strides.empty()) {
    value.strides.assign(shape.size(), 1);
    for (int d = int(shape.size()) - 2; d >= 0; --d)
      value.strides[d] = value.strides[d + 1] * shape[d + 1];
  } else {
    value.strides.assign(strides.begin(), strides.end());
    value.stridesGiven = true;
  }
  value.offset = offset;
  return value;
}

KernelArgumentValue KernelArgumentValue::scalar32(uint32_t bits) {
  KernelArgumentValue value;
  value.scalarBytes = 4;
  value.scalarBits = bits;
  return value;
}

KernelArgumentValue KernelArgumentValue::scalar64(uint64_t bits) {
  KernelArgumentValue value;
  value.scalarBytes = 8;
  value.scalarBits = bits;
  return value;
}

namespace {
/// One piece of the expanded argument list and which argument it is from.
struct Piece {
  unsigned argument;
  bool isPointer;
  unsigned bytes;
  uint64_t bits;
};
} // namespace

static std::vector<Piece>
expandArguments(llvm::ArrayRef<KernelArgumentValue> arguments) {
  std::vector<Piece> pieces;
  for (auto [index, value] : llvm::enumerate(arguments)) {
    unsigned argument = unsigned(index);
    if (!value.isMemref) {
      pieces.push_back({argument, false, value.scalarBytes, value.scalarBits});
      continue;
    }
    auto address = uint64_t(reinterpret_cast<uintptr_t>(value.address));
    pieces.push_back({argument, true, 8, address}); // allocated
    pieces.push_back({argument, true, 8, address}); // aligned
    pieces.push_back({argument, false, 8, uint64_t(value.offset)});
    for (int64_t size : value.shape)
      pieces.push_back({argument, false, 8, uint64_t(size)});
    for (int64_t stride : value.strides)
      pieces.push_back({argument, false, 8, uint64_t(stride)});
  }
  return pieces;
}

llvm::Expected<std::vector<char>>
tessel::packKernelArguments(const KernelMetadata &kernel,
                            llvm::ArrayRef<KernelArgumentValue> arguments) {
  std::vector<const KernelArgument *> explicitArgs;
  for (const KernelArgument &arg : kernel.args)
    if (!llvm::StringRef(arg.valueKind).starts_with("hidden_"))
      explicitArgs.push_back(&arg);
  std::vector<Piece> pieces = expandArguments(arguments);
  if (pieces.size() != explicitArgs.size())
    return llvm::createStringError(llvm::formatv(
        "kernel '{0}' takes {1} kernarg pieces but the {2} arguments given "
        "expand to {3} (a memref of rank r is 3 + 2r pieces)",
        kernel.name, explicitArgs.size(), arguments.size(), pieces.size()));
  std::vector<char> segment(kernel.kernargSegmentSize, 0);
  for (auto [piece, arg] : llvm::zip(pieces, explicitArgs)) {
    bool expectsPointer = arg->valueKind == "global_buffer";
    if (piece.isPointer != expectsPointer || piece.bytes != arg->size ||
        arg->offset + arg->size > segment.size())
      return llvm::createStringError(llvm::formatv(
          "kernel '{0}', argument {1}: a {2}-byte {3} does not match the "
          "kernarg at offset {4} ({5} bytes, {6})",
          kernel.name, piece.argument, piece.bytes,
          piece.isPointer ? "pointer" : "value", arg->offset, arg->size,
          arg->valueKind));
    // The kernarg segment is little-endian, as is the host.
    std::memcpy(&segment[arg->offset], &piece.bits, piece.bytes);
  }
  return segment;
}

namespace {
/// The size each named problem dimension has in the arguments seen so far.
struct DimensionSizes {
  llvm::StringMap<std::pair<int64_t, unsigned>> sizes; // name -> (size, arg)

  /// Records `size` for `dimension`; an error if an earlier argument gave
  /// it another size.
  llvm::Error bind(llvm::StringRef problem, llvm::StringRef dimension,
                   int64_t size, unsigned argument, unsigned axis) {
    if (dimension.empty())
      return llvm::Error::success();
    auto [it, inserted] = sizes.try_emplace(dimension, size, argument);
    if (inserted || it->second.first == size)
      return llvm::Error::success();
    return llvm::createStringError(llvm::formatv(
        "problem '{0}': argument {1} has {2} = {3} (dimension {4}) but "
        "argument {5} has {2} = {6}",
        problem, argument, dimension, size, axis, it->second.second,
        it->second.first));
  }
  int64_t get(llvm::StringRef dimension) const {
    auto it = sizes.find(dimension);
    return it == sizes.end() ? 0 : it->second.first;
  }
  bool has(llvm::StringRef dimension) const { return sizes.count(dimension); }
};
} // namespace

/// Checks one memref argument against its type and completes its strides.
static llvm::Error checkMemref(llvm::StringRef problem, unsigned index,
                               const ArgumentType &type,
                               KernelArgumentValue &value) {
  auto error = [&](const llvm::Twine &what) {
    return llvm::createStringError(("problem '" + problem + "', argument " +
                                    llvm::Twine(index) + ": " + what)
                                       .str());
  };
  if (!value.isMemref)
    return error("expected an array (memref of " + type.elementType +
                 "), got a scalar");
  size_t rank = type.shape.size();
  if (value.shape.size() != rank)
    return error(llvm::formatv("expected rank {0}, got rank {1}", rank,
                               value.shape.size()));
  for (auto [axis, size, expected] : llvm::enumerate(value.shape, type.shape)) {
    if (size < 0)
      return error(
          llvm::formatv("size {0} in dimension {1} is negative", size, axis));
    if (expected >= 0 && size != expected)
      return error(llvm::formatv(
          "size {0} in dimension {1}, but the kernel was compiled for {2}",
          size, axis, expected));
  }
  if (!value.stridesGiven) {
    std::optional<llvm::SmallVector<int64_t, 4>> dense =
        denseStrides(value.shape, type.strides);
    if (!dense)
      return error("its size overflows 64-bit element offsets");
    value.strides = *dense;
  }
  if (value.strides.size() != rank)
    return error(llvm::formatv("{0} strides given for rank {1}",
                               value.strides.size(), rank));
  for (auto [axis, stride, expected] :
       llvm::enumerate(value.strides, type.strides)) {
    // The stride of a dimension of size 0 or 1 never moves an access
    // (numpy reports any value there).
    if (expected >= 0 && value.shape[axis] <= 1)
      stride = expected;
    if (expected >= 0 && stride != expected)
      return error(llvm::formatv(
          "stride {0} in dimension {1}, but the kernel's layout has {2}",
          stride, axis, expected));
  }
  std::optional<int64_t> extent = stridedExtent(value.shape, value.strides);
  int64_t bytes = 0;
  if (!extent || value.offset < 0 ||
      llvm::AddOverflow(*extent, value.offset, bytes) ||
      llvm::MulOverflow(bytes, int64_t(type.elementBytes), bytes))
    return error("negative strides or offset, or a span past 2^63 bytes");
  if (*extent == 0)
    return llvm::Error::success();
  if (uint64_t(bytes) > value.bytes)
    return error(llvm::formatv("the array spans {0} bytes of {1} but the "
                               "buffer has {2}",
                               bytes, type.elementType, value.bytes));
  if (!value.address)
    return error("the buffer is null");
  return llvm::Error::success();
}

llvm::Expected<ProblemSizes> tessel::bindProblemArguments(
    const CompiledModule &module, llvm::StringRef name,
    llvm::MutableArrayRef<KernelArgumentValue> arguments,
    const ProblemSizes &requested) {
  std::vector<const CompiledKernel *> sequence = module.launchSequence(name);
  if (sequence.empty()) {
    std::string known;
    for (const CompiledKernel &kernel : module.kernels)
      if (kernel.grid.planOf.empty() || kernel.grid.stage == 0)
        known +=
            (known.empty() ? "" : ", ") +
            (kernel.grid.planOf.empty() ? kernel.name : kernel.grid.planOf);
    return llvm::createStringError("the module has no problem '" + name +
                                   "' (it has: " + known + ")");
  }
  const CompiledKernel &kernel = *sequence.front();
  if (arguments.size() != kernel.problemArguments)
    return llvm::createStringError(
        llvm::formatv("problem '{0}' takes {1} arguments, got {2}", name,
                      kernel.problemArguments, arguments.size()));
  DimensionSizes dimensions;
  for (auto [index, value] : llvm::enumerate(arguments)) {
    const ArgumentType &type = kernel.arguments[index];
    if (!type.isMemref) {
      if (value.isMemref)
        return llvm::createStringError(llvm::formatv(
            "problem '{0}', argument {1}: expected a {2} scalar, got an array",
            name, index, type.elementType));
      if (value.scalarBytes != type.elementBytes)
        return llvm::createStringError(llvm::formatv(
            "problem '{0}', argument {1}: expected a {2}-byte {3} scalar, got "
            "{4} bytes",
            name, index, type.elementBytes, type.elementType,
            value.scalarBytes));
      // A scalar that is a size of the problem (varlen's max_seqlen_q).
      if (type.dimensions.size() == 1) {
        int64_t size = value.scalarBytes == 4
                           ? int64_t(int32_t(uint32_t(value.scalarBits)))
                           : int64_t(value.scalarBits);
        if (size < 0)
          return llvm::createStringError(llvm::formatv(
              "problem '{0}', argument {1}: {2} = {3} is negative", name, index,
              type.dimensions.front(), size));
        if (llvm::Error error =
                dimensions.bind(name, type.dimensions.front(), size, index, 0))
          return std::move(error);
      }
      continue;
    }
    if (llvm::Error error = checkMemref(name, index, type, value))
      return std::move(error);
    for (auto [axis, dimension] : llvm::enumerate(type.dimensions))
      if (llvm::Error error =
              dimensions.bind(name, dimension, value.shape[axis], index, axis))
        return std::move(error);
  }
  int64_t heads = dimensions.get("heads"), kvHeads = dimensions.get("kv_heads");
  if (kvHeads ? heads % kvHeads : heads)
    return llvm::createStringError(llvm::formatv(
        "problem '{0}': {1} query heads are not a multiple of {2} key/value "
        "heads",
        name, heads, kvHeads));
  ProblemSizes sizes;
  sizes.m = dimensions.get("m");
  sizes.n = dimensions.get("n");
  sizes.batch = dimensions.get("batch");
  // Varlen: B + 1 cumulative lengths.
  if (dimensions.has("batch+1"))
    sizes.batch = std::max<int64_t>(dimensions.get("batch+1") - 1, 0);
  sizes.seqQ = dimensions.get("seq_q");
  sizes.heads = heads;
  sizes.seqKV = dimensions.get("seq_kv");
  sizes.totalQ = dimensions.get("total_q");
  sizes.totalKV = dimensions.get("total_kv");
  sizes.kvHeads = kvHeads;
  sizes.batched = dimensions.has("batch") || dimensions.has("batch+1");
  for (auto [what, given, derived] :
       {std::tuple<llvm::StringRef, int64_t, int64_t>{"m", requested.m,
                                                      sizes.m},
        {"n", requested.n, sizes.n},
        {"batch", requested.batch, sizes.batch},
        {"seq_q", requested.seqQ, sizes.seqQ},
        {"heads", requested.heads, sizes.heads}}) {
    if (given < 0)
      return llvm::createStringError(llvm::formatv(
          "problem '{0}': size {1} = {2} is negative", name, what, given));
    if (given && given != derived)
      return llvm::createStringError(llvm::formatv(
          "problem '{0}': size {1} = {2} was requested but the arrays give "
          "{3}",
          name, what, given, derived));
  }
  return sizes;
}

/// The problem size named `dimension` (as ArgumentType::dimensions names
/// them), or -1 for a name the grid sizes do not carry.
static int64_t getNamedSize(const ProblemSizes &sizes,
                            llvm::StringRef dimension) {
  return llvm::StringSwitch<int64_t>(dimension)
      .Case("batch", sizes.batch)
      .Case("heads", sizes.heads)
      .Case("kv_heads", sizes.kvHeads)
      .Case("seq_q", sizes.seqQ)
      .Case("seq_kv", sizes.seqKV)
      .Case("total_q", sizes.totalQ)
      .Case("total_kv", sizes.totalKV)
      .Case("m", sizes.m)
      .Case("n", sizes.n)
      .Default(-1);
}

llvm::Error tessel::runProblem(const CompiledModule &module,
                               llvm::StringRef name,
                               const ProblemSizes &requested,
                               llvm::ArrayRef<KernelArgumentValue> arguments,
                               const ProblemLauncher &launcher) {
  std::vector<KernelArgumentValue> all(arguments.begin(), arguments.end());
  llvm::Expected<ProblemSizes> sizes =
      bindProblemArguments(module, name, all, requested);
  if (!sizes)
    return sizes.takeError();
  std::vector<const CompiledKernel *> sequence = module.launchSequence(name);
  // Workspaces: the arguments past the problem's own, shared by the stages.
  const std::vector<ArgumentType> &types = sequence.front()->arguments;
  std::vector<std::array<unsigned, 3>> grids;
  bool empty = false;
  for (const CompiledKernel *kernel : sequence) {
    llvm::Expected<std::array<unsigned, 3>> grid = kernel->gridFor(*sizes);
    if (!grid)
      return grid.takeError();
    empty |= !(*grid)[0] || !(*grid)[1] || !(*grid)[2];
    grids.push_back(*grid);
  }
  if (empty)
    return llvm::Error::success(); // nothing to compute
  for (size_t index = arguments.size(); index < types.size(); ++index) {
    const ArgumentType &type = types[index];
    // Dynamic dimensions take the problem size they are named after.
    std::vector<int64_t> shape = type.shape;
    for (auto [axis, size] : llvm::enumerate(shape))
      if (size < 0 && axis < type.dimensions.size())
        size = getNamedSize(*sizes, type.dimensions[axis]);
    int64_t elements = 1;
    for (int64_t size : shape)
      elements *= size;
    if (!type.isMemref || llvm::is_contained(shape, -1))
      return llvm::createStringError(llvm::formatv(
          "problem '{0}': workspace argument {1} has a dynamic dimension "
          "the compiler gave no size for",
          name, index));
    size_t bytes = std::max<int64_t>(elements, 1) * type.elementBytes;
    llvm::Expected<void *> workspace =
        launcher.allocateWorkspace(bytes, type.zeroed);
    if (!workspace)
      return workspace.takeError();
    all.push_back(KernelArgumentValue::memref(*workspace, bytes, shape));
  }
  for (auto [kernel, grid] : llvm::zip(sequence, grids))
    if (llvm::Error error = launcher.launch(*kernel, grid, all))
      return error;
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// HIP through dlopen
//===----------------------------------------------------------------------===//

/// The HIP entry points used, with their C signatures (hipError_t is an int
/// enum, handles are pointers).
struct HipDevice::Api {
  int (*getDeviceCount)(int *);
  int (*setDevice)(int);
  const char *(*getErrorString)(int);
  int (*malloc)(void **, size_t);
  int (*free)(void *);
  int (*memcpy)(void *, const void *, size_t, int);
  int (*moduleLoadData)(void **, const void *);
  int (*moduleUnload)(void *);
  int (*moduleGetFunction)(void **, void *, const char *);
  int (*moduleLaunchKernel)(void *, unsigned, unsigned, unsigned, unsigned,
                            unsigned, unsigned, unsigned, void *, void **,
                            void **);
  int (*deviceSynchronize)();
  // Timing (hipEvent_t is a handle; the stream is the null stream).
  int (*eventCreate)(void **);
  int (*eventRecord)(void *, void *);
  int (*eventSynchronize)(void *);
  int (*eventElapsedTime)(float *, void *, void *);
  int (*eventDestroy)(void *);
  // Streams and asynchronous work (the device-resident runtime).
  int (*streamCreate)(void **);
  int (*streamDestroy)(void *);
  int (*streamSynchronize)(void *);
  int (*streamWaitEvent)(void *, void *, unsigned);
  int (*memcpyAsync)(void *, const void *, size_t, int, void *);
  int (*memsetAsync)(void *, int, size_t, void *);
  int (*eventQuery)(void *);
};

static constexpr int kHipSuccess = 0;
static constexpr int kHipErrorNotReady = 600;
static constexpr int kMemcpyHostToDevice = 1;
static constexpr int kMemcpyDeviceToHost = 2;
// hipModuleLaunchKernel's `extra` markers.
static void *const kLaunchParamBufferPointer = reinterpret_cast<void *>(1);
static void *const kLaunchParamBufferSize = reinterpret_cast<void *>(2);
static void *const kLaunchParamEnd = reinterpret_cast<void *>(3);

template <typename Fn>
static bool resolve(void *library, const char *name, Fn &slot) {
  slot = reinterpret_cast<Fn>(dlsym(library, name));
  return slot != nullptr;
}

llvm::Expected<std::unique_ptr<HipDevice>> HipDevice::open() {
  void *library = nullptr;
  for (const char *name :
       {"libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"})
    if ((library = dlopen(name, RTLD_NOW | RTLD_LOCAL)))
      break;
  if (!library)
    return llvm::createStringError(
        "no HIP runtime: libamdhip64.so (ROCm 6 or 5) is not installed");
  std::unique_ptr<HipDevice> device(new HipDevice());
  device->library = library;
  device->api = std::make_unique<Api>();
  Api &api = *device->api;
  bool complete =
      resolve(library, "hipGetDeviceCount", api.getDeviceCount) &&
      resolve(library, "hipSetDevice", api.setDevice) &&
      resolve(library, "hipGetErrorString", api.getErrorString) &&
      resolve(library, "hipMalloc", api.malloc) &&
      resolve(library, "hipFree", api.free) &&
      resolve(library, "hipMemcpy", api.memcpy) &&
      resolve(library, "hipModuleLoadData", api.moduleLoadData) &&
      resolve(library, "hipModuleUnload", api.moduleUnload) &&
      resolve(library, "hipModuleGetFunction", api.moduleGetFunction) &&
      resolve(library, "hipModuleLaunchKernel", api.moduleLaunchKernel) &&
      resolve(library, "hipDeviceSynchronize", api.deviceSynchronize) &&
      resolve(library, "hipEventCreate", api.eventCreate) &&
      resolve(library, "hipEventRecord", api.eventRecord) &&
      resolve(library, "hipEventSynchronize", api.eventSynchronize) &&
      resolve(library, "hipEventElapsedTime", api.eventElapsedTime) &&
      resolve(library, "hipEventDestroy", api.eventDestroy) &&
      resolve(library, "hipStreamCreate", api.streamCreate) &&
      resolve(library, "hipStreamDestroy", api.streamDestroy) &&
      resolve(library, "hipStreamSynchronize", api.streamSynchronize) &&
      resolve(library, "hipStreamWaitEvent", api.streamWaitEvent) &&
      resolve(library, "hipMemcpyAsync", api.memcpyAsync) &&
      resolve(library, "hipMemsetAsync", api.memsetAsync) &&
      resolve(library, "hipEventQuery", api.eventQuery);
  if (!complete)
    return llvm::createStringError(
        "the HIP runtime found lacks the module launch, stream or event API");
  int count = 0;
  if (api.getDeviceCount(&count) != kHipSuccess || count == 0)
    return llvm::createStringError("no AMD GPU: the HIP runtime sees no "
                                   "device");
  if (llvm::Error error = device->check(api.setDevice(0), "hipSetDevice"))
    return std::move(error);
  return device;
}

HipDevice::~HipDevice() {
  if (api)
    for (auto &entry : modules)
      api->moduleUnload(entry.second);
  if (library)
    dlclose(library);
}

llvm::Error HipDevice::check(int status, llvm::StringRef what) {
  if (status == kHipSuccess)
    return llvm::Error::success();
  const char *reason = api->getErrorString(status);
  return llvm::createStringError(llvm::formatv(
      "{0} failed: {1} ({2})", what, reason ? reason : "unknown", status));
}

llvm::Expected<void *> HipDevice::allocate(size_t bytes) {
  void *address = nullptr;
  if (llvm::Error error = check(api->malloc(&address, bytes), "hipMalloc"))
    return std::move(error);
  return address;
}

llvm::Error HipDevice::release(void *address) {
  return check(api->free(address), "hipFree");
}

llvm::Error HipDevice::copyToDevice(void *device, const void *host,
                                    size_t bytes) {
  return check(api->memcpy(device, host, bytes, kMemcpyHostToDevice),
               "hipMemcpy to the device");
}

llvm::Error HipDevice::copyToHost(void *host, const void *device,
                                  size_t bytes) {
  return check(api->memcpy(host, device, bytes, kMemcpyDeviceToHost),
               "hipMemcpy to the host");
}

llvm::Error
HipDevice::launch(llvm::ArrayRef<char> hsaco, llvm::StringRef kernel,
                  std::array<unsigned, 3> grid, std::array<unsigned, 3> block,
                  llvm::ArrayRef<char> kernargs, bool wait, void *stream) {
  void *module = nullptr;
  {
    std::lock_guard<std::mutex> lock(modulesMutex);
    auto key = std::make_pair(
        llvm::xxh3_64bits(llvm::ArrayRef(
            reinterpret_cast<const uint8_t *>(hsaco.data()), hsaco.size())),
        hsaco.size());
    void *&loaded = modules[key];
    if (!loaded)
      if (llvm::Error error = check(api->moduleLoadData(&loaded, hsaco.data()),
                                    "hipModuleLoadData")) {
        modules.erase(key);
        return error;
      }
    module = loaded;
  }
  void *function = nullptr;
  std::string name = kernel.str();
  if (llvm::Error error =
          check(api->moduleGetFunction(&function, module, name.c_str()),
                "hipModuleGetFunction '" + name + "'"))
    return error;
  std::vector<char> buffer(kernargs.begin(), kernargs.end());
  size_t size = buffer.size();
  void *extra[] = {kLaunchParamBufferPointer, buffer.data(),
                   kLaunchParamBufferSize, &size, kLaunchParamEnd};
  // Dynamic LDS is 0: the kernels' LDS is static, in the code object.
  if (llvm::Error error =
          check(api->moduleLaunchKernel(function, grid[0], grid[1], grid[2],
                                        block[0], block[1], block[2], 0, stream,
                                        nullptr, extra),
                "hipModuleLaunchKernel '" + name + "'"))
    return error;
  if (!wait)
    return llvm::Error::success();
  return check(api->deviceSynchronize(), "hipDeviceSynchronize");
}

llvm::Expected<void *> HipDevice::createStream() {
  void *stream = nullptr;
  if (llvm::Error error = check(api->streamCreate(&stream), "hipStreamCreate"))
    return std::move(error);
  return stream;
}

void HipDevice::destroyStream(void *stream) { api->streamDestroy(stream); }

llvm::Error HipDevice::synchronizeStream(void *stream) {
  return check(api->streamSynchronize(stream), "hipStreamSynchronize");
}

llvm::Error HipDevice::synchronizeDevice() {
  return check(api->deviceSynchronize(), "hipDeviceSynchronize");
}

llvm::Error HipDevice::copyAsync(void *destination, const void *source,
                                 size_t bytes, int kind, void *stream) {
  return check(api->memcpyAsync(destination, source, bytes, kind, stream),
               "hipMemcpyAsync");
}

llvm::Error HipDevice::fillAsync(void *destination, uint8_t value, size_t bytes,
                                 void *stream) {
  return check(api->memsetAsync(destination, value, bytes, stream),
               "hipMemsetAsync");
}

llvm::Expected<void *> HipDevice::createEvent() {
  void *event = nullptr;
  if (llvm::Error error = check(api->eventCreate(&event), "hipEventCreate"))
    return std::move(error);
  return event;
}

void HipDevice::destroyEvent(void *event) { api->eventDestroy(event); }

llvm::Error HipDevice::recordEvent(void *event, void *stream) {
  return check(api->eventRecord(event, stream), "hipEventRecord");
}

llvm::Error HipDevice::synchronizeEvent(void *event) {
  return check(api->eventSynchronize(event), "hipEventSynchronize");
}

llvm::Expected<bool> HipDevice::isEventComplete(void *event) {
  int status = api->eventQuery(event);
  if (status == kHipErrorNotReady)
    return false;
  if (llvm::Error error = check(status, "hipEventQuery"))
    return std::move(error);
  return true;
}

llvm::Expected<float> HipDevice::millisecondsBetween(void *start, void *stop) {
  float milliseconds = 0;
  if (llvm::Error error =
          check(api->eventElapsedTime(&milliseconds, start, stop),
                "hipEventElapsedTime"))
    return std::move(error);
  return milliseconds;
}

llvm::Error HipDevice::streamWaitEvent(void *stream, void *event) {
  return check(api->streamWaitEvent(stream, event, 0), "hipStreamWaitEvent");
}

llvm::Expected<double>
HipDevice::timeOnDevice(llvm::function_ref<llvm::Error()> enqueue,
                        unsigned repetitions) {
  if (repetitions == 0)
    return llvm::createStringError("timing needs at least one repetition");
  void *start = nullptr, *stop = nullptr;
  auto destroy = [&] {
    if (start)
      api->eventDestroy(start);
    if (stop)
      api->eventDestroy(stop);
  };
  auto timed = [&]() -> llvm::Expected<double> {
    if (llvm::Error error = check(api->eventCreate(&start), "hipEventCreate"))
      return std::move(error);
    if (llvm::Error error = check(api->eventCreate(&stop), "hipEventCreate"))
      return std::move(error);
    // The warm-up loads the code object and fills the caches and TLBs.
    if (llvm::Error error = enqueue())
      return std::move(error);
    if (llvm::Error error =
            check(api->deviceSynchronize(), "hipDeviceSynchronize"))
      return std::move(error);
    if (llvm::Error error =
            check(api->eventRecord(start, nullptr), "hipEventRecord"))
      return std::move(error);
    for (unsigned i = 0; i < repetitions; ++i)
      if (llvm::Error error = enqueue())
        return std::move(error);
    if (llvm::Error error =
            check(api->eventRecord(stop, nullptr), "hipEventRecord"))
      return std::move(error);
    if (llvm::Error error =
            check(api->eventSynchronize(stop), "hipEventSynchronize"))
      return std::move(error);
    float milliseconds = 0;
    if (llvm::Error error =
            check(api->eventElapsedTime(&milliseconds, start, stop),
                  "hipEventElapsedTime"))
      return std::move(error);
    return double(milliseconds) * 1e-3 / repetitions;
  };
  llvm::Expected<double> seconds = timed();
  destroy();
  return seconds;
}

HipAllocations::~HipAllocations() {
  for (void *address : addresses)
    llvm::consumeError(device.release(address)); // nothing to report to
}

llvm::Expected<void *> HipAllocations::allocate(size_t bytes) {
  llvm::Expected<void *> address = device.allocate(std::max<size_t>(bytes, 1));
  if (address)
    addresses.push_back(*address);
  return address;
}

llvm::Expected<void *> HipAllocations::allocateZeroed(size_t bytes) {
  llvm::Expected<void *> address = allocate(bytes);
  if (!address)
    return address;
  std::vector<char> zeros(bytes, 0);
  if (llvm::Error error = device.copyToDevice(*address, zeros.data(), bytes))
    return std::move(error);
  return address;
}

llvm::Error tessel::launchOnHip(HipDevice &device, const CompiledModule &module,
                                const CompiledKernel &kernel,
                                std::array<unsigned, 3> grid,
                                llvm::ArrayRef<KernelArgumentValue> arguments,
                                bool wait, void *stream) {
  llvm::Expected<std::vector<char>> kernargs =
      packKernelArguments(kernel.metadata, arguments);
  if (!kernargs)
    return kernargs.takeError();
  return device.launch(module.hsaco, kernel.name, grid,
                       {kernel.blockSize, 1, 1}, *kernargs, wait, stream);
}

//===----------------------------------------------------------------------===//
// Timing a problem on the GPU
//===----------------------------------------------------------------------===//

/// The floating-point format of an element type name, or null for integers.
static const llvm::fltSemantics *getFloatSemantics(llvm::StringRef type) {
  return llvm::StringSwitch<const llvm::fltSemantics *>(type)
      .Case("f16", &llvm::APFloat::IEEEhalf())
      .Case("bf16", &llvm::APFloat::BFloat())
      .Case("f32", &llvm::APFloat::IEEEsingle())
      .Case("f64", &llvm::APFloat::IEEEdouble())
      .Case("f8E4M3FNUZ", &llvm::APFloat::Float8E4M3FNUZ())
      .Case("f8E5M2FNUZ", &llvm::APFloat::Float8E5M2FNUZ())
      .Case("f8E4M3FN", &llvm::APFloat::Float8E4M3FN())
      .Case("f8E5M2", &llvm::APFloat::Float8E5M2())
      .Default(nullptr);
}

/// `elements` random values of `type`, little-endian: uniform in [-1, 1]
/// for floats, in [-8, 8] for integers.
static llvm::Expected<std::vector<char>>
makeRandomElements(const ArgumentType &type, int64_t elements,
                   std::mt19937 &rng) {
  const llvm::fltSemantics *semantics = getFloatSemantics(type.elementType);
  bool integer = llvm::StringRef(type.elementType).starts_with("i") ||
                 type.elementType == "index";
  if (!semantics && !integer)
    return llvm::createStringError("no random data for element type '" +
                                   type.elementType + "'");
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int64_t> small(-8, 8);
  std::vector<char> bytes(elements * type.elementBytes);
  for (int64_t i = 0; i < elements; ++i) {
    uint64_t bits;
    if (semantics) {
      llvm::APFloat value(real(rng));
      bool losesInfo;
      value.convert(*semantics, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
      bits = value.bitcastToAPInt().getZExtValue();
    } else {
      bits = uint64_t(small(rng));
    }
    std::memcpy(&bytes[i * type.elementBytes], &bits, type.elementBytes);
  }
  return bytes;
}

llvm::Expected<double> tessel::timeProblemOnHip(HipDevice &device,
                                                const CompiledModule &module,
                                                llvm::StringRef name,
                                                unsigned repetitions) {
  std::vector<const CompiledKernel *> sequence = module.launchSequence(name);
  if (sequence.empty())
    return llvm::createStringError("no problem '" + name + "' to time");
  const CompiledKernel &first = *sequence.front();
  HipAllocations memory(device);

  std::mt19937 rng(0x7e55e1);
  std::vector<KernelArgumentValue> arguments;
  for (unsigned index = 0; index < first.problemArguments; ++index) {
    const ArgumentType &type = first.arguments[index];
    if (!type.isMemref || llvm::is_contained(type.shape, -1) ||
        llvm::is_contained(type.strides, -1))
      return llvm::createStringError(llvm::formatv(
          "problem '{0}': argument {1} is not a memref of static shape and "
          "strides; only those are timed",
          name, index));
    // The elements the strides reach: one past the farthest.
    int64_t extent = 1;
    for (auto [size, stride] : llvm::zip(type.shape, type.strides))
      extent += (size - 1) * stride;
    if (llvm::is_contained(type.shape, 0))
      extent = 0;
    llvm::Expected<std::vector<char>> host =
        makeRandomElements(type, extent, rng);
    if (!host)
      return host.takeError();
    llvm::Expected<void *> address = memory.allocate(host->size());
    if (!address)
      return address.takeError();
    if (llvm::Error error =
            device.copyToDevice(*address, host->data(), host->size()))
      return std::move(error);
    arguments.push_back(KernelArgumentValue::memref(*address, host->size(),
                                                    type.shape, type.strides));
  }

  // Workspaces are allocated by the warm-up run and reused by the timed
  // ones, so the timed region holds launches only.
  std::vector<void *> workspaces;
  size_t nextWorkspace = 0;
  ProblemLauncher launcher;
  launcher.allocateWorkspace = [&](size_t bytes,
                                   bool) -> llvm::Expected<void *> {
    if (nextWorkspace < workspaces.size())
      return workspaces[nextWorkspace++];
    llvm::Expected<void *> address = memory.allocateZeroed(bytes);
    if (!address)
      return address;
    workspaces.push_back(*address);
    ++nextWorkspace;
    return address;
  };
  launcher.launch =
      [&](const CompiledKernel &kernel, std::array<unsigned, 3> grid,
          llvm::ArrayRef<KernelArgumentValue> all) -> llvm::Error {
    return launchOnHip(device, module, kernel, grid, all, /*wait=*/false);
  };
  return device.timeOnDevice(
      [&]() -> llvm::Error {
        nextWorkspace = 0;
        return runProblem(module, name, ProblemSizes{}, arguments, launcher);
      },
      repetitions);
}
