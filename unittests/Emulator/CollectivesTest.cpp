//===- CollectivesTest.cpp - Wave collectives against references -*- C++
//-*-===//
//
// The matrix instructions are run on random operands and compared with a host
// reference that gathers the matrices with the lane formulas of
// docs/hardware.md §3.2-§3.5 (written out here, not taken from
// the catalogue) and sums in double. The random values are drawn from ranges
// where that double sum is exact, so one rounding of it is the correctly
// rounded result the emulator must produce bit for bit. The small-float
// conversions and lane exchanges are checked on known values.
//
//===----------------------------------------------------------------------===//

#include "tessel/Emulator/Collectives.h"

#include "llvm/ADT/bit.h"
#include "gtest/gtest.h"

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace tessel;
using namespace tessel::emu;

namespace {

//===----------------------------------------------------------------------===//
// Independent decoders and rounding
//===----------------------------------------------------------------------===//

/// A sign-magnitude binary float without special values: sign bit above
/// `expBits` exponent bits above `manBits` fraction bits.
double refMinifloat(uint32_t bits, int expBits, int manBits, int bias) {
  bool negative = (bits >> (expBits + manBits)) & 1;
  int exponent = (bits >> manBits) & ((1 << expBits) - 1);
  int fraction = bits & ((1 << manBits) - 1);
  double value = exponent == 0 ? std::ldexp(fraction, 1 - bias - manBits)
                               : std::ldexp(fraction + (1 << manBits),
                                            exponent - bias - manBits);
  return negative ? -value : value;
}

double refHalf(uint32_t bits) { return refMinifloat(bits, 5, 10, 15); }
double refBf16(uint32_t bits) {
  return llvm::bit_cast<float>(uint32_t(bits << 16));
}
double refFloat(uint32_t bits) { return llvm::bit_cast<float>(bits); }

/// `value` rounded to nearest even with `manBits` fraction bits and minimum
/// normal exponent `minExp` (no overflow).
double refRound(double value, int manBits, int minExp) {
  if (value == 0)
    return value;
  int exponent = std::max(std::ilogb(value), minExp);
  double quantum = std::ldexp(1.0, exponent - manBits);
  return std::nearbyint(value / quantum) * quantum;
}

/// xf32: f32 with 10 fraction bits.
double refXf32(uint32_t bits) {
  return refRound(llvm::bit_cast<float>(bits), 10, -126);
}

//===----------------------------------------------------------------------===//
// Random operands (ranges keep the double reference sums exact)
//===----------------------------------------------------------------------===//

using Rng = std::mt19937;

uint32_t uniform(Rng &rng, uint32_t lo, uint32_t hi) {
  return std::uniform_int_distribution<uint32_t>(lo, hi)(rng);
}

/// f16 with exponent in [-4, 4] and any fraction.
uint32_t randomHalf(Rng &rng) {
  return uniform(rng, 0, 1) << 15 | uniform(rng, 15 - 4, 15 + 4) << 10 |
         uniform(rng, 0, 1023);
}
/// bf16 with exponent in [-6, 6].
uint32_t randomBf16(Rng &rng) {
  return uniform(rng, 0, 1) << 15 | uniform(rng, 127 - 6, 127 + 6) << 7 |
         uniform(rng, 0, 127);
}
/// f32 with exponent in [-4, 4] and the top `fractionBits` fraction bits
/// random.
uint32_t randomFloat(Rng &rng, int fractionBits = 23) {
  uint32_t fraction = uniform(rng, 0, (1u << fractionBits) - 1)
                      << (23 - fractionBits);
  return uniform(rng, 0, 1) << 31 | uniform(rng, 127 - 4, 127 + 4) << 23 |
         fraction;
}
/// Any 8-bit code that is a number in both E4M3 flavours.
uint32_t randomFp8(Rng &rng) {
  for (;;) {
    uint32_t code = uniform(rng, 0, 255);
    if (code != 0x80 && code != 0x7f && code != 0xff)
      return code;
  }
}
uint32_t randomByte(Rng &rng) { return uniform(rng, 0, 255); }
uint32_t randomWord(Rng &rng) { return uniform(rng, 0, 0xffffffffu); }

//===----------------------------------------------------------------------===//
// The reference lane formulas (docs/hardware.md §3.2-§3.5)
//===----------------------------------------------------------------------===//

/// (lane, element) -> (row, col); {-1, -1} for an element holding nothing.
using Formula = std::function<std::pair<int, int>(int lane, int e)>;

/// CDNA §3.2: A (L % M, KPL * (L / M) + e).
Formula cdnaA(int m, int kpl) {
  return [=](int lane, int e) {
    return std::pair{lane % m, kpl * (lane / m) + e};
  };
}
/// CDNA §3.2: B (KPL * (L / N) + e, L % N).
Formula cdnaB(int n, int kpl) {
  return [=](int lane, int e) {
    return std::pair{kpl * (lane / n) + e, lane % n};
  };
}
/// CDNA §3.2 C/D rules for 16x16 and 32x32.
Formula cdnaC(int m) {
  if (m == 16)
    return [](int lane, int j) {
      return std::pair{4 * (lane / 16) + j, lane % 16};
    };
  return [](int lane, int j) {
    return std::pair{8 * (j / 4) + 4 * (lane / 32) + j % 4, lane % 32};
  };
}

enum class Ty { F32, Xf32, F16, Bf16, Fp8Fnuz, Fp8Ocp, I8, U8, I32 };

unsigned bitsOf(Ty type) {
  switch (type) {
  case Ty::F32:
  case Ty::Xf32:
  case Ty::I32:
    return 32;
  case Ty::F16:
  case Ty::Bf16:
    return 16;
  default:
    return 8;
  }
}

double refValue(uint32_t bits, Ty type) {
  switch (type) {
  case Ty::F32:
    return refFloat(bits);
  case Ty::Xf32:
    return refXf32(bits);
  case Ty::F16:
    return refHalf(bits);
  case Ty::Bf16:
    return refBf16(bits);
  case Ty::Fp8Fnuz:
    return refMinifloat(bits, 4, 3, 8);
  case Ty::Fp8Ocp:
    return refMinifloat(bits, 4, 3, 7);
  case Ty::I8:
    return int8_t(bits);
  case Ty::U8:
    return uint8_t(bits);
  case Ty::I32:
    return int32_t(bits);
  }
  return 0;
}

struct MmaSpec {
  std::string name, chip;
  unsigned waveSize;
  int m, n, k;
  int operandElements, accElements; // per lane
  Ty a, b, acc;
  Formula fa, fb, fc;
};

/// Logical matrices as raw bits, row-major.
struct MmaInputs {
  std::vector<uint32_t> a, b, c;
};

void writeLE(std::vector<uint8_t> &bytes, size_t index, unsigned bits,
             uint32_t value) {
  for (unsigned i = 0; i < bits / 8; ++i)
    bytes[index * (bits / 8) + i] = uint8_t(value >> (8 * i));
}

uint32_t readLE(const std::vector<uint8_t> &bytes, size_t index,
                unsigned bits) {
  uint32_t value = 0;
  for (unsigned i = 0; i < bits / 8; ++i)
    value |= uint32_t(bytes[index * (bits / 8) + i]) << (8 * i);
  return value;
}

/// Lane bytes of a matrix `cols` wide laid out by `formula`; elements holding
/// nothing get `filler()`.
std::vector<uint8_t> pack(const MmaSpec &spec, const Formula &formula,
                          int elements, int cols, Ty type,
                          const std::vector<uint32_t> &matrix,
                          const std::function<uint32_t()> &filler) {
  unsigned bits = bitsOf(type);
  std::vector<uint8_t> bytes(spec.waveSize * elements * bits / 8);
  for (int lane = 0; lane < int(spec.waveSize); ++lane)
    for (int e = 0; e < elements; ++e) {
      auto [row, col] = formula(lane, e);
      writeLE(bytes, lane * elements + e, bits,
              row < 0 ? filler() : matrix[row * cols + col]);
    }
  return bytes;
}

const MmaInstr *findInstr(const MmaSpec &spec) {
  const Chip *chip = lookupChip(spec.chip);
  if (!chip)
    return nullptr;
  return lookupMma(spec.name, *chip);
}

Fp8Format formatOf(const MmaSpec &spec) {
  const Chip *chip = lookupChip(spec.chip);
  return chip ? chip->fp8Format : Fp8Format::None;
}

/// The instruction's result bytes on `inputs`, or the error's message.
struct MmaRun {
  std::vector<uint8_t> c, d;
  std::string error;
};

MmaRun runMma(const MmaSpec &spec, const MmaInputs &inputs, Rng &rng,
              Fp8Format format) {
  MmaRun run;
  const MmaInstr *instr = findInstr(spec);
  if (!instr) {
    run.error = spec.name + " not found for " + spec.chip;
    return run;
  }
  EXPECT_EQ(getMmaOperandBytes(*instr, spec.waveSize),
            unsigned(spec.operandElements * bitsOf(spec.a) / 8));
  EXPECT_EQ(getMmaAccumulatorBytes(*instr, spec.waveSize),
            unsigned(spec.accElements * bitsOf(spec.acc) / 8));
  auto junk = [&] { return randomWord(rng); };
  std::vector<uint8_t> a =
      pack(spec, spec.fa, spec.operandElements, spec.k, spec.a, inputs.a, junk);
  std::vector<uint8_t> b =
      pack(spec, spec.fb, spec.operandElements, spec.n, spec.b, inputs.b, junk);
  run.c =
      pack(spec, spec.fc, spec.accElements, spec.n, spec.acc, inputs.c, junk);
  run.d.assign(run.c.size(), 0xcd);
  llvm::Error error = llvm::Error::success();
  if (spec.a == Ty::U8 || spec.b == Ty::U8) {
    MmaSignedness signedness;
    signedness.unsignedA = spec.a == Ty::U8;
    signedness.unsignedB = spec.b == Ty::U8;
    error = executeMma(*instr, spec.waveSize, format, a, b, run.c, run.d,
                       signedness);
  } else {
    error = executeMma(*instr, spec.waveSize, format, a, b, run.c, run.d);
  }
  if (error)
    run.error = llvm::toString(std::move(error));
  return run;
}

MmaInputs randomInputs(const MmaSpec &spec, Rng &rng,
                       const std::function<uint32_t(Rng &)> &operand,
                       const std::function<uint32_t(Rng &)> &accumulator) {
  MmaInputs inputs;
  for (int i = 0; i < spec.m * spec.k; ++i)
    inputs.a.push_back(operand(rng));
  for (int i = 0; i < spec.k * spec.n; ++i)
    inputs.b.push_back(operand(rng));
  for (int i = 0; i < spec.m * spec.n; ++i)
    inputs.c.push_back(accumulator(rng));
  return inputs;
}

/// D[m][n] = C[m][n] + sum_k A[m][k] B[k][n] as exact double (the inputs
/// keep it exact) or, for integers, wrapped to 32 bits.
double referenceSum(const MmaSpec &spec, const MmaInputs &inputs, int row,
                    int col, Ty aType, Ty bType) {
  double sum = refValue(inputs.c[row * spec.n + col], spec.acc);
  for (int i = 0; i < spec.k; ++i)
    sum += refValue(inputs.a[row * spec.k + i], aType) *
           refValue(inputs.b[i * spec.n + col], bType);
  return sum;
}

uint32_t expectedBits(const MmaSpec &spec, const MmaInputs &inputs, int row,
                      int col) {
  if (spec.acc == Ty::I32) {
    int64_t sum = int32_t(inputs.c[row * spec.n + col]);
    for (int i = 0; i < spec.k; ++i)
      sum += int64_t(refValue(inputs.a[row * spec.k + i], spec.a)) *
             int64_t(refValue(inputs.b[i * spec.n + col], spec.b));
    return uint32_t(uint64_t(sum));
  }
  double sum = referenceSum(spec, inputs, row, col, spec.a, spec.b);
  if (spec.acc == Ty::F32)
    return llvm::bit_cast<uint32_t>(float(sum));
  return 0; // 16-bit results are compared by value
}

/// Runs `spec` on `inputs` and compares every lane's every accumulator
/// element with the reference; elements holding nothing must keep C.
/// Returns the D bytes.
std::vector<uint8_t> checkMma(const MmaSpec &spec, const MmaInputs &inputs,
                              Rng &rng) {
  MmaRun run = runMma(spec, inputs, rng, formatOf(spec));
  EXPECT_EQ(run.error, "") << spec.name;
  if (!run.error.empty())
    return {};
  unsigned bits = bitsOf(spec.acc);
  int mismatches = 0;
  for (int lane = 0; lane < int(spec.waveSize); ++lane) {
    for (int e = 0; e < spec.accElements; ++e) {
      size_t slot = lane * spec.accElements + e;
      uint32_t got = readLE(run.d, slot, bits);
      auto [row, col] = spec.fc(lane, e);
      if (row < 0) {
        EXPECT_EQ(got, readLE(run.c, slot, bits))
            << spec.name << ": lane " << lane << " element " << e
            << " holds no result and must keep C";
        continue;
      }
      bool ok;
      std::string expected;
      if (spec.acc == Ty::F16) {
        double want = refRound(
            referenceSum(spec, inputs, row, col, spec.a, spec.b), 10, -14);
        ok = refHalf(got) == want;
        expected = std::to_string(want);
      } else {
        uint32_t want = expectedBits(spec, inputs, row, col);
        ok = got == want;
        expected = std::to_string(want);
      }
      if (!ok && ++mismatches <= 5)
        ADD_FAILURE() << spec.name << " on " << spec.chip << " wave"
                      << spec.waveSize << ": lane " << lane << " element " << e
                      << " = D[" << row << "][" << col << "] is " << got
                      << ", expected " << expected;
    }
  }
  EXPECT_EQ(mismatches, 0) << spec.name;
  return run.d;
}

MmaSpec cdnaSpec(std::string name, std::string chip, int m, int k, Ty operand,
                 Ty acc) {
  int kpl = k * m / 64;
  return {std::move(name),
          std::move(chip),
          64,
          m,
          m,
          k,
          kpl,
          m * m / 64,
          operand,
          operand,
          acc,
          cdnaA(m, kpl),
          cdnaB(m, kpl),
          cdnaC(m)};
}

/// gfx11 WMMA (§3.4): A (L % 16, e), B (e, L % 16), replicated over lane
/// groups of 16; C (2j + L/16, L % 16) in wave32, (4j + L/16, L % 16) in
/// wave64, 16-bit results in the even elements.
MmaSpec rdna3Spec(std::string name, unsigned waveSize, Ty acc,
                  Ty aType = Ty::F16, Ty bType = Ty::F16) {
  int rowsPerStep = waveSize == 32 ? 2 : 4;
  bool packedHalf = bitsOf(acc) == 16;
  int accElements = 256 / waveSize * (packedHalf ? 2 : 1);
  Formula fc = [=](int lane, int e) -> std::pair<int, int> {
    if (packedHalf && e % 2)
      return {-1, -1};
    int j = packedHalf ? e / 2 : e;
    return {rowsPerStep * j + lane / 16, lane % 16};
  };
  return {std::move(name),
          "gfx1100",
          waveSize,
          16,
          16,
          16,
          16,
          accElements,
          aType,
          bType,
          acc,
          [](int lane, int e) {
            return std::pair{lane % 16, e};
          },
          [](int lane, int e) {
            return std::pair{e, lane % 16};
          },
          fc};
}

/// gfx12 WMMA with 8-bit operands (§3.5): A (L % 16, 8 * (L / 16) + e) in
/// wave32, (L % 16, 8 * ((L / 16) % 2) + 4 * (L / 32) + e) in wave64; C as
/// for the 16-bit forms.
MmaSpec rdna4Spec8(std::string name, unsigned waveSize, Ty aType, Ty bType,
                   Ty acc) {
  Formula kOf = waveSize == 32
                    ? Formula([](int lane, int e) {
                        return std::pair{lane % 16, 8 * (lane / 16) + e};
                      })
                    : Formula([](int lane, int e) {
                        return std::pair{lane % 16, 8 * ((lane / 16) % 2) +
                                                        4 * (lane / 32) + e};
                      });
  Formula fc =
      waveSize == 32
          ? Formula([](int lane, int j) {
              return std::pair{8 * (lane / 16) + j, lane % 16};
            })
          : Formula([](int lane, int j) {
              return std::pair{8 * ((lane / 16) % 2) + 4 * (lane / 32) + j,
                               lane % 16};
            });
  int elements = 256 / waveSize;
  return {std::move(name),
          "gfx1201",
          waveSize,
          16,
          16,
          16,
          elements,
          elements,
          aType,
          bType,
          acc,
          kOf,
          [=](int lane, int e) {
            auto [n, k] = kOf(lane, e);
            return std::pair{k, n};
          },
          fc};
}

/// gfx12 WMMA with 16-bit operands (§3.5).
MmaSpec rdna4Spec(std::string name, unsigned waveSize) {
  Formula kOf =
      waveSize == 32 ? Formula([](int lane, int e) {
        return std::pair{lane % 16, 8 * (e / 4) + 4 * (lane / 16) + e % 4};
      })
                     : Formula([](int lane, int e) {
                         return std::pair{lane % 16, 4 * (lane / 16) + e};
                       });
  Formula fc =
      waveSize == 32
          ? Formula([](int lane, int j) {
              return std::pair{8 * (lane / 16) + j, lane % 16};
            })
          : Formula([](int lane, int j) {
              return std::pair{8 * ((lane / 16) % 2) + 4 * (lane / 32) + j,
                               lane % 16};
            });
  int elements = 256 / waveSize;
  return {std::move(name),
          "gfx1201",
          waveSize,
          16,
          16,
          16,
          elements,
          elements,
          Ty::F16,
          Ty::F16,
          Ty::F32,
          kOf,
          [=](int lane, int e) {
            auto [n, k] = kOf(lane, e);
            return std::pair{k, n};
          },
          fc};
}

auto floatAcc = [](Rng &rng) { return randomFloat(rng); };

//===----------------------------------------------------------------------===//
// MFMA
//===----------------------------------------------------------------------===//

TEST(CollectivesMma, MfmaF32_32x32x8F16) {
  Rng rng(1);
  MmaSpec spec =
      cdnaSpec("v_mfma_f32_32x32x8_f16", "gfx942", 32, 8, Ty::F16, Ty::F32);
  checkMma(spec, randomInputs(spec, rng, randomHalf, floatAcc), rng);
}

TEST(CollectivesMma, MfmaF32_16x16x16Bf16) {
  Rng rng(2);
  MmaSpec spec =
      cdnaSpec("v_mfma_f32_16x16x16_bf16", "gfx942", 16, 16, Ty::Bf16, Ty::F32);
  checkMma(spec, randomInputs(spec, rng, randomBf16, floatAcc), rng);
}

TEST(CollectivesMma, MfmaF32_16x16x32F16Gfx950) {
  Rng rng(3);
  MmaSpec spec =
      cdnaSpec("v_mfma_f32_16x16x32_f16", "gfx950", 16, 32, Ty::F16, Ty::F32);
  checkMma(spec, randomInputs(spec, rng, randomHalf, floatAcc), rng);
}

TEST(CollectivesMma, MfmaF32_32x32x2F32) {
  Rng rng(4);
  MmaSpec spec =
      cdnaSpec("v_mfma_f32_32x32x2_f32", "gfx942", 32, 2, Ty::F32, Ty::F32);
  checkMma(spec,
           randomInputs(
               spec, rng, [](Rng &r) { return randomFloat(r, 16); }, floatAcc),
           rng);
}

TEST(CollectivesMma, MfmaFp8FnuzOnGfx942AndOcpOnGfx950) {
  Rng rng(5);
  MmaSpec fnuz = cdnaSpec("v_mfma_f32_16x16x32_fp8_fp8", "gfx942", 16, 32,
                          Ty::Fp8Fnuz, Ty::F32);
  MmaSpec ocp = cdnaSpec("v_mfma_f32_16x16x32_fp8_fp8", "gfx950", 16, 32,
                         Ty::Fp8Ocp, Ty::F32);
  MmaInputs inputs = randomInputs(fnuz, rng, randomFp8, floatAcc);
  std::vector<uint8_t> dFnuz = checkMma(fnuz, inputs, rng);
  std::vector<uint8_t> dOcp = checkMma(ocp, inputs, rng);
  ASSERT_EQ(dFnuz.size(), dOcp.size());
  // The same bits mean different numbers: E4M3FNUZ has bias 8, E4M3FN 7, so
  // most results differ (by about a factor of 4).
  int differing = 0;
  for (size_t i = 0; i < dFnuz.size() / 4; ++i)
    differing += readLE(dFnuz, i, 32) != readLE(dOcp, i, 32);
  EXPECT_GT(differing, int(dFnuz.size() / 4) * 9 / 10);
  // One product: 1.0 x 1.0 in FNUZ (0x40) is 2.0 x 2.0 in OCP.
  MmaInputs ones{std::vector<uint32_t>(16 * 32, 0),
                 std::vector<uint32_t>(32 * 16, 0),
                 std::vector<uint32_t>(16 * 16, 0)};
  ones.a[0] = 0x40;
  ones.b[0] = 0x40;
  dFnuz = checkMma(fnuz, ones, rng);
  dOcp = checkMma(ocp, ones, rng);
  // D[0][0] is lane 0, element 0 in both.
  EXPECT_EQ(llvm::bit_cast<float>(readLE(dFnuz, 0, 32)), 1.0f);
  EXPECT_EQ(llvm::bit_cast<float>(readLE(dOcp, 0, 32)), 4.0f);
}

TEST(CollectivesMma, MfmaFp8NeedsAFormat) {
  const Chip *chip = lookupChip("gfx942");
  ASSERT_NE(chip, nullptr);
  const MmaInstr *instr = lookupMma("v_mfma_f32_16x16x32_fp8_fp8", *chip);
  ASSERT_NE(instr, nullptr);
  std::vector<uint8_t> ab(64 * 8), c(64 * 16), d(64 * 16);
  llvm::Error error = executeMma(*instr, 64, Fp8Format::None, ab, ab, c, d);
  EXPECT_TRUE(bool(error));
  llvm::consumeError(std::move(error));
}

TEST(CollectivesMma, MfmaI32_16x16x32I8) {
  Rng rng(6);
  MmaSpec spec =
      cdnaSpec("v_mfma_i32_16x16x32_i8", "gfx942", 16, 32, Ty::I8, Ty::I32);
  checkMma(spec, randomInputs(spec, rng, randomByte, randomWord), rng);
}

TEST(CollectivesMma, MfmaI32_32x32x8I8Gfx90aWraps) {
  Rng rng(7);
  MmaSpec spec =
      cdnaSpec("v_mfma_i32_32x32x8i8", "gfx90a", 32, 8, Ty::I8, Ty::I32);
  checkMma(spec, randomInputs(spec, rng, randomByte, randomWord), rng);
  // INT32_MAX + 8 * (-128 * -128) wraps around.
  MmaInputs inputs{std::vector<uint32_t>(32 * 8, 0x80),
                   std::vector<uint32_t>(8 * 32, 0x80),
                   std::vector<uint32_t>(32 * 32, 0x7fffffff)};
  std::vector<uint8_t> d = checkMma(spec, inputs, rng);
  ASSERT_FALSE(d.empty());
  EXPECT_EQ(int32_t(readLE(d, 0, 32)),
            int32_t(uint32_t(0x7fffffffu + 8u * 128u * 128u)));
  EXPECT_LT(int32_t(readLE(d, 0, 32)), 0);
}

TEST(CollectivesMma, MfmaXf32RoundsItsOperands) {
  Rng rng(8);
  MmaSpec spec =
      cdnaSpec("v_mfma_f32_16x16x8_xf32", "gfx942", 16, 8, Ty::Xf32, Ty::F32);
  MmaInputs inputs = randomInputs(
      spec, rng, [](Rng &r) { return randomFloat(r); }, floatAcc);
  std::vector<uint8_t> d = checkMma(spec, inputs, rng);
  ASSERT_FALSE(d.empty());
  // With the operands read as full f32 most results would differ.
  int differing = 0;
  for (int lane = 0; lane < 64; ++lane)
    for (int j = 0; j < 4; ++j) {
      auto [row, col] = spec.fc(lane, j);
      float unrounded =
          float(referenceSum(spec, inputs, row, col, Ty::F32, Ty::F32));
      differing +=
          readLE(d, lane * 4 + j, 32) != llvm::bit_cast<uint32_t>(unrounded);
    }
  EXPECT_GT(differing, 200);
  // A single product: 1 + 2^-11 is a tie and rounds to 1; 1 + 3 * 2^-11
  // rounds up to 1 + 2^-9.
  MmaInputs one{std::vector<uint32_t>(16 * 8, 0),
                std::vector<uint32_t>(8 * 16, 0),
                std::vector<uint32_t>(16 * 16, 0)};
  one.a[0] = llvm::bit_cast<uint32_t>(1.0f + 0x1p-11f);
  one.b[0] = llvm::bit_cast<uint32_t>(1.0f + 3 * 0x1p-11f);
  d = checkMma(spec, one, rng);
  ASSERT_FALSE(d.empty());
  EXPECT_EQ(llvm::bit_cast<float>(readLE(d, 0, 32)), 1.0f + 0x1p-9f);
}

TEST(CollectivesMma, SumIsRoundedOnce) {
  // C = 1, A[m][0] B[0][n] = 2^-24 (half an ulp of 1), A[m][1] B[1][n] =
  // 2^-70: the exact sum is just above the tie and rounds up; summing in
  // double would lose 2^-70 and round the tie down to 1.
  Rng rng(9);
  MmaSpec spec =
      cdnaSpec("v_mfma_f32_32x32x2_f32", "gfx942", 32, 2, Ty::F32, Ty::F32);
  MmaInputs inputs;
  for (int m = 0; m < 32; ++m) {
    inputs.a.push_back(llvm::bit_cast<uint32_t>(0x1p-12f));
    inputs.a.push_back(llvm::bit_cast<uint32_t>(0x1p-35f));
  }
  for (int k = 0; k < 2; ++k)
    for (int n = 0; n < 32; ++n)
      inputs.b.push_back(llvm::bit_cast<uint32_t>(k ? 0x1p-35f : 0x1p-12f));
  inputs.c.assign(32 * 32, llvm::bit_cast<uint32_t>(1.0f));
  MmaRun run = runMma(spec, inputs, rng, Fp8Format::Fnuz);
  ASSERT_EQ(run.error, "");
  for (size_t i = 0; i < run.d.size() / 4; ++i)
    ASSERT_EQ(readLE(run.d, i, 32), 0x3f800001u) << "element " << i;
}

TEST(CollectivesMma, NaNAndInfinity) {
  Rng rng(10);
  MmaSpec spec =
      cdnaSpec("v_mfma_f32_16x16x4_f32", "gfx942", 16, 4, Ty::F32, Ty::F32);
  MmaInputs inputs{std::vector<uint32_t>(16 * 4, 0),
                   std::vector<uint32_t>(4 * 16, 0),
                   std::vector<uint32_t>(16 * 16, 0)};
  uint32_t one = llvm::bit_cast<uint32_t>(1.0f);
  inputs.a[0 * 4 + 0] = llvm::bit_cast<uint32_t>(INFINITY); // A[0][0]
  inputs.b[0 * 16 + 1] = one;                               // B[0][1]
  inputs.a[1 * 4 + 1] = llvm::bit_cast<uint32_t>(INFINITY); // A[1][1]
  inputs.a[1 * 4 + 2] = llvm::bit_cast<uint32_t>(-INFINITY);
  inputs.b[1 * 16 + 2] = one;
  inputs.b[2 * 16 + 2] = one;
  MmaRun run = runMma(spec, inputs, rng, Fp8Format::Fnuz);
  ASSERT_EQ(run.error, "");
  // C 16x16: D[m][n] is lane 16 * (m / 4) + n, element m % 4.
  auto at = [&](int m, int n) {
    return llvm::bit_cast<float>(
        readLE(run.d, (16 * (m / 4) + n) * 4 + m % 4, 32));
  };
  EXPECT_TRUE(std::isnan(at(0, 0))); // inf * 0
  EXPECT_EQ(at(0, 1), INFINITY);     // inf * 1
  EXPECT_TRUE(std::isnan(at(1, 2))); // inf - inf
  EXPECT_EQ(at(2, 2), 0.0f);
}

TEST(CollectivesMma, WrongOperandSizesAreErrors) {
  const Chip *chip = lookupChip("gfx942");
  ASSERT_NE(chip, nullptr);
  const MmaInstr *instr = lookupMma("v_mfma_f32_16x16x16_f16", *chip);
  ASSERT_NE(instr, nullptr);
  std::vector<uint8_t> a(64 * 8), b(64 * 8), c(64 * 16), d(64 * 16);
  llvm::Error ok = executeMma(*instr, 64, Fp8Format::Fnuz, a, b, c, d);
  EXPECT_FALSE(bool(ok));
  llvm::consumeError(std::move(ok));
  std::vector<uint8_t> shortA(64 * 4);
  llvm::Error error = executeMma(*instr, 64, Fp8Format::Fnuz, shortA, b, c, d);
  ASSERT_TRUE(bool(error));
  EXPECT_NE(llvm::toString(std::move(error)).find("A holds 256 bytes"),
            std::string::npos);
  llvm::Error wave32 = executeMma(*instr, 32, Fp8Format::Fnuz, a, b, c, d);
  EXPECT_TRUE(bool(wave32));
  llvm::consumeError(std::move(wave32));
}

//===----------------------------------------------------------------------===//
// WMMA
//===----------------------------------------------------------------------===//

TEST(CollectivesMma, WmmaF32F16Gfx1100Wave32) {
  Rng rng(11);
  MmaSpec spec = rdna3Spec("v_wmma_f32_16x16x16_f16", 32, Ty::F32);
  checkMma(spec, randomInputs(spec, rng, randomHalf, floatAcc), rng);
}

TEST(CollectivesMma, WmmaF32F16Gfx1100Wave64) {
  Rng rng(12);
  MmaSpec spec = rdna3Spec("v_wmma_f32_16x16x16_f16", 64, Ty::F32);
  checkMma(spec, randomInputs(spec, rng, randomHalf, floatAcc), rng);
}

TEST(CollectivesMma, WmmaF32F16Gfx1201Wave32) {
  Rng rng(13);
  MmaSpec spec = rdna4Spec("v_wmma_f32_16x16x16_f16", 32);
  checkMma(spec, randomInputs(spec, rng, randomHalf, floatAcc), rng);
}

TEST(CollectivesMma, WmmaF32F16Gfx1201Wave64) {
  Rng rng(14);
  MmaSpec spec = rdna4Spec("v_wmma_f32_16x16x16_f16", 64);
  checkMma(spec, randomInputs(spec, rng, randomHalf, floatAcc), rng);
}

TEST(CollectivesMma, WmmaF16Gfx1100KeepsOddElements) {
  for (unsigned waveSize : {32u, 64u}) {
    Rng rng(15 + waveSize);
    MmaSpec spec = rdna3Spec("v_wmma_f16_16x16x16_f16", waveSize, Ty::F16);
    // checkMma compares the even elements with the reference and requires
    // the odd ones (random junk in C) to come back unchanged.
    checkMma(spec, randomInputs(spec, rng, randomHalf, randomHalf), rng);
  }
}

TEST(CollectivesMma, WmmaIu8Signedness) {
  Rng rng(17);
  // Every combination of signed and unsigned A and B, gfx11 and gfx12, both
  // wave sizes; the same bits give different results.
  std::vector<std::vector<uint8_t>> results;
  for (Ty aType : {Ty::I8, Ty::U8})
    for (Ty bType : {Ty::I8, Ty::U8})
      for (unsigned waveSize : {32u, 64u}) {
        Rng inputsRng(100 + waveSize);
        MmaSpec gfx11 = rdna3Spec("v_wmma_i32_16x16x16_iu8", waveSize, Ty::I32,
                                  aType, bType);
        MmaSpec gfx12 = rdna4Spec8("v_wmma_i32_16x16x16_iu8", waveSize, aType,
                                   bType, Ty::I32);
        MmaInputs inputs =
            randomInputs(gfx11, inputsRng, randomByte, randomWord);
        checkMma(gfx11, inputs, rng);
        std::vector<uint8_t> d = checkMma(gfx12, inputs, rng);
        if (waveSize == 32)
          results.push_back(d);
      }
  ASSERT_EQ(results.size(), 4u);
  for (size_t i = 0; i < 4; ++i)
    for (size_t j = i + 1; j < 4; ++j)
      EXPECT_NE(results[i], results[j]) << i << " vs " << j;
}

TEST(CollectivesMma, WmmaFp8Gfx1201) {
  Rng rng(18);
  for (unsigned waveSize : {32u, 64u}) {
    MmaSpec spec = rdna4Spec8("v_wmma_f32_16x16x16_fp8_fp8", waveSize,
                              Ty::Fp8Ocp, Ty::Fp8Ocp, Ty::F32);
    checkMma(spec, randomInputs(spec, rng, randomFp8, floatAcc), rng);
  }
}

TEST(CollectivesMma, WmmaGfx1100ReplicasMustAgree) {
  Rng rng(16);
  MmaSpec spec = rdna3Spec("v_wmma_f32_16x16x16_f16", 32, Ty::F32);
  const Chip *chip = lookupChip("gfx1100");
  ASSERT_NE(chip, nullptr);
  const MmaInstr *instr = lookupMma(spec.name, *chip);
  ASSERT_NE(instr, nullptr);
  MmaInputs inputs = randomInputs(spec, rng, randomHalf, floatAcc);
  auto junk = [] { return 0u; };
  std::vector<uint8_t> a = pack(spec, spec.fa, 16, 16, Ty::F16, inputs.a, junk);
  std::vector<uint8_t> b = pack(spec, spec.fb, 16, 16, Ty::F16, inputs.b, junk);
  std::vector<uint8_t> c = pack(spec, spec.fc, 8, 16, Ty::F32, inputs.c, junk);
  std::vector<uint8_t> d(c.size());
  ASSERT_FALSE(bool(executeMma(*instr, 32, Fp8Format::None, a, b, c, d)));
  // Lane 19 holds a copy of A row 3; change its element 5 (A[3][5]).
  std::vector<uint8_t> badA = a;
  writeLE(badA, 19 * 16 + 5, 16, readLE(a, 3 * 16 + 5, 16) ^ 0x0001);
  llvm::Error error = executeMma(*instr, 32, Fp8Format::None, badA, b, c, d);
  ASSERT_TRUE(bool(error));
  std::string message = llvm::toString(std::move(error));
  EXPECT_NE(message.find("A element (3, 5)"), std::string::npos) << message;
  EXPECT_NE(message.find("lane 3"), std::string::npos) << message;
  EXPECT_NE(message.find("lane 19"), std::string::npos) << message;
  // Same for B in wave64, where lanes 2, 18, 34 and 50 hold column 2.
  MmaSpec spec64 = rdna3Spec("v_wmma_f32_16x16x16_f16", 64, Ty::F32);
  std::vector<uint8_t> a64 =
      pack(spec64, spec64.fa, 16, 16, Ty::F16, inputs.a, junk);
  std::vector<uint8_t> b64 =
      pack(spec64, spec64.fb, 16, 16, Ty::F16, inputs.b, junk);
  std::vector<uint8_t> c64 =
      pack(spec64, spec64.fc, 4, 16, Ty::F32, inputs.c, junk);
  std::vector<uint8_t> d64(c64.size());
  writeLE(b64, 50 * 16 + 7, 16, readLE(b64, 50 * 16 + 7, 16) ^ 0x8000);
  llvm::Error errorB =
      executeMma(*instr, 64, Fp8Format::None, a64, b64, c64, d64);
  ASSERT_TRUE(bool(errorB));
  message = llvm::toString(std::move(errorB));
  EXPECT_NE(message.find("B element (7, 2)"), std::string::npos) << message;
  EXPECT_NE(message.find("lane 50"), std::string::npos) << message;
}

//===----------------------------------------------------------------------===//
// 8-bit floats
//===----------------------------------------------------------------------===//

constexpr Fp8Kind kAllFp8[] = {Fp8Kind::E4M3Fnuz, Fp8Kind::E5M2Fnuz,
                               Fp8Kind::E4M3Fn, Fp8Kind::E5M2};

TEST(CollectivesFp8, KnownEncodings) {
  // 1.0: the exponent field equals the bias.
  EXPECT_EQ(decodeFp8(0x40, Fp8Kind::E4M3Fnuz), 1.0f); // 0 1000 000
  EXPECT_EQ(decodeFp8(0x38, Fp8Kind::E4M3Fn), 1.0f);   // 0 0111 000
  EXPECT_EQ(decodeFp8(0x3c, Fp8Kind::E5M2), 1.0f);     // 0 01111 00
  EXPECT_EQ(decodeFp8(0x40, Fp8Kind::E5M2Fnuz), 1.0f); // 0 10000 00
  EXPECT_EQ(encodeFp8(1.0f, Fp8Kind::E4M3Fnuz, false), 0x40);
  EXPECT_EQ(encodeFp8(1.0f, Fp8Kind::E4M3Fn, false), 0x38);
  EXPECT_EQ(encodeFp8(1.0f, Fp8Kind::E5M2, false), 0x3c);
  EXPECT_EQ(encodeFp8(1.0f, Fp8Kind::E5M2Fnuz, false), 0x40);
  EXPECT_EQ(encodeFp8(-1.0f, Fp8Kind::E4M3Fnuz, false), 0xc0);
  EXPECT_EQ(encodeFp8(-1.0f, Fp8Kind::E4M3Fn, false), 0xb8);
  EXPECT_EQ(encodeFp8(-1.5f, Fp8Kind::E5M2, false), 0xbe);
  EXPECT_EQ(decodeFp8(0x44, Fp8Kind::E4M3Fn), 3.0f); // 0 1000 100
  // Largest finite values.
  EXPECT_EQ(decodeFp8(0x7f, Fp8Kind::E4M3Fnuz), 240.0f);
  EXPECT_EQ(decodeFp8(0x7e, Fp8Kind::E4M3Fn), 448.0f);
  EXPECT_EQ(decodeFp8(0x7b, Fp8Kind::E5M2), 57344.0f);
  EXPECT_EQ(decodeFp8(0x7f, Fp8Kind::E5M2Fnuz), 57344.0f);
  EXPECT_EQ(decodeFp8(0xff, Fp8Kind::E4M3Fnuz), -240.0f);
  // Smallest subnormals: 2^(1 - bias - mantissa bits).
  EXPECT_EQ(decodeFp8(0x01, Fp8Kind::E4M3Fnuz), 0x1p-10f);
  EXPECT_EQ(decodeFp8(0x01, Fp8Kind::E4M3Fn), 0x1p-9f);
  EXPECT_EQ(decodeFp8(0x01, Fp8Kind::E5M2), 0x1p-16f);
  EXPECT_EQ(decodeFp8(0x01, Fp8Kind::E5M2Fnuz), 0x1p-17f);
  EXPECT_EQ(decodeFp8(0x07, Fp8Kind::E4M3Fn), 7 * 0x1p-9f);
  EXPECT_EQ(decodeFp8(0x08, Fp8Kind::E4M3Fn), 0x1p-6f); // smallest normal
}

TEST(CollectivesFp8, SpecialCodes) {
  for (Fp8Kind kind : kAllFp8) {
    int nans = 0, infinities = 0;
    for (int code = 0; code < 256; ++code) {
      float value = decodeFp8(uint8_t(code), kind);
      nans += std::isnan(value);
      infinities += std::isinf(value);
    }
    switch (kind) {
    case Fp8Kind::E4M3Fnuz:
    case Fp8Kind::E5M2Fnuz:
      EXPECT_EQ(nans, 1);
      EXPECT_TRUE(std::isnan(decodeFp8(0x80, kind)));
      EXPECT_EQ(infinities, 0);
      break;
    case Fp8Kind::E4M3Fn:
      EXPECT_EQ(nans, 2);
      EXPECT_TRUE(std::isnan(decodeFp8(0x7f, kind)));
      EXPECT_TRUE(std::isnan(decodeFp8(0xff, kind)));
      EXPECT_EQ(infinities, 0);
      EXPECT_TRUE(std::signbit(decodeFp8(0x80, kind))); // -0
      break;
    case Fp8Kind::E5M2:
      EXPECT_EQ(nans, 6);
      EXPECT_EQ(infinities, 2);
      EXPECT_EQ(decodeFp8(0x7c, kind), INFINITY);
      EXPECT_EQ(decodeFp8(0xfc, kind), -INFINITY);
      EXPECT_TRUE(std::isnan(decodeFp8(0x7d, kind)));
      EXPECT_TRUE(std::signbit(decodeFp8(0x80, kind)));
      break;
    }
    EXPECT_TRUE(std::isnan(decodeFp8(encodeFp8(NAN, kind, false), kind)));
    EXPECT_TRUE(std::isnan(decodeFp8(encodeFp8(NAN, kind, true), kind)));
  }
  // FNUZ has no negative zero: -0 and tiny negatives become 0x00.
  EXPECT_EQ(encodeFp8(-0.0f, Fp8Kind::E4M3Fnuz, false), 0x00);
  EXPECT_EQ(encodeFp8(-0x1p-14f, Fp8Kind::E4M3Fnuz, false), 0x00);
  EXPECT_EQ(encodeFp8(-0.0f, Fp8Kind::E5M2Fnuz, false), 0x00);
  EXPECT_EQ(encodeFp8(-0.0f, Fp8Kind::E4M3Fn, false), 0x80);
  EXPECT_EQ(encodeFp8(-0.0f, Fp8Kind::E5M2, false), 0x80);
}

TEST(CollectivesFp8, AllCodesRoundTrip) {
  for (Fp8Kind kind : kAllFp8)
    for (int code = 0; code < 256; ++code) {
      float value = decodeFp8(uint8_t(code), kind);
      if (std::isnan(value))
        continue;
      EXPECT_EQ(encodeFp8(value, kind, false), code)
          << "kind " << int(kind) << " value " << value;
      if (!std::isinf(value)) {
        EXPECT_EQ(encodeFp8(value, kind, true), code);
      }
    }
}

TEST(CollectivesFp8, RoundsToNearestEven) {
  // E4M3: values 1, 1.125, 1.25 are consecutive.
  EXPECT_EQ(encodeFp8(1.0625f, Fp8Kind::E4M3Fn, false), 0x38); // tie, even
  EXPECT_EQ(encodeFp8(1.1875f, Fp8Kind::E4M3Fn, false), 0x3a); // tie, even
  EXPECT_EQ(encodeFp8(1.07f, Fp8Kind::E4M3Fn, false), 0x39);
  EXPECT_EQ(encodeFp8(1.0625f, Fp8Kind::E4M3Fnuz, false), 0x40);
  EXPECT_EQ(encodeFp8(1.1875f, Fp8Kind::E4M3Fnuz, false), 0x42);
  // E5M2: 1, 1.25, 1.5.
  EXPECT_EQ(encodeFp8(1.125f, Fp8Kind::E5M2, false), 0x3c);
  EXPECT_EQ(encodeFp8(1.375f, Fp8Kind::E5M2, false), 0x3e);
  // Subnormals: E4M3FN steps of 2^-9.
  EXPECT_EQ(encodeFp8(0x1p-10f, Fp8Kind::E4M3Fn, false), 0x00); // tie to 0
  EXPECT_EQ(encodeFp8(3 * 0x1p-10f, Fp8Kind::E4M3Fn, false), 0x02);
  EXPECT_EQ(encodeFp8(0x1.1p-10f, Fp8Kind::E4M3Fn, false), 0x01);
  EXPECT_EQ(encodeFp8(-3 * 0x1p-10f, Fp8Kind::E4M3Fn, false), 0x82);
  // Rounding up out of the subnormals into the smallest normal.
  EXPECT_EQ(encodeFp8(15 * 0x1p-10f, Fp8Kind::E4M3Fn, false), 0x08); // tie 7|8
  EXPECT_EQ(encodeFp8(0x1.f8p-7f, Fp8Kind::E4M3Fn, false), 0x08);
}

TEST(CollectivesFp8, SaturatesOrOverflows) {
  EXPECT_EQ(encodeFp8(1000.0f, Fp8Kind::E4M3Fnuz, true), 0x7f);
  EXPECT_EQ(encodeFp8(-1000.0f, Fp8Kind::E4M3Fnuz, true), 0xff);
  EXPECT_EQ(encodeFp8(1000.0f, Fp8Kind::E4M3Fnuz, false), 0x80); // NaN
  EXPECT_EQ(encodeFp8(1e6f, Fp8Kind::E5M2Fnuz, true), 0x7f);
  EXPECT_EQ(encodeFp8(1e6f, Fp8Kind::E5M2Fnuz, false), 0x80);
  EXPECT_EQ(encodeFp8(500.0f, Fp8Kind::E4M3Fn, true), 0x7e);
  EXPECT_EQ(encodeFp8(-500.0f, Fp8Kind::E4M3Fn, true), 0xfe);
  EXPECT_TRUE(std::isnan(
      decodeFp8(encodeFp8(500.0f, Fp8Kind::E4M3Fn, false), Fp8Kind::E4M3Fn)));
  EXPECT_EQ(encodeFp8(1e5f, Fp8Kind::E5M2, true), 0x7b);
  EXPECT_EQ(encodeFp8(1e5f, Fp8Kind::E5M2, false), 0x7c);  // +inf
  EXPECT_EQ(encodeFp8(-1e5f, Fp8Kind::E5M2, false), 0xfc); // -inf
  EXPECT_EQ(encodeFp8(INFINITY, Fp8Kind::E5M2, false), 0x7c);
  EXPECT_EQ(encodeFp8(INFINITY, Fp8Kind::E5M2, true), 0x7b);
  EXPECT_EQ(encodeFp8(-INFINITY, Fp8Kind::E4M3Fn, true), 0xfe);
  EXPECT_EQ(encodeFp8(INFINITY, Fp8Kind::E4M3Fnuz, true), 0x7f);
  // Just below the overflow threshold rounds to the largest value: E4M3FN
  // 448 and 480 (not a number) tie at 464 to the even 448.
  EXPECT_EQ(encodeFp8(464.0f, Fp8Kind::E4M3Fn, false), 0x7e);
  EXPECT_TRUE(std::isnan(
      decodeFp8(encodeFp8(465.0f, Fp8Kind::E4M3Fn, false), Fp8Kind::E4M3Fn)));
  EXPECT_EQ(encodeFp8(247.0f, Fp8Kind::E4M3Fnuz, false), 0x7f);
  EXPECT_EQ(encodeFp8(61439.0f, Fp8Kind::E5M2, false), 0x7b);
  EXPECT_EQ(encodeFp8(61440.0f, Fp8Kind::E5M2, false), 0x7c); // tie to inf
}

TEST(CollectivesFp8, KindPerChipFormat) {
  EXPECT_EQ(fp8KindFor(MmaElement::Fp8, Fp8Format::Fnuz), Fp8Kind::E4M3Fnuz);
  EXPECT_EQ(fp8KindFor(MmaElement::Bf8, Fp8Format::Fnuz), Fp8Kind::E5M2Fnuz);
  EXPECT_EQ(fp8KindFor(MmaElement::Fp8, Fp8Format::Ocp), Fp8Kind::E4M3Fn);
  EXPECT_EQ(fp8KindFor(MmaElement::Bf8, Fp8Format::Ocp), Fp8Kind::E5M2);
}

//===----------------------------------------------------------------------===//
// bf16, f16, xf32
//===----------------------------------------------------------------------===//

TEST(CollectivesFloat, Bf16RoundsToNearestEven) {
  auto fromBits = [](uint32_t bits) { return llvm::bit_cast<float>(bits); };
  EXPECT_EQ(floatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBf16(fromBits(0x3f808000)), 0x3f80); // tie, even down
  EXPECT_EQ(floatToBf16(fromBits(0x3f818000)), 0x3f82); // tie, even up
  EXPECT_EQ(floatToBf16(fromBits(0x3f808001)), 0x3f81); // above the tie
  EXPECT_EQ(floatToBf16(fromBits(0x3f807fff)), 0x3f80); // below the tie
  EXPECT_EQ(floatToBf16(fromBits(0xbf818000)), 0xbf82);
  EXPECT_EQ(floatToBf16(fromBits(0x7f7fffff)), 0x7f80); // to infinity
  EXPECT_EQ(floatToBf16(INFINITY), 0x7f80);
  EXPECT_EQ(floatToBf16(-0.0f), 0x8000);
  uint16_t nan = floatToBf16(fromBits(0x7f800001)); // signalling, low payload
  EXPECT_TRUE(std::isnan(bf16ToFloat(nan)));
  EXPECT_TRUE(nan & 0x0040) << "quiet";
  EXPECT_EQ(bf16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(bf16ToFloat(0xc040), -3.0f);
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    float value = bf16ToFloat(uint16_t(bits));
    EXPECT_EQ(llvm::bit_cast<uint32_t>(value), bits << 16);
    if (!std::isnan(value)) {
      ASSERT_EQ(floatToBf16(value), bits);
    }
  }
}

TEST(CollectivesFloat, HalfRoundsToNearestEven) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(1.0f + 0x1p-11f), 0x3c00);     // tie, even down
  EXPECT_EQ(floatToHalf(1.0f + 3 * 0x1p-11f), 0x3c02); // tie, even up
  EXPECT_EQ(floatToHalf(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65519.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00); // tie rounds to infinity
  EXPECT_EQ(floatToHalf(1e10f), 0x7c00);
  EXPECT_EQ(floatToHalf(-INFINITY), 0xfc00);
  EXPECT_EQ(floatToHalf(0x1p-24f), 0x0001);     // smallest subnormal
  EXPECT_EQ(floatToHalf(0x1p-25f), 0x0000);     // tie to even zero
  EXPECT_EQ(floatToHalf(3 * 0x1p-25f), 0x0002); // tie to even 2
  EXPECT_EQ(floatToHalf(0x1.8p-25f), 0x0001);   // above the tie
  EXPECT_EQ(floatToHalf(0x1p-14f), 0x0400);     // smallest normal
  EXPECT_EQ(floatToHalf(0x1.ffcp-15f), 0x0400); // rounds up into normals
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(NAN))));
  EXPECT_EQ(halfToFloat(0x7c00), INFINITY);
  EXPECT_EQ(halfToFloat(0x0001), 0x1p-24f);
  EXPECT_EQ(halfToFloat(0x3555), float(refHalf(0x3555)));
  EXPECT_TRUE(std::isnan(halfToFloat(0x7e00)));
  EXPECT_TRUE(std::isnan(halfToFloat(0xfc01)));
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    float value = halfToFloat(uint16_t(bits));
    if (std::isnan(value))
      continue;
    if (!std::isinf(value)) {
      ASSERT_EQ(value, float(refHalf(bits))) << bits;
    }
    ASSERT_EQ(floatToHalf(value), bits);
  }
}

