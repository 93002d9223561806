//===- MatmulCheck.cpp - Host reference for tessel.matmul -------*- C++ -*-===//

#include "MatmulCheck.h"

#include "tessel/Emulator/Collectives.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace tessel;

std::optional<std::string> tessel::getNpyDtype(Type type) {
  if (type.isF32())
    return "<f4";
  if (type.isF64())
    return "<f8";
  if (type.isF16())
    return "<f2";
  if (type.isBF16())
    return "<u2";
  if (isa<FloatType>(type) && type.getIntOrFloatBitWidth() == 8)
    return "|u1";
  if (type.isInteger(8))
    return "|i1";
  if (type.isInteger(16))
    return "<i2";
  if (type.isInteger(32))
    return "<i4";
  if (type.isInteger(64))
    return "<i8";
  return std::nullopt;
}

static std::optional<emu::Fp8Kind> fp8KindOf(Type type) {
  if (isa<Float8E4M3FNUZType>(type))
    return emu::Fp8Kind::E4M3Fnuz;
  if (isa<Float8E5M2FNUZType>(type))
    return emu::Fp8Kind::E5M2Fnuz;
  if (isa<Float8E4M3FNType>(type))
    return emu::Fp8Kind::E4M3Fn;
  if (isa<Float8E5M2Type>(type))
    return emu::Fp8Kind::E5M2;
  return std::nullopt;
}

/// `value` wrapped to a `width`-bit two's complement integer (i1 as 0 or
/// 1, as arith's i1 results are read).
static int64_t wrapInteger(int64_t value, unsigned width) {
  if (width == 1)
    return value & 1;
  if (width >= 64)
    return value;
  uint64_t bits = uint64_t(value) & ((uint64_t(1) << width) - 1);
  uint64_t sign = uint64_t(1) << (width - 1);
  return int64_t(bits ^ sign) - int64_t(sign);
}

/// `value` truncated toward zero, 0 for NaN and clamped to int64's range
/// (converting a double beyond it is undefined in C++).
static int64_t toInt64(double value) {
  if (std::isnan(value))
    return 0;
  if (value >= 0x1p63)
    return INT64_MAX;
  if (value < -0x1p63)
    return INT64_MIN;
  return int64_t(value);
}

double tessel::roundToType(Type type, double value) {
  if (type.isF64())
    return value;
  if (type.isF32())
    return float(value);
  if (type.isF16())
    return emu::halfToFloat(emu::floatToHalf(float(value)));
  if (type.isBF16())
    return emu::bf16ToFloat(emu::floatToBf16(float(value)));
  if (std::optional<emu::Fp8Kind> kind = fp8KindOf(type))
    return emu::decodeFp8(emu::encodeFp8(value, *kind, /*saturate=*/true),
                          *kind);
  if (auto integer = dyn_cast<IntegerType>(type))
    return double(wrapInteger(toInt64(value), integer.getWidth()));
  return double(toInt64(value)); // index
}

/// Writes `value` as element `index` of `array` (rounding to the type) and
/// returns the value the element then holds.
static double storeElement(Type type, NpyArray &array, int64_t index,
                           double value) {
  char *at = array.data.data() + index * array.getElementBytes();
  double held = roundToType(type, value);
  if (type.isF32()) {
    float v = held;
    std::memcpy(at, &v, 4);
  } else if (type.isF64()) {
    std::memcpy(at, &held, 8);
  } else if (type.isF16()) {
    uint16_t bits = emu::floatToHalf(held);
    std::memcpy(at, &bits, 2);
  } else if (type.isBF16()) {
    uint16_t bits = emu::floatToBf16(held);
    std::memcpy(at, &bits, 2);
  } else if (std::optional<emu::Fp8Kind> kind = fp8KindOf(type)) {
    uint8_t bits = emu::encodeFp8(held, *kind, /*saturate=*/true);
    std::memcpy(at, &bits, 1);
  } else {
    int64_t integer = int64_t(held);
    std::memcpy(at, &integer, array.getElementBytes()); // little-endian
  }
  return held;
}

