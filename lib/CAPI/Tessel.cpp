//===- Tessel.cpp - Tessel's C API ----------------------------------------===//

#include "tessel-c/Tessel.h"
#include "tessel/Runtime/Compiler.h"
#include "tessel/Runtime/Device.h"

#include "llvm/Support/FormatVariadic.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>

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

const char *tesselGetLastError(void) { return lastError.c_str(); }

TesselCompiler *tesselCompilerCreate(const char *cacheDirectory) {
  CacheOptions options = cacheDirectory
                             ? CacheOptions{true, std::string(cacheDirectory)}
                             : CacheOptions::fromEnvironment();
  return new TesselCompiler{std::make_unique<Compiler>(options)};
}

void tesselCompilerDestroy(TesselCompiler *compiler) { delete compiler; }

void tesselCompilerGetCacheStats(TesselCompiler *compiler,
                                 TesselCacheStats *stats) {
  CacheStats s = compiler->compiler->getCache().getStats();
  *stats = {s.memoryHits, s.diskHits, s.misses, s.corruptEntries,
            s.writeFailures};
}

/// Compiles `input` (IR text or a problem description) for `chip`.
template <typename Input>
static TesselModule *compileInput(TesselCompiler *compiler, const Input &input,
                                  const char *chip) {
  CompileOptions options;
  options.chip = chip;
  auto compiled = compiler->compiler->compile(input, options);
  if (!compiled) {
    setError(compiled.takeError());
    return nullptr;
  }
  auto *module = new TesselModule();
  module->compiled = *compiled;
  return module;
}

TesselModule *tesselCompile(TesselCompiler *compiler, const char *ir,
                            const char *chip) {
  if (!compiler || !ir || !chip) {
    setError("tesselCompile: compiler, ir and chip must not be NULL");
    return nullptr;
  }
  return compileInput(compiler, llvm::StringRef(ir), chip);
}

static std::string orDefault(const char *text, const std::string &fallback) {
  return text ? std::string(text) : fallback;
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
  problem.scale = c.scale;
  problem.lse = c.lse;
  return problem;
}

template <typename CProblem>
static TesselModule *compileProblem(TesselCompiler *compiler,
                                    const CProblem *problem, const char *chip) {
  if (!compiler || !problem || !chip) {
    setError("compiler, problem and chip must not be NULL");
    return nullptr;
  }
  return compileInput(compiler, toProblem(*problem), chip);
}

TesselModule *tesselCompileMatmul(TesselCompiler *compiler,
                                  const TesselMatmulProblem *problem,
                                  const char *chip) {
  return compileProblem(compiler, problem, chip);
}