TEST(CollectivesFloat, HalfTowardZero) {
  EXPECT_EQ(floatToHalfTowardZero(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalfTowardZero(1.0f + 3 * 0x1p-11f), 0x3c01); // RNE: 0x3c02
  EXPECT_EQ(floatToHalfTowardZero(1.0f + 0x1p-10f - 0x1p-23f), 0x3c00);
  EXPECT_EQ(floatToHalfTowardZero(-1.0f - 3 * 0x1p-11f), 0xbc01);
  EXPECT_EQ(floatToHalfTowardZero(65520.0f), 0x7bff); // RNE: infinity
  EXPECT_EQ(floatToHalfTowardZero(1e10f), 0x7bff);
  EXPECT_EQ(floatToHalfTowardZero(-1e10f), 0xfbff);
  EXPECT_EQ(floatToHalfTowardZero(INFINITY), 0x7c00);
  EXPECT_EQ(floatToHalfTowardZero(-INFINITY), 0xfc00);
  EXPECT_EQ(floatToHalfTowardZero(0x1.8p-24f), 0x0001);   // RNE: 0x0002
  EXPECT_EQ(floatToHalfTowardZero(0x1.8p-25f), 0x0000);   // RNE: 0x0001
  EXPECT_EQ(floatToHalfTowardZero(0x1.ffcp-15f), 0x03ff); // RNE: 0x0400
  EXPECT_EQ(floatToHalfTowardZero(-0.0f), 0x8000);
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalfTowardZero(NAN))));
  // Every f16 value converts to itself.
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    float value = halfToFloat(uint16_t(bits));
    if (!std::isnan(value)) {
      ASSERT_EQ(floatToHalfTowardZero(value), bits) << bits;
    }
  }
}

