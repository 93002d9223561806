//===- TesselOps.cpp - tessel operations ------------------------*- C++ -*-===//
//
// Verifiers name the operand and the rule broken, so a user reading a
// diagnostic on a generated kernel knows which argument to fix.
//
//===----------------------------------------------------------------------===//

#include "tessel/Dialect/Tessel/IR/TesselOps.h"
#include "tessel/Layout/Layouts.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace tessel;

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

bool tessel::isFnuzFp8Type(Type type) {
  return isa<Float8E4M3FNUZType, Float8E5M2FNUZType>(type);
}

bool tessel::isOcpFp8Type(Type type) {
  return isa<Float8E4M3FNType, Float8E5M2Type>(type);
}

bool tessel::isMatmulInputElementType(Type type) {
  return type.isF32() || type.isF16() || type.isBF16() ||
         type.isSignlessInteger(8) || isFnuzFp8Type(type) || isOcpFp8Type(type);
}

static constexpr llvm::StringLiteral kMatmulInputTypes =
    "f32, f16, bf16, i8, f8E4M3FNUZ, f8E5M2FNUZ, f8E4M3FN or f8E5M2";

//===----------------------------------------------------------------------===//
// Shape helpers
//===----------------------------------------------------------------------===//

static std::string formatShape(ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "[";
  llvm::interleaveComma(shape, os, [&](int64_t size) {
    if (ShapedType::isDynamic(size))
      os << "?";
    else
      os << size;
  });
  os << "]";
  return text;
}

/// Two sizes agree unless both are static and differ.
static bool sizesAgree(int64_t lhs, int64_t rhs) {
  return ShapedType::isDynamic(lhs) || ShapedType::isDynamic(rhs) || lhs == rhs;
}

static std::string formatSize(int64_t size) {
  return ShapedType::isDynamic(size) ? std::string("?") : std::to_string(size);
}

/// Checks that `type` has a strided layout with a unit stride in one of its
/// two innermost dimensions (row- or column-major tiles).
static LogicalResult verifyTileLayout(Operation *op, StringRef name,
                                      MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return op->emitOpError() << "operand '" << name
                             << "' must have a strided layout, got " << type;
  int64_t rank = type.getRank();
  bool rowMajor = strides[rank - 1] == 1 || type.getDimSize(rank - 1) == 1;
  bool colMajor = strides[rank - 2] == 1 || type.getDimSize(rank - 2) == 1;
  if (!rowMajor && !colMajor)
    return op->emitOpError()
           << "operand '" << name
           << "' must have unit stride in one of its two innermost dimensions "
              "(row- or column-major), got "
           << type;
  return success();
}

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

/// Parses `epilogue(%x, %y : t1, t2) { region }`, `epilogue { region }`, or
/// nothing.
static ParseResult
parseEpilogue(OpAsmParser &parser,
              SmallVectorImpl<OpAsmParser::UnresolvedOperand> &extras,
              SmallVectorImpl<Type> &extraTypes, Region &region) {
  if (failed(parser.parseOptionalKeyword("epilogue")))
    return success();
  if (succeeded(parser.parseOptionalLParen())) {
    if (parser.parseOperandList(extras) ||
        parser.parseColonTypeList(extraTypes) || parser.parseRParen())
      return failure();
  }
  return parser.parseRegion(region, /*arguments=*/{});
}

static void printEpilogue(OpAsmPrinter &printer, MatmulOp op,
                          OperandRange extras, TypeRange extraTypes,
                          Region &region) {
  if (region.empty() && extras.empty())
    return;
  printer << "epilogue";
  if (!extras.empty()) {
    printer << "(" << extras << " : ";
    llvm::interleaveComma(extraTypes, printer);
    printer << ")";
  }
  printer << " ";
  printer.printRegion(region, /*printEntryBlockArgs=*/true,
                      /*printBlockTerminators=*/true);
}

Type MatmulOp::getAccumulatorType() {
  Type input = getA().getType().getElementType();
  if (input.isSignlessInteger(8))
    return IntegerType::get(getContext(), 32);
  return Float32Type::get(getContext());
}

void MatmulOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Read::get(), &getAMutable());
  effects.emplace_back(MemoryEffects::Read::get(), &getBMutable());
  effects.emplace_back(MemoryEffects::Write::get(), &getCMutable());
  for (OpOperand &extra : getExtrasMutable())
    if (isa<MemRefType>(extra.get().getType()))
      effects.emplace_back(MemoryEffects::Read::get(), &extra);
}

/// Checks the element types of A, B and C.
static LogicalResult verifyMatmulElementTypes(MatmulOp op) {
  Type aType = op.getA().getType().getElementType();
  Type bType = op.getB().getType().getElementType();
  Type cType = op.getC().getType().getElementType();
  for (auto [name, type] :
       {std::pair<StringRef, Type>{"a", aType}, {"b", bType}})
    if (!isMatmulInputElementType(type))
      return op.emitOpError() << "operand '" << name << "' has element type "
                              << type << ", expected " << kMatmulInputTypes;
  bool sameFp8Family = (isFnuzFp8Type(aType) && isFnuzFp8Type(bType)) ||
                       (isOcpFp8Type(aType) && isOcpFp8Type(bType));
  if (aType != bType && !sameFp8Family)
    return op.emitOpError()
           << "operands 'a' and 'b' must have the same element type, or both "
              "be 8-bit floats of one family (FNUZ or OCP); got "
           << aType << " and " << bType;
  if (!isa<FloatType>(cType) && !cType.isSignlessInteger(32))
    return op.emitOpError() << "operand 'c' has element type " << cType
                            << ", expected a float type or i32";
  if (cType.isSignlessInteger(32) && !aType.isSignlessInteger(8) &&
      op.getEpilogue().empty())
    return op.emitOpError()
           << "operand 'c' has element type i32 but the inputs are " << aType
           << ": an i32 result needs i8 inputs or an epilogue that converts "
              "the f32 accumulator";
  return success();
}