static double loadElement(Type type, const NpyArray &array, int64_t index) {
  const char *at = array.data.data() + index * array.getElementBytes();
  if (type.isF32()) {
    float v;
    std::memcpy(&v, at, 4);
    return v;
  }
  if (type.isF64()) {
    double v;
    std::memcpy(&v, at, 8);
    return v;
  }
  if (type.isF16() || type.isBF16()) {
    uint16_t bits;
    std::memcpy(&bits, at, 2);
    return type.isF16() ? emu::halfToFloat(bits) : emu::bf16ToFloat(bits);
  }
  if (std::optional<emu::Fp8Kind> kind = fp8KindOf(type))
    return emu::decodeFp8(uint8_t(*at), *kind);
  if (type.isInteger(8))
    return int8_t(*at);
  if (type.isInteger(16)) {
    int16_t v;
    std::memcpy(&v, at, 2);
    return v;
  }
  if (type.isInteger(32)) {
    int32_t v;
    std::memcpy(&v, at, 4);
    return v;
  }
  int64_t v;
  std::memcpy(&v, at, 8);
  return v;
}

HostArray tessel::makeRandomArray(Type type, ArrayRef<int64_t> shape,
                                  std::mt19937 &rng) {
  HostArray host;
  // Index scalars have no .npy dtype; they are held as int64.
  host.npy.dtype = getNpyDtype(type).value_or("<i8");
  host.npy.shape.assign(shape.begin(), shape.end());
  int64_t count = host.npy.getNumElements();
  host.npy.data.assign(count * host.npy.getElementBytes(), 0);
  host.values.resize(count);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> small(-8, 8);
  for (int64_t i = 0; i < count; ++i) {
    double value = isa<IntegerType>(type) ? double(small(rng)) : real(rng);
    host.values[i] = storeElement(type, host.npy, i, value);
  }
  return host;
}

HostArray tessel::makeScalarArray(Type type, double value) {
  HostArray host;
  // Index scalars have no .npy dtype; they are held as int64.
  host.npy.dtype = getNpyDtype(type).value_or("<i8");
  host.npy.shape = {1};
  host.npy.data.assign(host.npy.getElementBytes(), 0);
  host.values = {storeElement(type, host.npy, 0, value)};
  return host;
}

HostArray tessel::makeArrayFromValues(Type type, ArrayRef<int64_t> shape,
                                      ArrayRef<double> values) {
  HostArray host;
  host.npy.dtype = getNpyDtype(type).value_or("<i8");
  host.npy.shape.assign(shape.begin(), shape.end());
  host.npy.data.assign(values.size() * host.npy.getElementBytes(), 0);
  for (auto [index, value] : llvm::enumerate(values))
    host.values.push_back(storeElement(type, host.npy, index, value));
  return host;
}

std::vector<double> tessel::decodeArray(Type type, const NpyArray &array) {
  std::vector<double> values(array.getNumElements());
  for (int64_t i = 0; i < int64_t(values.size()); ++i)
    values[i] = loadElement(type, array, i);
  return values;
}

namespace {
/// Evaluates an epilogue block as its IR says: every result rounded to its
/// type (f32 math rounds to f32, so an arith.fptosi truncates the same
/// value the kernel truncates), integers wrapped to their width, and
/// arith.fptosi of a value outside the result's range poison (propagated
/// to whatever uses it).
class EpilogueInterpreter {
public:
  /// The yielded value of `block` on `arguments`, or failure (diagnosed)
  /// for an op it does not know.
  FailureOr<double> run(Block &block, ArrayRef<double> arguments, bool &poison);

private:
  LogicalResult evaluate(Operation &op);
  double real(Value value) { return reals.lookup(value); }
  int64_t integer(Value value) { return integers.lookup(value); }
  double number(Value value) {
    return isa<FloatType>(value.getType()) ? real(value)
                                           : double(integer(value));
  }
  void set(Value value, double number) {
    if (isa<FloatType>(value.getType())) {
      reals[value] = roundToType(value.getType(), number);
      return;
    }
    setInteger(value, toInt64(number));
  }
  void setInteger(Value value, int64_t number) {
    unsigned width = value.getType().isIndex()
                         ? 64
                         : value.getType().getIntOrFloatBitWidth();
    integers[value] = wrapInteger(number, width);
  }
  LogicalResult evaluateCompare(arith::CmpFOp cmp);

  DenseMap<Value, double> reals;
  DenseMap<Value, int64_t> integers;
  DenseSet<Value> poisoned;
};
} // namespace