TEST(CollectivesFloat, Xf32KeepsTenFractionBits) {
  EXPECT_EQ(roundToXf32(1.0f + 0x1p-10f), 1.0f + 0x1p-10f);
  EXPECT_EQ(roundToXf32(1.0f + 0x1p-11f), 1.0f);               // tie, even
  EXPECT_EQ(roundToXf32(1.0f + 3 * 0x1p-11f), 1.0f + 0x1p-9f); // tie, even
  EXPECT_EQ(roundToXf32(1.0f + 0x1p-11f + 0x1p-23f), 1.0f + 0x1p-10f);
  EXPECT_EQ(roundToXf32(-1.0f - 0x1p-11f - 0x1p-23f), -1.0f - 0x1p-10f);
  EXPECT_EQ(roundToXf32(INFINITY), INFINITY);
  EXPECT_TRUE(std::isnan(roundToXf32(NAN)));
  Rng rng(20);
  for (int i = 0; i < 1000; ++i) {
    uint32_t bits = randomFloat(rng);
    ASSERT_EQ(double(roundToXf32(llvm::bit_cast<float>(bits))), refXf32(bits));
  }
}

//===----------------------------------------------------------------------===//
// Lane exchanges
//===----------------------------------------------------------------------===//

std::vector<uint32_t> laneValues(unsigned waveSize, uint32_t base) {
  std::vector<uint32_t> values(waveSize);
  for (unsigned lane = 0; lane < waveSize; ++lane)
    values[lane] = base + lane;
  return values;
}