/// Checks ranks, the M/N/K/batch agreement and the layouts of A, B and C.
static LogicalResult verifyMatmulShapes(MatmulOp op) {
  MemRefType aType = op.getA().getType(), bType = op.getB().getType(),
             cType = op.getC().getType();
  for (auto [name, type] : {std::pair<StringRef, MemRefType>{"a", aType},
                            {"b", bType},
                            {"c", cType}})
    if (type.getRank() != 2 && type.getRank() != 3)
      return op.emitOpError() << "operand '" << name
                              << "' must be a memref of rank 2 ([M, K] style) "
                                 "or 3 (batched), got rank "
                              << type.getRank();
  int64_t rank = aType.getRank();
  if (bType.getRank() != rank || cType.getRank() != rank)
    return op.emitOpError() << "operands 'a', 'b' and 'c' must have the same "
                               "rank, got "
                            << aType.getRank() << ", " << bType.getRank()
                            << " and " << cType.getRank();

  ArrayRef<int64_t> a = aType.getShape(), b = bType.getShape(),
                    c = cType.getShape();
  auto mismatch = [&](StringRef dim, StringRef lhs, int64_t lhsSize,
                      StringRef rhs, int64_t rhsSize) {
    return op.emitOpError()
           << "dimension " << dim << " differs: '" << lhs << "' has "
           << formatSize(lhsSize) << " but '" << rhs << "' has "
           << formatSize(rhsSize) << " (a: " << formatShape(a)
           << ", b: " << formatShape(b) << ", c: " << formatShape(c) << ")";
  };
  if (rank == 3) {
    if (!sizesAgree(a[0], b[0]))
      return mismatch("batch", "a", a[0], "b", b[0]);
    if (!sizesAgree(a[0], c[0]))
      return mismatch("batch", "a", a[0], "c", c[0]);
  }
  int64_t m = rank - 2, k = rank - 1;
  if (!sizesAgree(a[k], b[m]))
    return mismatch("K", "a", a[k], "b", b[m]);
  if (!sizesAgree(a[m], c[m]))
    return mismatch("M", "a", a[m], "c", c[m]);
  if (!sizesAgree(b[k], c[k]))
    return mismatch("N", "b", b[k], "c", c[k]);

  for (auto [name, type] : {std::pair<StringRef, MemRefType>{"a", aType},
                            {"b", bType},
                            {"c", cType}})
    if (failed(verifyTileLayout(op, name, type)))
      return failure();
  return success();
}

/// Checks that each extra operand is a scalar or a memref broadcastable to C.
static LogicalResult verifyMatmulExtras(MatmulOp op) {
  ArrayRef<int64_t> cShape = op.getC().getType().getShape();
  for (auto [index, extra] : llvm::enumerate(op.getExtras())) {
    Type type = extra.getType();
    if (auto memref = dyn_cast<MemRefType>(type)) {
      if (!memref.getElementType().isIntOrFloat())
        return op.emitOpError() << "extra operand #" << index
                                << " must have an integer or float element "
                                   "type, got "
                                << memref.getElementType();
      ArrayRef<int64_t> shape = memref.getShape();
      bool broadcastable = shape.size() <= cShape.size();
      for (size_t i = 0; broadcastable && i < shape.size(); ++i) {
        int64_t extraSize = shape[shape.size() - 1 - i];
        int64_t cSize = cShape[cShape.size() - 1 - i];
        broadcastable = extraSize == 1 || sizesAgree(extraSize, cSize);
      }
      if (!broadcastable)
        return op.emitOpError()
               << "extra operand #" << index << " of shape "
               << formatShape(shape) << " is not broadcastable to 'c' of shape "
               << formatShape(cShape)
               << " (trailing dimensions must match or be 1)";
      continue;
    }
    if (!type.isIntOrIndexOrFloat())
      return op.emitOpError() << "extra operand #" << index
                              << " must be a memref or an integer, index or "
                                 "float scalar, got "
                              << type;
  }
  return success();
}

int64_t tessel::getSplitKChunk(int64_t k, int64_t tileK, int64_t splits) {
  int64_t perSplit = llvm::divideCeil(k, std::max<int64_t>(splits, 1));
  return llvm::divideCeil(perSplit, tileK) * tileK;
}

/// Split-K (config splits > 1): the partial products go to a workspace the
/// runtime allocates, which needs static shapes, and every split must own
/// at least one K step.
static LogicalResult verifySplitK(MatmulOp op) {
  ConfigAttr config = op.getConfigAttr();
  if (!config || config.getSplits() == 1)
    return success();
  int64_t splits = config.getSplits();
  if (!op.getA().getType().hasStaticShape() ||
      !op.getB().getType().hasStaticShape() ||
      !op.getC().getType().hasStaticShape())
    return op.emitOpError()
           << "split-K (splits = " << splits
           << ") needs static shapes: its workspace is allocated from them";
  int64_t k = op.getA().getType().getShape().back();
  int64_t tileK = config.getTile()[2];
  int64_t chunk = getSplitKChunk(k, tileK, splits);
  if ((splits - 1) * chunk >= k)
    return op.emitOpError()
           << "split-K leaves the last of " << splits
           << " splits without work: K = " << k << " in whole steps of "
           << tileK << " gives each split " << chunk << " elements of K";
  return success();
}

int64_t tessel::getStreamKSteps(MatmulOp op) {
  ConfigAttr config = op.getConfigAttr();
  ArrayRef<int64_t> a = op.getA().getType().getShape();
  ArrayRef<int64_t> b = op.getB().getType().getShape();
  ArrayRef<int64_t> tile = config.getTile();
  return llvm::divideCeil(a[0], tile[0]) * llvm::divideCeil(b[1], tile[1]) *
         llvm::divideCeil(a[1], tile[2]);
}

/// Stream-K (config stream_k > 0): the workgroups' shares of the K steps
/// and the partials' workspace come from static sizes; every workgroup gets
/// at least one K step.
static LogicalResult verifyStreamK(MatmulOp op) {
  ConfigAttr config = op.getConfigAttr();
  if (!config || config.getStreamK() == 0)
    return success();
  int64_t workgroups = config.getStreamK();
  if (op.getA().getType().getRank() != 2 ||
      !op.getA().getType().hasStaticShape() ||
      !op.getB().getType().hasStaticShape() ||
      !op.getC().getType().hasStaticShape())
    return op.emitOpError()
           << "stream-K (stream_k = " << workgroups
           << ") needs static shapes and no batch: the workgroups' shares of "
              "the K steps and the workspace are derived from them";
  int64_t steps = getStreamKSteps(op);
  if (workgroups > steps)
    return op.emitOpError()
           << "stream-K over " << workgroups << " workgroups leaves some "
           << "without work: the problem has " << steps
           << " K steps of its tiles in all";
  return success();
}

LogicalResult MatmulOp::verify() {
  if (failed(verifyMatmulShapes(*this)) ||
      failed(verifyMatmulElementTypes(*this)) ||
      failed(verifyMatmulExtras(*this)))
    return failure();
  if (!getExtras().empty() && getEpilogue().empty())
    return emitOpError() << "has " << getExtras().size()
                         << " extra operand(s) but no epilogue region to use "
                            "them";
  if (ConfigAttr config = getConfigAttr();
      config && config.getTile().size() != 3)
    return emitOpError() << "config tile must have 3 sizes [M, N, K] for "
                            "matmul, got "
                         << config.getTile().size();
  if (failed(verifySplitK(*this)))
    return failure();
  return verifyStreamK(*this);
}

/// The scalar an extra operand contributes to each epilogue invocation.
static Type getExtraElementType(Type extraType) {
  if (auto memref = dyn_cast<MemRefType>(extraType))
    return memref.getElementType();
  return extraType;
}

