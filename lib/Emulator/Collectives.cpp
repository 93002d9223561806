//===- Collectives.cpp - Wave-collective semantics --------------*- C++ -*-===//
//
// Small floats are rounded on doubles: every value of the formats involved is
// exact in a double, and so is the scaling by a power of two that brings the
// format's quantum to 1, so rounding to nearest even is one integer rounding.
// Matrix instructions sum their exact products in a wide fixed-point
// accumulator and round once at the end.
//
//===----------------------------------------------------------------------===//

#include "tessel/Emulator/Collectives.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

using namespace tessel;
using namespace tessel::emu;
using llvm::ArrayRef;
using llvm::SmallVector;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

//===----------------------------------------------------------------------===//
// Rounding to small binary formats
//===----------------------------------------------------------------------===//

namespace {
/// A binary floating-point format by its precision: `mantBits` stored
/// fraction bits and the exponent of the smallest normal number, `minExp` (=
/// 1 - bias). Subnormals are always present.
struct BinaryFormat {
  int mantBits;
  int minExp;
};
} // namespace

/// `x` rounded to the nearest integer, ties to even (independent of the
/// floating-point environment's rounding mode).
static double roundHalfEven(double x) {
  double floor = std::floor(x);
  double diff = x - floor;
  if (diff > 0.5 || (diff == 0.5 && std::fmod(floor, 2.0) != 0.0))
    floor += 1.0;
  return floor;
}

/// The finite non-negative `magnitude` rounded to nearest even on the grid of
/// `format` with an unbounded exponent range above (the caller checks for
/// overflow).
static double roundMagnitude(double magnitude, BinaryFormat format) {
  if (magnitude == 0.0)
    return 0.0;
  int exponent = std::max(std::ilogb(magnitude), format.minExp);
  double quantum = std::ldexp(1.0, exponent - format.mantBits);
  return roundHalfEven(magnitude / quantum) * quantum;
}

/// The exponent and fraction fields (exponent << mantBits | fraction) of a
/// non-negative `value` lying on `format`'s grid.
static uint32_t magnitudeCode(double value, BinaryFormat format) {
  if (value == 0.0)
    return 0;
  int exponent = std::ilogb(value);
  if (exponent < format.minExp)
    return uint32_t(
        std::ldexp(value, format.mantBits - format.minExp)); // subnormal
  uint32_t fraction = uint32_t(std::ldexp(value, format.mantBits - exponent)) -
                      (1u << format.mantBits);
  return (uint32_t(exponent - format.minExp + 1) << format.mantBits) | fraction;
}

/// The value of the exponent and fraction fields `code` (no sign, no special
/// values) of `format`.
static double magnitudeValue(uint32_t code, BinaryFormat format) {
  uint32_t fraction = code & ((1u << format.mantBits) - 1);
  uint32_t exponent = code >> format.mantBits;
  if (exponent == 0)
    return std::ldexp(double(fraction), format.minExp - format.mantBits);
  return std::ldexp(double(fraction | (1u << format.mantBits)),
                    int(exponent) - 1 + format.minExp - format.mantBits);
}

//===----------------------------------------------------------------------===//
// 8-bit floats
//===----------------------------------------------------------------------===//

namespace {
struct Fp8Params {
  BinaryFormat format;
  bool fnuz;       ///< 0x80 is the NaN, no negative zero, no infinities
  bool ieee;       ///< all-ones exponent holds infinities and NaNs (E5M2)
  uint8_t maxCode; ///< largest finite magnitude code
  uint8_t nanCode; ///< the NaN produced (OCP: with the sign or'ed in)
};
} // namespace

static Fp8Params getFp8Params(Fp8Kind kind) {
  switch (kind) {
  case Fp8Kind::E4M3Fnuz:
    return {{3, 1 - 8}, true, false, 0x7f, 0x80};
  case Fp8Kind::E5M2Fnuz:
    return {{2, 1 - 16}, true, false, 0x7f, 0x80};
  case Fp8Kind::E4M3Fn:
    return {{3, 1 - 7}, false, false, 0x7e, 0x7f};
  case Fp8Kind::E5M2:
    return {{2, 1 - 15}, false, true, 0x7b, 0x7e};
  }
  llvm_unreachable("unknown fp8 kind");
}