TEST(CollectivesLanes, BpermuteRotatesAndBroadcasts) {
  for (unsigned waveSize : {32u, 64u}) {
    std::vector<uint32_t> values = laneValues(waveSize, 1000);
    std::vector<uint32_t> addresses(waveSize);
    for (unsigned lane = 0; lane < waveSize; ++lane)
      addresses[lane] = 4 * ((lane + 1) % waveSize);
    auto rotated = dsBpermute(addresses, values);
    ASSERT_EQ(rotated.size(), waveSize);
    for (unsigned lane = 0; lane < waveSize; ++lane)
      EXPECT_EQ(rotated[lane], 1000 + (lane + 1) % waveSize);
    std::vector<uint32_t> same(waveSize, 4 * 5 + 2); // low bits ignored
    for (uint32_t value : dsBpermute(same, values))
      EXPECT_EQ(value, 1005u);
    std::vector<uint32_t> wrapping(waveSize, 4 * (waveSize + 3));
    EXPECT_EQ(dsBpermute(wrapping, values)[0], 1003u);
  }
}

TEST(CollectivesLanes, Swizzle) {
  std::vector<uint32_t> values = laneValues(64, 0);
  // Bit-masks mode, and 0x1f, or 0, xor 1: swap neighbours.
  auto swapped = dsSwizzle(values, 0x1f | (1 << 10));
  for (unsigned lane = 0; lane < 64; ++lane)
    EXPECT_EQ(swapped[lane], lane ^ 1);
  // and 0, or 5: every lane of each 32-lane group reads its lane 5.
  auto broadcast = dsSwizzle(values, 5 << 5);
  for (unsigned lane = 0; lane < 64; ++lane)
    EXPECT_EQ(broadcast[lane], (lane & 32) + 5);
  // and 0x10, xor 0x1f on wave32: lane L reads (L & 16) ^ 31.
  auto mixed = dsSwizzle(laneValues(32, 0), 0x10 | (0x1f << 10));
  for (unsigned lane = 0; lane < 32; ++lane)
    EXPECT_EQ(mixed[lane], (lane & 16) ^ 31);
  // Quad-permute mode: [3, 2, 1, 0] reverses each quad.
  auto reversed = dsSwizzle(values, 0x8000 | 3 | 2 << 2 | 1 << 4 | 0 << 6);
  for (unsigned lane = 0; lane < 64; ++lane)
    EXPECT_EQ(reversed[lane], (lane & ~3u) + 3 - lane % 4);
  auto firstOfQuad = dsSwizzle(values, 0x8000);
  for (unsigned lane = 0; lane < 64; ++lane)
    EXPECT_EQ(firstOfQuad[lane], lane & ~3u);
}