LogicalResult MatmulOp::verifyRegions() {
  Region &region = getEpilogue();
  if (region.empty())
    return success();
  Block &block = region.front();
  size_t expectedArgs = 1 + getExtras().size();
  if (block.getNumArguments() != expectedArgs)
    return emitOpError() << "epilogue block must have " << expectedArgs
                         << " arguments (the accumulator, then one per extra "
                            "operand), got "
                         << block.getNumArguments();
  Type accType = getAccumulatorType();
  if (block.getArgument(0).getType() != accType)
    return emitOpError() << "epilogue argument #0 must be the accumulator type "
                         << accType << ", got "
                         << block.getArgument(0).getType();
  for (auto [index, extra] : llvm::enumerate(getExtras())) {
    Type expected = getExtraElementType(extra.getType());
    Type actual = block.getArgument(index + 1).getType();
    if (actual != expected)
      return emitOpError() << "epilogue argument #" << index + 1
                           << " must be the element type of extra operand #"
                           << index << " (" << expected << "), got " << actual;
  }
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield)
    return emitOpError() << "epilogue must end with tessel.yield";
  Type cType = getC().getType().getElementType();
  if (yield.getValues().size() != 1 ||
      yield.getValues().front().getType() != cType)
    return yield.emitOpError() << "must yield one value of the element type of "
                                  "'c' ("
                               << cType << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

/// The softmax scale of an attention op (forward or backward): its `scale`,
/// or 1/sqrt(D) when absent.
template <typename AttentionLikeOp>
static float getAttentionScale(AttentionLikeOp op) {
  if (std::optional<APFloat> scale = op.getScale())
    return scale->convertToFloat();
  int64_t headDim = op.getQ().getType().getDimSize(3);
  return 1.0f / std::sqrt(static_cast<float>(headDim));
}

/// The keys each query of an attention op sees: `window` and `causal`.
template <typename AttentionLikeOp>
static KeyWindow getAttentionKeyWindow(AttentionLikeOp op) {
  KeyWindow window;
  if (std::optional<ArrayRef<int64_t>> bounds = op.getWindow()) {
    window.left = (*bounds)[0];
    window.right = (*bounds)[1];
  }
  if (op.getCausal())
    window.right = 0;
  return window;
}

float AttentionOp::getEffectiveScale() { return getAttentionScale(*this); }
KeyWindow AttentionOp::getKeyWindow() { return getAttentionKeyWindow(*this); }
float AttentionGradOp::getEffectiveScale() { return getAttentionScale(*this); }
KeyWindow AttentionGradOp::getKeyWindow() {
  return getAttentionKeyWindow(*this);
}

/// Checks the window's two bounds and their agreement with `causal`.
template <typename AttentionLikeOp>
static LogicalResult verifyKeyWindow(AttentionLikeOp op) {
  std::optional<ArrayRef<int64_t>> bounds = op.getWindow();
  if (!bounds)
    return success();
  if (bounds->size() != 2)
    return op.emitOpError() << "window must be [left, right], got "
                            << bounds->size() << " values";
  static constexpr StringRef sides[] = {"left", "right"};
  for (auto [name, bound] : llvm::zip(sides, *bounds))
    if (bound < -1 || bound > std::numeric_limits<int32_t>::max())
      return op.emitOpError() << "window " << name << " must be -1 "
                              << "(unbounded) or 0 to 2^31 - 1 keys (the "
                              << "kernels' 32-bit key offsets), got " << bound;
  if (op.getCausal() && (*bounds)[1] > 0)
    return op.emitOpError() << "causal sees no key after the query: window "
                               "right must be 0 or -1 with causal, got "
                            << (*bounds)[1];
  return success();
}

/// Checks that the sinks are one f32 logit per query head.
static LogicalResult verifySinks(AttentionOp op) {
  Value sinks = op.getSinks();
  if (!sinks)
    return success();
  auto type = cast<MemRefType>(sinks.getType());
  int64_t heads = op.getQ().getType().getDimSize(1);
  if (type.getRank() != 1 || !sizesAgree(type.getDimSize(0), heads))
    return op.emitOpError()
           << "operand 'sinks' must be [heads] = [" << formatSize(heads)
           << "], got " << formatShape(type.getShape());
  if (!type.getElementType().isF32())
    return op.emitOpError() << "operand 'sinks' must have element type f32, "
                               "got "
                            << type.getElementType();
  if (!type.getLayout().isIdentity())
    return op.emitOpError()
           << "operand 'sinks' must be contiguous, got " << type;
  return success();
}

/// Checks the varlen lengths of an attention op: B + 1 i32 lengths each,
/// arrays whose batch dimension is 1.
static LogicalResult
verifyVarlenLengths(Operation *op, Value cuQ, Value cuK,
                    ArrayRef<std::pair<StringRef, Value>> arrays);

/// Checks the varlen operands: all three or none, B + 1 i32 lengths each,
/// arrays whose batch dimension is 1, no split-KV.
static LogicalResult verifyVarlen(AttentionOp op) {
  Value cuQ = op.getCuSeqlensQ(), cuK = op.getCuSeqlensK();
  if (!cuQ && !cuK && !op.getMaxSeqlenQ())
    return success();
  if (!cuQ || !cuK || !op.getMaxSeqlenQ())
    return op.emitOpError() << "varlen takes cu_seqlens_q, cu_seqlens_k and "
                               "max_seqlen_q together";
  if (failed(verifyVarlenLengths(op, cuQ, cuK,
                                 {{"q", op.getQ()},
                                  {"k", op.getK()},
                                  {"v", op.getV()},
                                  {"o", op.getO()}})))
    return failure();
  if (ConfigAttr config = op.getConfigAttr(); config && config.getSplits() > 1)
    return op.emitOpError() << "varlen attention has no split-KV plan (splits "
                            << config.getSplits() << ")";
  return success();
}

static LogicalResult
verifyVarlenLengths(Operation *op, Value cuQ, Value cuK,
                    ArrayRef<std::pair<StringRef, Value>> arrays) {
  auto q = cast<MemRefType>(cuQ.getType()), k = cast<MemRefType>(cuK.getType());
  for (auto [name, type] : {std::pair<StringRef, MemRefType>{"cu_seqlens_q", q},
                            {"cu_seqlens_k", k}})
    if (type.getRank() != 1 || !type.getLayout().isIdentity())
      return op->emitOpError() << "operand '" << name
                               << "' must be a contiguous rank-1 memref of "
                                  "B + 1 cumulative lengths, got "
                               << type;
  if (!sizesAgree(q.getDimSize(0), k.getDimSize(0)))
    return op->emitOpError() << "cu_seqlens_q and cu_seqlens_k must have the "
                                "same size (B + 1), got "
                             << formatSize(q.getDimSize(0)) << " and "
                             << formatSize(k.getDimSize(0));
  for (auto [name, value] : arrays)
    if (cast<MemRefType>(value.getType()).getDimSize(0) != 1)
      return op->emitOpError()
             << "with varlen, operand '" << name
             << "' holds the packed sequences and its batch "
                "dimension must be a static 1, got "
             << formatShape(cast<MemRefType>(value.getType()).getShape());
  return success();
}