TesselModule *tesselCompileAttention(TesselCompiler *compiler,
                                     const TesselAttentionProblem *problem,
                                     const char *chip) {
  return compileProblem(compiler, problem, chip);
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

void tesselModuleDestroy(TesselModule *module) { delete module; }

const void *tesselModuleGetCodeObject(const TesselModule *module,
                                      size_t *size) {
  *size = module->compiled->hsaco.size();
  return module->compiled->hsaco.data();
}

const char *tesselModuleGetAssembly(TesselModule *module) {
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
  return module->compiled->reportJSON.c_str();
}

size_t tesselModuleGetNumKernels(const TesselModule *module) {
  return module->compiled->kernels.size();
}

static const CompiledKernel *kernelAt(const TesselModule *module,
                                      size_t index) {
  const std::vector<CompiledKernel> &kernels = module->compiled->kernels;
  return index < kernels.size() ? &kernels[index] : nullptr;
}

const char *tesselModuleGetKernelName(const TesselModule *module,
                                      size_t index) {
  const CompiledKernel *kernel = kernelAt(module, index);
  return kernel ? kernel->name.c_str() : nullptr;
}

unsigned tesselModuleGetKernelBlockSize(const TesselModule *module,
                                        size_t index) {
  const CompiledKernel *kernel = kernelAt(module, index);
  return kernel ? kernel->blockSize : 0;
}

uint64_t tesselModuleGetKernelLdsBytes(const TesselModule *module,
                                       size_t index) {
  const CompiledKernel *kernel = kernelAt(module, index);
  return kernel ? kernel->metadata.ldsBytes : 0;
}

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

static ProblemSizes toProblemSizes(const TesselProblemSizes *sizes) {
  ProblemSizes result;
  if (sizes)
    result = {sizes->m, sizes->n, sizes->batch, sizes->seq_q, sizes->heads};
  return result;
}

static llvm::Error runOnEmulator(TesselModule *module, const char *name,
                                 const ProblemSizes &sizes,
                                 const TesselBuffer *buffers, size_t count) {
  std::lock_guard<std::mutex> lock(module->emulatorMutex);
  if (!module->emulator) {
    auto device = EmulatorDevice::create(*module->compiled);
    if (!device)
      return device.takeError();
    module->emulator = std::move(*device);
  }
  std::vector<KernelArgumentValue> arguments;
  for (size_t i = 0; i < count; ++i)
    arguments.push_back(KernelArgumentValue::memref(
        buffers[i].data, buffers[i].bytes,
        llvm::ArrayRef(buffers[i].shape, size_t(buffers[i].rank))));
  return runProblemOnEmulator(*module->emulator, *module->compiled, name, sizes,
                              arguments);
}

static llvm::Error runOnHip(HipDevice &device, TesselModule *module,
                            const char *name, const ProblemSizes &sizes,
                            const TesselBuffer *buffers, size_t count) {
  std::vector<void *> allocations;
  auto freeAll = [&] {
    for (void *address : allocations)
      device.release(address);
  };
  auto allocate = [&](size_t bytes) -> llvm::Expected<void *> {
    llvm::Expected<void *> address =
        device.allocate(std::max<size_t>(bytes, 1));
    if (address)
      allocations.push_back(*address);
    return address;
  };
  std::vector<KernelArgumentValue> arguments;
  for (size_t i = 0; i < count; ++i) {
    llvm::Expected<void *> address = allocate(buffers[i].bytes);
    if (!address) {
      freeAll();
      return address.takeError();
    }
    if (llvm::Error error =
            device.copyToDevice(*address, buffers[i].data, buffers[i].bytes)) {
      freeAll();
      return error;
    }
    arguments.push_back(KernelArgumentValue::memref(
        *address, buffers[i].bytes,
        llvm::ArrayRef(buffers[i].shape, size_t(buffers[i].rank))));
  }
  const CompiledModule &compiled = *module->compiled;
  ProblemLauncher launcher;
  launcher.allocateZeroed = [&](size_t bytes) -> llvm::Expected<void *> {
    llvm::Expected<void *> address = allocate(bytes);
    if (!address)
      return address;
    std::vector<char> zeros(bytes, 0);
    if (llvm::Error error = device.copyToDevice(*address, zeros.data(), bytes))
      return std::move(error);
    return address;
  };
  launcher.launch =
      [&](const CompiledKernel &kernel, std::array<unsigned, 3> grid,
          llvm::ArrayRef<KernelArgumentValue> all) -> llvm::Error {
    auto kernargs = packKernelArguments(kernel.metadata, all);
    if (!kernargs)
      return kernargs.takeError();
    return device.launch(compiled.hsaco, kernel.name, grid,
                         {kernel.blockSize, 1, 1}, *kernargs);
  };
  llvm::Error error = runProblem(compiled, name, sizes, arguments, launcher);
  for (size_t i = 0; i < count && !error; ++i)
    error = device.copyToHost(buffers[i].data, arguments[i].address,
                              buffers[i].bytes);
  freeAll();
  return error;
}

int tesselRun(TesselModule *module, const char *name,
              const TesselProblemSizes *sizes, const TesselBuffer *buffers,
              size_t count, TesselDevice device) {
  if (!module || !name || (count && !buffers)) {
    setError("tesselRun: module, name and buffers must not be NULL");
    return 1;
  }
  if (device != TESSEL_DEVICE_AUTO && device != TESSEL_DEVICE_HIP &&
      device != TESSEL_DEVICE_EMULATOR) {
    setError("tesselRun: unknown device " + llvm::Twine(int(device)));
    return 1;
  }
  ProblemSizes problemSizes = toProblemSizes(sizes);
  llvm::Error error = llvm::Error::success();
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
  if (hip)
    error = runOnHip(*hip, module, name, problemSizes, buffers, count);
  else
    error = runOnEmulator(module, name, problemSizes, buffers, count);
  if (error) {
    setError(std::move(error));
    return 1;
  }
  return 0;
}
