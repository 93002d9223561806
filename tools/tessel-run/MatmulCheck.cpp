//===- MatmulCheck.cpp - Host reference for tessel.matmul -------*- C++ -*-===//

#include "MatmulCheck.h"

#include "tessel/Emulator/Collectives.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

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

/// Writes `value` as element `index` of `array` (rounding to the type) and
/// returns the value the element then holds.
static double storeElement(Type type, NpyArray &array, int64_t index,
                           double value) {
  char *at = array.data.data() + index * array.getElementBytes();
  if (type.isF32()) {
    float v = value;
    std::memcpy(at, &v, 4);
    return v;
  }
  if (type.isF64()) {
    std::memcpy(at, &value, 8);
    return value;
  }
  if (type.isF16()) {
    uint16_t bits = emu::floatToHalf(value);
    std::memcpy(at, &bits, 2);
    return emu::halfToFloat(bits);
  }
  if (type.isBF16()) {
    uint16_t bits = emu::floatToBf16(value);
    std::memcpy(at, &bits, 2);
    return emu::bf16ToFloat(bits);
  }
  if (std::optional<emu::Fp8Kind> kind = fp8KindOf(type)) {
    uint8_t bits = emu::encodeFp8(value, *kind, /*saturate=*/true);
    std::memcpy(at, &bits, 1);
    return emu::decodeFp8(bits, *kind);
  }
  int64_t integer = std::llround(value);
  std::memcpy(at, &integer, array.getElementBytes()); // little-endian
  if (type.isInteger(8))
    return int8_t(integer);
  if (type.isInteger(16))
    return int16_t(integer);
  if (type.isInteger(32))
    return int32_t(integer);
  return integer;
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
  host.npy.dtype = *getNpyDtype(type);
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

std::vector<double> tessel::decodeArray(Type type, const NpyArray &array) {
  std::vector<double> values(array.getNumElements());
  for (int64_t i = 0; i < int64_t(values.size()); ++i)
    values[i] = loadElement(type, array, i);
  return values;
}

MatmulSizes tessel::getMatmulSizes(MatmulOp op, int64_t dynamicSize) {
  MemRefType a = op.getA().getType(), b = op.getB().getType();
  int64_t rank = a.getRank();
  auto size = [&](MemRefType type, int64_t dim) {
    int64_t value = type.getDimSize(dim);
    return ShapedType::isDynamic(value) ? dynamicSize : value;
  };
  MatmulSizes sizes;
  if (rank == 3)
    sizes.batch = size(a, 0);
  sizes.m = size(a, rank - 2);
  sizes.k = size(a, rank - 1);
  sizes.n = size(b, rank - 1);
  return sizes;
}

SmallVector<int64_t> tessel::concreteShape(MemRefType type,
                                           ArrayRef<int64_t> roleSizes) {
  SmallVector<int64_t> shape;
  int64_t offset = int64_t(roleSizes.size()) - type.getRank();
  for (int64_t d = 0; d < type.getRank(); ++d) {
    int64_t size = type.getDimSize(d);
    shape.push_back(ShapedType::isDynamic(size) ? roleSizes[offset + d] : size);
  }
  return shape;
}

/// Evaluates the epilogue's scalar ops in double precision; conversions
/// between float types are exact here (the tolerance covers the kernel's
/// roundings).
static FailureOr<double> interpret(Block &block, ArrayRef<double> arguments) {
  DenseMap<Value, double> values;
  for (auto [argument, value] : llvm::zip(block.getArguments(), arguments))
    values[argument] = value;
  auto get = [&](Value v) { return values.lookup(v); };
  for (Operation &op : block) {
    if (isa<YieldOp>(op))
      return get(op.getOperand(0));
    double result;
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      if (auto f = dyn_cast<FloatAttr>(constant.getValue()))
        result = f.getValueAsDouble();
      else if (auto i = dyn_cast<IntegerAttr>(constant.getValue()))
        result = double(i.getInt());
      else
        return op.emitError() << "the host reference does not evaluate this "
                                 "constant";
    } else if (isa<arith::AddFOp, arith::AddIOp>(op)) {
      result = get(op.getOperand(0)) + get(op.getOperand(1));
    } else if (isa<arith::SubFOp, arith::SubIOp>(op)) {
      result = get(op.getOperand(0)) - get(op.getOperand(1));
    } else if (isa<arith::MulFOp, arith::MulIOp>(op)) {
      result = get(op.getOperand(0)) * get(op.getOperand(1));
    } else if (isa<arith::DivFOp>(op)) {
      result = get(op.getOperand(0)) / get(op.getOperand(1));
    } else if (isa<arith::NegFOp>(op)) {
      result = -get(op.getOperand(0));
    } else if (isa<arith::MaximumFOp, arith::MaxNumFOp, arith::MaxSIOp>(op)) {
      result = std::max(get(op.getOperand(0)), get(op.getOperand(1)));
    } else if (isa<arith::MinimumFOp, arith::MinNumFOp, arith::MinSIOp>(op)) {
      result = std::min(get(op.getOperand(0)), get(op.getOperand(1)));
    } else if (isa<arith::ExtFOp, arith::TruncFOp, arith::SIToFPOp,
                   arith::ExtSIOp, arith::TruncIOp>(op)) {
      result = get(op.getOperand(0));
    } else if (isa<arith::FPToSIOp>(op)) {
      result = std::trunc(get(op.getOperand(0)));
    } else if (auto select = dyn_cast<arith::SelectOp>(op)) {
      result = get(select.getCondition()) != 0 ? get(select.getTrueValue())
                                               : get(select.getFalseValue());
    } else if (auto cmp = dyn_cast<arith::CmpFOp>(op)) {
      double x = get(cmp.getLhs()), y = get(cmp.getRhs());
      switch (cmp.getPredicate()) {
      case arith::CmpFPredicate::OGT:
      case arith::CmpFPredicate::UGT:
        result = x > y;
        break;
      case arith::CmpFPredicate::OGE:
      case arith::CmpFPredicate::UGE:
        result = x >= y;
        break;
      case arith::CmpFPredicate::OLT:
      case arith::CmpFPredicate::ULT:
        result = x < y;
        break;
      case arith::CmpFPredicate::OLE:
      case arith::CmpFPredicate::ULE:
        result = x <= y;
        break;
      default:
        return op.emitError() << "the host reference does not evaluate this "
                                 "comparison";
      }
    } else if (isa<math::ExpOp>(op)) {
      result = std::exp(get(op.getOperand(0)));
    } else if (isa<math::Exp2Op>(op)) {
      result = std::exp2(get(op.getOperand(0)));
    } else if (isa<math::LogOp>(op)) {
      result = std::log(get(op.getOperand(0)));
    } else if (isa<math::TanhOp>(op)) {
      result = std::tanh(get(op.getOperand(0)));
    } else if (isa<math::ErfOp>(op)) {
      result = std::erf(get(op.getOperand(0)));
    } else if (isa<math::SqrtOp>(op)) {
      result = std::sqrt(get(op.getOperand(0)));
    } else if (isa<math::RsqrtOp>(op)) {
      result = 1.0 / std::sqrt(get(op.getOperand(0)));
    } else if (isa<math::AbsFOp>(op)) {
      result = std::fabs(get(op.getOperand(0)));
    } else {
      return op.emitError()
             << "the host reference does not evaluate '" << op.getName() << "'";
    }
    values[op.getResult(0)] = result;
  }
  return failure();
}

