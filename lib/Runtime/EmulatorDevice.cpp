//===- EmulatorDevice.cpp - Compiled modules on the emulator --------------===//

#include "tessel/Emulator/Emulator.h"
#include "tessel/Emulator/Passes.h"
#include "tessel/InitAllDialects.h"
#include "tessel/Runtime/Compiler.h"
#include "tessel/Runtime/Device.h"
#include "tessel/Target/Chip.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <deque>

using namespace mlir;
using namespace tessel;

struct EmulatorDevice::State {
  std::unique_ptr<MLIRContext> context;
  OwningOpRef<ModuleOp> module;
  std::unique_ptr<emu::Emulator> emulator;
};

EmulatorDevice::EmulatorDevice() : state(std::make_unique<State>()) {}
EmulatorDevice::~EmulatorDevice() = default;

llvm::Expected<std::unique_ptr<EmulatorDevice>>
EmulatorDevice::create(const CompiledModule &compiled) {
  const Chip *chip = lookupChip(compiled.chip);
  if (!chip)
    return llvm::createStringError("unknown chip '" + compiled.chip + "'");
  std::unique_ptr<EmulatorDevice> device(new EmulatorDevice());
  DialectRegistry registry;
  registerAllDialects(registry);
  device->state->context =
      std::make_unique<MLIRContext>(registry, MLIRContext::Threading::DISABLED);
  device->state->context->loadAllAvailableDialects();
  std::string diagnostics;
  llvm::raw_string_ostream diagnosticStream(diagnostics);
  ScopedDiagnosticHandler handler(device->state->context.get(),
                                  [&](Diagnostic &d) {
                                    diagnosticStream << d << "\n";
                                    return success();
                                  });
  device->state->module = parseSourceString<ModuleOp>(
      compiled.emulatorIR, device->state->context.get());
  if (!device->state->module)
    return llvm::createStringError("cannot parse the module's emulator form: " +
                                   diagnostics);
  PassManager pm(device->state->context.get());
  TesselLowerToEmulatorPassOptions options;
  options.chip = chip->name.str();
  pm.addPass(createTesselLowerToEmulatorPass(options));
  if (failed(pm.run(*device->state->module)))
    return llvm::createStringError("lowering for the emulator failed: " +
                                   diagnostics);
  auto hosts = llvm::to_vector(device->state->module->getOps<ModuleOp>());
  if (hosts.size() != 1)
    return llvm::createStringError("the emulator lowering made " +
                                   llvm::Twine(hosts.size()) +
                                   " host modules; expected one");
  llvm::Expected<std::unique_ptr<emu::Emulator>> emulator =
      emu::Emulator::create(hosts.front(), *chip);
  if (!emulator)
    return emulator.takeError();
  device->state->emulator = std::move(*emulator);
  return device;
}

llvm::Error
EmulatorDevice::launch(llvm::StringRef kernel, std::array<unsigned, 3> grid,
                       std::array<unsigned, 3> block,
                       llvm::ArrayRef<KernelArgumentValue> arguments) {
  // The lowered kernel takes each piece by address: memrefs expand into
  // allocated and aligned pointers, offset, sizes and strides.
  std::deque<uint64_t> values;
  std::vector<void *> slots;
  std::vector<emu::BufferRegion> buffers;
  auto add = [&](uint64_t value) {
    slots.push_back(&values.emplace_back(value));
  };
  for (auto [index, argument] : llvm::enumerate(arguments)) {
    if (!argument.isMemref) {
      add(argument.scalarBits);
      continue;
    }
    auto address = uint64_t(reinterpret_cast<uintptr_t>(argument.address));
    add(address);
    add(address);
    add(uint64_t(argument.offset));
    for (int64_t size : argument.shape)
      add(uint64_t(size));
    for (int64_t stride : argument.strides)
      add(uint64_t(stride));
    buffers.push_back({"argument " + std::to_string(index),
                       const_cast<void *>(argument.address), argument.bytes});
  }
  emu::LaunchDims dims;
  dims.grid = grid;
  dims.block = block;
  return state->emulator->launch(kernel, dims, slots, buffers);
}

llvm::Error tessel::runProblemOnEmulator(
    EmulatorDevice &device, const CompiledModule &module, llvm::StringRef name,
    const ProblemSizes &sizes, llvm::ArrayRef<KernelArgumentValue> arguments) {
  std::deque<std::vector<char>> workspaces;
  ProblemLauncher launcher;
  launcher.allocateWorkspace = [&](size_t bytes,
                                   bool zeroed) -> llvm::Expected<void *> {
    return workspaces.emplace_back(bytes, zeroed ? 0 : char(0xff)).data();
  };
  launcher.launch = [&](const CompiledKernel &kernel,
                        std::array<unsigned, 3> grid,
                        llvm::ArrayRef<KernelArgumentValue> all) {
    return device.launch(kernel.name, grid, {kernel.blockSize, 1, 1}, all);
  };
  return runProblem(module, name, sizes, arguments, launcher);
}
