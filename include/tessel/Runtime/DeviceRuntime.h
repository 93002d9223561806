//===- DeviceRuntime.h - Device memory, streams and events ------*- C++ -*-===//
//
// A device-resident runtime: buffers live in device memory, copies and
// kernel launches are queued on streams and run in order on each stream
// without waiting for the host, events mark points in a stream (to wait on
// from the host or another stream, and to time). Two implementations share
// the interface, so a program runs the same with and without a GPU:
//
//  - HIP (through the HipDevice loaded with dlopen): real device memory and
//    hipStream_t/hipEvent_t; streams of the embedding framework (torch's
//    current stream) can be wrapped.
//  - The emulator: device memory is a separate heap of host allocations
//    the runtime tracks (so a host pointer passed as a device buffer, a
//    copy past the end of an allocation or a use after release is an
//    error, not a silent success); each stream is a worker thread running
//    its queue in order, so forgetting to synchronize before reading a
//    result behaves as it would on a GPU.
//
// Errors of queued work are reported by the next synchronize of the stream
// or of the runtime. On the emulator every launch runs later, so a failed
// launch is such an error and the work queued after it on that stream is
// skipped; HIP reports a launch it refuses at once and a fault of a kernel
// at the next synchronize. The emulator's default stream is an ordinary
// in-order stream: unlike HIP's legacy null stream it does not wait for the
// other streams, so work on several streams is ordered with events.
//
// Streams and events must be destroyed before their runtime (the C API's
// handles keep their runtime alive).
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_RUNTIME_DEVICERUNTIME_H
#define TESSEL_RUNTIME_DEVICERUNTIME_H

#include "tessel/Runtime/Device.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace tessel {
struct CompiledModule;
struct ProblemSizes;

enum class DeviceKind { Hip, Emulator };

/// "hip" or "emulator": the one spelling the tools, the C API and Python
/// use.
llvm::StringRef getDeviceKindName(DeviceKind kind);

enum class CopyDirection { HostToDevice, DeviceToHost, DeviceToDevice };

class Event;

/// An in-order queue of device work.
class Stream {
public:
  virtual ~Stream();
  /// Waits for everything queued so far; returns the first error of that
  /// work (and forgets it).
  virtual llvm::Error synchronize() = 0;
  /// Work queued on this stream after this call starts only when `event`'s
  /// latest record (at the time of this call) has completed. An event never
  /// recorded is already complete.
  virtual llvm::Error waitFor(Event &event) = 0;
};

/// A point in a stream.
class Event {
public:
  virtual ~Event();
  /// Marks the current end of `stream`; the event completes when the work
  /// queued before it has run.
  virtual llvm::Error record(Stream &stream) = 0;
  /// Waits for the latest record to complete.
  virtual llvm::Error synchronize() = 0;
  /// Whether the latest record has completed (without waiting).
  virtual llvm::Expected<bool> isComplete() = 0;
  /// Milliseconds from `start` to this event, both completed.
  virtual llvm::Expected<float> millisecondsSince(Event &start) = 0;
};

class DeviceRuntime {
public:
  /// The emulator as a device (always available).
  static llvm::Expected<std::shared_ptr<DeviceRuntime>> createEmulated();
  /// The GPU `device` (which must outlive the runtime).
  static llvm::Expected<std::shared_ptr<DeviceRuntime>>
  createHip(HipDevice &device);

  virtual ~DeviceRuntime();
  virtual DeviceKind getKind() const = 0;

  /// `bytes` of device memory (256-byte aligned; zero bytes is allowed).
  virtual llvm::Expected<void *> allocate(size_t bytes) = 0;
  /// Releases memory from allocate() after all queued work has finished
  /// (as hipFree does); an error for an address it did not return.
  virtual llvm::Error release(void *address) = 0;

  /// Copies `bytes` from `source` to `destination` on `stream`; without a
  /// stream, on the default stream and waits for it (as hipMemcpy does).
  /// A host buffer given to a queued copy must stay alive until it runs.
  virtual llvm::Error copy(void *destination, const void *source, size_t bytes,
                           CopyDirection direction,
                           Stream *stream = nullptr) = 0;
  /// Sets `bytes` of device memory to `value`, like copy() for the stream.
  virtual llvm::Error fill(void *destination, uint8_t value, size_t bytes,
                           Stream *stream = nullptr) = 0;

  /// The stream work without a stream goes to.
  virtual Stream &getDefaultStream() = 0;
  virtual llvm::Expected<std::unique_ptr<Stream>> createStream() = 0;
  /// A stream the caller owns and keeps alive (a hipStream_t, e.g. the
  /// framework's current stream); HIP only.
  virtual llvm::Expected<std::unique_ptr<Stream>>
  wrapStream(void *nativeStream) = 0;
  virtual llvm::Expected<std::unique_ptr<Event>> createEvent() = 0;

  /// Queues problem `name` of `module` on `stream` (null: the default
  /// stream) over `arguments`, the problem function's own arrays in device
  /// memory, and returns without waiting. The arguments are checked against
  /// the kernel before anything is queued (bindProblemArguments with
  /// `requested`); workspaces the compiler added come from the stream.
  virtual llvm::Error launch(std::shared_ptr<const CompiledModule> module,
                             llvm::StringRef name,
                             const ProblemSizes &requested,
                             std::vector<KernelArgumentValue> arguments,
                             Stream *stream = nullptr) = 0;

  /// Waits for every stream of this runtime; returns the first error of
  /// any stream's work.
  virtual llvm::Error synchronize() = 0;
};

} // namespace tessel

#endif // TESSEL_RUNTIME_DEVICERUNTIME_H