FailureOr<double> EpilogueInterpreter::run(Block &block,
                                           ArrayRef<double> arguments,
                                           bool &poison) {
  reals.clear();
  integers.clear();
  poisoned.clear();
  for (auto [argument, value] : llvm::zip(block.getArguments(), arguments))
    set(argument, value);
  for (Operation &op : block) {
    if (isa<YieldOp>(op)) {
      Value result = op.getOperand(0);
      poison = poisoned.contains(result);
      return number(result);
    }
    if (failed(evaluate(op)))
      return failure();
  }
  return failure();
}

LogicalResult EpilogueInterpreter::evaluateCompare(arith::CmpFOp cmp) {
  double x = real(cmp.getLhs()), y = real(cmp.getRhs());
  using P = arith::CmpFPredicate;
  P predicate = cmp.getPredicate();
  // With a NaN operand the U predicates hold and the O ones do not.
  if (std::isnan(x) || std::isnan(y)) {
    if (predicate == P::AlwaysFalse || predicate == P::AlwaysTrue)
      setInteger(cmp.getResult(), predicate == P::AlwaysTrue);
    else
      setInteger(cmp.getResult(),
                 llvm::is_contained(
                     {P::UEQ, P::UGT, P::UGE, P::ULT, P::ULE, P::UNE, P::UNO},
                     predicate));
    return success();
  }
  bool result = false;
  switch (predicate) {
  case P::OEQ:
  case P::UEQ:
    result = x == y;
    break;
  case P::OGT:
  case P::UGT:
    result = x > y;
    break;
  case P::OGE:
  case P::UGE:
    result = x >= y;
    break;
  case P::OLT:
  case P::ULT:
    result = x < y;
    break;
  case P::OLE:
  case P::ULE:
    result = x <= y;
    break;
  case P::ONE:
  case P::UNE:
    result = x != y;
    break;
  case P::ORD:
  case P::AlwaysTrue:
    result = true;
    break;
  case P::UNO:
  case P::AlwaysFalse:
    result = false;
    break;
  }
  setInteger(cmp.getResult(), result);
  return success();
}

