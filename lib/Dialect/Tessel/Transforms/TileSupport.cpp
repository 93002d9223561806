//===- TileSupport.cpp - Shared pieces of the tile programs -----*- C++ -*-===//

#include "TileSupport.h"

#include "tessel/Target/Mma.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace tessel;

FailureOr<MmaAttr> tessel::getMmaLayout(Operation *op, StringRef name,
                                        ArrayRef<int64_t> waves,
                                        const TileTarget &target,
                                        bool transposed) {
  SmallVector<const MmaInstr *> instrs = lookupMmaByName(name);
  bool wmma = !instrs.empty() && instrs.front()->isWmma();
  if (wmma && target.chip.empty())
    return op->emitOpError() << "instruction " << name
                             << " is a WMMA instruction, whose layout depends "
                                "on the chip: tile with a chip";
  return MmaAttr::get(op->getContext(), name, waves,
                      wmma ? StringRef(target.chip) : StringRef(),
                      /*waveSize=*/0, transposed);
}

bool tessel::storesTransposedAccumulator(MemRefType c, StringRef name) {
  SmallVector<const MmaInstr *> instrs = lookupMmaByName(name);
  if (instrs.empty() || instrs.front()->isWmma() ||
      instrs.front()->m != instrs.front()->n)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(c.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}

void tessel::finishKernel(Operation *problem, int64_t lanes,
                          ArrayRef<int64_t> tile, ConfigAttr config) {
  auto function = problem->getParentOfType<func::FuncOp>();
  Builder b(problem->getContext());
  function->setAttr("tessel.workgroup_size", b.getI64IntegerAttr(lanes));
  function->setAttr("tessel.tile", b.getDenseI64ArrayAttr(tile));
  function->setAttr("tessel.config", config);
  problem->erase();
}

Value tessel::transposedView(OpBuilder &b, Location loc, Value memref) {
  unsigned rank = cast<MemRefType>(memref.getType()).getRank();
  SmallVector<unsigned> permutation =
      llvm::to_vector(llvm::seq<unsigned>(0, rank));
  std::swap(permutation[rank - 2], permutation[rank - 1]);
  return memref::TransposeOp::create(
      b, loc, memref,
      AffineMapAttr::get(
          AffineMap::getPermutationMap(permutation, b.getContext())));
}

/// The value of `value` where it is known before run time: a constant, an
/// offset or stride of `metadata` that its source's type fixes, or a
/// product of such.
static std::optional<int64_t>
getStaticValue(OpFoldResult value, memref::ExtractStridedMetadataOp metadata) {
  if (std::optional<int64_t> constant = getConstantIntValue(value))
    return constant;
  auto known = [](int64_t v) -> std::optional<int64_t> {
    if (ShapedType::isDynamic(v))
      return std::nullopt;
    return v;
  };
  Value dynamic = dyn_cast<Value>(value);
  auto source = cast<MemRefType>(metadata.getSource().getType());
  int64_t offset;
  SmallVector<int64_t> strides;
  if (dynamic && succeeded(source.getStridesAndOffset(strides, offset))) {
    if (dynamic == metadata.getOffset())
      return known(offset);
    for (auto [stride, result] : llvm::zip(strides, metadata.getStrides()))
      if (dynamic == result)
        return known(stride);
  }
  if (auto dim =
          dynamic ? dynamic.getDefiningOp<memref::DimOp>() : memref::DimOp()) {
    std::optional<int64_t> index = getConstantIntValue(dim.getIndex());
    auto type = dyn_cast<MemRefType>(dim.getSource().getType());
    if (index && type && *index >= 0 && *index < type.getRank())
      return known(type.getDimSize(*index));
  }
  if (auto product =
          dynamic ? dynamic.getDefiningOp<arith::MulIOp>() : arith::MulIOp()) {
    std::optional<int64_t> lhs = getStaticValue(product.getLhs(), metadata);
    std::optional<int64_t> rhs = getStaticValue(product.getRhs(), metadata);
    if (lhs && rhs)
      return *lhs * *rhs;
  }
  return std::nullopt;
}

Value tessel::stridedView(OpBuilder &b, Location loc,
                          memref::ExtractStridedMetadataOp metadata,
                          Type element, ArrayRef<OpFoldResult> sizes,
                          ArrayRef<OpFoldResult> strides) {
  // What is known before run time goes into the view's type (the lowering
  // then knows, say, that the rows are contiguous and loads vectors).
  auto resolve = [&](ArrayRef<OpFoldResult> values,
                     SmallVectorImpl<OpFoldResult> &operands,
                     SmallVectorImpl<int64_t> &inType) {
    for (OpFoldResult value : values) {
      std::optional<int64_t> known = getStaticValue(value, metadata);
      operands.push_back(known ? OpFoldResult(b.getIndexAttr(*known)) : value);
      inType.push_back(known ? *known : ShapedType::kDynamic);
    }
  };
  SmallVector<OpFoldResult> sizeOperands, strideOperands, offsetOperand;
  SmallVector<int64_t> staticSizes, staticStrides, staticOffset;
  resolve(sizes, sizeOperands, staticSizes);
  resolve(strides, strideOperands, staticStrides);
  resolve({OpFoldResult(metadata.getOffset())}, offsetOperand, staticOffset);
  auto viewType = MemRefType::get(
      staticSizes, element,
      StridedLayoutAttr::get(b.getContext(), staticOffset[0], staticStrides));
  return memref::ReinterpretCastOp::create(
      b, loc, viewType, metadata.getBaseBuffer(), offsetOperand[0],
      sizeOperands, strideOperands);
}

Value tessel::unitDimView(OpBuilder &b, Location loc, Value memref,
                          int64_t position, Value width) {
  auto type = cast<MemRefType>(memref.getType());
  int64_t rank = type.getRank();
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  SmallVector<OpFoldResult> sizes, strides;
  for (int64_t d = 0; d <= rank; ++d) {
    if (d == position) {
      sizes.push_back(width ? OpFoldResult(width)
                            : OpFoldResult(b.getIndexAttr(1)));
      strides.push_back(b.getIndexAttr(0));
    }
    if (d == rank)
      break;
    sizes.push_back(memref::DimOp::create(b, loc, memref, d).getResult());
    strides.push_back(metadata.getStrides()[d]);
  }
  return stridedView(b, loc, metadata, type.getElementType(), sizes, strides);
}

std::pair<Value, Value> tessel::getSequenceRange(OpBuilder &b, Location loc,
                                                 Value cumulative,
                                                 Value sequence, Value total) {
  auto constIndex = [&](int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value).getResult();
  };
  auto bound = [&](Value index) {
    Value raw = memref::LoadOp::create(b, loc, cumulative, index);
    Value asIndex = arith::IndexCastOp::create(b, loc, b.getIndexType(), raw);
    return arith::MinSIOp::create(
               b, loc, total,
               arith::MaxSIOp::create(b, loc, asIndex, constIndex(0)))
        .getResult();
  };
  Value end = bound(arith::AddIOp::create(b, loc, sequence, constIndex(1)));
  Value start = arith::MinSIOp::create(b, loc, bound(sequence), end);
  return {start, arith::SubIOp::create(b, loc, end, start).getResult()};
}

