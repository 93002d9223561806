//===- HipRuntime.cpp - Device memory and streams through HIP -------------===//
//
// Thin: every call is the HIP call of the same name through HipDevice. The
// one piece of state is each stream's workspaces (split-K partials, arrival
// counters): reused by every launch on the stream, which runs them in
// order. Only the workspaces a kernel needs zeroed (arrival counters) are
// zeroed, on the stream, and only where the previous launch did not leave
// them zero: a launch that ran leaves its counters at zero.
//
//===----------------------------------------------------------------------===//

#include "tessel/Runtime/Compiler.h"
#include "tessel/Runtime/DeviceRuntime.h"

#include <mutex>
#include <set>
#include <utility>

using namespace tessel;

namespace {
class HipStream final : public Stream {
public:
  HipStream(HipDevice &device, void *native, bool owned)
      : device(device), native(native), owned(owned) {}
  ~HipStream() override;

  llvm::Error synchronize() override {
    return device.synchronizeStream(native);
  }
  llvm::Error waitFor(Event &event) override;

  /// Starts handing out workspaces from the first again (the previous
  /// launch's are done with by the time the next one runs). Held for a
  /// whole launch: launches on one stream from several threads take turns.
  std::unique_lock<std::mutex> beginLaunch() {
    std::unique_lock<std::mutex> lock(launchMutex);
    nextWorkspace = 0;
    return lock;
  }
  /// A workspace of `bytes`; zeroed on this stream when `zeroed` and the
  /// launch before did not leave it zero.
  llvm::Expected<void *> takeWorkspace(size_t bytes, bool zeroed);
  /// After a launch that failed part way: no workspace is known to be zero.
  void forgetZeroedWorkspaces() {
    for (Workspace &workspace : workspaces)
      workspace.leftZero = false;
  }

  HipDevice &device;
  void *native;

private:
  bool owned;
  std::mutex launchMutex;
  struct Workspace {
    void *address = nullptr;
    size_t bytes = 0;
    /// It is all zero once the queued launches ran: it was last handed out
    /// zeroed (the whole slot filled), and kernels leave such workspaces at
    /// zero.
    bool leftZero = false;
  };
  std::vector<Workspace> workspaces;
  size_t nextWorkspace = 0;
};

class HipEvent final : public Event {
public:
  HipEvent(HipDevice &device, void *native) : device(device), native(native) {}
  ~HipEvent() override { device.destroyEvent(native); }

  llvm::Error record(Stream &stream) override {
    auto *hip = dynamic_cast<HipStream *>(&stream);
    if (!hip)
      return llvm::createStringError("the stream belongs to another device");
    return device.recordEvent(native, hip->native);
  }
  llvm::Error synchronize() override { return device.synchronizeEvent(native); }
  llvm::Expected<bool> isComplete() override {
    return device.isEventComplete(native);
  }
  llvm::Expected<float> millisecondsSince(Event &start) override {
    auto *begin = dynamic_cast<HipEvent *>(&start);
    if (!begin)
      return llvm::createStringError("the event belongs to another device");
    return device.millisecondsBetween(begin->native, native);
  }

  HipDevice &device;
  void *native;
};

class HipRuntime final : public DeviceRuntime {
public:
  explicit HipRuntime(HipDevice &device)
      : device(device), defaultStream(device, nullptr, /*owned=*/false) {}

  DeviceKind getKind() const override { return DeviceKind::Hip; }
  ~HipRuntime() override;
  llvm::Expected<void *> allocate(size_t bytes) override;
  llvm::Error release(void *address) override;
  llvm::Error copy(void *destination, const void *source, size_t bytes,
                   CopyDirection direction, Stream *stream) override;
  llvm::Error fill(void *destination, uint8_t value, size_t bytes,
                   Stream *stream) override;
  Stream &getDefaultStream() override { return defaultStream; }
  llvm::Expected<std::unique_ptr<Stream>> createStream() override {
    llvm::Expected<void *> native = device.createStream();
    if (!native)
      return native.takeError();
    return std::make_unique<HipStream>(device, *native, /*owned=*/true);
  }
  llvm::Expected<std::unique_ptr<Stream>>
  wrapStream(void *nativeStream) override {
    return std::make_unique<HipStream>(device, nativeStream, /*owned=*/false);
  }
  llvm::Expected<std::unique_ptr<Event>> createEvent() override {
    llvm::Expected<void *> native = device.createEvent();
    if (!native)
      return native.takeError();
    return std::make_unique<HipEvent>(device, *native);
  }
  llvm::Error launch(std::shared_ptr<const CompiledModule> module,
                     llvm::StringRef name, const ProblemSizes &requested,
                     std::vector<KernelArgumentValue> arguments,
                     Stream *stream) override;
  llvm::Error synchronize() override { return device.synchronizeDevice(); }

private:
  llvm::Expected<HipStream *> streamOf(Stream *stream);

  HipDevice &device;
  HipStream defaultStream;
  // What allocate() returned and release() did not take back: freed with
  // the runtime.
  std::mutex allocationsMutex;
  std::set<void *> allocations;
};
} // namespace