LogicalResult EpilogueInterpreter::evaluate(Operation &op) {
  Value result = op.getResult(0);
  // Poison flows through every op but a select that does not pick it.
  if (auto select = dyn_cast<arith::SelectOp>(op)) {
    bool condition = integer(select.getCondition()) != 0;
    Value picked = condition ? select.getTrueValue() : select.getFalseValue();
    if (poisoned.contains(select.getCondition()) || poisoned.contains(picked))
      poisoned.insert(result);
    if (isa<FloatType>(result.getType()))
      reals[result] = real(picked);
    else
      integers[result] = integer(picked);
    return success();
  }
  if (llvm::any_of(op.getOperands(),
                   [&](Value operand) { return poisoned.contains(operand); }))
    poisoned.insert(result);

  auto unary = [&](double (*fn)(double)) {
    set(result, fn(real(op.getOperand(0))));
  };
  Value lhs = op.getNumOperands() > 0 ? op.getOperand(0) : Value();
  Value rhs = op.getNumOperands() > 1 ? op.getOperand(1) : Value();
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    if (auto f = dyn_cast<FloatAttr>(constant.getValue()))
      set(result, f.getValueAsDouble());
    else if (auto i = dyn_cast<IntegerAttr>(constant.getValue());
             i && i.getValue().getBitWidth() <= 64)
      setInteger(result, i.getValue().getBitWidth() == 1
                             ? int64_t(i.getValue().getZExtValue())
                             : i.getValue().getSExtValue());
    else
      return op.emitError() << "the host reference does not evaluate this "
                               "constant";
  } else if (isa<arith::AddFOp>(op)) {
    set(result, real(lhs) + real(rhs));
  } else if (isa<arith::SubFOp>(op)) {
    set(result, real(lhs) - real(rhs));
  } else if (isa<arith::MulFOp>(op)) {
    set(result, real(lhs) * real(rhs));
  } else if (isa<arith::DivFOp>(op)) {
    set(result, real(lhs) / real(rhs));
  } else if (isa<arith::NegFOp>(op)) {
    set(result, -real(lhs));
  } else if (isa<arith::MaximumFOp, arith::MinimumFOp>(op)) {
    // maximumf/minimumf propagate NaN.
    double x = real(lhs), y = real(rhs);
    bool max = isa<arith::MaximumFOp>(op);
    set(result, std::isnan(x) || std::isnan(y) ? NAN
                : max                          ? std::max(x, y)
                                               : std::min(x, y));
  } else if (isa<arith::MaxNumFOp, arith::MinNumFOp>(op)) {
    // maxnumf/minnumf return the other operand of a NaN.
    bool max = isa<arith::MaxNumFOp>(op);
    set(result, max ? std::fmax(real(lhs), real(rhs))
                    : std::fmin(real(lhs), real(rhs)));
  } else if (isa<arith::AddIOp>(op)) {
    setInteger(result,
               int64_t(uint64_t(integer(lhs)) + uint64_t(integer(rhs))));
  } else if (isa<arith::SubIOp>(op)) {
    setInteger(result,
               int64_t(uint64_t(integer(lhs)) - uint64_t(integer(rhs))));
  } else if (isa<arith::MulIOp>(op)) {
    setInteger(result,
               int64_t(uint64_t(integer(lhs)) * uint64_t(integer(rhs))));
  } else if (isa<arith::MaxSIOp>(op)) {
    setInteger(result, std::max(integer(lhs), integer(rhs)));
  } else if (isa<arith::MinSIOp>(op)) {
    setInteger(result, std::min(integer(lhs), integer(rhs)));
  } else if (isa<arith::ExtFOp, arith::TruncFOp>(op)) {
    set(result, real(lhs));
  } else if (isa<arith::SIToFPOp>(op)) {
    set(result, double(integer(lhs)));
  } else if (isa<arith::ExtSIOp, arith::TruncIOp>(op)) {
    setInteger(result, integer(lhs));
  } else if (isa<arith::FPToSIOp>(op)) {
    // Truncation toward zero; a value the result type cannot hold is poison.
    double truncated = std::trunc(real(lhs));
    unsigned width = result.getType().getIntOrFloatBitWidth();
    double limit = std::ldexp(1.0, int(width) - 1);
    if (std::isnan(truncated) || truncated < -limit || truncated >= limit) {
      poisoned.insert(result);
      truncated = 0;
    }
    setInteger(result, int64_t(truncated));
  } else if (auto cmp = dyn_cast<arith::CmpFOp>(op)) {
    return evaluateCompare(cmp);
  } else if (isa<math::ExpOp>(op)) {
    unary([](double x) { return std::exp(x); });
  } else if (isa<math::Exp2Op>(op)) {
    unary([](double x) { return std::exp2(x); });
  } else if (isa<math::LogOp>(op)) {
    unary([](double x) { return std::log(x); });
  } else if (isa<math::TanhOp>(op)) {
    unary([](double x) { return std::tanh(x); });
  } else if (isa<math::ErfOp>(op)) {
    unary([](double x) { return std::erf(x); });
  } else if (isa<math::SqrtOp>(op)) {
    unary([](double x) { return std::sqrt(x); });
  } else if (isa<math::RsqrtOp>(op)) {
    unary([](double x) { return 1.0 / std::sqrt(x); });
  } else if (isa<math::AbsFOp>(op)) {
    unary([](double x) { return std::fabs(x); });
  } else {
    return op.emitError() << "the host reference does not evaluate '"
                          << op.getName() << "'";
  }
  return success();
}

/// `a * b * c` or nullopt on overflow.
static std::optional<int64_t> product(ArrayRef<int64_t> factors) {
  int64_t result = 1;
  for (int64_t factor : factors)
    if (factor < 0 || llvm::MulOverflow(result, factor, result))
      return std::nullopt;
  return result;
}

/// Fails (on `op`) unless `array` holds exactly `count` values.
static LogicalResult checkCount(Operation *op, llvm::StringRef what,
                                const HostArray &array,
                                std::optional<int64_t> count) {
  if (count && int64_t(array.values.size()) == *count)
    return success();
  return op->emitError() << "host reference: " << what << " holds "
                         << array.values.size() << " values but the sizes "
                         << "need "
                         << (count ? std::to_string(*count)
                                   : std::string("more than 2^63"));
}

