//===- FuzzLayoutAttr.cpp - Fuzz target: layout attributes ------*- C++ -*-===//
//
// Input: a tile shape on the first line ("64x32") and a layout attribute
// after it ("#tessel.blocked<...>", "#tessel.mma<...>", ...). The target
// parses the attribute as tessel-layout and the IR parser do, verifies it
// against the shape as a tensor encoding, builds its linear layout and, for
// 2-D register layouts, runs the LDS bank analysis and the swizzle chooser
// that tessel-promote-lds relies on. Properties checked: a layout that
// verifies also builds, every (register, lane, wave) lands inside the tile,
// and the chosen swizzle is no worse than the plain row-major layout.
//
//===----------------------------------------------------------------------===//

#include "FuzzProperty.h"
#include "tessel/Dialect/Tessel/IR/TesselAttrs.h"
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Layout/Layouts.h"
#include "tessel/Support/InputLimits.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <cstdint>

using namespace mlir;
using namespace tessel;
using tessel::fuzz::violated;

static MLIRContext &getContext() {
  static MLIRContext *context = [] {
    auto *context = new MLIRContext(MLIRContext::Threading::DISABLED);
    context->loadDialect<TesselDialect>();
    // Diagnostics are the expected answer to most inputs: keep them quiet.
    context->getDiagEngine().registerHandler(
        [](Diagnostic &) { return success(); });
    return context;
  }();
  return *context;
}

/// "64x32" -> {64, 32}; at most 4 dimensions, each within the tile bounds.
static std::optional<SmallVector<int64_t, 4>> parseShape(StringRef text) {
  SmallVector<StringRef, 4> parts;
  text.split(parts, 'x');
  if (parts.size() > 4)
    return std::nullopt;
  SmallVector<int64_t, 4> shape;
  for (StringRef part : parts) {
    int64_t size;
    if (part.trim().getAsInteger(10, size) || size <= 0 || size > kMaxTileDim)
      return std::nullopt;
    shape.push_back(size);
  }
  return shape;
}

/// Every input of a layout with at most 2^14 of them maps inside the tile.
static void checkOutputsInBounds(const LinearLayout &layout) {
  if (layout.getTotalInDimSizeLog2() > 14)
    return;
  SmallVector<int32_t, 4> sizes;
  for (const LinearLayout::InDim &in : layout.getInDims())
    sizes.push_back(layout.getInDimSize(in.name));
  SmallVector<int32_t, 4> outSizes = layout.getOutDimSizes();
  SmallVector<int32_t, 4> input(sizes.size(), 0);
  while (true) {
    SmallVector<int32_t, 4> output = layout.apply(input);
    for (auto [value, size] : llvm::zip(output, outSizes))
      if (value < 0 || value >= size)
        violated("layout " + layout.toString() + " maps outside its tile");
    unsigned d = 0;
    while (d < input.size() && ++input[d] == sizes[d])
      input[d++] = 0;
    if (d == input.size())
      return;
  }
}

/// The bank analysis and swizzle chooser on a 2-D register layout of f16.
static void checkSwizzleChoice(const LinearLayout &layout,
                               ArrayRef<int64_t> shape) {
  if (shape.size() != 2 || layout.hasInDim(dims::kOffset) ||
      layout.getTotalInDimSizeLog2() > 16)
    return;
  SwizzleQuery query;
  query.shape.assign(shape.begin(), shape.end());
  query.order = {1, 0};
  query.elementBytes = 2;
  query.readLayout = layout;
  query.readBytes = 8;
  query.numWaves = layout.getInDimSize(dims::kWave);
  llvm::Expected<SwizzleChoice> choice = chooseSwizzle(query);
  if (!choice) {
    llvm::consumeError(choice.takeError());
    return;
  }
  llvm::Expected<LinearLayout> plain =
      swizzledLdsLayout(shape, 1, 1, 1, query.order);
  if (!plain) {
    llvm::consumeError(plain.takeError());
    return;
  }
  llvm::Expected<BankConflictReport> plainRead = analyzeBankConflicts(
      layout, *plain, 2, 8, /*isWrite=*/false, query.banking, query.waveSize);
  llvm::Expected<BankConflictReport> plainWrite =
      analyzeBankConflicts(choice->writeLayout, *plain, 2, query.storeBytes,
                           /*isWrite=*/true, query.banking, query.waveSize);
  if (!plainRead || !plainWrite) {
    llvm::consumeError(plainRead.takeError());
    llvm::consumeError(plainWrite.takeError());
    return;
  }
  if (choice->totalConflicts() >
      plainRead->conflictCycles + plainWrite->conflictCycles)
    violated("the chosen swizzle has more bank conflicts than none");
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  StringRef input(reinterpret_cast<const char *>(data), size);
  auto [shapeText, attrText] = input.split('\n');
  std::optional<SmallVector<int64_t, 4>> shape = parseShape(shapeText);
  if (!shape || attrText.empty() || checkInputLimits(attrText))
    return 0;
  MLIRContext &context = getContext();
  Attribute attr = parseAttribute(attrText, &context);
  if (!attr || !isa<LayoutAttrInterface>(attr))
    return 0;
  auto emitError = [&] { return mlir::emitError(UnknownLoc::get(&context)); };
  if (failed(verifyTileShape(*shape, emitError)))
    return 0;
  auto encoding = dyn_cast<VerifiableTensorEncoding>(attr);
  bool verified =
      encoding && succeeded(encoding.verifyEncoding(
                      *shape, Float16Type::get(&context), emitError));
  if (encoding && !verified)
    return 0;
  FailureOr<LinearLayout> layout = getLinearLayout(attr, *shape, emitError);
  if (failed(layout)) {
    if (verified)
      violated("a layout that verifies as a tensor encoding does not build");
    return 0;
  }
  checkOutputsInBounds(*layout);
  checkSwizzleChoice(*layout, *shape);
  return 0;
}