HipRuntime::~HipRuntime() {
  // Nothing may still use the memory (hipFree waits for the device too).
  llvm::consumeError(device.synchronizeDevice());
  for (void *address : allocations)
    llvm::consumeError(device.release(address));
}

llvm::Expected<void *> HipRuntime::allocate(size_t bytes) {
  llvm::Expected<void *> address = device.allocate(std::max<size_t>(bytes, 1));
  if (address) {
    std::lock_guard<std::mutex> lock(allocationsMutex);
    allocations.insert(*address);
  }
  return address;
}

llvm::Error HipRuntime::release(void *address) {
  if (!address)
    return llvm::Error::success();
  {
    std::lock_guard<std::mutex> lock(allocationsMutex);
    allocations.erase(address);
  }
  return device.release(address);
}

HipStream::~HipStream() {
  // The queued work (a wrapped stream's too) may still use the workspaces.
  if (!workspaces.empty() || owned)
    llvm::consumeError(device.synchronizeStream(native));
  for (const Workspace &workspace : workspaces)
    llvm::consumeError(device.release(workspace.address));
  if (owned)
    device.destroyStream(native);
}

llvm::Error HipStream::waitFor(Event &event) {
  auto *hip = dynamic_cast<HipEvent *>(&event);
  if (!hip)
    return llvm::createStringError("the event belongs to another device");
  return device.streamWaitEvent(native, hip->native);
}

llvm::Expected<void *> HipStream::takeWorkspace(size_t bytes, bool zeroed) {
  if (nextWorkspace == workspaces.size())
    workspaces.emplace_back();
  Workspace &workspace = workspaces[nextWorkspace++];
  if (workspace.bytes < bytes) {
    if (workspace.address)
      if (llvm::Error error = device.release(workspace.address))
        return std::move(error);
    workspace = Workspace();
    llvm::Expected<void *> fresh = device.allocate(std::max<size_t>(bytes, 1));
    if (!fresh)
      return fresh.takeError();
    workspace.address = *fresh;
    workspace.bytes = bytes;
  }
  // The whole slot is zeroed, so a later, smaller launch finds its part
  // zero too.
  if (zeroed && !workspace.leftZero)
    if (llvm::Error error =
            device.fillAsync(workspace.address, 0, workspace.bytes, native))
      return std::move(error);
  workspace.leftZero = zeroed;
  return workspace.address;
}

llvm::Expected<HipStream *> HipRuntime::streamOf(Stream *stream) {
  if (!stream)
    return &defaultStream;
  auto *hip = dynamic_cast<HipStream *>(stream);
  if (!hip || &hip->device != &device)
    return llvm::createStringError("the stream belongs to another device");
  return hip;
}

/// hipMemcpyKind of a direction.
static int getMemcpyKind(CopyDirection direction) {
  switch (direction) {
  case CopyDirection::HostToDevice:
    return 1;
  case CopyDirection::DeviceToHost:
    return 2;
  case CopyDirection::DeviceToDevice:
    return 3;
  }
  return 4; // hipMemcpyDefault
}

llvm::Error HipRuntime::copy(void *destination, const void *source,
                             size_t bytes, CopyDirection direction,
                             Stream *stream) {
  llvm::Expected<HipStream *> target = streamOf(stream);
  if (!target)
    return target.takeError();
  if (llvm::Error error =
          device.copyAsync(destination, source, bytes, getMemcpyKind(direction),
                           (*target)->native))
    return error;
  return stream ? llvm::Error::success() : (*target)->synchronize();
}

llvm::Error HipRuntime::fill(void *destination, uint8_t value, size_t bytes,
                             Stream *stream) {
  llvm::Expected<HipStream *> target = streamOf(stream);
  if (!target)
    return target.takeError();
  if (llvm::Error error =
          device.fillAsync(destination, value, bytes, (*target)->native))
    return error;
  return stream ? llvm::Error::success() : (*target)->synchronize();
}

llvm::Error HipRuntime::launch(std::shared_ptr<const CompiledModule> module,
                               llvm::StringRef name,
                               const ProblemSizes &requested,
                               std::vector<KernelArgumentValue> arguments,
                               Stream *stream) {
  if (!module)
    return llvm::createStringError("launch of a null module");
  llvm::Expected<HipStream *> target = streamOf(stream);
  if (!target)
    return target.takeError();
  HipStream &hip = **target;
  std::unique_lock<std::mutex> turn = hip.beginLaunch();
  ProblemLauncher launcher;
  launcher.allocateWorkspace = [&](size_t bytes, bool zeroed) {
    return hip.takeWorkspace(bytes, zeroed);
  };
  launcher.launch =
      [&](const CompiledKernel &kernel, std::array<unsigned, 3> grid,
          llvm::ArrayRef<KernelArgumentValue> all) -> llvm::Error {
    return launchOnHip(device, *module, kernel, grid, all, /*wait=*/false,
                       hip.native);
  };
  // runProblem checks the arguments (bindProblemArguments) before it
  // launches anything.
  llvm::Error error = runProblem(*module, name, requested, arguments, launcher);
  if (error)
    hip.forgetZeroedWorkspaces();
  return error;
}

llvm::Expected<std::shared_ptr<DeviceRuntime>>
DeviceRuntime::createHip(HipDevice &device) {
  return std::make_shared<HipRuntime>(device);
}
