//===- Emulator.cpp - Run AMDGPU kernels on the CPU -------------*- C++ -*-===//

#include "tessel/Emulator/Emulator.h"
#include "Runtime.h"
#include "RuntimeABI.h"
#include "tessel/Emulator/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/TargetSelect.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>

using namespace mlir;
using namespace tessel;
using namespace tessel::emu;

//===----------------------------------------------------------------------===//
// Device library functions on the host
//===----------------------------------------------------------------------===//

// Kernels that call the ROCm device libraries (math.erf -> __ocml_erf_f32)
// get the host's libm in their place.
#define TESSEL_OCML_UNARY(X)                                                   \
  X(acos)                                                                      \
  X(acosh)                                                                     \
  X(asin)                                                                      \
  X(asinh) X(atan) X(atanh) X(cbrt) X(ceil) X(cos) X(cosh) X(erf) X(erfc)      \
      X(exp) X(exp2) X(expm1) X(fabs) X(floor) X(log) X(log10) X(log1p)        \
          X(log2) X(rint) X(round) X(sin) X(sinh) X(sqrt) X(tan) X(tanh)       \
              X(trunc)
#define TESSEL_OCML_BINARY(X) X(atan2) X(fmod) X(pow) X(fmax) X(fmin) X(hypot)

extern "C" {
#define DEFINE_UNARY(name)                                                     \
  static float ocml_##name##_f32(float x) { return std::name(x); }             \
  static double ocml_##name##_f64(double x) { return std::name(x); }
#define DEFINE_BINARY(name)                                                    \
  static float ocml_##name##_f32(float x, float y) { return std::name(x, y); } \
  static double ocml_##name##_f64(double x, double y) {                        \
    return std::name(x, y);                                                    \
  }
TESSEL_OCML_UNARY(DEFINE_UNARY)
TESSEL_OCML_BINARY(DEFINE_BINARY)
static float ocml_rsqrt_f32(float x) { return 1.0f / std::sqrt(x); }
static double ocml_rsqrt_f64(double x) { return 1.0 / std::sqrt(x); }
#undef DEFINE_UNARY
#undef DEFINE_BINARY
}

//===----------------------------------------------------------------------===//
// bf16 conversions the host backend calls out for
//===----------------------------------------------------------------------===//

// Without AVX512-BF16 the x86 backend lowers `fptrunc ... to bfloat` into
// calls to __truncsfbf2/__truncdfbf2, which Debian 12's libgcc (GCC 12) does
// not have. The emulator supplies them. The bf16 result travels in the low 16
// bits of xmm0, exactly where a float return puts its low bits, so a float
// whose bit pattern is the bf16 in its low half is the result.
static float bf16Result(uint16_t bits) {
  uint32_t word = bits;
  float carrier;
  std::memcpy(&carrier, &word, sizeof(carrier));
  return carrier;
}

/// Round to nearest even, NaNs kept quiet (as v_cvt_pk_bf16_f32 rounds).
static uint16_t floatToBf16Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return uint16_t((bits >> 16) | 0x40u);
  uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return uint16_t((bits + rounding) >> 16);
}

extern "C" {
static float tesselTruncSfBf2(float value) {
  return bf16Result(floatToBf16Bits(value));
}
static float tesselTruncDfBf2(double value) {
  // Through float rounded to odd, so that the second rounding to bf16 is the
  // correctly rounded result of the first.
  float narrowed = float(value);
  if (!std::isnan(value) && double(narrowed) != value) {
    uint32_t bits;
    std::memcpy(&bits, &narrowed, sizeof(bits));
    if (std::fabs(double(narrowed)) > std::fabs(value))
      --bits; // truncate toward zero
    bits |= 1u;
    std::memcpy(&narrowed, &bits, sizeof(bits));
  }
  return bf16Result(floatToBf16Bits(narrowed));
}
}

static llvm::orc::SymbolMap
runtimeSymbols(llvm::orc::MangleAndInterner mangle) {
  llvm::orc::SymbolMap symbols;
  auto add = [&](llvm::StringRef name, auto *function) {
    symbols[mangle(name)] = {llvm::orc::ExecutorAddr::fromPtr(function),
                             llvm::JITSymbolFlags::Exported};
  };
#define ADD_RUNTIME(name) add("__tessel_emu_" #name, &__tessel_emu_##name);
  TESSEL_EMU_RUNTIME_FUNCTIONS(ADD_RUNTIME)
#undef ADD_RUNTIME
#define ADD_OCML(name)                                                         \
  add("__ocml_" #name "_f32", &ocml_##name##_f32);                             \
  add("__ocml_" #name "_f64", &ocml_##name##_f64);
  TESSEL_OCML_UNARY(ADD_OCML)
  TESSEL_OCML_BINARY(ADD_OCML)
  ADD_OCML(rsqrt)
#undef ADD_OCML
  add("__truncsfbf2", &tesselTruncSfBf2);
  add("__truncdfbf2", &tesselTruncDfBf2);
  return symbols;
}

//===----------------------------------------------------------------------===//
// Emulator
//===----------------------------------------------------------------------===//

Emulator::Emulator(const Chip &chip) : chip(chip) {}
Emulator::~Emulator() = default;

llvm::Expected<std::unique_ptr<Emulator>> Emulator::create(ModuleOp host,
                                                           const Chip &chip) {
  static std::once_flag initializeTarget;
  std::call_once(initializeTarget, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  host->getContext()->appendDialectRegistry(registry);

  std::unique_ptr<Emulator> emulator(new Emulator(chip));
  for (auto function : host.getOps<LLVM::LLVMFuncOp>())
    if (auto lds = function->getAttrOfType<IntegerAttr>(kLdsBytesAttr))
      emulator->ldsBytes[function.getSymName()] = lds.getInt();
  if (auto sites = host->getAttrOfType<ArrayAttr>(kSitesAttr))
    for (Attribute site : sites)
      emulator->sites.push_back(cast<StringAttr>(site).str());

  ExecutionEngineOptions options;
  auto optimize = makeOptimizingTransformer(/*optLevel=*/2, /*sizeLevel=*/0,
                                            /*targetMachine=*/nullptr);
  options.transformer = optimize;
  options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Default;
  options.enableGDBNotificationListener = false;
  options.enablePerfNotificationListener = false;
  llvm::Expected<std::unique_ptr<ExecutionEngine>> engine =
      ExecutionEngine::create(host, options);
  if (!engine)
    return engine.takeError();
  (*engine)->registerSymbols(runtimeSymbols);
  emulator->engine = std::move(*engine);
  return emulator;
}

llvm::Error Emulator::launch(llvm::StringRef kernel, const LaunchDims &dims,
                             llvm::ArrayRef<void *> args,
                             llvm::ArrayRef<BufferRegion> buffers,
                             LaunchStats *stats) {
  llvm::Expected<void (*)(void **)> entry = engine->lookupPacked(kernel);
  if (!entry)
    return llvm::createStringError(
        "no kernel '" + kernel +
        "' in the emulated module: " + llvm::toString(entry.takeError()));
  LaunchStats local;
  SimtRuntime runtime(chip, kernel, *entry, args, buffers, dims,
                      getLdsBytes(kernel), sites);
  return runtime.run(stats ? *stats : local);
}
