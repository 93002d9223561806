//===- Log.h - TESSEL_LOG: what the JIT does, on stderr ---------*- C++ -*-===//
//
// With TESSEL_LOG set to anything but "" or "0", the JIT writes one line per
// compile request (cache hit or compile, its time) and per run (the device)
// to stderr, each starting "tessel: ".
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_SUPPORT_LOG_H
#define TESSEL_SUPPORT_LOG_H

namespace tessel {

/// Whether TESSEL_LOG asks for the log (read once per process).
bool isLoggingEnabled();

} // namespace tessel

#endif // TESSEL_SUPPORT_LOG_H
