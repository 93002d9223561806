//===- Problems.cpp - Problem descriptions to problem-level IR ------------===//

#include "tessel/Problems/Problems.h"
#include "tessel/Dialect/Tessel/IR/TesselOps.h"
#include "tessel/Support/InputLimits.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace tessel;

/// Problem sizes past a 32-bit signed index are not meaningful for one
/// kernel (grids, LDS offsets and tile indices are 32-bit on the GPU).
static constexpr int64_t kMaxProblemSize = INT32_MAX;

/// The configuration attribute, null when absent, failure when malformed.
static FailureOr<ConfigAttr> parseConfig(Location loc, StringRef text) {
  if (text.empty())
    return ConfigAttr();
  // The attribute parser has the same nesting limits as the IR parser.
  if (std::optional<InputViolation> violation = checkInputLimits(text))
    return emitError(loc) << "--config: " << violation->message
                          << " (at offset " << violation->offset << ")";
  Attribute attr = parseAttribute(text, loc.getContext());
  auto config = dyn_cast_or_null<ConfigAttr>(attr);
  if (!config)
    return emitError(loc) << "--config must be a #tessel.config<...> "
                             "attribute, got '"
                          << text << "'";
  return config;
}

static FailureOr<Type> parseElementType(Location loc, StringRef name) {
  MLIRContext &context = *loc.getContext();
  Type type =
      llvm::StringSwitch<Type>(name)
          .Case("f32", Float32Type::get(&context))
          .Case("f16", Float16Type::get(&context))
          .Case("bf16", BFloat16Type::get(&context))
          .Case("i8", IntegerType::get(&context, 8))
          .Case("i32", IntegerType::get(&context, 32))
          .Cases({"fp8", "f8E4M3FNUZ"}, Float8E4M3FNUZType::get(&context))
          .Cases({"bf8", "f8E5M2FNUZ"}, Float8E5M2FNUZType::get(&context))
          .Case("f8E4M3FN", Float8E4M3FNType::get(&context))
          .Case("f8E5M2", Float8E5M2Type::get(&context))
          .Default(Type());
  if (!type)
    return emitError(loc) << "unknown element type '" << name
                          << "' (expected f32, f16, bf16, i8, i32, fp8, bf8, "
                             "f8E4M3FNUZ, f8E5M2FNUZ, f8E4M3FN or f8E5M2)";
  return type;
}

static int64_t sizeOrDynamic(ArrayRef<std::string> dynamic, StringRef dim,
                             int64_t size) {
  return llvm::is_contained(dynamic, dim) ? ShapedType::kDynamic : size;
}

/// Rejects a name in `dynamic` that is not one of `known`.
static LogicalResult checkDynamicNames(Location loc,
                                       ArrayRef<std::string> dynamic,
                                       ArrayRef<StringRef> known) {
  for (const std::string &name : dynamic)
    if (!llvm::is_contained(known, StringRef(name)))
      return emitError(loc) << "--dynamic: unknown size '" << name
                            << "' (expected " << llvm::join(known, ", ") << ")";
  return success();
}

/// Product of sizes, dynamic if any is.
static int64_t product(ArrayRef<int64_t> sizes) {
  int64_t result = 1;
  for (int64_t size : sizes) {
    if (ShapedType::isDynamic(size))
      return ShapedType::kDynamic;
    result *= size;
  }
  return result;
}

/// A memref of `shape` whose two innermost dimensions are stored swapped
/// (column-major) when `transposed`.
static MemRefType makeTile(ArrayRef<int64_t> shape, Type elementType,
                           bool transposed) {
  if (!transposed)
    return MemRefType::get(shape, elementType);
  size_t rank = shape.size();
  int64_t rows = shape[rank - 2];
  SmallVector<int64_t> strides(rank);
  strides[rank - 2] = 1;
  strides[rank - 1] = rows;
  if (rank == 3)
    strides[0] = product(shape.drop_front());
  auto layout = StridedLayoutAttr::get(elementType.getContext(), 0, strides);
  return MemRefType::get(shape, elementType, layout);
}