llvm::SmallVector<uint32_t, 64> dpp(llvm::ArrayRef<uint32_t> old,
                                    llvm::ArrayRef<uint32_t> src, uint32_t ctrl,
                                    uint32_t rowMask, uint32_t bankMask,
                                    bool boundCtrl) {
  auto result = updateDpp(old, src, ctrl, rowMask, bankMask, boundCtrl);
  if (!result) {
    ADD_FAILURE() << llvm::toString(result.takeError());
    return {};
  }
  return *result;
}

TEST(CollectivesLanes, DppRowShiftsAndRotate) {
  std::vector<uint32_t> old = laneValues(64, 5000), src = laneValues(64, 100);
  auto shrZero = dpp(old, src, 0x111, 0xf, 0xf, true);
  auto shrKeep = dpp(old, src, 0x111, 0xf, 0xf, false);
  auto shl3 = dpp(old, src, 0x103, 0xf, 0xf, false);
  auto ror1 = dpp(old, src, 0x121, 0xf, 0xf, false);
  auto ror15 = dpp(old, src, 0x12f, 0xf, 0xf, false);
  ASSERT_EQ(shrZero.size(), 64u);
  for (unsigned lane = 0; lane < 64; ++lane) {
    unsigned inRow = lane % 16, row = lane & ~15u;
    EXPECT_EQ(shrZero[lane], inRow == 0 ? 0 : 100 + lane - 1);
    EXPECT_EQ(shrKeep[lane], inRow == 0 ? 5000 + lane : 100 + lane - 1);
    EXPECT_EQ(shl3[lane], inRow >= 13 ? 5000 + lane : 100 + lane + 3);
    EXPECT_EQ(ror1[lane], 100 + row + (inRow + 15) % 16);
    EXPECT_EQ(ror15[lane], 100 + row + (inRow + 1) % 16);
  }
}

