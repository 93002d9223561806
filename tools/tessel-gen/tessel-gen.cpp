//===- tessel-gen.cpp - Print problem-level (L0) IR -------------*- C++ -*-===//
//
//   tessel-gen matmul -m 4096 -n 4096 -k 4096 -t bf16 --transpose-b
//   tessel-gen attention -b 2 -h 32 --kv-heads 8 --seq-q 1024 --seq-kv 1024
//                        -d 128 --causal -t f16
//
// The IR is built with the dialect's builders and verified before it is
// printed, so what tessel-gen prints always parses.
//
//===----------------------------------------------------------------------===//

#include "tessel/Dialect/Tessel/IR/TesselOps.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace tessel;
namespace cl = llvm::cl;

static cl::SubCommand matmulCommand("matmul",
                                    "C = epilogue(A x B) (tessel.matmul)");
static cl::SubCommand
    attentionCommand("attention", "FlashAttention forward (tessel.attention)");

// Shared options.
static cl::opt<std::string> elementType(
    "t",
    cl::desc("Input element type: f32, f16, bf16, i8, f8E4M3FNUZ, "
             "f8E5M2FNUZ, f8E4M3FN, f8E5M2 (fp8/bf8: the FNUZ pair)"),
    cl::init("f16"), cl::sub(matmulCommand), cl::sub(attentionCommand));
static cl::list<std::string>
    dynamicDims("dynamic",
                cl::desc("Sizes that are kernel arguments: m,n,k,batch "
                         "(matmul) or seq-q,seq-kv,batch (attention)"),
                cl::CommaSeparated, cl::sub(matmulCommand),
                cl::sub(attentionCommand));
static cl::opt<std::string> kernelName("name",
                                       cl::desc("Kernel (function) name"),
                                       cl::init(""), cl::sub(matmulCommand),
                                       cl::sub(attentionCommand));
static cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                       cl::init("-"), cl::sub(matmulCommand),
                                       cl::sub(attentionCommand));

// matmul.
static cl::opt<int64_t> sizeM("m", cl::desc("Rows of A and C"), cl::init(1024),
                              cl::sub(matmulCommand));
static cl::opt<int64_t> sizeN("n", cl::desc("Columns of B and C"),
                              cl::init(1024), cl::sub(matmulCommand));
static cl::opt<int64_t> sizeK("k", cl::desc("Reduction size"), cl::init(1024),
                              cl::sub(matmulCommand));
static cl::opt<int64_t> batch("batch",
                              cl::desc("Batch count (0: rank-2 operands)"),
                              cl::init(0), cl::sub(matmulCommand),
                              cl::sub(attentionCommand));
static cl::opt<std::string>
    bElementType("b-type",
                 cl::desc("Element type of B when it differs from A (fp8 "
                          "pairs of one family)"),
                 cl::init(""), cl::sub(matmulCommand));
static cl::opt<std::string> outElementType(
    "out-type",
    cl::desc("Element type of C (default: the input type; i32 for i8; f32 for "
             "fp8)"),
    cl::init(""), cl::sub(matmulCommand), cl::sub(attentionCommand));
static cl::opt<bool>
    transposeA("transpose-a", cl::desc("A stored column-major (M contiguous)"),
               cl::sub(matmulCommand));
static cl::opt<bool> transposeB("transpose-b",
                                cl::desc("B stored as N x K (K contiguous)"),
                                cl::sub(matmulCommand));
static cl::opt<std::string> bias("bias",
                                 cl::desc("Fused bias: none, m (one per row) "
                                          "or n (one per column)"),
                                 cl::init("none"), cl::sub(matmulCommand));
static cl::opt<bool> residual("residual",
                              cl::desc("Fuse the addition of a residual M x N "
                                       "tensor"),
                              cl::sub(matmulCommand));
static cl::opt<std::string>
    activation("activation",
               cl::desc("Fused activation: none, relu, gelu, silu"),
               cl::init("none"), cl::sub(matmulCommand));
static cl::opt<bool>
    alpha("alpha", cl::desc("Scale the product by a scalar f32 argument"),
          cl::sub(matmulCommand));

// attention.
static cl::opt<int64_t> attnBatch("b", cl::desc("Batch size"), cl::init(1),
                                  cl::sub(attentionCommand));
static cl::opt<int64_t> heads("h", cl::desc("Query heads"), cl::init(8),
                              cl::sub(attentionCommand));
static cl::opt<int64_t> kvHeads("kv-heads",
                                cl::desc("Key/value heads (default: -h)"),
                                cl::init(0), cl::sub(attentionCommand));
static cl::opt<int64_t> seqQ("seq-q", cl::desc("Query length"), cl::init(1024),
                             cl::sub(attentionCommand));
static cl::opt<int64_t> seqKV("seq-kv", cl::desc("Key/value length"),
                              cl::init(1024), cl::sub(attentionCommand));