float emu::decodeFp8(uint8_t bits, Fp8Kind kind) {
  Fp8Params params = getFp8Params(kind);
  bool negative = bits & 0x80;
  uint8_t magnitude = bits & 0x7f;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  if (params.fnuz) {
    if (bits == 0x80)
      return nan;
  } else if (params.ieee) {
    if (magnitude == 0x7c)
      return negative ? -std::numeric_limits<float>::infinity()
                      : std::numeric_limits<float>::infinity();
    if (magnitude > 0x7c)
      return nan;
  } else if (magnitude == 0x7f) {
    return nan;
  }
  float value = float(magnitudeValue(magnitude, params.format));
  return negative ? -value : value;
}

uint8_t emu::encodeFp8(float value, Fp8Kind kind, bool saturate) {
  Fp8Params params = getFp8Params(kind);
  bool negative = std::signbit(value);
  uint8_t sign = negative ? 0x80 : 0x00;
  if (std::isnan(value))
    return params.fnuz ? params.nanCode : uint8_t(sign | params.nanCode);
  auto overflow = [&]() -> uint8_t {
    if (saturate)
      return sign | params.maxCode;
    if (params.fnuz)
      return params.nanCode;
    if (params.ieee)
      return sign | 0x7c; // infinity
    return sign | params.nanCode;
  };
  if (std::isinf(value))
    return overflow();
  double rounded = roundMagnitude(std::fabs(double(value)), params.format);
  if (rounded > magnitudeValue(params.maxCode, params.format))
    return overflow();
  uint8_t code = uint8_t(magnitudeCode(rounded, params.format));
  if (code == 0 && params.fnuz)
    return 0; // no negative zero
  return sign | code;
}

Fp8Kind emu::fp8KindFor(MmaElement element, Fp8Format format) {
  assert((element == MmaElement::Fp8 || element == MmaElement::Bf8) &&
         "not an 8-bit float element");
  assert(format != Fp8Format::None && "the chip has no 8-bit floats");
  bool fnuz = format == Fp8Format::Fnuz;
  if (element == MmaElement::Bf8)
    return fnuz ? Fp8Kind::E5M2Fnuz : Fp8Kind::E5M2;
  return fnuz ? Fp8Kind::E4M3Fnuz : Fp8Kind::E4M3Fn;
}

//===----------------------------------------------------------------------===//
// 16-bit floats and xf32
//===----------------------------------------------------------------------===//

float emu::bf16ToFloat(uint16_t bits) {
  return llvm::bit_cast<float>(uint32_t(bits) << 16);
}

uint16_t emu::floatToBf16(float value) {
  uint32_t bits = llvm::bit_cast<uint32_t>(value);
  if (std::isnan(value))
    return uint16_t((bits >> 16) | 0x0040); // quiet, sign and payload kept
  // Adding 0x7fff plus the lowest kept bit rounds to nearest even; a carry
  // into the exponent is the correct result, up to infinity.
  bits += 0x7fff + ((bits >> 16) & 1);
  return uint16_t(bits >> 16);
}

static constexpr BinaryFormat kHalf = {10, -14};

float emu::halfToFloat(uint16_t bits) {
  bool negative = bits & 0x8000;
  uint32_t magnitude = bits & 0x7fff;
  float value;
  if (magnitude >= 0x7c00)
    value = magnitude == 0x7c00 ? std::numeric_limits<float>::infinity()
                                : std::numeric_limits<float>::quiet_NaN();
  else
    value = float(magnitudeValue(magnitude, kHalf));
  return negative ? -value : value;
}

