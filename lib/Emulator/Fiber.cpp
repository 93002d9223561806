//===- Fiber.cpp - Stackful fibers for the SIMT runtime ---------*- C++ -*-===//

#include "Fiber.h"

#include <cstdint>
#include <cstring>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/asan_interface.h>
#define TESSEL_UNPOISON_STACK(stack, bytes)                                    \
  ASAN_UNPOISON_MEMORY_REGION(stack, bytes)
#endif
#endif
#ifndef TESSEL_UNPOISON_STACK
#define TESSEL_UNPOISON_STACK(stack, bytes) ((void)(stack), (void)(bytes))
#endif

using namespace tessel::emu;

#if defined(__x86_64__)

// tesselFiberSwitch(void **save, void *load): pushes the System V
// callee-saved registers and the SSE/x87 control words on the current
// stack, stores the stack pointer to *save, loads `load` and pops the same
// frame from the other stack.
extern "C" void tesselFiberSwitch(void **save, void *load);
asm(R"(
  .text
  .globl tesselFiberSwitch
  .type tesselFiberSwitch, @function
tesselFiberSwitch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size tesselFiberSwitch, .-tesselFiberSwitch
)");

void tessel::emu::initFiber(FiberContext &fiber, char *stack, size_t bytes,
                            void (*entry)()) {
  // A lane stack may be reused after a fiber was abandoned mid-call: under
  // AddressSanitizer its frames' redzones would still be poisoned.
  TESSEL_UNPOISON_STACK(stack, bytes);
  // The first switch pops the frame built here and returns into `entry`
  // with the stack aligned as after a call (rsp = 8 mod 16).
  auto top = reinterpret_cast<uintptr_t>(stack + bytes) & ~uintptr_t(15);
  auto *slots = reinterpret_cast<uint64_t *>(top);
  *--slots = 0;                                 // entry's return address
  *--slots = reinterpret_cast<uint64_t>(entry); // popped by `ret`
  for (int i = 0; i < 6; ++i)                   // rbp, rbx, r12-r15
    *--slots = 0;
  uint32_t controls[2];
  asm volatile("stmxcsr %0" : "=m"(controls[0]));
  asm volatile("fnstcw %0" : "=m"(controls[1]));
  uint64_t packed;
  std::memcpy(&packed, controls, 8);
  *--slots = packed;
  fiber.stackPointer = slots;
}

void tessel::emu::switchFiber(FiberContext &from, FiberContext &to) {
  tesselFiberSwitch(&from.stackPointer, to.stackPointer);
}

#else

void tessel::emu::initFiber(FiberContext &fiber, char *stack, size_t bytes,
                            void (*entry)()) {
  TESSEL_UNPOISON_STACK(stack, bytes);
  getcontext(&fiber.context);
  fiber.context.uc_stack.ss_sp = stack;
  fiber.context.uc_stack.ss_size = bytes;
  fiber.context.uc_link = nullptr;
  makecontext(&fiber.context, entry, 0);
}

void tessel::emu::switchFiber(FiberContext &from, FiberContext &to) {
  swapcontext(&from.context, &to.context);
}

#endif
