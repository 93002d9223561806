//===- LdsByteOffsets.cpp - swizzled LDS offsets XORed as bytes -----------===//
//
// The lowering addresses a swizzled LDS tile as one per-lane element offset
// X and, for each register, X XOR c (the swizzle's register part); the LLVM
// IR indexes the workgroup buffer with `getelementptr T, base, X ^ c`. The
// AMDGPU backend turns each such index into bytes on its own, so every
// access costs a shift besides its XOR (a gfx950 attention key loop: eight
// K reads from one offset, 15 `v_lshlrev_b32` and `v_xor_b32` for 8
// addresses). Shifting first, (X ^ c) << s == (X << s) ^ (c << s) for the
// element size 2^s in any bit width, so the accesses that share X can share
// one shifted offset and keep one XOR each.
//
//===----------------------------------------------------------------------===//

#include "tessel/Target/Hsaco.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PatternMatch.h"
#include "llvm/Support/MathExtras.h"

using namespace llvm;
using namespace llvm::PatternMatch;

namespace {

/// An LDS access `getelementptr T, base, offset ^ mask` (mask 0: the
/// offset itself) whose element size is a power of two above one byte.
struct ElementAccess {
  GetElementPtrInst *gep;
  APInt mask;
};

constexpr unsigned kLdsAddressSpace = 3;

/// The log2 of the element size of a one-index LDS GEP with an index as
/// wide as the address space's offsets, if it is a power of two above 1.
std::optional<unsigned> elementShift(GetElementPtrInst &gep,
                                     const DataLayout &layout) {
  if (gep.getAddressSpace() != kLdsAddressSpace || gep.getNumIndices() != 1)
    return std::nullopt;
  Type *index = gep.getOperand(1)->getType();
  if (!index->isIntegerTy(layout.getIndexSizeInBits(kLdsAddressSpace)))
    return std::nullopt;
  TypeSize size = layout.getTypeAllocSize(gep.getSourceElementType());
  if (size.isScalable() || size.getFixedValue() < 2 ||
      !isPowerOf2_64(size.getFixedValue()))
    return std::nullopt;
  return Log2_64(size.getFixedValue());
}

/// Groups the function's LDS accesses by their unswizzled offset X and
/// element shift.
MapVector<std::pair<Value *, unsigned>, SmallVector<ElementAccess>>
collectAccesses(Function &function) {
  const DataLayout &layout = function.getDataLayout();
  MapVector<std::pair<Value *, unsigned>, SmallVector<ElementAccess>> groups;
  for (Instruction &instruction : instructions(function)) {
    auto *gep = dyn_cast<GetElementPtrInst>(&instruction);
    if (!gep)
      continue;
    std::optional<unsigned> shift = elementShift(*gep, layout);
    if (!shift)
      continue;
    Value *index = gep->getOperand(1);
    Value *offset = index;
    const APInt *mask = nullptr;
    if (!match(index, m_Xor(m_Value(offset), m_APInt(mask))))
      offset = index;
    unsigned width = index->getType()->getIntegerBitWidth();
    groups[{offset, *shift}].push_back(
        {gep, mask ? *mask : APInt::getZero(width)});
  }
  return groups;
}

/// Rewrites one group's GEPs to byte GEPs off a single shifted offset.
void rewriteGroup(Value *offset, unsigned shift,
                  ArrayRef<ElementAccess> accesses) {
  Instruction *insertAfter = dyn_cast<Instruction>(offset);
  IRBuilder<> builder(offset->getContext());
  if (insertAfter && !isa<PHINode>(insertAfter))
    builder.SetInsertPoint(insertAfter->getNextNode());
  else if (insertAfter)
    builder.SetInsertPoint(insertAfter->getParent()->getFirstNonPHIIt());
  else
    builder.SetInsertPoint(accesses.front()
                               .gep->getFunction()
                               ->getEntryBlock()
                               .getFirstInsertionPt());
  Value *bytes = builder.CreateShl(offset, shift, offset->getName() + ".bytes");
  for (const ElementAccess &access : accesses) {
    GetElementPtrInst *gep = access.gep;
    builder.SetInsertPoint(gep);
    Value *index =
        access.mask.isZero()
            ? bytes
            : builder.CreateXor(bytes, ConstantInt::get(bytes->getType(),
                                                        access.mask << shift));
    Value *byteGep =
        builder.CreateGEP(builder.getInt8Ty(), gep->getPointerOperand(), index);
    byteGep->takeName(gep);
    gep->replaceAllUsesWith(byteGep);
    gep->eraseFromParent();
  }
}

} // namespace

void tessel::xorLdsOffsetsInBytes(Module &module) {
  for (Function &function : module) {
    if (function.isDeclaration())
      continue;
    for (auto &[key, accesses] : collectAccesses(function)) {
      // One access gains nothing: a shift and a XOR either way.
      if (accesses.size() < 2 ||
          llvm::none_of(accesses, [](const ElementAccess &a) {
            return !a.mask.isZero();
          }))
        continue;
      rewriteGroup(key.first, key.second, accesses);
    }
  }
}