uint16_t emu::floatToHalf(float value) {
  uint32_t bits = llvm::bit_cast<uint32_t>(value);
  uint16_t sign = (bits >> 16) & 0x8000;
  if (std::isnan(value))
    return sign | 0x7e00 | ((bits >> 13) & 0x3ff);
  if (std::isinf(value))
    return sign | 0x7c00;
  double rounded = roundMagnitude(std::fabs(double(value)), kHalf);
  if (rounded > 65504.0)
    return sign | 0x7c00;
  return sign | uint16_t(magnitudeCode(rounded, kHalf));
}

uint16_t emu::floatToHalfTowardZero(float value) {
  if (std::isnan(value))
    return floatToHalf(value);
  llvm::APFloat half(value);
  bool losesInfo = false;
  half.convert(llvm::APFloat::IEEEhalf(), llvm::APFloat::rmTowardZero,
               &losesInfo);
  return uint16_t(half.bitcastToAPInt().getZExtValue());
}

float emu::roundToXf32(float value) {
  if (!std::isfinite(value))
    return value;
  uint32_t bits = llvm::bit_cast<uint32_t>(value);
  bits += 0xfff + ((bits >> 13) & 1);
  return llvm::bit_cast<float>(bits & ~uint32_t(0x1fff));
}

//===----------------------------------------------------------------------===//
// Exact accumulation
//===----------------------------------------------------------------------===//

namespace {
/// A two's-complement fixed-point number of 640 bits whose lowest bit weighs
/// 2^-320: it holds every product of two f32 values (down to 2^-298) and
/// sums of them exactly, so a dot product is rounded only once.
class ExactSum {
public:
  void add(double value) {
    if (std::isnan(value)) {
      sawNaN = true;
      return;
    }
    if (std::isinf(value)) {
      (value > 0 ? sawPosInf : sawNegInf) = true;
      return;
    }
    if (!(value == 0.0 && std::signbit(value)))
      allNegativeZero = false;
    if (value == 0.0)
      return;
    int exponent;
    double fraction = std::frexp(std::fabs(value), &exponent);
    uint64_t mantissa = uint64_t(std::ldexp(fraction, 53));
    int shift = exponent - 53 - kLsbExponent;
    for (; shift < 0; ++shift) {
      assert(!(mantissa & 1) && "term below the accumulator's resolution");
      mantissa >>= 1;
    }
    assert(shift + 53 < kWords * 64 - 1 && "term above the accumulator");
    unsigned word = shift / 64, bit = shift % 64;
    uint64_t low = mantissa << bit;
    uint64_t high = bit ? mantissa >> (64 - bit) : 0;
    if (value > 0)
      addAt(word, low, high);
    else
      subtractAt(word, low, high);
  }

  /// The sum rounded to nearest even to `format` (mantissa and minimum
  /// exponent; the result is a double on that grid, beyond the format's
  /// largest value when it overflows).
  double round(BinaryFormat format) const {
    if (sawNaN || (sawPosInf && sawNegInf))
      return std::numeric_limits<double>::quiet_NaN();
    if (sawPosInf)
      return std::numeric_limits<double>::infinity();
    if (sawNegInf)
      return -std::numeric_limits<double>::infinity();
    uint64_t magnitude[kWords];
    bool negative = words[kWords - 1] >> 63;
    std::copy(std::begin(words), std::end(words), magnitude);
    if (negative) {
      uint64_t carry = 1;
      for (uint64_t &w : magnitude) {
        w = ~w + carry;
        carry = carry && w == 0;
      }
    }
    int top = -1;
    for (int w = kWords - 1; w >= 0 && top < 0; --w)
      if (magnitude[w])
        top = w * 64 + 63 - llvm::countl_zero(magnitude[w]);
    if (top < 0)
      return allNegativeZero ? -0.0 : 0.0;
    auto bitAt = [&](int index) -> uint64_t {
      return index < 0 ? 0 : (magnitude[index / 64] >> (index % 64)) & 1;
    };
    int exponent = top + kLsbExponent;
    int quantumExp = std::max(exponent, format.minExp) - format.mantBits;
    int quantumBit = quantumExp - kLsbExponent;
    assert(quantumBit > 0 && "format finer than the accumulator");
    uint64_t kept = 0;
    for (int index = top; index >= quantumBit; --index)
      kept = (kept << 1) | bitAt(index);
    bool half = bitAt(quantumBit - 1);
    bool sticky = false;
    for (int index = quantumBit - 2; index >= 0 && !sticky; --index)
      sticky = bitAt(index);
    if (half && (sticky || (kept & 1)))
      ++kept;
    double result = std::ldexp(double(kept), quantumExp);
    return negative ? -result : result;
  }

private:
  static constexpr int kWords = 10;
  static constexpr int kLsbExponent = -320;