/// Converts `value` to `type` with the arith cast matching the two types.
static Value convertScalar(OpBuilder &builder, Location loc, Value value,
                           Type type) {
  Type from = value.getType();
  if (from == type)
    return value;
  if (isa<FloatType>(from) && isa<FloatType>(type)) {
    if (from.getIntOrFloatBitWidth() > type.getIntOrFloatBitWidth())
      return arith::TruncFOp::create(builder, loc, type, value);
    return arith::ExtFOp::create(builder, loc, type, value);
  }
  if (isa<FloatType>(from))
    return arith::FPToSIOp::create(builder, loc, type, value);
  if (isa<FloatType>(type))
    return arith::SIToFPOp::create(builder, loc, type, value);
  return arith::ExtSIOp::create(builder, loc, type, value);
}

static FailureOr<Value> applyActivation(OpBuilder &builder, Location loc,
                                        Value value, StringRef activation) {
  Type f32 = builder.getF32Type();
  auto constant = [&](double v) -> Value {
    return arith::ConstantOp::create(builder, loc,
                                     builder.getFloatAttr(f32, v));
  };
  if (activation == "none")
    return value;
  if (activation == "relu")
    return Value(arith::MaximumFOp::create(builder, loc, value, constant(0.0)));
  if (activation == "gelu") {
    // 0.5 * x * (1 + erf(x / sqrt(2)))
    Value scaled = arith::MulFOp::create(builder, loc, value,
                                         constant(1.0 / std::sqrt(2.0)));
    Value erf = math::ErfOp::create(builder, loc, scaled);
    Value onePlus = arith::AddFOp::create(builder, loc, erf, constant(1.0));
    Value half = arith::MulFOp::create(builder, loc, value, constant(0.5));
    return Value(arith::MulFOp::create(builder, loc, half, onePlus));
  }
  if (activation == "silu") {
    // x / (1 + exp(-x))
    Value negated = arith::NegFOp::create(builder, loc, value);
    Value exp = math::ExpOp::create(builder, loc, negated);
    Value denominator = arith::AddFOp::create(builder, loc, exp, constant(1.0));
    return Value(arith::DivFOp::create(builder, loc, value, denominator));
  }
  return emitError(loc) << "unknown activation '" << activation
                        << "' (expected none, relu, gelu, silu)";
}

/// Builds the epilogue block: (acc, extras...) -> C element.
static LogicalResult buildEpilogue(OpBuilder &builder, Location loc,
                                   MatmulOp matmul, Type outType,
                                   ArrayRef<Value> extras,
                                   const MatmulProblem &problem) {
  Region &region = matmul.getEpilogue();
  SmallVector<Type> argTypes = {matmul.getAccumulatorType()};
  for (Value extra : extras) {
    Type type = extra.getType();
    if (auto memref = dyn_cast<MemRefType>(type))
      type = memref.getElementType();
    argTypes.push_back(type);
  }
  SmallVector<Location> argLocs(argTypes.size(), loc);
  Block *block = builder.createBlock(&region, {}, argTypes, argLocs);
  Type f32 = builder.getF32Type();
  Value value = convertScalar(builder, loc, block->getArgument(0), f32);
  unsigned next = 1;
  if (problem.alpha)
    value =
        arith::MulFOp::create(builder, loc, value, block->getArgument(next++));
  for (StringRef scale : {problem.scaleA, problem.scaleB})
    if (scale != "none")
      value = arith::MulFOp::create(builder, loc, value,
                                    block->getArgument(next++));
  if (problem.bias != "none")
    value = arith::AddFOp::create(
        builder, loc, value,
        convertScalar(builder, loc, block->getArgument(next++), f32));
  if (problem.residual)
    value = arith::AddFOp::create(
        builder, loc, value,
        convertScalar(builder, loc, block->getArgument(next++), f32));
  FailureOr<Value> activated =
      applyActivation(builder, loc, value, problem.activation);
  if (failed(activated))
    return failure();
  Value result = convertScalar(builder, loc, *activated, outType);
  YieldOp::create(builder, loc, ValueRange{result});
  return success();
}