/// Checks the paged-cache operands: both or none; a [B, pages] block
/// table and [B] lengths of i32; a static page size of 16 to 128 keys
/// (a power of two); not with varlen.
static LogicalResult verifyPaged(AttentionOp op) {
  Value table = op.getBlockTable(), lengths = op.getContextLens();
  if (!table && !lengths)
    return success();
  if (!table || !lengths)
    return op.emitOpError() << "paged takes block_table and context_lens "
                               "together";
  if (op.isVarlen())
    return op.emitOpError() << "paged and varlen do not combine";
  auto tableType = cast<MemRefType>(table.getType());
  auto lengthsType = cast<MemRefType>(lengths.getType());
  int64_t batch = op.getQ().getType().getDimSize(0);
  if (tableType.getRank() != 2 || !sizesAgree(tableType.getDimSize(0), batch))
    return op.emitOpError()
           << "operand 'block_table' must be [batch, pages per sequence] = ["
           << formatSize(batch) << ", ?], got "
           << formatShape(tableType.getShape());
  if (lengthsType.getRank() != 1 ||
      !sizesAgree(lengthsType.getDimSize(0), batch))
    return op.emitOpError()
           << "operand 'context_lens' must be [batch] = [" << formatSize(batch)
           << "], got " << formatShape(lengthsType.getShape());
  for (auto [name, type] :
       {std::pair<StringRef, MemRefType>{"block_table", tableType},
        {"context_lens", lengthsType}})
    if (!type.getLayout().isIdentity())
      return op.emitOpError()
             << "operand '" << name << "' must be contiguous, got " << type;
  int64_t pageSize = op.getPageSize();
  if (ShapedType::isDynamic(pageSize) || pageSize < 16 || pageSize > 128 ||
      !llvm::isPowerOf2_64(pageSize))
    return op.emitOpError() << "the paged cache's page size (dimension 2 of "
                               "'k' and 'v') must be a static 16, 32, 64 or "
                               "128, got "
                            << formatSize(pageSize);
  if (ConfigAttr config = op.getConfigAttr();
      config && pageSize % config.getTile()[1] != 0)
    return op.emitOpError() << "key blocks of " << config.getTile()[1]
                            << " must divide the page size " << pageSize;
  return success();
}

/// Checks ranks and the [B, H, S, D] agreement of Q, K, V and O (and of
/// extra operands shaped as one of them: the backward's gradients).
static LogicalResult
verifyAttentionShapes(Operation *op, MemRefType q, MemRefType k, MemRefType v,
                      MemRefType o,
                      ArrayRef<std::pair<StringRef, MemRefType>> extras = {},
                      bool pagedKV = false) {
  SmallVector<std::pair<StringRef, MemRefType>> all = {
      {"q", q}, {"k", k}, {"v", v}, {"o", o}};
  all.append(extras.begin(), extras.end());
  for (auto [name, type] : all) {
    if (type.getRank() != 4)
      return op->emitOpError()
             << "operand '" << name
             << "' must be a rank-4 memref [batch, heads, seq, head_dim], got "
                "rank "
             << type.getRank();
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(type.getStridesAndOffset(strides, offset)) || strides[3] != 1)
      return op->emitOpError() << "operand '" << name
                               << "' must be contiguous along head_dim (unit "
                                  "innermost stride), got "
                               << type;
  }
  auto mismatch = [&](StringRef what, StringRef lhs, MemRefType lhsType,
                      StringRef rhs, MemRefType rhsType) {
    return op->emitOpError()
           << what << " differs: '" << lhs << "' is "
           << formatShape(lhsType.getShape()) << " but '" << rhs << "' is "
           << formatShape(rhsType.getShape());
  };
  // Q and K share the head dim of the scores, V and O the head dim of the
  // values (192 and 128 in DeepSeek's attention).
  for (int dim = 0; dim < 3; ++dim)
    if (!sizesAgree(k.getDimSize(dim), v.getDimSize(dim)))
      return mismatch("[batch, heads, seq]", "k", k, "v", v);
  for (int dim = 0; dim < 3; ++dim)
    if (!sizesAgree(q.getDimSize(dim), o.getDimSize(dim)))
      return mismatch("[batch, heads, seq]", "q", q, "o", o);
  // A paged cache's first dimension counts pages, not sequences.
  if (!pagedKV && !sizesAgree(q.getDimSize(0), k.getDimSize(0)))
    return mismatch("batch", "q", q, "k", k);
  if (!sizesAgree(q.getDimSize(3), k.getDimSize(3)))
    return mismatch("head_dim", "q", q, "k", k);
  if (!sizesAgree(v.getDimSize(3), o.getDimSize(3)))
    return mismatch("head_dim", "v", v, "o", o);
  for (auto [name, type] : {std::pair<StringRef, MemRefType>{"q", q}, {"v", v}})
    if (ShapedType::isDynamic(type.getDimSize(3)))
      return op->emitOpError()
             << "operand '" << name << "' must have a static head_dim, got "
             << formatShape(type.getShape());
  int64_t hq = q.getDimSize(1), hkv = k.getDimSize(1);
  if (hkv == 0 && hq != 0)
    return op->emitOpError()
           << "key/value heads are 0 but query heads are " << formatSize(hq)
           << ": every query head needs a key/value head";
  if (!ShapedType::isDynamic(hq) && !ShapedType::isDynamic(hkv) && hkv != 0 &&
      hq % hkv != 0)
    return op->emitOpError() << "query heads (" << hq
                             << ") must be a multiple of key/value heads ("
                             << hkv << ") for grouped-query attention";
  return success();
}

/// Checks that `lse` is the f32 [batch, heads, seq_q] of queries `q`.
static LogicalResult verifyLogSumExp(Operation *op, MemRefType q,
                                     MemRefType lse) {
  bool shapeOk = lse.getRank() == 3;
  for (int dim = 0; shapeOk && dim < 3; ++dim)
    shapeOk = sizesAgree(lse.getDimSize(dim), q.getDimSize(dim));
  if (!shapeOk)
    return op->emitOpError() << "operand 'lse' must be [batch, heads, seq_q] = "
                             << formatShape(q.getShape().take_front(3))
                             << ", got " << formatShape(lse.getShape());
  if (!lse.getElementType().isF32())
    return op->emitOpError() << "operand 'lse' must have element type f32, got "
                             << lse.getElementType();
  return success();
}

/// Checks the `scale` attribute and the config's tile of an attention op.
template <typename AttentionLikeOp>
static LogicalResult verifyScaleAndTile(AttentionLikeOp op) {
  if (std::optional<APFloat> scale = op.getScale()) {
    float value = scale->convertToFloat();
    if (!std::isfinite(value) || value <= 0.0f)
      return op.emitOpError()
             << "scale must be a positive finite number, got " << value;
  }
  if (ConfigAttr config = op.getConfigAttr();
      config && config.getTile().size() != 2)
    return op.emitOpError()
           << "config tile must have 2 sizes [M, N] (query rows, "
              "keys per step) for attention, got "
           << config.getTile().size();
  return success();
}