  void addAt(unsigned word, uint64_t low, uint64_t high) {
    uint64_t carry = 0;
    for (unsigned w = word; w < kWords; ++w) {
      uint64_t addend = w == word ? low : w == word + 1 ? high : 0;
      uint64_t sum = words[w] + addend;
      uint64_t carryOut = sum < addend;
      sum += carry;
      carryOut |= sum < carry;
      words[w] = sum;
      carry = carryOut;
      if (w > word && !carry)
        break;
    }
  }

  void subtractAt(unsigned word, uint64_t low, uint64_t high) {
    uint64_t borrow = 0;
    for (unsigned w = word; w < kWords; ++w) {
      uint64_t subtrahend = w == word ? low : w == word + 1 ? high : 0;
      uint64_t before = words[w];
      uint64_t diff = before - subtrahend;
      uint64_t borrowOut = before < subtrahend;
      borrowOut |= diff < borrow;
      diff -= borrow;
      words[w] = diff;
      borrow = borrowOut;
      if (w > word && !borrow)
        break;
    }
  }

  uint64_t words[kWords] = {};
  bool sawNaN = false, sawPosInf = false, sawNegInf = false;
  bool allNegativeZero = true;
};
} // namespace

//===----------------------------------------------------------------------===//
// Matrix instructions
//===----------------------------------------------------------------------===//

unsigned emu::getMmaOperandBytes(const MmaInstr &instr, unsigned waveSize) {
  return instr.getOperandElementsPerLane(waveSize) *
         getMmaElementBits(instr.a) / 8;
}

unsigned emu::getMmaAccumulatorBytes(const MmaInstr &instr, unsigned waveSize) {
  return instr.getAccumulatorElementsPerLane(waveSize) *
         getMmaElementBits(instr.acc) / 8;
}

/// Element `index` of `bits` bits of a little-endian packed vector.
static uint32_t readElement(ArrayRef<uint8_t> bytes, size_t index,
                            unsigned bits) {
  unsigned size = bits / 8;
  uint32_t value = 0;
  for (unsigned i = 0; i < size; ++i)
    value |= uint32_t(bytes[index * size + i]) << (8 * i);
  return value;
}

static void writeElement(llvm::MutableArrayRef<uint8_t> bytes, size_t index,
                         unsigned bits, uint32_t value) {
  unsigned size = bits / 8;
  for (unsigned i = 0; i < size; ++i)
    bytes[index * size + i] = uint8_t(value >> (8 * i));
}

namespace {
/// One logical operand matrix gathered from the lanes.
struct Gathered {
  unsigned rows = 0, cols = 0;
  SmallVector<uint32_t, 0> bits;
  SmallVector<int, 0> holder; ///< the first lane seen holding each element
};
} // namespace

