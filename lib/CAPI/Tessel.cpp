//===- Tessel.cpp - Tessel's C API ----------------------------------------===//
//
// Every entry point checks its handles against the set of live ones, so a
// NULL, destroyed or foreign handle is an error message, never a crash in
// the embedding process. Compiles run inside a crash-recovery context (see
// compileInput).
//
//===----------------------------------------------------------------------===//

#include "tessel-c/Tessel.h"
#include "tessel/Runtime/Compiler.h"
#include "tessel/Runtime/Device.h"
#include "tessel/Runtime/DeviceRuntime.h"
#include "tessel/Support/Log.h"
#include "tessel/Support/Version.h"

#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <type_traits>
#include <unordered_set>

using namespace tessel;

struct TesselCompiler {
  std::unique_ptr<Compiler> compiler;
};

struct TesselModule {
  std::shared_ptr<const CompiledModule> compiled;
  std::mutex emulatorMutex;
  std::unique_ptr<EmulatorDevice> emulator; // made on the first emulated run
  std::mutex assemblyMutex;
  std::optional<std::string> assembly; // made on the first request
};

static thread_local std::string lastError;

static void setError(llvm::Error error) {
  lastError = llvm::toString(std::move(error));
}

static void setError(const llvm::Twine &message) { lastError = message.str(); }

int tesselGetVersionNumber(void) { return TESSEL_VERSION; }

const char *tesselGetVersion(void) { return tessel::getFullVersion().c_str(); }

const char *tesselGetLastError(void) { return lastError.c_str(); }

//===----------------------------------------------------------------------===//
// Live handles
//===----------------------------------------------------------------------===//

namespace {
/// The handles of one kind that were created and not destroyed yet.
class LiveHandles {
public:
  void add(const void *handle) {
    std::lock_guard<std::mutex> lock(mutex);
    live.insert(handle);
  }
  /// Forgets `handle`; false if it was not live.
  bool remove(const void *handle) {
    std::lock_guard<std::mutex> lock(mutex);
    return live.erase(handle) != 0;
  }
  bool contains(const void *handle) {
    std::lock_guard<std::mutex> lock(mutex);
    return live.count(handle) != 0;
  }

private:
  std::mutex mutex;
  std::unordered_set<const void *> live;
};
} // namespace

static LiveHandles &liveCompilers() {
  static LiveHandles *handles = new LiveHandles(); // outlives static dtors
  return *handles;
}

static LiveHandles &liveModules() {
  static LiveHandles *handles = new LiveHandles();
  return *handles;
}

/// Whether `compiler` is usable; if not, says so for `function`.
static bool checkCompiler(const TesselCompiler *compiler,
                          const char *function) {
  if (compiler && liveCompilers().contains(compiler))
    return true;
  setError(llvm::Twine(function) +
           (compiler ? ": the compiler handle is not a live compiler "
                       "(destroyed, or never created)"
                     : ": the compiler handle is NULL"));
  return false;
}

static bool checkModule(const TesselModule *module, const char *function) {
  if (module && liveModules().contains(module))
    return true;
  setError(llvm::Twine(function) +
           (module ? ": the module handle is not a live module (destroyed, "
                     "or never created)"
                   : ": the module handle is NULL"));
  return false;
}

//===----------------------------------------------------------------------===//
// Compilers
//===----------------------------------------------------------------------===//

TesselCompiler *tesselCompilerCreate(const char *cacheDirectory) {
  CacheOptions options = cacheDirectory
                             ? CacheOptions{true, std::string(cacheDirectory)}
                             : CacheOptions::fromEnvironment();
  auto *compiler = new TesselCompiler{std::make_unique<Compiler>(options)};
  liveCompilers().add(compiler);
  return compiler;
}

void tesselCompilerDestroy(TesselCompiler *compiler) {
  if (!compiler)
    return; // like free(NULL)
  if (!liveCompilers().remove(compiler)) {
    checkCompiler(compiler, "tesselCompilerDestroy");
    return;
  }
  delete compiler;
}

void tesselCompilerGetCacheStats(TesselCompiler *compiler,
                                 TesselCacheStats *stats) {
  if (!stats) {
    setError("tesselCompilerGetCacheStats: stats must not be NULL");
    return;
  }
  *stats = {};
  if (!checkCompiler(compiler, "tesselCompilerGetCacheStats"))
    return;
  CacheStats s = compiler->compiler->getCache().getStats();
  *stats = {s.memoryHits, s.diskHits, s.misses, s.corruptEntries,
            s.writeFailures};
}