SmallVector<int64_t> tessel::getStaticStrides(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    strides.assign(type.getRank(), ShapedType::kDynamic);
  return strides;
}

Value tessel::getRowRange(OpBuilder &b, Location loc, Value memref, Value start,
                          Value length) {
  auto type = cast<MemRefType>(memref.getType());
  SmallVector<int64_t> staticStrides = getStaticStrides(type);
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  SmallVector<OpFoldResult> sizes, strides;
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    bool rows = d == 2;
    shape.push_back(rows ? ShapedType::kDynamic : type.getDimSize(d));
    sizes.push_back(
        rows ? OpFoldResult(length)
        : type.isDynamicDim(d)
            ? OpFoldResult(memref::DimOp::create(b, loc, memref, d).getResult())
            : OpFoldResult(b.getIndexAttr(type.getDimSize(d))));
    strides.push_back(ShapedType::isDynamic(staticStrides[d])
                          ? OpFoldResult(metadata.getStrides()[d])
                          : OpFoldResult(b.getIndexAttr(staticStrides[d])));
  }
  Value offset = arith::AddIOp::create(
      b, loc, metadata.getOffset(),
      arith::MulIOp::create(b, loc, start, metadata.getStrides()[2]));
  auto viewType =
      MemRefType::get(shape, type.getElementType(),
                      StridedLayoutAttr::get(
                          b.getContext(), ShapedType::kDynamic, staticStrides));
  return memref::ReinterpretCastOp::create(
      b, loc, viewType, metadata.getBaseBuffer(), OpFoldResult(offset), sizes,
      strides);
}

