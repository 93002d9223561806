//===- EmulatedRuntime.cpp - Device memory and streams on the emulator ----===//
//
// Device memory is a heap of host allocations the runtime tracks, filled
// with 0xff bytes when allocated (NaN in every float type) so that a kernel
// reading memory nobody wrote shows it. Each stream is a worker thread that
// runs its queue in order; events are markers in those queues.
//
//===----------------------------------------------------------------------===//

#include "tessel/Runtime/Compiler.h"
#include "tessel/Runtime/DeviceRuntime.h"

#include "llvm/Support/FormatVariadic.h"

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

using namespace tessel;

namespace {
using Clock = std::chrono::steady_clock;

/// The records of one event and how many have completed, shared with the
/// markers queued on streams (which may outlive the Event object).
struct EventState {
  std::mutex mutex;
  std::condition_variable changed;
  uint64_t recorded = 0, completed = 0;
  Clock::time_point completedAt;

  void complete(uint64_t generation) {
    std::lock_guard<std::mutex> lock(mutex);
    completed = std::max(completed, generation);
    completedAt = Clock::now();
    changed.notify_all();
  }
  void waitFor(uint64_t generation) {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return completed >= generation; });
  }
};

class EmulatedRuntime;

/// A stream: one worker thread running queued operations in order.
class EmulatedStream final : public Stream {
public:
  using Operation = std::function<llvm::Error()>;

  explicit EmulatedStream(EmulatedRuntime &runtime);
  ~EmulatedStream() override;

  /// Queues `operation`. After a failure, later operations are skipped
  /// until synchronize() reports it, except `marker`s (event records and
  /// waits), which always run so that nobody waits forever.
  void enqueue(Operation operation, bool marker = false);
  /// Waits until the queue is empty, keeping any failure.
  void drain();
  llvm::Error synchronize() override;
  llvm::Error waitFor(Event &event) override;

  EmulatedRuntime &runtime;

private:
  void work();

  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::pair<Operation, bool>> queue;
  bool busy = false, stopping = false;
  std::optional<std::string> failure;
  unsigned skipped = 0;
  std::thread worker;
};

class EmulatedEvent final : public Event {
public:
  llvm::Error record(Stream &stream) override;
  llvm::Error synchronize() override {
    uint64_t target;
    {
      std::lock_guard<std::mutex> lock(state->mutex);
      target = state->recorded;
    }
    state->waitFor(target);
    return llvm::Error::success();
  }
  llvm::Expected<bool> isComplete() override {
    std::lock_guard<std::mutex> lock(state->mutex);
    return state->completed >= state->recorded;
  }
  llvm::Expected<float> millisecondsSince(Event &start) override;

  std::shared_ptr<EventState> state = std::make_shared<EventState>();
};

/// The emulator device of one compiled module (parsed and lowered once),
/// with a lock: a module's kernels run one at a time.
struct ModuleEmulator {
  std::shared_ptr<const CompiledModule> module;
  std::unique_ptr<EmulatorDevice> device;
  std::mutex mutex;
};

class EmulatedRuntime final : public DeviceRuntime {
public:
  EmulatedRuntime() : defaultStream(std::make_unique<EmulatedStream>(*this)) {}
  ~EmulatedRuntime() override;

  DeviceKind getKind() const override { return DeviceKind::Emulator; }
  llvm::Expected<void *> allocate(size_t bytes) override;
  llvm::Error release(void *address) override;
  llvm::Error copy(void *destination, const void *source, size_t bytes,
                   CopyDirection direction, Stream *stream) override;
  llvm::Error fill(void *destination, uint8_t value, size_t bytes,
                   Stream *stream) override;
  Stream &getDefaultStream() override { return *defaultStream; }
  llvm::Expected<std::unique_ptr<Stream>> createStream() override {
    return std::make_unique<EmulatedStream>(*this);
  }
  llvm::Expected<std::unique_ptr<Stream>> wrapStream(void *) override {
    return llvm::createStringError(
        "the emulator has no native streams to wrap; create one");
  }
  llvm::Expected<std::unique_ptr<Event>> createEvent() override {
    return std::make_unique<EmulatedEvent>();
  }
  llvm::Error launch(std::shared_ptr<const CompiledModule> module,
                     llvm::StringRef name, const ProblemSizes &requested,
                     std::vector<KernelArgumentValue> arguments,
                     Stream *stream) override;
  llvm::Error synchronize() override;