FailureOr<std::vector<double>>
tessel::computeMatmulReference(MatmulOp op, const MatmulSizes &sizes,
                               const HostArray &a, const HostArray &b,
                               ArrayRef<const HostArray *> extras) {
  int64_t batches = std::max<int64_t>(sizes.batch, 1);
  int64_t m = sizes.m, n = sizes.n, k = sizes.k;
  std::vector<double> c(batches * m * n);
  bool integer = op.getA().getType().getElementType().isSignlessInteger(8);
  for (int64_t bi = 0; bi < batches; ++bi)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t l = 0; l < k; ++l)
          sum +=
              a.values[(bi * m + i) * k + l] * b.values[(bi * k + l) * n + j];
        if (integer) // i32 accumulation wraps
          sum = double(int32_t(uint32_t(int64_t(sum))));
        c[(bi * m + i) * n + j] = sum;
      }
  Region &region = op.getEpilogue();
  if (region.empty())
    return c;
  // Broadcast each extra against [batch, M, N].
  SmallVector<int64_t> outShape = {batches, m, n};
  std::vector<double> out(c.size());
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
    FailureOr<double> value = interpret(region.front(), arguments);
    if (failed(value))
      return failure();
    out[flat] = *value;
  }
  (void)outShape;
  return out;
}