TEST(CollectivesLanes, DppBroadcasts) {
  std::vector<uint32_t> old = laneValues(64, 5000), src = laneValues(64, 100);
  // The usual row_mask 0xa: rows 1 and 3 take lanes 15 and 47.
  auto bcast15 = dpp(old, src, 0x142, 0xa, 0xf, false);
  for (unsigned lane = 0; lane < 64; ++lane) {
    unsigned row = lane / 16;
    EXPECT_EQ(bcast15[lane], row % 2 ? 100 + 16 * row - 1 : 5000 + lane);
  }
  // All rows enabled: row 0 has no source.
  auto bcast15All = dpp(old, src, 0x142, 0xf, 0xf, true);
  for (unsigned lane = 0; lane < 64; ++lane)
    EXPECT_EQ(bcast15All[lane], lane < 16 ? 0 : 100 + (lane & ~15u) - 1);
  auto bcast31 = dpp(old, src, 0x143, 0xf, 0xf, false);
  for (unsigned lane = 0; lane < 64; ++lane)
    EXPECT_EQ(bcast31[lane], lane < 32 ? 5000 + lane : 131);
}

TEST(CollectivesLanes, DppQuadPermAndMirrors) {
  std::vector<uint32_t> old = laneValues(64, 5000), src = laneValues(64, 100);
  // quad_perm [1, 0, 3, 2]: lane L reads L ^ 1.
  auto swap = dpp(old, src, 1 | 0 << 2 | 3 << 4 | 2 << 6, 0xf, 0xf, false);
  auto mirror = dpp(old, src, 0x140, 0xf, 0xf, false);
  auto halfMirror = dpp(old, src, 0x141, 0xf, 0xf, false);
  auto broadcast2 = dpp(old, src, 0xaa, 0xf, 0xf, false); // [2, 2, 2, 2]
  for (unsigned lane = 0; lane < 64; ++lane) {
    EXPECT_EQ(swap[lane], 100 + (lane ^ 1));
    EXPECT_EQ(mirror[lane], 100 + (lane & ~15u) + 15 - lane % 16);
    EXPECT_EQ(halfMirror[lane], 100 + (lane & ~7u) + 7 - lane % 8);
    EXPECT_EQ(broadcast2[lane], 100 + (lane & ~3u) + 2);
  }
}

