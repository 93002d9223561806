//===- Log.cpp - TESSEL_LOG -----------------------------------------------===//

#include "tessel/Support/Log.h"

#include "llvm/Support/Process.h"

#include <optional>
#include <string>

bool tessel::isLoggingEnabled() {
  static const bool enabled = [] {
    std::optional<std::string> value = llvm::sys::Process::GetEnv("TESSEL_LOG");
    return value && !value->empty() && *value != "0";
  }();
  return enabled;
}