FailureOr<AttentionStreamKWork>
tessel::getAttentionStreamKWork(AttentionOp op, ConfigAttr config,
                                function_ref<InFlightDiagnostic()> emitError) {
  auto fail = [&](StringRef why) -> FailureOr<AttentionStreamKWork> {
    if (emitError)
      emitError() << "stream-K attention (stream_k = " << config.getStreamK()
                  << ") " << why;
    return failure();
  };
  MemRefType q = op.getQ().getType(), k = op.getK().getType();
  if (op.isVarlen() || op.isPaged() || op.getSinks())
    return fail("takes one sequence per batch entry and no sinks: varlen, "
                "paged caches and sinks keep one workgroup per query block");
  if (!q.hasStaticShape() || !k.hasStaticShape() ||
      !op.getV().getType().hasStaticShape() ||
      !op.getO().getType().hasStaticShape())
    return fail("needs static shapes: the workgroups' shares of the key "
                "blocks are derived from them");
  int64_t blockM = config.getTile()[0], blockN = config.getTile()[1];
  int64_t seqQ = q.getDimSize(2), seqKV = k.getDimSize(2);
  int64_t groups = k.getDimSize(1) > 0 ? q.getDimSize(1) / k.getDimSize(1) : 1;
  if (groups > 1 && groups * seqQ <= blockM)
    return fail("does not take packed query heads (" + std::to_string(seqQ) +
                " queries per head, whose group of " + std::to_string(groups) +
                " heads fits one block of " + std::to_string(blockM) +
                " rows)");
  AttentionStreamKWork work;
  work.batch = q.getDimSize(0);
  work.heads = q.getDimSize(1);
  work.queryBlocks = llvm::divideCeil(seqQ, blockM);
  KeyWindow window = op.getKeyWindow();
  if (window.isFull()) {
    work.blocksPerUnit = llvm::divideCeil(seqKV, blockN);
  } else {
    if (window.hasLeft() || window.right != 0)
      return fail("takes no mask or a causal one, not a window");
    if (seqQ != seqKV || seqQ % blockM != 0 || work.queryBlocks % 2 != 0 ||
        blockM % blockN != 0)
      return fail("pairs causal query blocks i and Q - 1 - i: it needs "
                  "seq_q == seq_kv, an even number of whole query blocks "
                  "and key blocks that divide them (seq_q " +
                  std::to_string(seqQ) + ", seq_kv " + std::to_string(seqKV) +
                  ", tile [" + std::to_string(blockM) + ", " +
                  std::to_string(blockN) + "])");
    work.pairs = true;
    work.diagonalBlocks = blockM / blockN;
    work.blocksPerUnit = (work.queryBlocks + 1) * work.diagonalBlocks;
  }
  if (work.steps() == 0)
    return fail("has no key block to share");
  // The kernel counts the steps in 32 bits.
  if (work.steps() > std::numeric_limits<int32_t>::max())
    return fail("counts its key-block steps in 32 bits: " +
                std::to_string(work.steps()) + " are too many");
  return work;
}

/// Stream-K (config stream_k > 0): every workgroup gets at least one key
/// block of the problem's.
static LogicalResult verifyAttentionStreamK(AttentionOp op) {
  ConfigAttr config = op.getConfigAttr();
  if (!config || config.getStreamK() == 0)
    return success();
  FailureOr<AttentionStreamKWork> work =
      getAttentionStreamKWork(op, config, [&] { return op.emitOpError(); });
  if (failed(work))
    return failure();
  if (config.getStreamK() > work->steps())
    return op.emitOpError()
           << "stream-K over " << config.getStreamK()
           << " workgroups leaves some without work: the problem has "
           << work->steps() << " key-block steps in all";
  return success();
}

LogicalResult AttentionOp::verify() {
  if (failed(verifyAttentionShapes(*this, getQ().getType(), getK().getType(),
                                   getV().getType(), getO().getType(), {},
                                   isPaged())))
    return failure();
  Type qType = getQ().getType().getElementType();
  bool fp8 = isa<Float8E4M3FNUZType, Float8E4M3FNType>(qType);
  if (!qType.isF16() && !qType.isBF16() && !fp8)
    return emitOpError() << "operand 'q' has element type " << qType
                         << ", expected f16, bf16, f8E4M3FNUZ or f8E4M3FN";
  for (auto [name, value] :
       {std::pair<StringRef, Value>{"k", getK()}, {"v", getV()}}) {
    Type type = cast<MemRefType>(value.getType()).getElementType();
    if (type != qType)
      return emitOpError() << "operand '" << name << "' has element type "
                           << type << " but 'q' has " << qType
                           << "; q, k and v must share one element type";
  }
  Type oType = getO().getType().getElementType();
  if (!isa<FloatType>(oType))
    return emitOpError() << "operand 'o' has element type " << oType
                         << ", expected a float type";
  if (Value lse = getLse();
      lse && failed(verifyLogSumExp(*this, getQ().getType(),
                                    cast<MemRefType>(lse.getType()))))
    return failure();
  if (failed(verifyKeyWindow(*this)) || failed(verifySinks(*this)) ||
      failed(verifyVarlen(*this)) || failed(verifyPaged(*this)))
    return failure();
  if (failed(verifyScaleAndTile(*this)) ||
      failed(verifyAttentionStreamK(*this)))
    return failure();
  // The ping-pong loop is the double-buffered loop over whole key blocks;
  // a paged cache's and packed sequences' key loops keep their own loads
  // (tessel-pipeline leaves them alone), and split-KV's blocks are a
  // decode's few queries.
  if (ConfigAttr config = getConfigAttr();
      config && (config.getPingPong() || config.getUnrolled()) &&
      (isPaged() || isVarlen() || config.getSplits() > 1))
    return emitOpError() << (config.getPingPong() ? "ping_pong" : "unrolled")
                         << " is a form of the loop over whole key "
                            "blocks of one sequence: it takes no paged cache, "
                            "packed (varlen) sequences or splits";
  // A head dim the kernel pads (to a power of two, at least 32) makes the
  // key and value loads masked; tessel-pipeline pipelines a ping-pong loop
  // with them all the same (its halves meet only at the pipelined loop's
  // barriers). The form is built and tested for padded head dims up to 128;
  // past that a wave's O^T alone takes 128 registers a lane (at 256).
  if (ConfigAttr config = getConfigAttr(); config && config.getPingPong())
    for (int64_t headDim :
         {getQ().getType().getDimSize(3), getV().getType().getDimSize(3)}) {
      int64_t padded = getPaddedHeadDim(headDim);
      if (padded != headDim && padded > 128)
        return emitOpError()
               << "ping_pong takes padded head dims up to 128 (a wave's "
                  "O^T takes 128 registers a lane at 256), got "
               << headDim;
    }
  if (!getDescale().empty()) {
    if (!fp8)
      return emitOpError() << "descale applies to 8-bit float inputs, not "
                           << qType;
    if (getDescale().size() != 3)
      return emitOpError() << "descale takes the scales of q, k and v (3 "
                              "operands), got "
                           << getDescale().size();
    for (Value descale : getDescale()) {
      auto type = cast<MemRefType>(descale.getType());
      if (type.getRank() != 1 || type.getDimSize(0) != 1 ||
          !type.getElementType().isF32() || !type.getLayout().isIdentity())
        return emitOpError() << "descale operands must be memref<1xf32> "
                                "(one scale per tensor), got "
                             << type;
    }
  }
  return success();
}