  void addStream(EmulatedStream *stream) {
    std::lock_guard<std::mutex> lock(streamsMutex);
    streams.insert(stream);
  }
  void removeStream(EmulatedStream *stream) {
    std::lock_guard<std::mutex> lock(streamsMutex);
    streams.erase(stream);
  }

private:
  /// Whether [address, address + bytes) lies in one live allocation.
  bool isDeviceMemory(const void *address, size_t bytes);
  /// An error unless the range is device memory (`what` names it).
  llvm::Error checkDeviceMemory(const void *address, size_t bytes,
                                const llvm::Twine &what);
  /// `stream` as this runtime's stream (null: the default one).
  llvm::Expected<EmulatedStream *> streamOf(Stream *stream);
  /// Queues `operation` on `stream`; without one, runs it on the default
  /// stream and waits (a synchronous copy).
  llvm::Error submit(Stream *stream, EmulatedStream::Operation operation);
  /// Waits until every stream's queue is empty.
  void drainAll();
  llvm::Expected<ModuleEmulator *>
  emulatorFor(const std::shared_ptr<const CompiledModule> &module);

  std::mutex memoryMutex;
  std::map<uintptr_t, size_t> allocations; // start -> bytes
  std::mutex streamsMutex;
  std::set<EmulatedStream *> streams;
  std::mutex modulesMutex;
  std::map<const CompiledModule *, std::unique_ptr<ModuleEmulator>> modules;
  // Last, so that it is destroyed (its worker joined) first.
  std::unique_ptr<EmulatedStream> defaultStream;
};
} // namespace

//===----------------------------------------------------------------------===//
// Streams and events
//===----------------------------------------------------------------------===//

EmulatedStream::EmulatedStream(EmulatedRuntime &runtime) : runtime(runtime) {
  runtime.addStream(this);
  worker = std::thread([this] { work(); });
}

EmulatedStream::~EmulatedStream() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
    changed.notify_all();
  }
  worker.join(); // runs what is queued first, as a destroyed HIP stream does
  runtime.removeStream(this);
}

void EmulatedStream::enqueue(Operation operation, bool marker) {
  std::lock_guard<std::mutex> lock(mutex);
  queue.emplace_back(std::move(operation), marker);
  changed.notify_all();
}

void EmulatedStream::work() {
  std::unique_lock<std::mutex> lock(mutex);
  while (true) {
    changed.wait(lock, [&] { return stopping || !queue.empty(); });
    if (queue.empty())
      return; // stopping, and everything queued has run
    auto [operation, marker] = std::move(queue.front());
    queue.pop_front();
    bool skip = failure && !marker;
    busy = true;
    lock.unlock();
    std::optional<std::string> error;
    if (!skip)
      if (llvm::Error result = operation())
        error = llvm::toString(std::move(result));
    lock.lock();
    busy = false;
    skipped += skip;
    if (error && !failure)
      failure = std::move(error);
    changed.notify_all();
  }
}

void EmulatedStream::drain() {
  std::unique_lock<std::mutex> lock(mutex);
  changed.wait(lock, [&] { return queue.empty() && !busy; });
}

llvm::Error EmulatedStream::synchronize() {
  drain();
  std::lock_guard<std::mutex> lock(mutex);
  if (!failure)
    return llvm::Error::success();
  std::string message = std::move(*failure);
  if (skipped)
    message += llvm::formatv(" ({0} later operation{1} on the stream skipped)",
                             skipped, skipped == 1 ? " was" : "s were");
  failure.reset();
  skipped = 0;
  return llvm::createStringError(message);
}

static llvm::Expected<EmulatedEvent *> asEmulatedEvent(Event &event) {
  if (auto *emulated = dynamic_cast<EmulatedEvent *>(&event))
    return emulated;
  return llvm::createStringError("the event belongs to another device");
}

llvm::Error EmulatedStream::waitFor(Event &event) {
  llvm::Expected<EmulatedEvent *> emulated = asEmulatedEvent(event);
  if (!emulated)
    return emulated.takeError();
  std::shared_ptr<EventState> state = (*emulated)->state;
  uint64_t target;
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    target = state->recorded;
  }
  enqueue(
      [state, target] {
        state->waitFor(target);
        return llvm::Error::success();
      },
      /*marker=*/true);
  return llvm::Error::success();
}

