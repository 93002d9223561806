//===- DeviceRuntime.cpp - What the device runtimes share -----------------===//

#include "tessel/Runtime/DeviceRuntime.h"

using namespace tessel;

Stream::~Stream() = default;
Event::~Event() = default;
DeviceRuntime::~DeviceRuntime() = default;

llvm::StringRef tessel::getDeviceKindName(DeviceKind kind) {
  return kind == DeviceKind::Hip ? "hip" : "emulator";
}