TEST(CollectivesLanes, DppWaveShifts) {
  for (unsigned waveSize : {32u, 64u}) {
    std::vector<uint32_t> old = laneValues(waveSize, 5000),
                          src = laneValues(waveSize, 100);
    auto shr1 = dpp(old, src, 0x138, 0xf, 0xf, false);
    auto shl1 = dpp(old, src, 0x130, 0xf, 0xf, true);
    auto rol1 = dpp(old, src, 0x134, 0xf, 0xf, false);
    auto ror1 = dpp(old, src, 0x13c, 0xf, 0xf, false);
    ASSERT_EQ(shr1.size(), waveSize);
    for (unsigned lane = 0; lane < waveSize; ++lane) {
      EXPECT_EQ(shr1[lane], lane == 0 ? 5000 : 100 + lane - 1);
      EXPECT_EQ(shl1[lane], lane == waveSize - 1 ? 0 : 100 + lane + 1);
      EXPECT_EQ(rol1[lane], 100 + (lane + 1) % waveSize);
      EXPECT_EQ(ror1[lane], 100 + (lane + waveSize - 1) % waveSize);
    }
  }
}

TEST(CollectivesLanes, DppMasksKeepOld) {
  std::vector<uint32_t> old = laneValues(64, 5000), src = laneValues(64, 100);
  // Rows 1 and 3 disabled; banks 2 and 3 (lanes 8-15 of each row) disabled.
  // Disabled lanes keep old even with bound_ctrl.
  auto result = dpp(old, src, 0x101, 0b0101, 0b0011, true);
  for (unsigned lane = 0; lane < 64; ++lane) {
    bool enabled = (lane / 16) % 2 == 0 && lane % 16 < 8;
    EXPECT_EQ(result[lane], enabled ? 100 + lane + 1 : 5000 + lane) << lane;
  }
}