AttentionSizes tessel::getAttentionSizes(AttentionOp op, int64_t dynamicSize) {
  auto size = [&](MemRefType type, int64_t dim) {
    int64_t value = type.getDimSize(dim);
    return ShapedType::isDynamic(value) ? dynamicSize : value;
  };
  MemRefType q = op.getQ().getType(), k = op.getK().getType();
  return {size(q, 0), size(q, 1), size(k, 1),
          size(q, 2), size(k, 2), size(q, 3)};
}

void tessel::computeAttentionReference(const AttentionSizes &sizes,
                                       double scale, bool causal,
                                       const HostArray &q, const HostArray &k,
                                       const HostArray &v,
                                       std::vector<double> &o,
                                       std::vector<double> &lse) {
  int64_t d = sizes.headDim, sq = sizes.seqQ, skv = sizes.seqKV;
  int64_t group = sizes.heads / sizes.kvHeads;
  o.assign(sizes.batch * sizes.heads * sq * d, 0.0);
  // A row that sees no key writes O = 0 and logsumexp = +inf, the convention
  // FlashAttention uses (docs/robustness.md).
  lse.assign(sizes.batch * sizes.heads * sq, INFINITY);
  std::vector<double> scores(skv);
  for (int64_t b = 0; b < sizes.batch; ++b)
    for (int64_t h = 0; h < sizes.heads; ++h) {
      int64_t kvh = h / group;
      const double *kBase = &k.values[((b * sizes.kvHeads + kvh) * skv) * d];
      const double *vBase = &v.values[((b * sizes.kvHeads + kvh) * skv) * d];
      for (int64_t i = 0; i < sq; ++i) {
        const double *qRow = &q.values[((b * sizes.heads + h) * sq + i) * d];
        int64_t visible = causal ? std::min(skv, i + skv - sq + 1) : skv;
        if (visible <= 0)
          continue;
        double max = -INFINITY;
        for (int64_t j = 0; j < visible; ++j) {
          double dot = 0;
          for (int64_t c = 0; c < d; ++c)
            dot += qRow[c] * kBase[j * d + c];
          scores[j] = dot * scale;
          max = std::max(max, scores[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < visible; ++j)
          sum += std::exp(scores[j] - max);
        double *oRow = &o[((b * sizes.heads + h) * sq + i) * d];
        for (int64_t j = 0; j < visible; ++j) {
          double p = std::exp(scores[j] - max) / sum;
          for (int64_t c = 0; c < d; ++c)
            oRow[c] += p * vBase[j * d + c];
        }
        lse[(b * sizes.heads + h) * sq + i] = max + std::log(sum);
      }
    }
}

Comparison tessel::compareResults(Type cType, ArrayRef<double> got,
                                  ArrayRef<double> expected, int64_t k,
                                  bool reducedPrecision) {
  Comparison result;
  double scale = 0;
  for (double value : expected)
    if (std::isfinite(value))
      scale = std::max(scale, std::fabs(value));
  for (auto [g, e] : llvm::zip(got, expected)) {
    // Equal infinities and NaN in the same place match exactly.
    double error = g == e || (std::isnan(g) && std::isnan(e))
                       ? 0.0
                       : std::fabs(g - e);
    if (std::isnan(error))
      error = INFINITY;
    result.maxAbsError = std::max(result.maxAbsError, error);
  }
  result.maxRelError = result.maxAbsError / std::max(scale, 1e-30);
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
    result.tolerance = 0;
  if (reducedPrecision) // xf32 operands carry 10 mantissa bits, as f16
    result.tolerance = std::max(result.tolerance, 2e-3);
  result.passed = result.maxRelError <= result.tolerance;
  if (scale == 0)
    result.passed = result.maxAbsError == 0;
  return result;
}