LogicalResult AttentionGradOp::verify() {
  MemRefType q = getQ().getType(), k = getK().getType(), v = getV().getType(),
             o = getO().getType();
  MemRefType gradO = getGradO().getType(), gradQ = getGradQ().getType(),
             gradK = getGradK().getType(), gradV = getGradV().getType();
  if (failed(verifyAttentionShapes(*this, q, k, v, o,
                                   {{"grad_o", gradO},
                                    {"grad_q", gradQ},
                                    {"grad_k", gradK},
                                    {"grad_v", gradV}})))
    return failure();
  auto sameShape = [&](StringRef name, MemRefType type, StringRef asName,
                       MemRefType as) -> LogicalResult {
    for (int dim = 0; dim < 4; ++dim)
      if (!sizesAgree(type.getDimSize(dim), as.getDimSize(dim)))
        return emitOpError() << "operand '" << name << "' must be shaped as '"
                             << asName << "' " << formatShape(as.getShape())
                             << ", got " << formatShape(type.getShape());
    return success();
  };
  if (failed(sameShape("grad_o", gradO, "o", o)) ||
      failed(sameShape("grad_q", gradQ, "q", q)) ||
      failed(sameShape("grad_k", gradK, "k", k)) ||
      failed(sameShape("grad_v", gradV, "v", v)))
    return failure();
  Type element = q.getElementType();
  if (!element.isF16() && !element.isBF16())
    return emitOpError() << "operand 'q' has element type " << element
                         << ", expected f16 or bf16 (the backward has no "
                            "8-bit form)";
  for (auto [name, type] : {std::pair<StringRef, MemRefType>{"k", k},
                            {"v", v},
                            {"o", o},
                            {"grad_o", gradO}})
    if (type.getElementType() != element)
      return emitOpError() << "operand '" << name << "' has element type "
                           << type.getElementType() << " but 'q' has "
                           << element
                           << "; q, k, v, o and grad_o share one element type";
  for (auto [name, type] : {std::pair<StringRef, MemRefType>{"grad_q", gradQ},
                            {"grad_k", gradK},
                            {"grad_v", gradV}})
    if (type.getElementType() != element && !type.getElementType().isF32())
      return emitOpError() << "operand '" << name << "' has element type "
                           << type.getElementType() << ", expected " << element
                           << " (as q) or f32";
  if (failed(verifyLogSumExp(*this, q, getLse().getType())) ||
      failed(verifyKeyWindow(*this)))
    return failure();
  Value cuQ = getCuSeqlensQ(), cuK = getCuSeqlensK();
  if (cuQ || cuK || getMaxSeqlenQ() || getMaxSeqlenK()) {
    if (!cuQ || !cuK || !getMaxSeqlenQ() || !getMaxSeqlenK())
      return emitOpError() << "varlen takes cu_seqlens_q, cu_seqlens_k, "
                              "max_seqlen_q and max_seqlen_k together";
    if (failed(verifyVarlenLengths(*this, cuQ, cuK,
                                   {{"q", getQ()}, {"k", getK()}})))
      return failure();
  }
  if (ConfigAttr config = getConfigAttr(); config && config.getStreamK() > 0)
    return emitOpError() << "the attention backward has no stream-K form "
                            "(stream_k = "
                         << config.getStreamK() << ")";
  if (ConfigAttr config = getConfigAttr(); config && config.getScoresAhead())
    return emitOpError() << "scores_ahead is a forward key-loop form; the "
                            "attention backward takes none";
  return verifyScaleAndTile(*this);
}

//===----------------------------------------------------------------------===//
// L1: tile program
//===----------------------------------------------------------------------===//

FailureOr<LinearLayout>
tessel::getTileLayout(RankedTensorType type,
                      function_ref<InFlightDiagnostic()> emitError) {
  if (!type.getEncoding())
    return emitError() << "tile " << type
                       << " has no layout encoding (#tessel.blocked, "
                          "#tessel.mma, ...)";
  FailureOr<LinearLayout> layout =
      getLinearLayout(type.getEncoding(), type.getShape(), emitError);
  if (failed(layout))
    return failure();
  if (layout->hasInDim(dims::kOffset))
    return emitError() << "tile " << type
                       << " has a memory layout; tiles in registers need a "
                          "distributed one";
  if (!layout->isSurjective())
    return emitError() << "the layout of tile " << type
                       << " leaves elements without a holder";
  return layout;
}

FailureOr<RankedTensorType>
tessel::getReducedTileType(RankedTensorType source, unsigned axis,
                           function_ref<InFlightDiagnostic()> emitError,
                           bool withinLanes) {
  FailureOr<LinearLayout> layout = getTileLayout(source, emitError);
  if (failed(layout))
    return failure();
  if (source.getRank() != 2 || axis > 1)
    return emitError() << "reduces a 2-D tile along dimension 0 or 1";
  // Each input's bases, flattened: registers along the axis are dropped,
  // lanes and waves along it become copies (zero bases), or, within lanes,
  // the lanes along it count the groups (bases 1, 2, 4, ... along it).
  SmallVector<int64_t> bases[3];
  StringRef names[3] = {dims::kRegister, dims::kLane, dims::kWave};
  int64_t groups = 1;
  for (auto [name, flat] : llvm::zip(names, bases)) {
    for (int32_t bit = 0; bit < layout->getInDimSizeLog2(name); ++bit) {
      ArrayRef<int32_t> basis = layout->getBasis(name, bit);
      if (basis[0] != 0 && basis[1] != 0)
        return emitError() << "reductions need a layout whose bases move "
                              "along one dimension each";
      if (basis[axis] != 0 && name == dims::kRegister)
        continue;
      int64_t along = 0;
      if (basis[axis] != 0 && withinLanes) {
        if (name == dims::kWave)
          return emitError() << "a reduction within lanes needs the reduced "
                                "dimension within each wave";
        along = groups;
        groups *= 2;
      }
      flat.push_back(axis == 0 ? along : basis[0]);
      flat.push_back(axis == 1 ? along : basis[1]);
    }
  }
  SmallVector<int64_t> shape(source.getShape());
  shape[axis] = groups;
  auto reduced = LinearAttr::get(source.getContext(), /*rank=*/2, bases[0],
                                 bases[1], bases[2], {}, {});
  return RankedTensorType::get(shape, source.getElementType(), reduced);
}

/// Checks a global tile access: a 2-D tile over the last two dimensions of
/// a memref, one index per memref dimension, same element type.
static LogicalResult verifyGlobalTileAccess(Operation *op, MemRefType memref,
                                            RankedTensorType tile,
                                            size_t numIndices, bool inBounds) {
  auto emitError = [&] { return op->emitOpError(); };
  if (tile.getRank() != 2)
    return op->emitOpError() << "tiles are 2-D, got " << tile;
  if (memref.getRank() < 2)
    return op->emitOpError()
           << "the memref must have rank 2 or more (the tile covers its last "
              "two dimensions), got "
           << memref;
  if (numIndices != size_t(memref.getRank()))
    return op->emitOpError()
           << "expected " << memref.getRank()
           << " indices, one per memref dimension, got " << numIndices;
  if (memref.getElementType() != tile.getElementType())
    return op->emitOpError()
           << "tile element type " << tile.getElementType()
           << " differs from the memref's " << memref.getElementType();
  if (!memref.getLayout().isIdentity() &&
      !isa<StridedLayoutAttr>(memref.getLayout()))
    return op->emitOpError() << "the memref must have a strided layout";
  // `in_bounds` is the producer's promise (as on MLIR's vector transfers):
  // the verifier rejects what no index can satisfy, a tile larger than a
  // static size; the rest follows from how the producer built the indices
  // (a matmul grid of whole tiles, attention's key loop that stops before
  // the sequence's tail block).
  if (inBounds)
    for (unsigned d = 0; d < 2; ++d) {
      int64_t size = memref.getDimSize(memref.getRank() - 2 + d);
      int64_t extent = tile.getDimSize(d);
      if (!ShapedType::isDynamic(size) && size < extent)
        return op->emitOpError()
               << "in_bounds claims a tile of " << extent
               << " inside dimension " << (memref.getRank() - 2 + d) << " of "
               << memref << ", which is smaller";
    }
  return failure(failed(getTileLayout(tile, emitError)));
}