/// Gathers operand `what` (A or B) of `instr`, laid out by `layout`, from
/// `bytes`, checking that copies of one element agree.
static llvm::Expected<Gathered>
gatherOperand(const MmaInstr &instr, llvm::StringRef what,
              const LinearLayout &layout, MmaElement element, unsigned waveSize,
              ArrayRef<uint8_t> bytes) {
  Gathered result;
  result.rows = layout.getOutDimSize(dims::tileDim(0));
  result.cols = layout.getOutDimSize(dims::tileDim(1));
  result.bits.assign(result.rows * result.cols, 0);
  result.holder.assign(result.rows * result.cols, -1);
  unsigned elements = instr.getOperandElementsPerLane(waveSize);
  unsigned bits = getMmaElementBits(element);
  for (unsigned lane = 0; lane < waveSize; ++lane) {
    for (unsigned e = 0; e < elements; ++e) {
      SmallVector<int32_t, 4> rc = layout.apply({int32_t(e), int32_t(lane)});
      unsigned index = rc[0] * result.cols + rc[1];
      uint32_t value = readElement(bytes, lane * elements + e, bits);
      if (result.holder[index] < 0) {
        result.holder[index] = lane;
        result.bits[index] = value;
      } else if (result.bits[index] != value) {
        return makeError(llvm::formatv(
            "{0}: {1} element ({2}, {3}) is {4:x} in lane {5} but {6:x} in "
            "lane {7}; lanes holding copies of one element must agree",
            instr.name, what, rc[0], rc[1], result.bits[index],
            result.holder[index], value, lane));
      }
    }
  }
  for (int holder : result.holder)
    if (holder < 0)
      return makeError(instr.name + llvm::Twine(": the ") + what +
                       " layout does not cover its matrix");
  return result;
}

/// The value of operand element `bits` of type `element` (exact in double).
static double decodeOperand(uint32_t bits, MmaElement element,
                            Fp8Format fp8Format, bool isUnsigned) {
  switch (element) {
  case MmaElement::F32:
    return llvm::bit_cast<float>(bits);
  case MmaElement::Xf32:
    return roundToXf32(llvm::bit_cast<float>(bits));
  case MmaElement::F16:
    return halfToFloat(uint16_t(bits));
  case MmaElement::Bf16:
    return bf16ToFloat(uint16_t(bits));
  case MmaElement::Fp8:
  case MmaElement::Bf8:
    return decodeFp8(uint8_t(bits), fp8KindFor(element, fp8Format));
  case MmaElement::I8:
    return isUnsigned ? double(uint8_t(bits)) : double(int8_t(uint8_t(bits)));
  case MmaElement::I32:
    return int32_t(bits);
  }
  llvm_unreachable("unknown element");
}

static bool isFp8(MmaElement element) {
  return element == MmaElement::Fp8 || element == MmaElement::Bf8;
}

llvm::Error emu::executeMma(const MmaInstr &instr, unsigned waveSize,
                            Fp8Format fp8Format, ArrayRef<uint8_t> a,
                            ArrayRef<uint8_t> b, ArrayRef<uint8_t> c,
                            llvm::MutableArrayRef<uint8_t> d) {
  return executeMma(instr, waveSize, fp8Format, a, b, c, d, MmaSignedness());
}

