//===- RuntimeABI.h - Entry points of the emulator runtime ------*- C++ -*-===//
//
// The functions the lowered kernels call (tessel-lower-to-emulator) and the
// runtime defines (Runtime.cpp). Names and C signatures live here only.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_LIB_EMULATOR_RUNTIMEABI_H
#define TESSEL_LIB_EMULATOR_RUNTIMEABI_H

#include <cstdint>

namespace tessel::emu::abi {

// Access kinds of __tessel_emu_check: bit 0 is set for writes, bits 8+ hold
// the LLVM address space of the pointer (0 flat, 1 global, 3 LDS, ...).
inline constexpr int32_t kWriteBit = 1;
inline constexpr int32_t kAddressSpaceShift = 8;

// What __tessel_emu_division_fault reports: the LLVM operation (bits 0-1),
// whether the divisor was zero (else the division overflowed: the smallest
// signed value divided by -1), and the operands' bit width (bits 8+).
enum DivisionOp : int32_t { kSDiv = 0, kUDiv = 1, kSRem = 2, kURem = 3 };
inline constexpr int32_t kDivisionOpMask = 3;
inline constexpr int32_t kDivisorZeroBit = 4;
inline constexpr int32_t kDivisionWidthShift = 8;

// __tessel_emu_mma flags.
inline constexpr int32_t kMmaUnsignedA = 1;
inline constexpr int32_t kMmaUnsignedB = 2;

// __tessel_emu_math_f32 operations (the ROCDL transcendental approximations).
enum MathOp : int32_t {
  kExp2 = 0, // v_exp_f32: 2^x
  kLog2 = 1, // v_log_f32: log2(x)
  kSqrt = 2,
  kRcp = 3,
  kSin = 4, // v_sin_f32: sin(2 pi x)
  kCos = 5,
  kTanh = 6,
};

} // namespace tessel::emu::abi

#define TESSEL_EMU_RUNTIME_FUNCTIONS(X)                                        \
  X(workitem_id)                                                               \
  X(workgroup_id)                                                              \
  X(workgroup_dim)                                                             \
  X(grid_dim)                                                                  \
  X(wave_size)                                                                 \
  X(mbcnt)                                                                     \
  X(barrier)                                                                   \
  X(phase_barrier)                                                             \
  X(mma)                                                                       \
  X(ds_bpermute)                                                               \
  X(ds_swizzle)                                                                \
  X(permlane_swap)                                                             \
  X(ds_read_tr16_b64)                                                          \
  X(dpp)                                                                       \
  X(readlane)                                                                  \
  X(ballot)                                                                    \
  X(lds)                                                                       \
  X(check)                                                                     \
  X(check_masked)                                                              \
  X(division_fault)                                                            \
  X(make_buffer_rsrc)                                                          \
  X(buffer_load)                                                               \
  X(buffer_store)                                                              \
  X(cvt_f32_fp8)                                                               \
  X(cvt_pk_fp8_f32)                                                            \
  X(cvt_pkrtz_f16_f32)                                                         \
  X(math_f32)                                                                  \
  X(fmed3_f32)

extern "C" {
int32_t __tessel_emu_workitem_id(int32_t dim);
int32_t __tessel_emu_workgroup_id(int32_t dim);
int32_t __tessel_emu_workgroup_dim(int32_t dim);
int32_t __tessel_emu_grid_dim(int32_t dim);
int32_t __tessel_emu_wave_size();
int32_t __tessel_emu_mbcnt(int32_t high, int32_t mask, int32_t add);
// `site` indexes the module's tessel.emu.sites (source locations).
void __tessel_emu_barrier(int32_t site);
// A ping-pong loop's barrier: the waves may meet at two different ones.
void __tessel_emu_phase_barrier(int32_t site);
void __tessel_emu_mma(int32_t instr, const void *a, const void *b,
                      const void *c, void *d, int32_t flags);
int32_t __tessel_emu_ds_bpermute(int32_t address, int32_t value);
int32_t __tessel_emu_ds_swizzle(int32_t value, int32_t pattern);
void __tessel_emu_permlane_swap(int32_t old, int32_t src, int32_t rows,
                                int32_t *result);
// `loaded`: the 8 bytes the lane read at its address; `result`: 8 bytes.
void __tessel_emu_ds_read_tr16_b64(const void *loaded, void *result);
void __tessel_emu_dpp(const void *old, const void *src, void *dst,
                      int32_t bytes, int32_t ctrl, int32_t rowMask,
                      int32_t bankMask, int32_t boundCtrl);
void __tessel_emu_readlane(const void *src, void *dst, int32_t bytes,
                           int32_t lane);
int64_t __tessel_emu_ballot(int32_t predicate);
void *__tessel_emu_lds(int64_t offset);
// `alignment` is what the access assumes of `pointer` (its LLVM alignment).
void __tessel_emu_check(void *pointer, int64_t bytes, int64_t alignment,
                        int32_t kind);
void __tessel_emu_check_masked(void *pointer, int64_t elementBytes,
                               int64_t count, const uint8_t *mask,
                               int64_t alignment, int32_t kind);
// Never returns: `division` (DivisionOp and bits above) faulted at `site`.
void __tessel_emu_division_fault(int32_t division, int32_t site);
void *__tessel_emu_make_buffer_rsrc(void *base, int64_t numRecords,
                                    int32_t stride, int32_t flags);
void __tessel_emu_buffer_load(void *rsrc, int32_t offset, int32_t soffset,
                              void *dst, int32_t bytes);
void __tessel_emu_buffer_store(const void *src, void *rsrc, int32_t offset,
                               int32_t soffset, int32_t bytes);
float __tessel_emu_cvt_f32_fp8(int32_t source, int32_t byteSel, int32_t isBf8);
int32_t __tessel_emu_cvt_pk_fp8_f32(float a, float b, int32_t old,
                                    int32_t wordSel, int32_t isBf8);
// Two f16 rounded toward zero, `a` in the low half (v_cvt_pkrtz_f16_f32).
int32_t __tessel_emu_cvt_pkrtz_f16_f32(float a, float b);
float __tessel_emu_math_f32(int32_t op, float x);
float __tessel_emu_fmed3_f32(float a, float b, float c);
}

#endif // TESSEL_LIB_EMULATOR_RUNTIMEABI_H