static cl::opt<int64_t> headDim("d", cl::desc("Head dimension"), cl::init(128),
                                cl::sub(attentionCommand));
static cl::opt<bool> causal("causal", cl::desc("Causal mask"),
                            cl::sub(attentionCommand));
static cl::opt<float> scale("scale",
                            cl::desc("Softmax scale (default 1/sqrt(d))"),
                            cl::init(0.0f), cl::sub(attentionCommand));
static cl::opt<bool> withLse("lse", cl::desc("Also output the logsumexp"),
                             cl::sub(attentionCommand));

static cl::opt<std::string> configText(
    "config",
    cl::desc("A #tessel.config<...> for the kernel (default: the compiler "
             "chooses one)"),
    cl::init(""), cl::sub(matmulCommand), cl::sub(attentionCommand));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "tessel-gen: error: " << message << "\n";
  return 1;
}

/// The --config attribute, null when absent, failure when malformed.
static FailureOr<ConfigAttr> parseConfig(MLIRContext &context) {
  if (configText.empty())
    return ConfigAttr();
  Attribute attr = parseAttribute(configText, &context);
  auto config = dyn_cast_or_null<ConfigAttr>(attr);
  if (!config) {
    fail("--config must be a #tessel.config<...> attribute, got '" +
         configText + "'");
    return failure();
  }
  return config;
}

static FailureOr<Type> parseElementType(MLIRContext &context, StringRef name) {
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
  if (!type) {
    fail("unknown element type '" + name +
         "' (expected f32, f16, bf16, i8, i32, fp8, bf8, f8E4M3FNUZ, "
         "f8E5M2FNUZ, f8E4M3FN or f8E5M2)");
    return failure();
  }
  return type;
}

static bool isDynamic(StringRef dim) {
  return llvm::is_contained(dynamicDims, dim);
}

static int64_t sizeOrDynamic(StringRef dim, int64_t size) {
  return isDynamic(dim) ? ShapedType::kDynamic : size;
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
                                        Value value) {
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
  fail("unknown activation '" + activation +
       "' (expected none, relu, gelu, silu)");
  return failure();
}

/// Builds the epilogue block: (acc, extras...) -> C element.
static LogicalResult buildEpilogue(OpBuilder &builder, Location loc,
                                   MatmulOp matmul, Type outType,
                                   ArrayRef<Value> extras) {
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
  if (alpha)
    value =
        arith::MulFOp::create(builder, loc, value, block->getArgument(next++));
  if (bias != "none")
    value = arith::AddFOp::create(
        builder, loc, value,
        convertScalar(builder, loc, block->getArgument(next++), f32));
  if (residual)
    value = arith::AddFOp::create(
        builder, loc, value,
        convertScalar(builder, loc, block->getArgument(next++), f32));
  FailureOr<Value> activated = applyActivation(builder, loc, value);
  if (failed(activated))
    return failure();
  Value result = convertScalar(builder, loc, *activated, outType);
  YieldOp::create(builder, loc, ValueRange{result});
  return success();
}

static FailureOr<func::FuncOp> buildMatmul(OpBuilder &builder, Location loc) {
  MLIRContext &context = *builder.getContext();
  FailureOr<Type> aType = parseElementType(context, elementType);
  if (failed(aType))
    return failure();
  FailureOr<Type> bType =
      bElementType.empty() ? aType : parseElementType(context, bElementType);
  if (failed(bType))
    return failure();
  Type defaultOut = aType->isInteger(8)                   ? builder.getI32Type()
                    : aType->getIntOrFloatBitWidth() == 8 ? builder.getF32Type()
                                                          : *aType;
  FailureOr<Type> outType = outElementType.empty()
                                ? FailureOr<Type>(defaultOut)
                                : parseElementType(context, outElementType);
  if (failed(outType))
    return failure();
  if (bias != "none" && bias != "m" && bias != "n") {
    fail("--bias must be none, m or n, got '" + bias + "'");
    return failure();
  }
  for (int64_t size : {sizeM.getValue(), sizeN.getValue(), sizeK.getValue()})
    if (size <= 0) {
      fail("-m, -n and -k must be positive");
      return failure();
    }

  int64_t m = sizeOrDynamic("m", sizeM), n = sizeOrDynamic("n", sizeN),
          k = sizeOrDynamic("k", sizeK);
  SmallVector<int64_t> prefix;
  if (batch > 0)
    prefix.push_back(sizeOrDynamic("batch", batch));
  auto shape = [&](int64_t rows, int64_t cols) {
    SmallVector<int64_t> result(prefix);
    result.append({rows, cols});
    return result;
  };
  SmallVector<Type> argTypes = {makeTile(shape(m, k), *aType, transposeA),
                                makeTile(shape(k, n), *bType, transposeB),
                                MemRefType::get(shape(m, n), *outType)};
  Type f32 = builder.getF32Type();
  if (alpha)
    argTypes.push_back(f32);
  if (bias == "m")
    argTypes.push_back(MemRefType::get(shape(m, 1), f32));
  else if (bias == "n")
    argTypes.push_back(MemRefType::get({n}, f32));
  if (residual)
    argTypes.push_back(MemRefType::get(shape(m, n), *outType));

  std::string name = kernelName.empty() ? "matmul" : kernelName.getValue();
  auto func = func::FuncOp::create(builder, loc, name,
                                   builder.getFunctionType(argTypes, {}));
  Block *body = func.addEntryBlock();
  builder.setInsertionPointToStart(body);
  SmallVector<Value> extras(body->getArguments().drop_front(3));
  FailureOr<ConfigAttr> config = parseConfig(*builder.getContext());
  if (failed(config))
    return failure();
  auto matmul =
      MatmulOp::create(builder, loc, body->getArgument(0), body->getArgument(1),
                       body->getArgument(2), extras, *config);
  bool needsEpilogue = !extras.empty() || activation != "none";
  if (needsEpilogue) {
    OpBuilder::InsertionGuard guard(builder);
    if (failed(buildEpilogue(builder, loc, matmul, *outType, extras)))
      return failure();
  }
  func::ReturnOp::create(builder, loc);
  return func;
}