llvm::Error emu::executeMma(const MmaInstr &instr, unsigned waveSize,
                            Fp8Format fp8Format, ArrayRef<uint8_t> a,
                            ArrayRef<uint8_t> b, ArrayRef<uint8_t> c,
                            llvm::MutableArrayRef<uint8_t> d,
                            MmaSignedness signedness) {
  llvm::Expected<MmaLayouts> layouts = getMmaLayouts(instr, waveSize);
  if (!layouts)
    return layouts.takeError();
  if ((isFp8(instr.a) || isFp8(instr.b)) && fp8Format == Fp8Format::None)
    return makeError(instr.name +
                     llvm::Twine(" needs a chip with 8-bit floats"));
  bool isInteger = instr.acc == MmaElement::I32;
  if (isInteger != (instr.a == MmaElement::I8 && instr.b == MmaElement::I8))
    return makeError(instr.name + llvm::Twine(": unsupported types"));

  unsigned operandElements = instr.getOperandElementsPerLane(waveSize);
  size_t aBytes =
      size_t(waveSize) * operandElements * getMmaElementBits(instr.a) / 8;
  size_t bBytes =
      size_t(waveSize) * operandElements * getMmaElementBits(instr.b) / 8;
  size_t cBytes = size_t(waveSize) * getMmaAccumulatorBytes(instr, waveSize);
  auto checkSize = [&](llvm::StringRef what, size_t actual,
                       size_t expected) -> llvm::Error {
    if (actual == expected)
      return llvm::Error::success();
    return makeError(llvm::formatv("{0} in wave{1}: {2} holds {3} bytes, "
                                   "expected {4}",
                                   instr.name, waveSize, what, actual,
                                   expected));
  };
  if (llvm::Error error = checkSize("A", a.size(), aBytes))
    return error;
  if (llvm::Error error = checkSize("B", b.size(), bBytes))
    return error;
  if (llvm::Error error = checkSize("C", c.size(), cBytes))
    return error;
  if (llvm::Error error = checkSize("D", d.size(), cBytes))
    return error;

  llvm::Expected<Gathered> matA =
      gatherOperand(instr, "A", layouts->a, instr.a, waveSize, a);
  if (!matA)
    return matA.takeError();
  llvm::Expected<Gathered> matB =
      gatherOperand(instr, "B", layouts->b, instr.b, waveSize, b);
  if (!matB)
    return matB.takeError();
  unsigned m = instr.m, n = instr.n, k = instr.k;
  SmallVector<double, 0> valA(m * k), valB(k * n);
  for (unsigned i = 0; i < m * k; ++i)
    valA[i] =
        decodeOperand(matA->bits[i], instr.a, fp8Format, signedness.unsignedA);
  for (unsigned i = 0; i < k * n; ++i)
    valB[i] =
        decodeOperand(matB->bits[i], instr.b, fp8Format, signedness.unsignedB);

  // C: the first holder of each (m, n) in (lane, element) order, which is
  // the even element of gfx11's 16-bit accumulators. D goes to the same
  // place; other copies keep C.
  unsigned accElements = instr.getAccumulatorElementsPerLane(waveSize);
  unsigned accBits = getMmaElementBits(instr.acc);
  SmallVector<uint32_t, 0> cBits(m * n, 0);
  SmallVector<int, 0> cSlot(m * n, -1); // lane * accElements + element
  for (unsigned lane = 0; lane < waveSize; ++lane) {
    for (unsigned e = 0; e < accElements; ++e) {
      SmallVector<int32_t, 4> mn =
          layouts->c.apply({int32_t(e), int32_t(lane)});
      unsigned index = mn[0] * n + mn[1];
      if (cSlot[index] >= 0)
        continue;
      cSlot[index] = lane * accElements + e;
      cBits[index] = readElement(c, lane * accElements + e, accBits);
    }
  }
  if (llvm::is_contained(cSlot, -1))
    return makeError(instr.name +
                     llvm::Twine(": the accumulator layout does not cover "
                                 "its matrix"));

  SmallVector<uint32_t, 0> dBits(m * n);
  for (unsigned row = 0; row < m; ++row) {
    for (unsigned col = 0; col < n; ++col) {
      unsigned index = row * n + col;
      if (isInteger) {
        int64_t sum = int32_t(cBits[index]);
        for (unsigned i = 0; i < k; ++i)
          sum += int64_t(valA[row * k + i]) * int64_t(valB[i * n + col]);
        dBits[index] = uint32_t(uint64_t(sum)); // wraps
        continue;
      }
      // Fast path: the products are exact in double; if no addition in
      // double rounds (checked with TwoSum), the double sum is the exact sum
      // and one conversion to f32 is the single rounding.
      if (instr.acc != MmaElement::F16 && instr.acc != MmaElement::Bf16) {
        double total = llvm::bit_cast<float>(cBits[index]);
        bool exact = std::isfinite(total);
        for (unsigned i = 0; i < k && exact; ++i) {
          double product = valA[row * k + i] * valB[i * n + col];
          double next = total + product;
          double back = next - total;
          double error = (total - (next - back)) + (product - back);
          exact = std::isfinite(next) && error == 0.0;
          total = next;
        }
        if (exact && total != 0.0) {
          dBits[index] = llvm::bit_cast<uint32_t>(float(total));
          continue;
        }
      }
      ExactSum sum;
      switch (instr.acc) {
      case MmaElement::F16:
        sum.add(halfToFloat(uint16_t(cBits[index])));
        break;
      case MmaElement::Bf16:
        sum.add(bf16ToFloat(uint16_t(cBits[index])));
        break;
      default:
        sum.add(llvm::bit_cast<float>(cBits[index]));
        break;
      }
      for (unsigned i = 0; i < k; ++i)
        sum.add(valA[row * k + i] * valB[i * n + col]); // exact in double
      switch (instr.acc) {
      case MmaElement::F16:
        // On the f16 grid already: the conversion is exact or overflows.
        dBits[index] = floatToHalf(float(sum.round(kHalf)));
        break;
      case MmaElement::Bf16:
        dBits[index] = floatToBf16(float(sum.round({7, -126})));
        break;
      default:
        dBits[index] = llvm::bit_cast<uint32_t>(float(sum.round({23, -126})));
        break;
      }
    }
  }

  if (d.data() != c.data())
    std::memmove(d.data(), c.data(), c.size());
  for (unsigned index = 0; index < m * n; ++index)
    writeElement(d, cSlot[index], accBits, dBits[index]);
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Lane exchanges
//===----------------------------------------------------------------------===//

SmallVector<uint32_t, 64> emu::dsBpermute(ArrayRef<uint32_t> addresses,
                                          ArrayRef<uint32_t> values) {
  assert(addresses.size() == values.size() && "one address per lane");
  size_t waveSize = values.size();
  SmallVector<uint32_t, 64> result(waveSize);
  for (size_t lane = 0; lane < waveSize; ++lane)
    result[lane] = values[(addresses[lane] / 4) % waveSize];
  return result;
}

SmallVector<uint32_t, 64> emu::dsSwizzle(ArrayRef<uint32_t> values,
                                         uint32_t pattern) {
  size_t waveSize = values.size();
  SmallVector<uint32_t, 64> result(waveSize);
  for (size_t lane = 0; lane < waveSize; ++lane) {
    size_t source;
    if (pattern & 0x8000) {
      source = (lane & ~size_t(3)) + ((pattern >> (2 * (lane % 4))) & 3);
    } else {
      uint32_t andMask = pattern & 0x1f, orMask = (pattern >> 5) & 0x1f,
               xorMask = (pattern >> 10) & 0x1f;
      uint32_t inGroup = (((lane & 31) & andMask) | orMask) ^ xorMask;
      source = (lane & ~size_t(31)) + (inGroup & 31);
    }
    result[lane] = source < waveSize ? values[source] : 0;
  }
  return result;
}

llvm::Expected<SmallVector<uint32_t, 64>>
emu::updateDpp(ArrayRef<uint32_t> old, ArrayRef<uint32_t> src, uint32_t dppCtrl,
               uint32_t rowMask, uint32_t bankMask, bool boundCtrl) {
  if (old.size() != src.size())
    return makeError(llvm::formatv("DPP: {0} old values for {1} lanes",
                                   old.size(), src.size()));
  int waveSize = int(src.size());
  // The source lane of `lane`, or -1 when it is invalid.
  std::function<int(int)> sourceOf;
  uint32_t amount = dppCtrl & 0xf;
  if (dppCtrl <= 0xff) {
    sourceOf = [=](int lane) {
      return (lane & ~3) + int((dppCtrl >> (2 * (lane % 4))) & 3);
    };
  } else if (dppCtrl >= 0x101 && dppCtrl <= 0x10f) { // row_shl
    sourceOf = [=](int lane) {
      return lane % 16 + int(amount) < 16 ? lane + int(amount) : -1;
    };
  } else if (dppCtrl >= 0x111 && dppCtrl <= 0x11f) { // row_shr
    sourceOf = [=](int lane) {
      return lane % 16 >= int(amount) ? lane - int(amount) : -1;
    };
  } else if (dppCtrl >= 0x121 && dppCtrl <= 0x12f) { // row_ror
    sourceOf = [=](int lane) {
      return (lane & ~15) + (lane % 16 + 16 - int(amount)) % 16;
    };
  } else {
    switch (dppCtrl) {
    case 0x130: // wave_shl1
      sourceOf = [=](int lane) { return lane + 1 < waveSize ? lane + 1 : -1; };
      break;
    case 0x134: // wave_rol1
      sourceOf = [=](int lane) { return (lane + 1) % waveSize; };
      break;
    case 0x138: // wave_shr1
      sourceOf = [=](int lane) { return lane - 1; };
      break;
    case 0x13c: // wave_ror1
      sourceOf = [=](int lane) { return (lane + waveSize - 1) % waveSize; };
      break;
    case 0x140: // row_mirror
      sourceOf = [=](int lane) { return (lane & ~15) + 15 - lane % 16; };
      break;
    case 0x141: // row_half_mirror
      sourceOf = [=](int lane) { return (lane & ~7) + 7 - lane % 8; };
      break;
    case 0x142: // row_bcast15
      sourceOf = [=](int lane) { return lane >= 16 ? (lane & ~15) - 1 : -1; };
      break;
    case 0x143: // row_bcast31
      sourceOf = [=](int lane) { return lane >= 32 ? 31 : -1; };
      break;
    default:
      return makeError(llvm::formatv("unknown DPP control {0:x}", dppCtrl));
    }
  }
  SmallVector<uint32_t, 64> result(waveSize);
  for (int lane = 0; lane < waveSize; ++lane) {
    bool enabled =
        ((rowMask >> (lane / 16)) & 1) && ((bankMask >> ((lane % 16) / 4)) & 1);
    if (!enabled) {
      result[lane] = old[lane];
      continue;
    }
    int source = sourceOf(lane);
    if (source >= 0 && source < waveSize)
      result[lane] = src[source];
    else
      result[lane] = boundCtrl ? 0 : old[lane];
  }
  return result;
}

uint32_t emu::mbcntLo(unsigned lane, uint32_t mask, uint32_t add) {
  uint64_t below = (uint64_t(1) << std::min(lane, 32u)) - 1;
  return add + llvm::popcount(uint64_t(mask) & below);
}

uint32_t emu::mbcntHi(unsigned lane, uint32_t mask, uint32_t add) {
  unsigned high = lane > 32 ? lane - 32 : 0;
  uint64_t below = (uint64_t(1) << std::min(high, 32u)) - 1;
  return add + llvm::popcount(uint64_t(mask) & below);
}

std::pair<llvm::SmallVector<uint32_t, 64>, llvm::SmallVector<uint32_t, 64>>
emu::permlaneSwap(llvm::ArrayRef<uint32_t> old, llvm::ArrayRef<uint32_t> src,
                  unsigned rows) {
  llvm::SmallVector<uint32_t, 64> newOld(old.begin(), old.end());
  llvm::SmallVector<uint32_t, 64> newSrc(src.begin(), src.end());
  for (unsigned lane = 0; lane < old.size(); ++lane) {
    bool oddRow = (lane / rows) % 2;
    if (oddRow)
      newOld[lane] = src[lane - rows];
    else if (lane + rows < src.size())
      newSrc[lane] = old[lane + rows];
  }
  return {newOld, newSrc};
}

llvm::SmallVector<uint64_t, 64>
emu::transposeRead16(llvm::ArrayRef<uint64_t> loaded) {
  auto element = [](uint64_t word, unsigned index) -> uint64_t {
    return (word >> (16 * index)) & 0xffff;
  };
  llvm::SmallVector<uint64_t, 64> result(loaded.size(), 0);
  for (unsigned lane = 0; lane < loaded.size(); ++lane) {
    unsigned group = lane / 16 * 16, j = lane % 16;
    for (unsigned e = 0; e < 4; ++e)
      result[lane] |= element(loaded[group + 4 * e + j / 4], j % 4) << (16 * e);
  }
  return result;
}