/// Compiles `input` (IR text or a problem description) for `chip`. A crash
/// inside the compiler (an upstream MLIR/LLVM bug reachable from some input)
/// is caught by a crash-recovery context and becomes an error: the
/// embedding process survives, though memory the compile held may leak.
/// The code object version TESSEL_CODE_OBJECT_VERSION asks for (4, 5 or
/// 6), else the default; an error for any other value.
static llvm::Expected<unsigned> getRequestedCodeObjectVersion() {
  const char *text = std::getenv("TESSEL_CODE_OBJECT_VERSION");
  if (!text || !*text)
    return kDefaultCodeObjectVersion;
  unsigned version = 0;
  if (llvm::StringRef(text).getAsInteger(10, version) ||
      !isSupportedCodeObjectVersion(version))
    return llvm::createStringError(
        llvm::Twine("TESSEL_CODE_OBJECT_VERSION must be 4, 5 or 6, not '") +
        text + "'");
  return version;
}

template <typename Input>
static TesselModule *compileInput(TesselCompiler *compiler, const Input &input,
                                  const char *chip) {
  CompileOptions options;
  options.chip = chip;
  llvm::Expected<unsigned> version = getRequestedCodeObjectVersion();
  if (!version) {
    setError(version.takeError());
    return nullptr;
  }
  options.codeObjectVersion = *version;
  std::optional<llvm::Expected<std::shared_ptr<const CompiledModule>>> compiled;
  static std::once_flag enableRecovery;
  std::call_once(enableRecovery, [] { llvm::CrashRecoveryContext::Enable(); });
  llvm::CrashRecoveryContext recovery;
  bool survived = recovery.RunSafely(
      [&] { compiled.emplace(compiler->compiler->compile(input, options)); });
  if (!survived) {
    setError("the compiler crashed on this input (caught; please report "
             "the input): signal or error code " +
             llvm::Twine(recovery.RetCode));
    return nullptr;
  }
  if (!*compiled) {
    setError(compiled->takeError());
    return nullptr;
  }
  auto *module = new TesselModule();
  module->compiled = std::move(**compiled);
  liveModules().add(module);
  return module;
}

TesselModule *tesselCompile(TesselCompiler *compiler, const char *ir,
                            const char *chip) {
  if (!checkCompiler(compiler, "tesselCompile"))
    return nullptr;
  if (!ir || !chip) {
    setError("tesselCompile: ir and chip must not be NULL");
    return nullptr;
  }
  return compileInput(compiler, llvm::StringRef(ir), chip);
}

static std::string orDefault(const char *text, const std::string &fallback) {
  return text ? std::string(text) : fallback;
}

/// "a,b" -> {"a", "b"}; NULL or "" -> {}.
static std::vector<std::string> splitNames(const char *text) {
  std::vector<std::string> names;
  llvm::SmallVector<llvm::StringRef> parts;
  llvm::StringRef(text ? text : "").split(parts, ',', -1, false);
  for (llvm::StringRef part : parts)
    names.push_back(part.trim().str());
  return names;
}

static MatmulProblem toProblem(const TesselMatmulProblem &c) {
  MatmulProblem problem;
  problem.name = orDefault(c.name, problem.name);
  problem.m = c.m;
  problem.n = c.n;
  problem.k = c.k;
  problem.batch = c.batch;
  problem.aType = orDefault(c.a_type, problem.aType);
  problem.bType = orDefault(c.b_type, problem.bType);
  problem.cType = orDefault(c.c_type, problem.cType);
  problem.transposeA = c.transpose_a;
  problem.transposeB = c.transpose_b;
  problem.bias = orDefault(c.bias, problem.bias);
  problem.residual = c.residual;
  problem.activation = orDefault(c.activation, problem.activation);
  problem.alpha = c.alpha;
  problem.scaleA = orDefault(c.scale_a, problem.scaleA);
  problem.scaleB = orDefault(c.scale_b, problem.scaleB);
  problem.dynamic = splitNames(c.dynamic);
  problem.config = orDefault(c.config, problem.config);
  return problem;
}