static FailureOr<func::FuncOp> buildAttention(OpBuilder &builder,
                                              Location loc) {
  MLIRContext &context = *builder.getContext();
  FailureOr<Type> type = parseElementType(context, elementType);
  if (failed(type))
    return failure();
  FailureOr<Type> outType =
      outElementType.empty() ? type : parseElementType(context, outElementType);
  if (failed(outType))
    return failure();
  int64_t hkv = kvHeads ? kvHeads.getValue() : heads.getValue();
  for (int64_t size : {attnBatch.getValue(), heads.getValue(), hkv,
                       seqQ.getValue(), seqKV.getValue(), headDim.getValue()})
    if (size <= 0) {
      fail("-b, -h, --kv-heads, --seq-q, --seq-kv and -d must be positive");
      return failure();
    }
  int64_t b = sizeOrDynamic("batch", attnBatch);
  int64_t sq = sizeOrDynamic("seq-q", seqQ),
          skv = sizeOrDynamic("seq-kv", seqKV);
  SmallVector<Type> argTypes = {
      MemRefType::get({b, heads, sq, headDim}, *type),
      MemRefType::get({b, hkv, skv, headDim}, *type),
      MemRefType::get({b, hkv, skv, headDim}, *type),
      MemRefType::get({b, heads, sq, headDim}, *outType)};
  if (withLse)
    argTypes.push_back(MemRefType::get({b, heads, sq}, builder.getF32Type()));
  std::string name = kernelName.empty() ? "attention" : kernelName.getValue();
  FailureOr<ConfigAttr> config = parseConfig(context);
  if (failed(config))
    return failure();
  auto func = func::FuncOp::create(builder, loc, name,
                                   builder.getFunctionType(argTypes, {}));
  Block *body = func.addEntryBlock();
  builder.setInsertionPointToStart(body);
  Value lse = withLse ? body->getArgument(4) : Value();
  FloatAttr scaleAttr =
      scale != 0.0f ? builder.getF32FloatAttr(scale) : FloatAttr();
  AttentionOp::create(builder, loc, body->getArgument(0), body->getArgument(1),
                      body->getArgument(2), body->getArgument(3), lse,
                      scaleAttr, causal ? builder.getUnitAttr() : UnitAttr(),
                      *config);
  func::ReturnOp::create(builder, loc);
  return func;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::ParseCommandLineOptions(argc, argv,
                              "Tessel problem generator: prints L0 IR\n");
  if (!matmulCommand && !attentionCommand)
    return fail("expected a problem: tessel-gen matmul ... or tessel-gen "
                "attention ... (see --help)");

  MLIRContext context;
  context.loadDialect<TesselDialect, func::FuncDialect, arith::ArithDialect,
                      math::MathDialect, memref::MemRefDialect>();
  // Verifier messages go to stderr like any tool diagnostic.
  ScopedDiagnosticHandler diagnostics(&context, [](Diagnostic &diag) {
    llvm::errs() << "tessel-gen: "
                 << (diag.getSeverity() == DiagnosticSeverity::Error ? "error: "
                                                                     : "note: ")
                 << diag << "\n";
    return success();
  });
  Location loc = UnknownLoc::get(&context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  OpBuilder builder = OpBuilder::atBlockBegin(module->getBody());
  FailureOr<func::FuncOp> func =
      matmulCommand ? buildMatmul(builder, loc) : buildAttention(builder, loc);
  if (failed(func) || failed(verify(*module)))
    return 1;

  std::string errorMessage;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFile, &errorMessage);
  if (!output)
    return fail(errorMessage);
  module->print(output->os());
  output->keep();
  return 0;
}
