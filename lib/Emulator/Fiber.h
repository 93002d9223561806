//===- Fiber.h - Stackful fibers for the SIMT runtime -----------*- C++ -*-===//
//
// A lane of the emulator is a fiber: its own stack, switched to and from by
// the scheduler at every synchronization point. A kernel switches hundreds
// of thousands of times, so on x86-64 the switch is a few instructions that
// save the callee-saved registers (no signal-mask system call, unlike
// swapcontext); elsewhere it falls back to ucontext.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_LIB_EMULATOR_FIBER_H
#define TESSEL_LIB_EMULATOR_FIBER_H

#include <cstddef>

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

namespace tessel::emu {

struct FiberContext {
#if defined(__x86_64__)
  void *stackPointer = nullptr;
#else
  ucontext_t context;
#endif
};

/// Prepares `fiber` to run `entry` on the `bytes` of `stack` at its first
/// switch. `entry` must never return: it switches away for good instead.
void initFiber(FiberContext &fiber, char *stack, size_t bytes, void (*entry)());

/// Saves the running context in `from` and resumes `to`.
void switchFiber(FiberContext &from, FiberContext &to);

} // namespace tessel::emu

#endif // TESSEL_LIB_EMULATOR_FIBER_H