Value tessel::remapOverXcds(OpBuilder &b, Location loc, Value linear,
                            Value total, unsigned xcds) {
  if (xcds <= 1)
    return linear;
  auto add = [&](Value x, Value y) {
    return arith::AddIOp::create(b, loc, x, y);
  };
  auto sub = [&](Value x, Value y) {
    return arith::SubIOp::create(b, loc, x, y);
  };
  auto mul = [&](Value x, Value y) {
    return arith::MulIOp::create(b, loc, x, y);
  };
  auto div = [&](Value x, Value y) {
    return arith::DivUIOp::create(b, loc, x, y);
  };
  auto rem = [&](Value x, Value y) {
    return arith::RemUIOp::create(b, loc, x, y);
  };
  // Every divisor at least 1: an empty grid launches no workgroup, but the
  // arithmetic must not divide by zero.
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  total = arith::MaxUIOp::create(b, loc, total, one);
  Value count = arith::ConstantIndexOp::create(b, loc, xcds);
  Value perXcd = arith::CeilDivUIOp::create(b, loc, total, count);
  Value tall = sub(total, mul(count, sub(perXcd, one)));
  Value xcd = rem(linear, count), local = div(linear, count);
  Value isTall =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, xcd, tall);
  Value inTall = add(mul(xcd, perXcd), local);
  // One op per statement: argument evaluation order differs between
  // compilers, and the IR must not.
  Value perShortXcd = sub(perXcd, one);
  Value xcdsPastTall = sub(xcd, tall);
  Value shortIds = mul(xcdsPastTall, perShortXcd);
  Value tallIds = mul(tall, perXcd);
  Value inShort = add(add(tallIds, shortIds), local);
  return arith::SelectOp::create(b, loc, isTall, inTall, inShort);
}

std::tuple<Value, Value, Value> TileProgramBuilder::gridProgramIds() {
  auto programId = [&](int64_t axis) -> Value {
    return ProgramIdOp::create(b, loc, b.getIndexType(),
                               b.getI64IntegerAttr(axis));
  };
  Value x = programId(0), y = programId(1), z = programId(2);
  return {x, y, z};
}

std::tuple<Value, Value, Value>
TileProgramBuilder::longestBlocksFirst(Value blocks, Value heads, Value batches,
                                       bool fromLast) {
  Value perPosition = mul(heads, batches);
  auto [x, y, z] = gridProgramIds();
  Value id = add(x, mul(blocks, add(y, mul(heads, z))));
  Value position = div(id, perPosition);
  Value rest = rem(id, perPosition);
  Value block = fromLast ? sub(sub(blocks, constIndex(1)), position) : position;
  Value head = rem(rest, heads);
  Value batch = div(rest, heads);
  kernel->setAttr("tessel.longest_first", b.getUnitAttr());
  return {block, head, batch};
}