static AttentionProblem toProblem(const TesselAttentionProblem &c) {
  AttentionProblem problem;
  problem.name = orDefault(c.name, problem.name);
  problem.batch = c.batch;
  problem.heads = c.heads;
  problem.kvHeads = c.kv_heads;
  problem.seqQ = c.seq_q;
  problem.seqKV = c.seq_kv;
  problem.headDim = c.head_dim;
  problem.type = orDefault(c.type, problem.type);
  problem.causal = c.causal;
  if (c.has_scale)
    problem.scale = c.scale;
  problem.lse = c.lse;
  if (c.has_window)
    problem.window = {c.window_left, c.window_right};
  problem.sinks = c.sinks;
  problem.headDimV = c.head_dim_v;
  problem.descale = c.descale;
  problem.outType = orDefault(c.out_type, problem.outType);
  problem.backward = c.backward;
  problem.varlen = c.varlen;
  problem.pageSize = c.page_size;
  problem.dynamic = splitNames(c.dynamic);
  problem.config = orDefault(c.config, problem.config);
  return problem;
}

template <typename CProblem>
static TesselModule *compileProblem(TesselCompiler *compiler,
                                    const CProblem *problem, const char *chip,
                                    const char *function) {
  if (!checkCompiler(compiler, function))
    return nullptr;
  if (!problem || !chip) {
    setError(llvm::Twine(function) + ": problem and chip must not be NULL");
    return nullptr;
  }
  return compileInput(compiler, toProblem(*problem), chip);
}

TesselModule *tesselCompileMatmul(TesselCompiler *compiler,
                                  const TesselMatmulProblem *problem,
                                  const char *chip) {
  return compileProblem(compiler, problem, chip, "tesselCompileMatmul");
}

TesselModule *tesselCompileAttention(TesselCompiler *compiler,
                                     const TesselAttentionProblem *problem,
                                     const char *chip) {
  return compileProblem(compiler, problem, chip, "tesselCompileAttention");
}

template <typename CProblem> static char *problemIR(const CProblem *problem) {
  if (!problem) {
    setError("problem must not be NULL");
    return nullptr;
  }
  llvm::Expected<std::string> ir = printProblem(toProblem(*problem));
  if (!ir) {
    setError(ir.takeError());
    return nullptr;
  }
  return strdup(ir->c_str());
}

char *tesselMatmulIR(const TesselMatmulProblem *problem) {
  return problemIR(problem);
}

char *tesselAttentionIR(const TesselAttentionProblem *problem) {
  return problemIR(problem);
}

void tesselFreeString(char *text) { free(text); }

//===----------------------------------------------------------------------===//
// Modules
//===----------------------------------------------------------------------===//

void tesselModuleDestroy(TesselModule *module) {
  if (!module)
    return;
  if (!liveModules().remove(module)) {
    checkModule(module, "tesselModuleDestroy");
    return;
  }
  delete module;
}

const void *tesselModuleGetCodeObject(const TesselModule *module,
                                      size_t *size) {
  if (size)
    *size = 0;
  if (!checkModule(module, "tesselModuleGetCodeObject"))
    return nullptr;
  if (!size) {
    setError("tesselModuleGetCodeObject: size must not be NULL");
    return nullptr;
  }
  *size = module->compiled->hsaco.size();
  return module->compiled->hsaco.data();
}

const char *tesselModuleGetAssembly(TesselModule *module) {
  if (!checkModule(module, "tesselModuleGetAssembly"))
    return nullptr;
  std::lock_guard<std::mutex> lock(module->assemblyMutex);
  if (!module->assembly) {
    llvm::Expected<std::string> isa = generateAssembly(*module->compiled);
    if (!isa) {
      setError(isa.takeError());
      return nullptr;
    }
    module->assembly = std::move(*isa);
  }
  return module->assembly->c_str();
}

const char *tesselModuleGetReport(const TesselModule *module) {
  if (!checkModule(module, "tesselModuleGetReport"))
    return nullptr;
  return module->compiled->reportJSON.c_str();
}

size_t tesselModuleGetNumKernels(const TesselModule *module) {
  if (!checkModule(module, "tesselModuleGetNumKernels"))
    return 0;
  return module->compiled->kernels.size();
}

static const CompiledKernel *kernelAt(const TesselModule *module, size_t index,
                                      const char *function) {
  if (!checkModule(module, function))
    return nullptr;
  const std::vector<CompiledKernel> &kernels = module->compiled->kernels;
  if (index < kernels.size())
    return &kernels[index];
  setError(llvm::formatv("{0}: kernel index {1} is out of range (the module "
                         "has {2})",
                         function, index, kernels.size()));
  return nullptr;
}

const char *tesselModuleGetKernelName(const TesselModule *module,
                                      size_t index) {
  const CompiledKernel *kernel =
      kernelAt(module, index, "tesselModuleGetKernelName");
  return kernel ? kernel->name.c_str() : nullptr;
}