TEST(CollectivesLanes, DppUnknownControlIsError) {
  std::vector<uint32_t> values = laneValues(64, 0);
  for (uint32_t ctrl :
       {0x100u, 0x110u, 0x120u, 0x131u, 0x144u, 0x150u, 0x160u, 0x1ffu}) {
    auto result = updateDpp(values, values, ctrl, 0xf, 0xf, false);
    EXPECT_FALSE(bool(result)) << ctrl;
    if (!result)
      llvm::consumeError(result.takeError());
  }
}

TEST(CollectivesLanes, Mbcnt) {
  for (unsigned lane = 0; lane < 64; ++lane) {
    EXPECT_EQ(mbcntLo(lane, ~0u, 0), std::min(lane, 32u));
    EXPECT_EQ(mbcntHi(lane, ~0u, mbcntLo(lane, ~0u, 0)), lane);
    EXPECT_EQ(mbcntLo(lane, 0, 7), 7u);
  }
  EXPECT_EQ(mbcntLo(3, 0b1011, 0), 2u);
  EXPECT_EQ(mbcntLo(4, 0b1011, 10), 13u);
  EXPECT_EQ(mbcntHi(3, ~0u, 0), 0u);
  EXPECT_EQ(mbcntHi(35, 0b1011, 1), 3u);
  EXPECT_EQ(mbcntLo(63, 0x80000001u, 0), 2u);
}

TEST(CollectivesLanes, PermlaneSwap) {
  // Swapping a value with itself across 32 lanes is a xor-32 shuffle once
  // the unchanged half is taken from the second result (what MLIR's
  // lowering of gpu.shuffle does on gfx950).
  llvm::SmallVector<uint32_t, 64> values;
  for (uint32_t lane = 0; lane < 64; ++lane)
    values.push_back(100 + lane);
  auto [old32, src32] = permlaneSwap(values, values, 32);
  for (uint32_t lane = 0; lane < 64; ++lane) {
    uint32_t chosen = old32[lane] == values[lane] ? src32[lane] : old32[lane];
    EXPECT_EQ(chosen, 100 + (lane ^ 32)) << lane;
  }
  auto [old16, src16] = permlaneSwap(values, values, 16);
  for (uint32_t lane = 0; lane < 64; ++lane) {
    uint32_t chosen = old16[lane] == values[lane] ? src16[lane] : old16[lane];
    EXPECT_EQ(chosen, 100 + (lane ^ 16)) << lane;
  }
  // Rows not involved keep their values: the even rows of `old`.
  EXPECT_EQ(old16[3], values[3]);
  EXPECT_EQ(src16[20], values[20]);
}

TEST(CollectivesLanes, TransposeRead16) {
  // Lane L read the four elements 4L .. 4L + 3: in each group of 16 lanes,
  // lane j's element e is element j % 4 of lane 4e + j / 4.
  llvm::SmallVector<uint64_t, 64> loaded;
  for (uint64_t lane = 0; lane < 64; ++lane) {
    uint64_t word = 0;
    for (uint64_t e = 0; e < 4; ++e)
      word |= (4 * lane + e) << (16 * e);
    loaded.push_back(word);
  }
  llvm::SmallVector<uint64_t, 64> result = transposeRead16(loaded);
  for (uint64_t lane = 0; lane < 64; ++lane)
    for (uint64_t e = 0; e < 4; ++e) {
      uint64_t group = lane / 16 * 16, j = lane % 16;
      EXPECT_EQ((result[lane] >> (16 * e)) & 0xffff,
                4 * (group + 4 * e + j / 4) + j % 4)
          << "lane " << lane << " element " << e;
    }
}

} // namespace