FailureOr<func::FuncOp> tessel::buildProblem(OpBuilder &builder, Location loc,
                                             const MatmulProblem &problem) {
  FailureOr<Type> aType = parseElementType(loc, problem.aType);
  if (failed(aType))
    return failure();
  FailureOr<Type> bType =
      problem.bType.empty() ? aType : parseElementType(loc, problem.bType);
  if (failed(bType))
    return failure();
  Type defaultOut = aType->isInteger(8)                   ? builder.getI32Type()
                    : aType->getIntOrFloatBitWidth() == 8 ? builder.getF32Type()
                                                          : *aType;
  FailureOr<Type> outType = problem.cType.empty()
                                ? FailureOr<Type>(defaultOut)
                                : parseElementType(loc, problem.cType);
  if (failed(outType))
    return failure();
  StringRef bias = problem.bias;
  if (bias != "none" && bias != "m" && bias != "n")
    return emitError(loc) << "--bias must be none, m or n, got '" << bias
                          << "'";
  if (problem.scaleA != "none" && problem.scaleA != "tensor" &&
      problem.scaleA != "row")
    return emitError(loc) << "--scale-a must be none, tensor or row, got '"
                          << problem.scaleA << "'";
  if (problem.scaleB != "none" && problem.scaleB != "tensor" &&
      problem.scaleB != "column")
    return emitError(loc) << "--scale-b must be none, tensor or column, got '"
                          << problem.scaleB << "'";
  for (int64_t size : {problem.m, problem.n, problem.k})
    if (size <= 0 || size > kMaxProblemSize)
      return emitError(loc) << "-m, -n and -k must be positive and at most "
                            << kMaxProblemSize;
  if (problem.batch < 0 || problem.batch > kMaxProblemSize)
    return emitError(loc) << "--batch must be 0 (not batched) to "
                          << kMaxProblemSize;

  ArrayRef<std::string> dynamic = problem.dynamic;
  static const StringRef kMatmulSizes[] = {"m", "n", "k", "batch"};
  if (failed(checkDynamicNames(loc, dynamic, kMatmulSizes)))
    return failure();
  int64_t m = sizeOrDynamic(dynamic, "m", problem.m),
          n = sizeOrDynamic(dynamic, "n", problem.n),
          k = sizeOrDynamic(dynamic, "k", problem.k);
  SmallVector<int64_t> prefix;
  if (problem.batch > 0)
    prefix.push_back(sizeOrDynamic(dynamic, "batch", problem.batch));
  auto shape = [&](int64_t rows, int64_t cols) {
    SmallVector<int64_t> result(prefix);
    result.append({rows, cols});
    return result;
  };
  SmallVector<Type> argTypes = {
      makeTile(shape(m, k), *aType, problem.transposeA),
      makeTile(shape(k, n), *bType, problem.transposeB),
      makeTile(shape(m, n), *outType, problem.transposeC)};
  Type f32 = builder.getF32Type();
  if (problem.alpha)
    argTypes.push_back(f32);
  auto scaleType = [&](StringRef scale) -> Type {
    if (scale == "tensor")
      return MemRefType::get({1}, f32);
    if (scale == "row")
      return MemRefType::get(shape(m, 1), f32);
    return MemRefType::get({n}, f32);
  };
  for (StringRef scale : {problem.scaleA, problem.scaleB})
    if (scale != "none")
      argTypes.push_back(scaleType(scale));
  if (bias == "m")
    argTypes.push_back(MemRefType::get(shape(m, 1), f32));
  else if (bias == "n")
    argTypes.push_back(MemRefType::get({n}, f32));
  if (problem.residual)
    argTypes.push_back(MemRefType::get(shape(m, n), *outType));

  FailureOr<ConfigAttr> config = parseConfig(loc, problem.config);
  if (failed(config))
    return failure();
  auto func = func::FuncOp::create(builder, loc, problem.name,
                                   builder.getFunctionType(argTypes, {}));
  Block *body = func.addEntryBlock();
  builder.setInsertionPointToStart(body);
  SmallVector<Value> extras(body->getArguments().drop_front(3));
  auto matmul =
      MatmulOp::create(builder, loc, body->getArgument(0), body->getArgument(1),
                       body->getArgument(2), extras, *config);
  bool needsEpilogue = !extras.empty() || problem.activation != "none";
  if (needsEpilogue) {
    OpBuilder::InsertionGuard guard(builder);
    if (failed(
            buildEpilogue(builder, loc, matmul, *outType, extras, problem))) {
      func.erase();
      return failure();
    }
  }
  func::ReturnOp::create(builder, loc);
  return func;
}

