//===- Device.h - Launching compiled kernels through HIP --------*- C++ -*-===//
//
// The HIP runtime is found at run time with dlopen (ROCm 6, then ROCm 5):
// building Tessel needs neither a GPU nor HIP headers. Kernel arguments are
// packed into the kernarg segment exactly as the code object's metadata
// lays it out, which is what the unit tests check without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_RUNTIME_DEVICE_H
#define TESSEL_RUNTIME_DEVICE_H

#include "tessel/Target/KernelMetadata.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tessel {
struct CompiledKernel;
struct CompiledModule;
struct ProblemSizes;

/// One argument of a kernel function as the caller sees it: a memref (a
/// device address with its shape and strides in elements) or a scalar of 4
/// or 8 bytes. Without strides a memref is dense: row-major for a direct
/// launch, in the order of the kernel's layout for runProblem.
struct KernelArgumentValue {
  static KernelArgumentValue memref(const void *address, size_t bytes,
                                    llvm::ArrayRef<int64_t> shape,
                                    llvm::ArrayRef<int64_t> strides = {},
                                    int64_t offset = 0);
  static KernelArgumentValue scalar32(uint32_t bits);
  static KernelArgumentValue scalar64(uint64_t bits);

  bool isMemref = false;
  const void *address = nullptr;
  size_t bytes = 0; // the buffer's size, for bounds checks
  llvm::SmallVector<int64_t, 4> shape, strides;
  bool stridesGiven = false; // else strides are the row-major default
  int64_t offset = 0;
  unsigned scalarBytes = 0;
  uint64_t scalarBits = 0;
};

/// The kernarg segment of `kernel` for `arguments`: each memref expands as
/// the LLVM lowering does (allocated and aligned pointer, offset, sizes,
/// strides), and every piece goes to the offset and size the metadata
/// gives. Hidden arguments stay zero. Fails, naming the argument, when the
/// pieces do not match the metadata.
llvm::Expected<std::vector<char>>
packKernelArguments(const KernelMetadata &kernel,
                    llvm::ArrayRef<KernelArgumentValue> arguments);

/// A GPU reached through libamdhip64.so.
class HipDevice {
public:
  /// Loads the HIP runtime and selects device 0. Fails with a one-line
  /// reason when the library or a GPU is missing.
  static llvm::Expected<std::unique_ptr<HipDevice>> open();
  ~HipDevice();

  llvm::Expected<void *> allocate(size_t bytes);
  llvm::Error release(void *address);
  llvm::Error copyToDevice(void *device, const void *host, size_t bytes);
  llvm::Error copyToHost(void *host, const void *device, size_t bytes);

  /// Loads `hsaco` (once per distinct code object, kept loaded for the
  /// device's lifetime) and launches `kernel` with the packed `kernargs` on
  /// `stream` (a hipStream_t; null: the null stream), then waits for the
  /// device unless `wait` is false (launches on a stream run in order).
  llvm::Error launch(llvm::ArrayRef<char> hsaco, llvm::StringRef kernel,
                     std::array<unsigned, 3> grid,
                     std::array<unsigned, 3> block,
                     llvm::ArrayRef<char> kernargs, bool wait = true,
                     void *stream = nullptr);

  /// Streams and events (hipStream_t, hipEvent_t as opaque handles) and
  /// the asynchronous copies of the device-resident runtime.
  llvm::Expected<void *> createStream();
  void destroyStream(void *stream);
  llvm::Error synchronizeStream(void *stream);
  llvm::Error synchronizeDevice();
  /// hipMemcpyAsync with hipMemcpyKind `kind` (1 host to device, 2 device
  /// to host, 3 device to device).
  llvm::Error copyAsync(void *destination, const void *source, size_t bytes,
                        int kind, void *stream);
  llvm::Error fillAsync(void *destination, uint8_t value, size_t bytes,
                        void *stream);
  llvm::Expected<void *> createEvent();
  void destroyEvent(void *event);
  llvm::Error recordEvent(void *event, void *stream);
  llvm::Error synchronizeEvent(void *event);
  llvm::Expected<bool> isEventComplete(void *event);
  llvm::Expected<float> millisecondsBetween(void *start, void *stop);
  llvm::Error streamWaitEvent(void *stream, void *event);

  /// Mean seconds of one call of `enqueue` (which queues launches without
  /// waiting for them), timed with HIP events around `repetitions` calls
  /// after one untimed warm-up call.
  llvm::Expected<double> timeOnDevice(llvm::function_ref<llvm::Error()> enqueue,
                                      unsigned repetitions);

  struct Api;

private:
  HipDevice() = default;
  llvm::Error check(int status, llvm::StringRef what);

  void *library = nullptr;
  std::unique_ptr<Api> api;
  /// Loaded code objects by content (xxh3 and size), loaded once each.
  std::map<std::pair<uint64_t, size_t>, void *> modules;
  std::mutex modulesMutex;
};