unsigned tesselModuleGetKernelBlockSize(const TesselModule *module,
                                        size_t index) {
  const CompiledKernel *kernel =
      kernelAt(module, index, "tesselModuleGetKernelBlockSize");
  return kernel ? kernel->blockSize : 0;
}

uint64_t tesselModuleGetKernelLdsBytes(const TesselModule *module,
                                       size_t index) {
  const CompiledKernel *kernel =
      kernelAt(module, index, "tesselModuleGetKernelLdsBytes");
  return kernel ? kernel->metadata.ldsBytes : 0;
}

/// The first kernel of problem `name`, whose arguments are the problem's.
static const CompiledKernel *problemKernel(const TesselModule *module,
                                           const char *name,
                                           const char *function) {
  if (!checkModule(module, function))
    return nullptr;
  if (!name) {
    setError(llvm::Twine(function) + ": name must not be NULL");
    return nullptr;
  }
  std::vector<const CompiledKernel *> sequence =
      module->compiled->launchSequence(name);
  if (sequence.empty()) {
    setError(llvm::Twine(function) + ": the module has no problem '" + name +
             "'");
    return nullptr;
  }
  return sequence.front();
}

int64_t tesselModuleGetNumArguments(const TesselModule *module,
                                    const char *name) {
  const CompiledKernel *kernel =
      problemKernel(module, name, "tesselModuleGetNumArguments");
  return kernel ? int64_t(kernel->problemArguments) : -1;
}