FailureOr<MatmulReference>
tessel::computeMatmulReference(MatmulOp op, const MatmulSizes &sizes,
                               const HostArray &a, const HostArray &b,
                               ArrayRef<const HostArray *> extras) {
  int64_t batches = std::max<int64_t>(sizes.batch, 1);
  int64_t m = sizes.m, n = sizes.n, k = sizes.k;
  std::optional<int64_t> outCount = product({batches, m, n});
  if (failed(checkCount(op, "A", a, product({batches, m, k}))) ||
      failed(checkCount(op, "B", b, product({batches, k, n}))) || !outCount)
    return failure();
  // Each extra broadcasts against [batch, M, N]: every dimension 1 or the
  // size it stands for.
  int64_t outShape[3] = {batches, m, n};
  for (auto [index, extra] : llvm::enumerate(extras)) {
    ArrayRef<int64_t> shape = extra->npy.shape;
    bool broadcasts = shape.size() <= 3;
    for (size_t d = 0; broadcasts && d < shape.size(); ++d)
      broadcasts = shape[d] == 1 || shape[d] == outShape[3 - shape.size() + d];
    if (!broadcasts)
      return op.emitError() << "host reference: extra operand " << index
                            << " does not broadcast against [" << batches
                            << ", " << m << ", " << n << "]";
    if (failed(checkCount(op, "an extra operand", *extra, product(shape))))
      return failure();
  }

  MatmulReference reference;
  std::vector<double> &c = reference.values;
  c.assign(*outCount, 0.0);
  bool integer = op.getA().getType().getElementType().isSignlessInteger(8);
  for (int64_t bi = 0; bi < batches && *outCount; ++bi)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t l = 0; l < k; ++l)
          sum +=
              a.values[(bi * m + i) * k + l] * b.values[(bi * k + l) * n + j];
        if (integer) // i32 accumulation wraps
          sum = double(wrapInteger(toInt64(sum), 32));
        c[(bi * m + i) * n + j] = sum;
      }
  Region &region = op.getEpilogue();
  if (region.empty())
    return reference;
  reference.poison.assign(c.size(), false);
  EpilogueInterpreter interpreter;
  SmallVector<double> arguments(1 + extras.size());
  for (int64_t flat = 0; flat < int64_t(c.size()); ++flat) {
    int64_t coords[3] = {flat / (m * n), (flat / n) % m, flat % n};
    arguments[0] = c[flat];
    for (auto [index, extra] : llvm::enumerate(extras)) {
      ArrayRef<int64_t> shape = extra->npy.shape;
      int64_t element = 0;
      for (size_t d = 0; d < shape.size(); ++d) {
        int64_t coord = coords[3 - shape.size() + d];
        element = element * shape[d] + (shape[d] == 1 ? 0 : coord);
      }
      arguments[1 + index] = extra->values[element];
    }
    bool poison = false;
    FailureOr<double> value =
        interpreter.run(region.front(), arguments, poison);
    if (failed(value))
      return failure();
    c[flat] = *value;
    reference.poison[flat] = poison;
    reference.poisonCount += poison;
  }
  return reference;
}

LogicalResult tessel::computeAttentionReference(
    AttentionOp op, const AttentionSizes &sizes, const HostArray &q,
    const HostArray &k, const HostArray &v, const HostArray *sinks,
    std::vector<double> &o, std::vector<double> &lse,
    std::array<double, 3> descale) {
  return computeAttentionReference(op, op.getEffectiveScale(),
                                   op.getKeyWindow(), sizes, q, k, v, sinks, o,
                                   lse, descale);
}