LogicalResult LoadOp::verify() {
  return verifyGlobalTileAccess(*this, getSource().getType(),
                                getResult().getType(), getIndices().size(),
                                getInBounds());
}

LogicalResult SplitArriveOp::verify() {
  int64_t rank = getCounters().getType().getRank();
  if (int64_t(getIndices().size()) != rank)
    return emitOpError() << "needs " << rank << " indices for its " << rank
                         << "-d counters, got " << getIndices().size();
  if (bool(getCount()) == getSplits().has_value())
    return emitOpError() << "takes either a constant `splits` or a `count` "
                            "operand (how many workgroups arrive), not "
                         << (getCount() ? "both" : "neither");
  return success();
}

LogicalResult StoreOp::verify() {
  return verifyGlobalTileAccess(*this, getDest().getType(),
                                getValue().getType(), getIndices().size(),
                                getInBounds());
}

static LogicalResult verifyLocalAccess(Operation *op, LdsType buffer,
                                       RankedTensorType tile) {
  auto emitError = [&] { return op->emitOpError(); };
  if (tile.getShape() != buffer.getShape())
    return op->emitOpError() << "tile " << tile << " does not match the "
                             << "LDS buffer's tile shape";
  if (tile.getElementType() != buffer.getElementType())
    return op->emitOpError()
           << "tile element type " << tile.getElementType()
           << " differs from the LDS buffer's " << buffer.getElementType();
  return failure(failed(getTileLayout(tile, emitError)));
}

LogicalResult LocalStoreOp::verify() {
  return verifyLocalAccess(*this, getBuffer().getType(), getValue().getType());
}

FailureOr<LinearLayout>
tessel::getLdsAccessOffsets(RankedTensorType tile, LdsType buffer,
                            bool transposed,
                            function_ref<InFlightDiagnostic()> emitError) {
  FailureOr<LinearLayout> layout = getTileLayout(tile, emitError);
  FailureOr<LinearLayout> memory =
      getLinearLayout(buffer.getLayout(), buffer.getShape(), emitError);
  if (failed(layout) || failed(memory))
    return failure();
  if (transposed) {
    llvm::Expected<LinearLayout> addresses = transposedReadLayout(*layout);
    if (!addresses)
      return emitError() << llvm::toString(addresses.takeError());
    layout = *addresses;
  }
  llvm::Expected<LinearLayout> inverse = memory->invert();
  if (!inverse)
    return emitError() << llvm::toString(inverse.takeError());
  llvm::Expected<LinearLayout> composed = layout->compose(*inverse);
  if (!composed)
    return emitError() << llvm::toString(composed.takeError());
  return *composed;
}

FailureOr<LinearLayout>
tessel::getCopyLayout(LdsType buffer, int64_t waves,
                      function_ref<InFlightDiagnostic()> emitError) {
  FailureOr<LinearLayout> memory =
      getLinearLayout(buffer.getLayout(), buffer.getShape(), emitError);
  if (failed(memory))
    return failure();
  int64_t elementBits = buffer.getElementType().getIntOrFloatBitWidth();
  int64_t run = kCopyBytesPerLane * 8 / elementBits;
  int64_t instructionElements = run * kCopyWaveSize * waves;
  int64_t slot = buffer.getSlotElements();
  if (waves <= 0 || !llvm::isPowerOf2_64(waves) ||
      slot % instructionElements != 0)
    return emitError() << "copies to LDS move " << kCopyWaveSize << " x "
                       << kCopyBytesPerLane << " bytes per wave and "
                       << "instruction: a slot of " << slot << " "
                       << buffer.getElementType() << " is not a whole number "
                       << "of them for " << waves << " waves";
  auto bases = [](int64_t count, int64_t first) {
    SmallVector<SmallVector<int32_t, 4>> result;
    for (int64_t bit = 0; (int64_t(1) << bit) < count; ++bit)
      result.push_back({int32_t(first << bit)});
    return result;
  };
  // Registers: the run's elements, then the instructions.
  SmallVector<SmallVector<int32_t, 4>> registers = bases(run, 1);
  llvm::append_range(registers,
                     bases(slot / instructionElements, instructionElements));
  llvm::Expected<LinearLayout> toOffset = LinearLayout::get(
      {{std::string(dims::kRegister), registers},
       {std::string(dims::kLane), bases(kCopyWaveSize, run)},
       {std::string(dims::kWave), bases(waves, run * kCopyWaveSize)}},
      {{std::string(dims::kOffset), int32_t(slot)}});
  if (!toOffset)
    return emitError() << llvm::toString(toOffset.takeError());
  llvm::Expected<LinearLayout> composed = toOffset->compose(*memory);
  if (!composed)
    return emitError() << llvm::toString(composed.takeError());
  return *composed;
}

LogicalResult
tessel::verifyCopyToLocal(MemRefType memref, LdsType buffer, int64_t waves,
                          function_ref<InFlightDiagnostic()> emitError) {
  if (memref.getRank() < 2)
    return emitError() << "the memref must have rank 2 or more (the tile "
                          "covers its last two dimensions), got "
                       << memref;
  if (memref.getElementType() != buffer.getElementType())
    return emitError() << "memref element type " << memref.getElementType()
                       << " differs from the LDS buffer's "
                       << buffer.getElementType();
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(memref.getStridesAndOffset(strides, offset)))
    return emitError() << "the memref must have a strided layout";
  int64_t rank = memref.getRank();
  std::optional<unsigned> contiguous;
  for (unsigned d = 0; d < 2; ++d) {
    int64_t size = memref.getDimSize(rank - 2 + d);
    if (!ShapedType::isDynamic(size) && size < buffer.getShape()[d])
      return emitError() << "in_bounds claims a tile of "
                         << buffer.getShape()[d] << " inside dimension "
                         << (rank - 2 + d) << " of " << memref
                         << ", which is smaller";
    if (strides[rank - 2 + d] == 1)
      contiguous = d;
  }
  if (!contiguous)
    return emitError() << "one of the tile's dimensions must be contiguous "
                          "in the memref (unit stride), got "
                       << memref;
  int64_t elementBits = buffer.getElementType().getIntOrFloatBitWidth();
  int64_t run = kCopyBytesPerLane * 8 / elementBits;
  FailureOr<LinearLayout> layout = getCopyLayout(buffer, waves, emitError);
  if (failed(layout))
    return failure();
  // A lane's run is elements 0..run-1 of the contiguous dimension from an
  // origin every other input keeps aligned to the run.
  for (const LinearLayout::InDim &in : layout->getInDims())
    for (auto [bit, basis] : llvm::enumerate(in.bases)) {
      bool inRun = in.name == dims::kRegister && (int64_t(1) << bit) < run;
      bool kept = true;
      for (unsigned d = 0; d < 2; ++d)
        kept &= inRun ? basis[d] == (d == *contiguous ? 1 << bit : 0)
                      : d != *contiguous || basis[d] % run == 0;
      if (!kept)
        return emitError()
               << "the buffer's layout splits the 16-byte runs of dimension "
               << (rank - 2 + *contiguous)
               << " (the memref's contiguous one) that copies move";
    }
  return success();
}