/// The emulator as a device: runs a compiled module's kernels on the CPU,
/// lane for lane, from the module's LLVM/ROCDL form. Device addresses are
/// host addresses; every memref argument is bounds-checked.
class EmulatorDevice {
public:
  static llvm::Expected<std::unique_ptr<EmulatorDevice>>
  create(const CompiledModule &module);
  ~EmulatorDevice();

  llvm::Error launch(llvm::StringRef kernel, std::array<unsigned, 3> grid,
                     std::array<unsigned, 3> block,
                     llvm::ArrayRef<KernelArgumentValue> arguments);

private:
  EmulatorDevice();
  struct State; // the MLIR context, module and emulator kept alive
  std::unique_ptr<State> state;
};

/// How a device runs a problem: where a workspace comes from and how one
/// kernel is launched.
struct ProblemLauncher {
  /// A workspace of `bytes` on the device, alive until the run ends:
  /// zero-filled when `zeroed`, of any content otherwise (the kernel writes
  /// it before it reads it).
  std::function<llvm::Expected<void *>(size_t bytes, bool zeroed)>
      allocateWorkspace;
  std::function<llvm::Error(const CompiledKernel &kernel,
                            std::array<unsigned, 3> grid,
                            llvm::ArrayRef<KernelArgumentValue> arguments)>
      launch;
};

/// Checks `arguments` (problem `name`'s own, in order) against the kernel's
/// argument types: memref or scalar, rank, static sizes and strides, sizes
/// that name the same problem dimension agreeing, buffers large enough for
/// what the kernel may touch. Fills the strides of memrefs given without
/// them (dense in the layout's order). Returns the problem's sizes, derived
/// from the arrays; nonzero fields of `requested` must agree with them.
llvm::Expected<ProblemSizes>
bindProblemArguments(const CompiledModule &module, llvm::StringRef name,
                     llvm::MutableArrayRef<KernelArgumentValue> arguments,
                     const ProblemSizes &requested);

/// Runs problem `name` of `module`: its kernel, or each stage of its plan in
/// order, over `arguments` (the problem function's own, in device memory,
/// checked and completed by bindProblemArguments with `requested`) plus the
/// workspaces the compiler added. Nothing is launched when a grid is empty
/// (a zero-size problem).
llvm::Error runProblem(const CompiledModule &module, llvm::StringRef name,
                       const ProblemSizes &requested,
                       llvm::ArrayRef<KernelArgumentValue> arguments,
                       const ProblemLauncher &launcher);

/// Device memory one run allocates through HIP, released together when the
/// run ends.
class HipAllocations {
public:
  explicit HipAllocations(HipDevice &device) : device(device) {}
  ~HipAllocations();
  HipAllocations(const HipAllocations &) = delete;
  HipAllocations &operator=(const HipAllocations &) = delete;

  /// `bytes` of device memory (at least one byte is allocated).
  llvm::Expected<void *> allocate(size_t bytes);
  /// `bytes` of device memory, zero-filled.
  llvm::Expected<void *> allocateZeroed(size_t bytes);

private:
  HipDevice &device;
  std::vector<void *> addresses;
};

/// Launches `kernel` of `module` on `device` with `arguments` (packed by the
/// kernel's metadata) on `stream` (null: the null stream); waits for the
/// device unless `wait` is false.
llvm::Error launchOnHip(HipDevice &device, const CompiledModule &module,
                        const CompiledKernel &kernel,
                        std::array<unsigned, 3> grid,
                        llvm::ArrayRef<KernelArgumentValue> arguments,
                        bool wait = true, void *stream = nullptr);

/// Mean seconds of problem `name` of `module` (its kernel, or every stage of
/// its plan) on the GPU over `repetitions` runs after a warm-up. The arrays
/// have the problem's static shapes and hold random values in [-1, 1] (small
/// integers for integer types): the clock a chip sustains depends on the
/// data, so timing on zeros would flatter every kernel.
llvm::Expected<double> timeProblemOnHip(HipDevice &device,
                                        const CompiledModule &module,
                                        llvm::StringRef name,
                                        unsigned repetitions);

/// Runs problem `name` of `module` (its kernel, or each stage of its plan)
/// on the emulator over `arguments` (the problem function's own, in
/// order); workspaces the compiler added are allocated here, those the
/// kernel needs zeroed filled with zeros and the others with all-one bytes
/// (NaN, -1), so that a kernel reading a workspace it did not write shows.
llvm::Error runProblemOnEmulator(EmulatorDevice &device,
                                 const CompiledModule &module,
                                 llvm::StringRef name,
                                 const ProblemSizes &sizes,
                                 llvm::ArrayRef<KernelArgumentValue> arguments);

} // namespace tessel

#endif // TESSEL_RUNTIME_DEVICE_H