LogicalResult tessel::computeAttentionReference(
    Operation *op, double softmaxScale, KeyWindow window,
    const AttentionSizes &sizes, const HostArray &q, const HostArray &k,
    const HostArray &v, const HostArray *sinks, std::vector<double> &o,
    std::vector<double> &lse, std::array<double, 3> descale) {
  int64_t d = sizes.headDim, dv = sizes.headDimV, sq = sizes.seqQ,
          skv = sizes.seqKV;
  if (sizes.kvHeads <= 0 ? sizes.heads != 0 : sizes.heads % sizes.kvHeads)
    return op->emitError() << "host reference: " << sizes.heads
                           << " heads are not a multiple of " << sizes.kvHeads
                           << " kv heads";
  std::optional<int64_t> qCount = product({sizes.batch, sizes.heads, sq, d});
  std::optional<int64_t> oCount = product({sizes.batch, sizes.heads, sq, dv});
  std::optional<int64_t> lseCount = product({sizes.batch, sizes.heads, sq});
  if (failed(checkCount(op, "Q", q, qCount)) ||
      failed(checkCount(op, "K", k,
                        product({sizes.batch, sizes.kvHeads, skv, d}))) ||
      failed(checkCount(op, "V", v,
                        product({sizes.batch, sizes.kvHeads, skv, dv}))) ||
      (sinks && failed(checkCount(op, "sinks", *sinks, sizes.heads))) ||
      !lseCount)
    return failure();
  // A row that sees no key writes O = 0 and logsumexp = +inf, the convention
  // FlashAttention uses (docs/robustness.md).
  o.assign(*oCount, 0.0);
  lse.assign(*lseCount, INFINITY);
  if (*lseCount == 0)
    return success();
  int64_t group = sizes.heads / sizes.kvHeads;
  double scale = softmaxScale * descale[0] * descale[1];
  std::vector<double> scores(skv);
  for (int64_t b = 0; b < sizes.batch; ++b)
    for (int64_t h = 0; h < sizes.heads; ++h) {
      int64_t kvh = h / group;
      const double *kBase =
          k.values.data() + ((b * sizes.kvHeads + kvh) * skv) * d;
      const double *vBase =
          v.values.data() + ((b * sizes.kvHeads + kvh) * skv) * dv;
      double sink = sinks ? sinks->values[h] : -INFINITY;
      for (int64_t i = 0; i < sq; ++i) {
        const double *qRow =
            q.values.data() + ((b * sizes.heads + h) * sq + i) * d;
        int64_t first = window.begin(i, sq, skv), end = window.end(i, sq, skv);
        if (end <= first && !sinks)
          continue;
        // The sink is one more logit with no value.
        double max = sink;
        for (int64_t j = first; j < end; ++j) {
          double dot = 0;
          for (int64_t c = 0; c < d; ++c)
            dot += qRow[c] * kBase[j * d + c];
          scores[j] = dot * scale;
          max = std::max(max, scores[j]);
        }
        if (max == -INFINITY)
          continue;
        double sum = sinks ? std::exp(sink - max) : 0.0;
        for (int64_t j = first; j < end; ++j)
          sum += std::exp(scores[j] - max);
        double *oRow = o.data() + ((b * sizes.heads + h) * sq + i) * dv;
        for (int64_t j = first; j < end; ++j) {
          double p = std::exp(scores[j] - max) / sum * descale[2];
          for (int64_t c = 0; c < dv; ++c)
            oRow[c] += p * vBase[j * dv + c];
        }
        lse[(b * sizes.heads + h) * sq + i] = max + std::log(sum);
      }
    }
  return success();
}