int tesselModuleGetArgument(const TesselModule *module, const char *name,
                            size_t index, TesselArgumentInfo *info) {
  const CompiledKernel *kernel =
      problemKernel(module, name, "tesselModuleGetArgument");
  if (!kernel)
    return 1;
  if (!info || index >= kernel->problemArguments) {
    setError(llvm::formatv("tesselModuleGetArgument: {0}",
                           info ? "argument index out of range"
                                : "info must not be NULL"));
    return 1;
  }
  const ArgumentType &type = kernel->arguments[index];
  *info = {type.isMemref,     type.elementType.c_str(),
           type.elementBytes, int32_t(type.shape.size()),
           type.shape.data(), type.strides.data(),
           type.written};
  return 0;
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

/// The HIP device of the process, opened once; null (with the reason) when
/// there is none.
static HipDevice *getHipDevice(std::string &reason) {
  static std::mutex mutex;
  // Never destroyed: unloading HIP while the process exits races its own
  // teardown.
  static HipDevice *device = nullptr;
  static std::string failure;
  static bool tried = false;
  std::lock_guard<std::mutex> lock(mutex);
  if (!tried) {
    tried = true;
    auto opened = HipDevice::open();
    if (opened)
      device = opened->release();
    else
      failure = llvm::toString(opened.takeError());
  }
  reason = failure;
  return device;
}

int tesselHipAvailable(void) {
  std::string reason;
  if (getHipDevice(reason))
    return 1;
  setError(reason);
  return 0;
}

/// Whether `*device` is one of TesselDevice's values; if not, says so for
/// `function`. Taken by address: a C caller may pass any integer, and
/// loading an enum outside its values (even to copy it) is undefined in
/// C++, so it is read as an integer.
static bool isKnownDevice(const TesselDevice *device, const char *function) {
  std::underlying_type_t<TesselDevice> kind;
  std::memcpy(&kind, device, sizeof(kind));
  if (kind == TESSEL_DEVICE_AUTO || kind == TESSEL_DEVICE_HIP ||
      kind == TESSEL_DEVICE_EMULATOR)
    return true;
  setError(llvm::Twine(function) + ": unknown device " +
           llvm::Twine(int64_t(kind)));
  return false;
}

static ProblemSizes toProblemSizes(const TesselProblemSizes *sizes) {
  ProblemSizes result;
  if (sizes)
    result = {sizes->m, sizes->n, sizes->batch, sizes->seq_q, sizes->heads};
  return result;
}

/// A scalar argument (rank TESSEL_SCALAR_RANK) by value.
static llvm::Expected<KernelArgumentValue>
describeScalar(const TesselBuffer &buffer, size_t index) {
  if (!buffer.data || (buffer.bytes != 4 && buffer.bytes != 8))
    return llvm::createStringError(llvm::formatv(
        "buffer {0}: a scalar needs data pointing to its 4 or 8 bytes (data "
        "{1}, bytes {2})",
        index, buffer.data ? "set" : "NULL", buffer.bytes));
  if (buffer.bytes == 4) {
    uint32_t bits;
    std::memcpy(&bits, buffer.data, 4);
    return KernelArgumentValue::scalar32(bits);
  }
  uint64_t bits;
  std::memcpy(&bits, buffer.data, 8);
  return KernelArgumentValue::scalar64(bits);
}

/// The host arrays (and scalars) as kernel arguments at their host
/// addresses; an error for a malformed buffer description.
static llvm::Expected<std::vector<KernelArgumentValue>>
describeBuffers(const TesselBuffer *buffers, size_t count) {
  std::vector<KernelArgumentValue> arguments;
  for (size_t i = 0; i < count; ++i) {
    const TesselBuffer &buffer = buffers[i];
    if (buffer.rank == TESSEL_SCALAR_RANK) {
      llvm::Expected<KernelArgumentValue> scalar = describeScalar(buffer, i);
      if (!scalar)
        return scalar.takeError();
      arguments.push_back(*scalar);
      continue;
    }
    if (buffer.rank < 0 || buffer.rank > TESSEL_MAX_RANK)
      return llvm::createStringError(
          llvm::formatv("buffer {0}: rank {1} is outside 0..{2}", i,
                        buffer.rank, TESSEL_MAX_RANK));
    if (buffer.rank > 0 && !buffer.shape)
      return llvm::createStringError(llvm::formatv(
          "buffer {0}: shape is NULL for rank {1}", i, buffer.rank));
    if (!buffer.data && buffer.bytes)
      return llvm::createStringError(llvm::formatv(
          "buffer {0}: data is NULL but bytes is {1}", i, buffer.bytes));
    llvm::ArrayRef<int64_t> shape(buffer.shape, size_t(buffer.rank));
    llvm::ArrayRef<int64_t> strides;
    if (buffer.strides)
      strides = llvm::ArrayRef<int64_t>(buffer.strides, size_t(buffer.rank));
    arguments.push_back(
        KernelArgumentValue::memref(buffer.data, buffer.bytes, shape, strides));
    // A rank-0 array with explicit (no) strides is still "given".
    arguments.back().stridesGiven = buffer.strides != nullptr;
  }
  return arguments;
}

static llvm::Error
runOnEmulator(TesselModule *module, const char *name, const ProblemSizes &sizes,
              llvm::ArrayRef<KernelArgumentValue> arguments) {
  std::lock_guard<std::mutex> lock(module->emulatorMutex);
  if (!module->emulator) {
    auto device = EmulatorDevice::create(*module->compiled);
    if (!device)
      return device.takeError();
    module->emulator = std::move(*device);
  }
  return runProblemOnEmulator(*module->emulator, *module->compiled, name, sizes,
                              arguments);
}

static llvm::Error runOnHip(HipDevice &device, TesselModule *module,
                            const char *name, const ProblemSizes &requested,
                            std::vector<KernelArgumentValue> arguments) {
  const CompiledModule &compiled = *module->compiled;
  // Checked on the host arrays first: what is copied and what is written.
  llvm::Expected<ProblemSizes> sizes =
      bindProblemArguments(compiled, name, arguments, requested);
  if (!sizes)
    return sizes.takeError();
  const CompiledKernel &kernel = *compiled.launchSequence(name).front();
  HipAllocations memory(device); // released when the run returns
  std::vector<KernelArgumentValue> onDevice = arguments;
  for (auto [host, placed] : llvm::zip(arguments, onDevice)) {
    if (!host.isMemref)
      continue;
    llvm::Expected<void *> address = memory.allocate(host.bytes);
    if (!address)
      return address.takeError();
    if (llvm::Error error =
            device.copyToDevice(*address, host.address, host.bytes))
      return error;
    placed.address = *address;
  }
  ProblemLauncher launcher;
  launcher.allocateWorkspace = [&](size_t bytes, bool zeroed) {
    return zeroed ? memory.allocateZeroed(bytes) : memory.allocate(bytes);
  };
  launcher.launch =
      [&](const CompiledKernel &launched, std::array<unsigned, 3> grid,
          llvm::ArrayRef<KernelArgumentValue> all) -> llvm::Error {
    return launchOnHip(device, compiled, launched, grid, all);
  };
  llvm::Error error = runProblem(compiled, name, *sizes, onDevice, launcher);
  // Only outputs come back: inputs may live in read-only memory.
  for (size_t i = 0; i < arguments.size() && !error; ++i)
    if (arguments[i].isMemref && kernel.arguments[i].written)
      error = device.copyToHost(const_cast<void *>(arguments[i].address),
                                onDevice[i].address, arguments[i].bytes);
  return error;
}

int tesselRun(TesselModule *module, const char *name,
              const TesselProblemSizes *sizes, const TesselBuffer *buffers,
              size_t count, TesselDevice device) {
  if (!checkModule(module, "tesselRun"))
    return 1;
  if (!name || (count && !buffers)) {
    setError("tesselRun: name and buffers must not be NULL");
    return 1;
  }
  if (!isKnownDevice(&device, "tesselRun"))
    return 1;
  llvm::Expected<std::vector<KernelArgumentValue>> arguments =
      describeBuffers(buffers, count);
  if (!arguments) {
    setError("tesselRun: " + llvm::toString(arguments.takeError()));
    return 1;
  }
  ProblemSizes problemSizes = toProblemSizes(sizes);
  std::string reason;
  HipDevice *hip =
      device == TESSEL_DEVICE_EMULATOR ? nullptr : getHipDevice(reason);
  if (device == TESSEL_DEVICE_HIP && !hip) {
    setError(reason);
    return 1;
  }
  if (!hip && device == TESSEL_DEVICE_AUTO) {
    static std::once_flag said;
    std::call_once(said, [&] {
      std::fprintf(stderr, "tessel: %s; running on the emulator\n",
                   reason.c_str());
    });
  }
  if (isLoggingEnabled())
    std::fprintf(stderr, "tessel: run %s on %s\n", name,
                 hip ? "hip" : "emulator");
  llvm::Error error =
      hip ? runOnHip(*hip, module, name, problemSizes, std::move(*arguments))
          : runOnEmulator(module, name, problemSizes, *arguments);
  if (error) {
    setError(std::move(error));
    return 1;
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// Device-resident runtime
//===----------------------------------------------------------------------===//

struct TesselContext {
  std::shared_ptr<DeviceRuntime> runtime;
};

// Streams and events hold their runtime: it is destroyed after them.
struct TesselStream {
  std::shared_ptr<DeviceRuntime> runtime;
  std::unique_ptr<Stream> stream;
};

struct TesselEvent {
  std::shared_ptr<DeviceRuntime> runtime;
  std::unique_ptr<Event> event;
};

static LiveHandles &liveContexts() {
  static LiveHandles *handles = new LiveHandles();
  return *handles;
}

static LiveHandles &liveStreams() {
  static LiveHandles *handles = new LiveHandles();
  return *handles;
}

static LiveHandles &liveEvents() {
  static LiveHandles *handles = new LiveHandles();
  return *handles;
}

/// Whether `handle` is live in `handles`; if not, says so for `function`.
static bool checkHandle(LiveHandles &handles, const void *handle,
                        const char *kind, const char *function) {
  if (handle && handles.contains(handle))
    return true;
  setError(llvm::Twine(function) + ": the " + kind + " handle is " +
           (handle ? "not live (destroyed, or never created)" : "NULL"));
  return false;
}

/// Reports `error` (0 on success, 1 and the message otherwise).
static int report(llvm::Error error, const char *function) {
  if (!error)
    return 0;
  setError(llvm::Twine(function) + ": " + llvm::toString(std::move(error)));
  return 1;
}

/// The stream to queue on: `stream`'s (null: the default one); false with
/// an error if it is not a live stream of `context`.
static bool resolveStream(TesselContext *context, TesselStream *stream,
                          Stream *&resolved, const char *function) {
  resolved = nullptr;
  if (!stream)
    return true;
  if (!checkHandle(liveStreams(), stream, "stream", function))
    return false;
  if (stream->runtime != context->runtime) {
    setError(llvm::Twine(function) + ": the stream belongs to another context");
    return false;
  }
  resolved = stream->stream.get();
  return true;
}

TesselContext *tesselContextCreate(TesselDevice device) {
  if (!isKnownDevice(&device, "tesselContextCreate"))
    return nullptr;
  std::string reason;
  HipDevice *hip =
      device == TESSEL_DEVICE_EMULATOR ? nullptr : getHipDevice(reason);
  if (device == TESSEL_DEVICE_HIP && !hip) {
    setError("tesselContextCreate: " + reason);
    return nullptr;
  }
  llvm::Expected<std::shared_ptr<DeviceRuntime>> runtime =
      hip ? DeviceRuntime::createHip(*hip) : DeviceRuntime::createEmulated();
  if (!runtime) {
    report(runtime.takeError(), "tesselContextCreate");
    return nullptr;
  }
  if (isLoggingEnabled())
    std::fprintf(stderr, "tessel: device context on %s\n",
                 getDeviceKindName((*runtime)->getKind()).str().c_str());
  auto *context = new TesselContext{std::move(*runtime)};
  liveContexts().add(context);
  return context;
}

void tesselContextDestroy(TesselContext *context) {
  if (!context)
    return;
  if (!liveContexts().remove(context)) {
    checkHandle(liveContexts(), context, "context", "tesselContextDestroy");
    return;
  }
  delete context;
}

int tesselContextGetDevice(const TesselContext *context) {
  if (!checkHandle(liveContexts(), context, "context",
                   "tesselContextGetDevice"))
    return -1;
  return context->runtime->getKind() == DeviceKind::Hip
             ? TESSEL_DEVICE_HIP
             : TESSEL_DEVICE_EMULATOR;
}

int tesselContextSynchronize(TesselContext *context) {
  if (!checkHandle(liveContexts(), context, "context",
                   "tesselContextSynchronize"))
    return 1;
  return report(context->runtime->synchronize(), "tesselContextSynchronize");
}

void *tesselDeviceAlloc(TesselContext *context, size_t bytes) {
  if (!checkHandle(liveContexts(), context, "context", "tesselDeviceAlloc"))
    return nullptr;
  llvm::Expected<void *> address = context->runtime->allocate(bytes);
  if (!address) {
    report(address.takeError(), "tesselDeviceAlloc");
    return nullptr;
  }
  return *address;
}

int tesselDeviceFree(TesselContext *context, void *address) {
  if (!checkHandle(liveContexts(), context, "context", "tesselDeviceFree"))
    return 1;
  return report(context->runtime->release(address), "tesselDeviceFree");
}

int tesselMemcpy(TesselContext *context, void *destination, const void *source,
                 size_t bytes, TesselCopyKind kind, TesselStream *stream) {
  Stream *target;
  if (!checkHandle(liveContexts(), context, "context", "tesselMemcpy") ||
      !resolveStream(context, stream, target, "tesselMemcpy"))
    return 1;
  std::underlying_type_t<TesselCopyKind> value;
  std::memcpy(&value, &kind, sizeof(value));
  if (value < TESSEL_COPY_HOST_TO_DEVICE ||
      value > TESSEL_COPY_DEVICE_TO_DEVICE) {
    setError("tesselMemcpy: unknown copy kind " + llvm::Twine(int64_t(value)));
    return 1;
  }
  auto direction =
      value == TESSEL_COPY_HOST_TO_DEVICE   ? CopyDirection::HostToDevice
      : value == TESSEL_COPY_DEVICE_TO_HOST ? CopyDirection::DeviceToHost
                                            : CopyDirection::DeviceToDevice;
  return report(
      context->runtime->copy(destination, source, bytes, direction, target),
      "tesselMemcpy");
}

int tesselMemset(TesselContext *context, void *destination, int value,
                 size_t bytes, TesselStream *stream) {
  Stream *target;
  if (!checkHandle(liveContexts(), context, "context", "tesselMemset") ||
      !resolveStream(context, stream, target, "tesselMemset"))
    return 1;
  return report(
      context->runtime->fill(destination, uint8_t(value), bytes, target),
      "tesselMemset");
}

/// A stream handle for `stream` (or null with the error).
static TesselStream *makeStream(TesselContext *context,
                                llvm::Expected<std::unique_ptr<Stream>> stream,
                                const char *function) {
  if (!stream) {
    report(stream.takeError(), function);
    return nullptr;
  }
  auto *handle = new TesselStream{context->runtime, std::move(*stream)};
  liveStreams().add(handle);
  return handle;
}

TesselStream *tesselStreamCreate(TesselContext *context) {
  if (!checkHandle(liveContexts(), context, "context", "tesselStreamCreate"))
    return nullptr;
  return makeStream(context, context->runtime->createStream(),
                    "tesselStreamCreate");
}

TesselStream *tesselStreamWrap(TesselContext *context, void *hipStream) {
  if (!checkHandle(liveContexts(), context, "context", "tesselStreamWrap"))
    return nullptr;
  return makeStream(context, context->runtime->wrapStream(hipStream),
                    "tesselStreamWrap");
}

int tesselStreamSynchronize(TesselStream *stream) {
  if (!checkHandle(liveStreams(), stream, "stream", "tesselStreamSynchronize"))
    return 1;
  return report(stream->stream->synchronize(), "tesselStreamSynchronize");
}

int tesselStreamWaitEvent(TesselStream *stream, TesselEvent *event) {
  if (!checkHandle(liveStreams(), stream, "stream", "tesselStreamWaitEvent") ||
      !checkHandle(liveEvents(), event, "event", "tesselStreamWaitEvent"))
    return 1;
  if (stream->runtime != event->runtime) {
    setError("tesselStreamWaitEvent: the event belongs to another context");
    return 1;
  }
  return report(stream->stream->waitFor(*event->event),
                "tesselStreamWaitEvent");
}

void tesselStreamDestroy(TesselStream *stream) {
  if (!stream)
    return;
  if (!liveStreams().remove(stream)) {
    checkHandle(liveStreams(), stream, "stream", "tesselStreamDestroy");
    return;
  }
  delete stream;
}

TesselEvent *tesselEventCreate(TesselContext *context) {
  if (!checkHandle(liveContexts(), context, "context", "tesselEventCreate"))
    return nullptr;
  llvm::Expected<std::unique_ptr<Event>> event =
      context->runtime->createEvent();
  if (!event) {
    report(event.takeError(), "tesselEventCreate");
    return nullptr;
  }
  auto *handle = new TesselEvent{context->runtime, std::move(*event)};
  liveEvents().add(handle);
  return handle;
}

int tesselEventRecord(TesselEvent *event, TesselStream *stream) {
  if (!checkHandle(liveEvents(), event, "event", "tesselEventRecord"))
    return 1;
  Stream *target = nullptr;
  if (stream) {
    if (!checkHandle(liveStreams(), stream, "stream", "tesselEventRecord"))
      return 1;
    if (stream->runtime != event->runtime) {
      setError("tesselEventRecord: the stream belongs to another context");
      return 1;
    }
    target = stream->stream.get();
  }
  Stream &recorded = target ? *target : event->runtime->getDefaultStream();
  return report(event->event->record(recorded), "tesselEventRecord");
}

int tesselEventSynchronize(TesselEvent *event) {
  if (!checkHandle(liveEvents(), event, "event", "tesselEventSynchronize"))
    return 1;
  return report(event->event->synchronize(), "tesselEventSynchronize");
}

int tesselEventQuery(TesselEvent *event) {
  if (!checkHandle(liveEvents(), event, "event", "tesselEventQuery"))
    return -1;
  llvm::Expected<bool> complete = event->event->isComplete();
  if (!complete) {
    report(complete.takeError(), "tesselEventQuery");
    return -1;
  }
  return *complete ? 1 : 0;
}

int tesselEventElapsedTime(float *milliseconds, TesselEvent *start,
                           TesselEvent *stop) {
  if (!milliseconds) {
    setError("tesselEventElapsedTime: milliseconds is NULL");
    return 1;
  }
  if (!checkHandle(liveEvents(), start, "start event",
                   "tesselEventElapsedTime") ||
      !checkHandle(liveEvents(), stop, "stop event", "tesselEventElapsedTime"))
    return 1;
  if (start->runtime != stop->runtime) {
    setError("tesselEventElapsedTime: the events belong to different "
             "contexts");
    return 1;
  }
  llvm::Expected<float> elapsed = stop->event->millisecondsSince(*start->event);
  if (!elapsed)
    return report(elapsed.takeError(), "tesselEventElapsedTime");
  *milliseconds = *elapsed;
  return 0;
}

void tesselEventDestroy(TesselEvent *event) {
  if (!event)
    return;
  if (!liveEvents().remove(event)) {
    checkHandle(liveEvents(), event, "event", "tesselEventDestroy");
    return;
  }
  delete event;
}

int tesselLaunch(TesselContext *context, TesselStream *stream,
                 TesselModule *module, const char *name,
                 const TesselProblemSizes *sizes, const TesselBuffer *buffers,
                 size_t count) {
  Stream *target;
  if (!checkHandle(liveContexts(), context, "context", "tesselLaunch") ||
      !resolveStream(context, stream, target, "tesselLaunch") ||
      !checkModule(module, "tesselLaunch"))
    return 1;
  if (!name || (count && !buffers)) {
    setError("tesselLaunch: name and buffers must not be NULL");
    return 1;
  }
  llvm::Expected<std::vector<KernelArgumentValue>> arguments =
      describeBuffers(buffers, count);
  if (!arguments)
    return report(arguments.takeError(), "tesselLaunch");
  if (isLoggingEnabled())
    std::fprintf(stderr, "tessel: launch %s on %s\n", name,
                 getDeviceKindName(context->runtime->getKind()).str().c_str());
  return report(context->runtime->launch(module->compiled, name,
                                         toProblemSizes(sizes),
                                         std::move(*arguments), target),
                "tesselLaunch");
}