FailureOr<func::FuncOp> tessel::buildProblem(OpBuilder &builder, Location loc,
                                             const AttentionProblem &problem) {
  FailureOr<Type> type = parseElementType(loc, problem.type);
  if (failed(type))
    return failure();
  // 8-bit inputs give bf16 by default, as FlashAttention-3's fp8 forward.
  bool fp8 = type->getIntOrFloatBitWidth() == 8;
  FailureOr<Type> outType = !problem.outType.empty()
                                ? parseElementType(loc, problem.outType)
                            : fp8 ? FailureOr<Type>(builder.getBF16Type())
                                  : type;
  if (failed(outType))
    return failure();
  if (problem.descale && !fp8)
    return emitError(loc) << "--descale applies to 8-bit float inputs, not "
                          << *type;
  if (problem.backward && (problem.lse || problem.sinks || problem.descale))
    return emitError(loc) << "--backward takes the forward's logsumexp as an "
                             "input and has no sinks or descale; leave out "
                             "--lse, --sinks and --descale";
  int64_t heads = problem.heads, headDim = problem.headDim;
  int64_t headDimV = problem.headDimV ? problem.headDimV : headDim;
  int64_t hkv = problem.kvHeads ? problem.kvHeads : heads;
  for (int64_t size : {problem.batch, heads, hkv, problem.seqQ, problem.seqKV,
                       headDim, headDimV})
    if (size <= 0 || size > kMaxProblemSize)
      return emitError(loc) << "-b, -h, --kv-heads, --seq-q, --seq-kv, -d and "
                               "--head-dim-v must be positive and at most "
                            << kMaxProblemSize;
  ArrayRef<std::string> dynamic = problem.dynamic;
  static const StringRef kAttentionSizes[] = {"seq-q", "seq-kv", "batch"};
  if (failed(checkDynamicNames(loc, dynamic, kAttentionSizes)))
    return failure();
  int64_t b = sizeOrDynamic(dynamic, "batch", problem.batch);
  int64_t sq = sizeOrDynamic(dynamic, "seq-q", problem.seqQ),
          skv = sizeOrDynamic(dynamic, "seq-kv", problem.seqKV);
  bool paged = problem.pageSize != 0;
  if (paged && (problem.varlen || problem.backward))
    return emitError(loc) << "--page-size combines with neither --varlen "
                             "nor --backward";
  if (paged && (problem.pageSize < 16 || problem.pageSize > 128 ||
                !llvm::isPowerOf2_64(problem.pageSize)))
    return emitError(loc) << "--page-size must be 16, 32, 64 or 128, got "
                          << problem.pageSize;
  // Varlen: FlashAttention's packed (total, heads, head_dim) arrays as
  // [1, heads, total, head_dim] views, the totals run-time sizes.
  auto array = [&](int64_t rowHeads, int64_t rows, int64_t columns,
                   Type element) {
    if (!problem.varlen)
      return MemRefType::get({b, rowHeads, rows, columns}, element);
    return MemRefType::get(
        {1, rowHeads, ShapedType::kDynamic, columns}, element,
        StridedLayoutAttr::get(
            builder.getContext(), 0,
            {ShapedType::kDynamic, columns, rowHeads * columns, 1}));
  };
  // A paged cache: [pages, page_size, kv_heads, head_dim] as a
  // [pages, kv_heads, page_size, head_dim] view, the page count dynamic.
  auto cache = [&](int64_t columns) {
    int64_t ps = problem.pageSize;
    return MemRefType::get(
        {problem.numPages ? problem.numPages : ShapedType::kDynamic, hkv, ps,
         columns},
        *type,
        StridedLayoutAttr::get(
            builder.getContext(), 0,
            {ps * hkv * columns, columns, hkv * columns, 1}));
  };
  SmallVector<Type> argTypes = {
      array(heads, sq, headDim, *type),
      paged ? cache(headDim) : array(hkv, skv, headDim, *type),
      paged ? cache(headDimV) : array(hkv, skv, headDimV, *type),
      array(heads, sq, headDimV, problem.backward ? *type : *outType)};
  if (problem.backward) {
    // O, dO, lse, then dQ, dK, dV (of outType).
    argTypes.push_back(argTypes.back());
    argTypes.push_back(
        problem.varlen ? MemRefType::get({1, heads, ShapedType::kDynamic},
                                         builder.getF32Type())
                       : MemRefType::get({b, heads, sq}, builder.getF32Type()));
    for (unsigned operand = 0; operand < 3; ++operand)
      argTypes.push_back(cast<MemRefType>(argTypes[operand]).clone(*outType));
  }
  if (problem.lse)
    argTypes.push_back(
        problem.varlen ? MemRefType::get({1, heads, ShapedType::kDynamic},
                                         builder.getF32Type())
                       : MemRefType::get({b, heads, sq}, builder.getF32Type()));
  if (problem.sinks)
    argTypes.push_back(MemRefType::get({heads}, builder.getF32Type()));
  if (problem.descale)
    argTypes.append(3, MemRefType::get({1}, builder.getF32Type()));
  if (paged) {
    // block_table [B, pages per sequence] and context_lens [B].
    int64_t pages = ShapedType::isDynamic(skv)
                        ? skv
                        : llvm::divideCeil(skv, problem.pageSize);
    argTypes.push_back(MemRefType::get({b, pages}, builder.getI32Type()));
    argTypes.push_back(MemRefType::get({b}, builder.getI32Type()));
  }
  if (problem.varlen) {
    // cu_seqlens_q, cu_seqlens_k (B + 1 each), max_seqlen_q (and the
    // backward's max_seqlen_k).
    int64_t lengths = ShapedType::isDynamic(b) ? b : b + 1;
    argTypes.append(2, MemRefType::get({lengths}, builder.getI32Type()));
    argTypes.append(problem.backward ? 2 : 1, builder.getIndexType());
  }
  if (!problem.window.empty() && problem.window.size() != 2)
    return emitError(loc) << "--window takes two bounds, left,right (-1: "
                             "unbounded), got "
                          << problem.window.size();
  FailureOr<ConfigAttr> config = parseConfig(loc, problem.config);
  if (failed(config))
    return failure();
  auto func = func::FuncOp::create(builder, loc, problem.name,
                                   builder.getFunctionType(argTypes, {}));
  Block *body = func.addEntryBlock();
  builder.setInsertionPointToStart(body);
  FloatAttr scaleAttr =
      problem.scale ? builder.getF32FloatAttr(*problem.scale) : FloatAttr();
  DenseI64ArrayAttr window = problem.window.empty()
                                 ? DenseI64ArrayAttr()
                                 : builder.getDenseI64ArrayAttr(problem.window);
  UnitAttr causal = problem.causal ? builder.getUnitAttr() : UnitAttr();
  if (problem.backward) {
    ValueRange args = body->getArguments();
    bool varlen = problem.varlen;
    AttentionGradOp::create(
        builder, loc, args[0], args[1], args[2], args[3], args[4], args[5],
        args[6], args[7], args[8], varlen ? args[9] : Value(),
        varlen ? args[10] : Value(), varlen ? args[11] : Value(),
        varlen ? args[12] : Value(), scaleAttr, causal, window, *config);
    func::ReturnOp::create(builder, loc);
    return func;
  }
  Value lse = problem.lse ? body->getArgument(4) : Value();
  ValueRange trailing = body->getArguments().drop_front(4 + problem.lse);
  Value sinks = problem.sinks ? trailing.front() : Value();
  ValueRange varlen = problem.varlen ? trailing.take_back(3) : ValueRange();
  if (problem.varlen)
    trailing = trailing.drop_back(3);
  ValueRange pages = paged ? trailing.take_back(2) : ValueRange();
  if (paged)
    trailing = trailing.drop_back(2);
  ValueRange descale = problem.descale ? trailing.take_back(3) : ValueRange();
  AttentionOp::create(
      builder, loc, body->getArgument(0), body->getArgument(1),
      body->getArgument(2), body->getArgument(3), lse, sinks, descale,
      varlen.empty() ? Value() : varlen[0],
      varlen.empty() ? Value() : varlen[1],
      varlen.empty() ? Value() : varlen[2], pages.empty() ? Value() : pages[0],
      pages.empty() ? Value() : pages[1], scaleAttr, causal, window, *config);
  func::ReturnOp::create(builder, loc);
  return func;
}

/// Builds, verifies and prints the problem in a context of its own.
template <typename Problem>
static llvm::Expected<std::string> printProblemImpl(const Problem &problem) {
  MLIRContext context;
  context.loadDialect<TesselDialect, func::FuncDialect, arith::ArithDialect,
                      math::MathDialect, memref::MemRefDialect>();
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (!diagnostics.empty())
      diagnostics += "\n";
    llvm::raw_string_ostream(diagnostics) << diag;
    return success();
  });
  Location loc = UnknownLoc::get(&context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  OpBuilder builder = OpBuilder::atBlockBegin(module->getBody());
  if (failed(buildProblem(builder, loc, problem)) || failed(verify(*module)))
    return llvm::createStringError(diagnostics);
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  return text;
}

llvm::Expected<std::string> tessel::printProblem(const MatmulProblem &problem) {
  return printProblemImpl(problem);
}

llvm::Expected<std::string>
tessel::printProblem(const AttentionProblem &problem) {
  return printProblemImpl(problem);
}