LogicalResult tessel::computeAttentionGradReference(
    AttentionGradOp op, const AttentionSizes &sizes, const HostArray &q,
    const HostArray &k, const HostArray &v, const HostArray &o,
    const HostArray &gradO, const HostArray &lse, std::vector<double> &gradQ,
    std::vector<double> &gradK, std::vector<double> &gradV) {
  int64_t d = sizes.headDim, dv = sizes.headDimV, sq = sizes.seqQ,
          skv = sizes.seqKV;
  if (sizes.kvHeads <= 0 ? sizes.heads != 0 : sizes.heads % sizes.kvHeads)
    return op.emitError() << "host reference: " << sizes.heads
                          << " heads are not a multiple of " << sizes.kvHeads
                          << " kv heads";
  std::optional<int64_t> qCount = product({sizes.batch, sizes.heads, sq, d});
  std::optional<int64_t> oCount = product({sizes.batch, sizes.heads, sq, dv});
  std::optional<int64_t> kCount = product({sizes.batch, sizes.kvHeads, skv, d});
  std::optional<int64_t> vCount =
      product({sizes.batch, sizes.kvHeads, skv, dv});
  if (failed(checkCount(op, "Q", q, qCount)) ||
      failed(checkCount(op, "K", k, kCount)) ||
      failed(checkCount(op, "V", v, vCount)) ||
      failed(checkCount(op, "O", o, oCount)) ||
      failed(checkCount(op, "dO", gradO, oCount)) ||
      failed(
          checkCount(op, "lse", lse, product({sizes.batch, sizes.heads, sq}))))
    return failure();
  gradQ.assign(*qCount, 0.0);
  gradK.assign(*kCount, 0.0);
  gradV.assign(*vCount, 0.0);
  if (sizes.heads == 0)
    return success();
  int64_t group = sizes.heads / sizes.kvHeads;
  double scale = op.getEffectiveScale();
  KeyWindow window = op.getKeyWindow();
  for (int64_t b = 0; b < sizes.batch; ++b)
    for (int64_t h = 0; h < sizes.heads; ++h) {
      int64_t kvh = h / group;
      int64_t kvRow = (b * sizes.kvHeads + kvh) * skv;
      for (int64_t i = 0; i < sq; ++i) {
        int64_t row = (b * sizes.heads + h) * sq + i;
        const double *qRow = q.values.data() + row * d;
        const double *oRow = o.values.data() + row * dv;
        const double *gradORow = gradO.values.data() + row * dv;
        double rowLse = lse.values[row];
        double delta = 0;
        for (int64_t c = 0; c < dv; ++c)
          delta += gradORow[c] * oRow[c];
        int64_t first = window.begin(i, sq, skv), end = window.end(i, sq, skv);
        for (int64_t j = first; j < end; ++j) {
          const double *kRow = k.values.data() + (kvRow + j) * d;
          const double *vRow = v.values.data() + (kvRow + j) * dv;
          double dot = 0, gradP = 0;
          for (int64_t c = 0; c < d; ++c)
            dot += qRow[c] * kRow[c];
          for (int64_t c = 0; c < dv; ++c)
            gradP += gradORow[c] * vRow[c];
          double p = std::exp(dot * scale - rowLse);
          double gradS = p * (gradP - delta);
          double *gradVRow = gradV.data() + (kvRow + j) * dv;
          for (int64_t c = 0; c < dv; ++c)
            gradVRow[c] += p * gradORow[c];
          double *gradQRow = gradQ.data() + row * d;
          double *gradKRow = gradK.data() + (kvRow + j) * d;
          for (int64_t c = 0; c < d; ++c) {
            gradQRow[c] += scale * gradS * kRow[c];
            gradKRow[c] += scale * gradS * qRow[c];
          }
        }
      }
    }
  return success();
}

double tessel::getErrorFloor(Type type) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return llvm::APFloat::getSmallestNormalized(floatType.getFloatSemantics())
        .convertToDouble();
  return 1.0;
}

Comparison tessel::compareResults(Type cType, ArrayRef<double> got,
                                  ArrayRef<double> expected, int64_t k,
                                  bool reducedPrecision,
                                  const std::vector<bool> &poison) {
  Comparison result;
  double scale = 0;
  for (auto [index, value] : llvm::enumerate(expected))
    if (std::isfinite(value) && (poison.empty() || !poison[index]))
      scale = std::max(scale, std::fabs(value));
  for (auto [index, pair] : llvm::enumerate(llvm::zip(got, expected))) {
    auto [g, e] = pair;
    if (!poison.empty() && poison[index]) {
      ++result.poisonCount;
      continue;
    }
    // Equal infinities and NaN in the same place match exactly.
    double error =
        g == e || (std::isnan(g) && std::isnan(e)) ? 0.0 : std::fabs(g - e);
    if (std::isnan(error))
      error = INFINITY;
    result.maxAbsError = std::max(result.maxAbsError, error);
  }
  // Relative to the largest reference magnitude, but never to less than the
  // type's smallest normal: below it the type keeps only absolute
  // (subnormal) precision, and a result that rounds to a subnormal or to
  // zero is not wrong by a large relative error.
  result.maxRelError =
      result.maxAbsError / std::max(scale, getErrorFloor(cType));
  // Rounding of the output type, plus f32 accumulation error growing with K.
  double accumulation = 1e-7 * std::sqrt(double(std::max<int64_t>(k, 1))) * 4;
  if (cType.isF32())
    result.tolerance = 1e-5 + accumulation;
  else if (cType.isF16())
    result.tolerance = 2e-3;
  else if (cType.isBF16())
    result.tolerance = 1.6e-2;
  else if (isa<FloatType>(cType))
    result.tolerance = 0.13; // 8-bit floats
  else
    result.tolerance = 0; // integers: exact
  if (reducedPrecision)   // xf32 operands carry 10 mantissa bits, as f16
    result.tolerance = std::max(result.tolerance, 2e-3);
  result.passed = result.maxRelError <= result.tolerance;
  return result;
}