llvm::Error EmulatedEvent::record(Stream &stream) {
  auto *emulated = dynamic_cast<EmulatedStream *>(&stream);
  if (!emulated)
    return llvm::createStringError("the stream belongs to another device");
  // Counted and queued under the event's lock: a waitFor on another thread
  // that sees this generation then queues behind this marker, never ahead
  // of it (the worker completes markers without the queue's lock, so the
  // two locks are never taken in the other order).
  std::shared_ptr<EventState> shared = state;
  std::lock_guard<std::mutex> lock(state->mutex);
  uint64_t generation = ++state->recorded;
  emulated->enqueue(
      [shared, generation] {
        shared->complete(generation);
        return llvm::Error::success();
      },
      /*marker=*/true);
  return llvm::Error::success();
}

llvm::Expected<float> EmulatedEvent::millisecondsSince(Event &start) {
  llvm::Expected<EmulatedEvent *> begin = asEmulatedEvent(start);
  if (!begin)
    return begin.takeError();
  auto completedAt =
      [](EventState &state) -> llvm::Expected<Clock::time_point> {
    std::lock_guard<std::mutex> lock(state.mutex);
    if (!state.recorded)
      return llvm::createStringError("an event was never recorded");
    if (state.completed < state.recorded)
      return llvm::createStringError("an event has not completed yet");
    return state.completedAt;
  };
  llvm::Expected<Clock::time_point> from = completedAt(*(*begin)->state);
  if (!from)
    return from.takeError();
  llvm::Expected<Clock::time_point> to = completedAt(*state);
  if (!to)
    return to.takeError();
  return std::chrono::duration<float, std::milli>(*to - *from).count();
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

EmulatedRuntime::~EmulatedRuntime() {
  defaultStream.reset();
  for (auto [start, bytes] : allocations)
    std::free(reinterpret_cast<void *>(start));
}

llvm::Expected<void *> EmulatedRuntime::allocate(size_t bytes) {
  constexpr size_t kAlignment = 256; // as hipMalloc's
  size_t rounded =
      (std::max<size_t>(bytes, 1) + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded < bytes)
    return llvm::createStringError("cannot allocate " + llvm::Twine(bytes) +
                                   " bytes");
  void *address = std::aligned_alloc(kAlignment, rounded);
  if (!address)
    return llvm::createStringError(llvm::formatv(
        "out of emulated device memory allocating {0} bytes", bytes));
  std::memset(address, 0xff, rounded);
  std::lock_guard<std::mutex> lock(memoryMutex);
  allocations[reinterpret_cast<uintptr_t>(address)] = bytes;
  return address;
}

llvm::Error EmulatedRuntime::release(void *address) {
  if (!address)
    return llvm::Error::success(); // as hipFree(nullptr)
  drainAll();                      // queued work may still use it
  std::lock_guard<std::mutex> lock(memoryMutex);
  auto it = allocations.find(reinterpret_cast<uintptr_t>(address));
  if (it == allocations.end())
    return llvm::createStringError(llvm::formatv(
        "release of {0}, which is not an allocation of this emulated device "
        "(freed already, or host memory)",
        address));
  std::free(address);
  allocations.erase(it);
  return llvm::Error::success();
}

bool EmulatedRuntime::isDeviceMemory(const void *address, size_t bytes) {
  auto start = reinterpret_cast<uintptr_t>(address);
  std::lock_guard<std::mutex> lock(memoryMutex);
  auto it = allocations.upper_bound(start);
  if (it == allocations.begin())
    return false;
  --it;
  return start - it->first <= it->second &&
         bytes <= it->second - (start - it->first);
}

llvm::Error EmulatedRuntime::checkDeviceMemory(const void *address,
                                               size_t bytes,
                                               const llvm::Twine &what) {
  if (bytes == 0 || isDeviceMemory(address, bytes))
    return llvm::Error::success();
  return llvm::createStringError(llvm::formatv(
      "{0}: {1} bytes at {2} are not device memory of this emulated device "
      "(host memory, released, or past the end of an allocation)",
      what.str(), bytes, address));
}

llvm::Expected<EmulatedStream *> EmulatedRuntime::streamOf(Stream *stream) {
  if (!stream)
    return defaultStream.get();
  auto *emulated = dynamic_cast<EmulatedStream *>(stream);
  if (!emulated || &emulated->runtime != this)
    return llvm::createStringError("the stream belongs to another device");
  return emulated;
}

llvm::Error EmulatedRuntime::submit(Stream *stream,
                                    EmulatedStream::Operation operation) {
  llvm::Expected<EmulatedStream *> target = streamOf(stream);
  if (!target)
    return target.takeError();
  (*target)->enqueue(std::move(operation));
  if (stream)
    return llvm::Error::success();
  return (*target)->synchronize();
}

llvm::Error EmulatedRuntime::copy(void *destination, const void *source,
                                  size_t bytes, CopyDirection direction,
                                  Stream *stream) {
  if (direction != CopyDirection::HostToDevice)
    if (llvm::Error error = checkDeviceMemory(source, bytes, "copy source"))
      return error;
  if (direction != CopyDirection::DeviceToHost)
    if (llvm::Error error =
            checkDeviceMemory(destination, bytes, "copy destination"))
      return error;
  if (bytes && (!destination || !source))
    return llvm::createStringError("copy to or from a null pointer");
  return submit(stream, [=] {
    if (bytes)
      std::memmove(destination, source, bytes);
    return llvm::Error::success();
  });
}

llvm::Error EmulatedRuntime::fill(void *destination, uint8_t value,
                                  size_t bytes, Stream *stream) {
  if (llvm::Error error =
          checkDeviceMemory(destination, bytes, "fill destination"))
    return error;
  return submit(stream, [=] {
    if (bytes)
      std::memset(destination, value, bytes);
    return llvm::Error::success();
  });
}

void EmulatedRuntime::drainAll() {
  // Under the registry's lock: a stream destroyed on another thread
  // unregisters itself (after its worker has finished) only once this is
  // done with it.
  std::lock_guard<std::mutex> lock(streamsMutex);
  for (EmulatedStream *stream : streams)
    stream->drain();
}

llvm::Error EmulatedRuntime::synchronize() {
  // Every stream's first failure, as hipDeviceSynchronize reports any.
  std::lock_guard<std::mutex> lock(streamsMutex);
  llvm::Error first = llvm::Error::success();
  for (EmulatedStream *stream : streams)
    if (llvm::Error error = stream->synchronize()) {
      if (first)
        llvm::consumeError(std::move(error));
      else
        first = std::move(error);
    }
  return first;
}

//===----------------------------------------------------------------------===//
// Launches
//===----------------------------------------------------------------------===//

llvm::Expected<ModuleEmulator *> EmulatedRuntime::emulatorFor(
    const std::shared_ptr<const CompiledModule> &module) {
  std::lock_guard<std::mutex> lock(modulesMutex);
  std::unique_ptr<ModuleEmulator> &entry = modules[module.get()];
  if (!entry) {
    llvm::Expected<std::unique_ptr<EmulatorDevice>> device =
        EmulatorDevice::create(*module);
    if (!device) {
      modules.erase(module.get());
      return device.takeError();
    }
    entry = std::make_unique<ModuleEmulator>();
    entry->module = module; // keeps the key's address from being reused
    entry->device = std::move(*device);
  }
  return entry.get();
}

llvm::Error
EmulatedRuntime::launch(std::shared_ptr<const CompiledModule> module,
                        llvm::StringRef name, const ProblemSizes &requested,
                        std::vector<KernelArgumentValue> arguments,
                        Stream *stream) {
  if (!module)
    return llvm::createStringError("launch of a null module");
  llvm::Expected<EmulatedStream *> target = streamOf(stream);
  if (!target)
    return target.takeError();
  llvm::Expected<ProblemSizes> sizes =
      bindProblemArguments(*module, name, arguments, requested);
  if (!sizes)
    return sizes.takeError();
  for (auto [index, argument] : llvm::enumerate(arguments))
    if (argument.isMemref)
      if (llvm::Error error = checkDeviceMemory(
              argument.address, argument.bytes,
              "problem '" + name + "', argument " + llvm::Twine(index)))
        return error;
  llvm::Expected<ModuleEmulator *> emulator = emulatorFor(module);
  if (!emulator)
    return emulator.takeError();
  (*target)->enqueue([emulator = *emulator, name = name.str(), sizes = *sizes,
                      arguments = std::move(arguments)] {
    std::lock_guard<std::mutex> lock(emulator->mutex);
    return runProblemOnEmulator(*emulator->device, *emulator->module, name,
                                sizes, arguments);
  });
  return llvm::Error::success();
}

llvm::Expected<std::shared_ptr<DeviceRuntime>> DeviceRuntime::createEmulated() {
  return std::make_shared<EmulatedRuntime>();
}