LogicalResult CopyToLocalOp::verify() {
  if (getIndices().size() != size_t(getSource().getType().getRank()))
    return emitOpError() << "expected " << getSource().getType().getRank()
                         << " indices, one per memref dimension, got "
                         << getIndices().size();
  if (!getInBounds())
    return emitOpError() << "copies have no masks: the tile must be in_bounds";
  // Where a lane's run goes does not depend on the number of waves: one
  // wave checks the layout (the lowering checks the slot against the
  // workgroup's waves).
  return verifyCopyToLocal(getSource().getType(), getBuffer().getType(),
                           /*waves=*/1, [&] { return emitOpError(); });
}

LogicalResult LocalLoadOp::verify() {
  if (failed(verifyLocalAccess(*this, getBuffer().getType(),
                               getResult().getType())))
    return failure();
  if (!getTransposed())
    return success();
  if (getResult().getType().getElementType().getIntOrFloatBitWidth() != 16)
    return emitOpError() << "transposed reads move 16-bit elements, not "
                         << getResult().getType().getElementType();
  auto emitError = [&] { return emitOpError(); };
  FailureOr<LinearLayout> offsets = getLdsAccessOffsets(
      getResult().getType(), getBuffer().getType(), true, emitError);
  if (failed(offsets))
    return failure();
  // Registers 0-1 of the address layout step one and two elements, every
  // other basis keeps the four-element runs aligned.
  for (const LinearLayout::InDim &in : offsets->getInDims())
    for (auto [bit, basis] : llvm::enumerate(in.bases)) {
      bool run = in.name == dims::kRegister && bit < 2;
      if (run ? basis[0] != (1 << bit) : basis[0] % 4 != 0)
        return emitOpError()
               << "transposed read: the buffer's layout does not give each "
                  "lane four consecutive elements (the "
               << in.name << " bit " << bit << " steps " << basis[0]
               << " elements)";
    }
  return success();
}

LogicalResult DotOp::verify() {
  RankedTensorType a = getA().getType(), b = getB().getType(),
                   c = getC().getType();
  if (a.getRank() != 2 || b.getRank() != 2 || c.getRank() != 2)
    return emitOpError() << "operands must be 2-D tiles";
  if (a.getDimSize(1) != b.getDimSize(0))
    return emitOpError() << "K of A (" << a.getDimSize(1)
                         << ") differs from K of B (" << b.getDimSize(0) << ")";
  if (c.getDimSize(0) != a.getDimSize(0) || c.getDimSize(1) != b.getDimSize(1))
    return emitOpError() << "accumulator " << c << " is not [M, N] = ["
                         << a.getDimSize(0) << ", " << b.getDimSize(1) << "]";
  Type accType = c.getElementType();
  bool integer = a.getElementType().isSignlessInteger(8);
  if (integer ? !accType.isSignlessInteger(32) : !accType.isF32())
    return emitOpError() << "accumulates in " << (integer ? "i32" : "f32")
                         << " for " << a.getElementType() << " inputs, got "
                         << accType;
  if (getXf32() && !a.getElementType().isF32())
    return emitOpError() << "xf32 applies to f32 operands only";
  auto emitError = [&] { return emitOpError(); };
  for (Value operand : {getA(), getB(), getC()})
    if (failed(getTileLayout(cast<RankedTensorType>(operand.getType()),
                             emitError)))
      return failure();
  return success();
}

LogicalResult ConvertLayoutOp::verify() {
  auto emitError = [&] { return emitOpError(); };
  if (failed(getTileLayout(getSource().getType(), emitError)) ||
      failed(getTileLayout(getResult().getType(), emitError)))
    return failure();
  return success();
}

LogicalResult ReduceOp::verify() {
  if (getKind() != "max" && getKind() != "add")
    return emitOpError() << "kind must be max or add, got '" << getKind()
                         << "'";
  auto emitError = [&] { return emitOpError(); };
  FailureOr<RankedTensorType> expected = getReducedTileType(
      getSource().getType(), getAxis(), emitError, getWithinLanes());
  if (failed(expected))
    return failure();
  RankedTensorType result = getResult().getType();
  FailureOr<LinearLayout> resultLayout = getTileLayout(result, emitError);
  if (failed(resultLayout))
    return failure();
  if (result.getShape() != expected->getShape() ||
      result.getElementType() != expected->getElementType() ||
      *resultLayout != *getTileLayout(*expected, emitError)) {
    if (getWithinLanes())
      return emitOpError() << "result must be " << *expected
                           << ": one position along the reduced dimension "
                              "per group of lanes that held it";
    return emitOpError() << "result must be " << *expected
                         << ": size 1 along the reduced dimension, held by "
                            "the lanes that held its rows or columns";
  }
  return success();
}

LogicalResult WaveAnyOp::verify() {
  // Which elements a wave holds comes from the tile's layout.
  auto emitError = [&] { return emitOpError(); };
  return failure(failed(getTileLayout(getSource().getType(), emitError)));
}

LogicalResult BroadcastOp::verify() {
  RankedTensorType source = getSource().getType(),
                   result = getResult().getType();
  if (source.getRank() != 2 || result.getRank() != 2)
    return emitOpError() << "broadcasts 2-D tiles";
  for (unsigned d = 0; d < 2; ++d)
    if (source.getDimSize(d) != 1 &&
        source.getDimSize(d) != result.getDimSize(d))
      return emitOpError() << "dimension " << d << " of " << source
                           << " must be 1 or that of " << result;
  if (source.getElementType() != result.getElementType())
    return emitOpError() << "element types differ";
  auto emitError = [&] { return emitOpError(); };
  if (failed(getTileLayout(source, emitError)) ||
      failed(getTileLayout(result, emitError)))
    return failure();
  return success();
}

LogicalResult IotaOp::verify() {
  if (!getResult().getType().getElementType().isSignlessInteger(32))
    return emitOpError() << "produces i32 coordinates";
  auto emitError = [&] { return emitOpError(); };
  return failure(failed(getTileLayout(getResult().getType(), emitError)));
}

#define GET_OP_CLASSES
#include "tessel/Dialect/Tessel/IR/TesselOps.cpp.inc"
