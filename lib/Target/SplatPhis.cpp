//===- SplatPhis.cpp - phis of splats as splats of phis
//--------------------===//
//
// LLVM's GVN finds a splat (a vector repeating one scalar) partially
// redundant when it is computed again from a value that a branch only
// rarely changes: an attention key loop's running maximum, which the lazy
// rescale's unlikely branch updates, is broadcast into the bias of every
// key block's exponentials. GVN then computes the splat in the branch and
// carries the whole vector across the join as a phi: one register per lane,
// each written by a `v_mov_b32` where the backend materialises it, against
// one register that the packed instructions broadcast for free
// (`op_sel_hi`). The rewrite turns each vector phi whose incoming values
// are all splats of one-element vectors into a splat of a phi of those.
//
//===----------------------------------------------------------------------===//

#include "tessel/Target/Hsaco.h"

#include "llvm/ADT/PostOrderIterator.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/Local.h"

using namespace llvm;

/// The one-element vector `value` repeats in every lane if it is a splat
/// of one (a shufflevector with an all-zero mask), else null.
static Value *getSplatSource(Value *value) {
  auto *shuffle = dyn_cast<ShuffleVectorInst>(value);
  if (!shuffle || !llvm::all_of(shuffle->getShuffleMask(),
                                [](int lane) { return lane == 0; }))
    return nullptr;
  Value *source = shuffle->getOperand(0);
  auto *type = dyn_cast<FixedVectorType>(source->getType());
  return type && type->getNumElements() == 1 ? source : nullptr;
}

/// Rewrites `phi` (a vector phi) as a splat of a phi of its incoming
/// splats' sources, if every incoming value is such a splat.
static bool rewriteSplatPhi(PHINode &phi) {
  SmallVector<Value *> sources;
  for (Value *incoming : phi.incoming_values()) {
    Value *source = getSplatSource(incoming);
    if (!source ||
        (!sources.empty() && source->getType() != sources.front()->getType()))
      return false;
    sources.push_back(source);
  }
  if (sources.empty())
    return false;
  IRBuilder<> builder(&phi);
  PHINode *scalar =
      builder.CreatePHI(sources.front()->getType(), phi.getNumIncomingValues());
  for (auto [source, block] : llvm::zip(sources, phi.blocks()))
    scalar->addIncoming(source, block);
  builder.SetInsertPoint(phi.getParent(),
                         phi.getParent()->getFirstInsertionPt());
  auto *vector = cast<FixedVectorType>(phi.getType());
  Value *splat = builder.CreateShuffleVector(
      scalar, SmallVector<int>(vector->getNumElements(), 0));
  splat->takeName(&phi);
  SmallVector<Value *> incoming(phi.incoming_values());
  phi.replaceAllUsesWith(splat);
  phi.eraseFromParent();
  // The splats the phi took are dead unless used elsewhere.
  for (Value *value : incoming)
    RecursivelyDeleteTriviallyDeadInstructions(value);
  return true;
}

void tessel::scalarizeSplatPhis(Module &module) {
  for (Function &function : module) {
    if (function.isDeclaration())
      continue;
    // In reverse post-order a phi's forward incoming values are rewritten
    // before it (a phi of phis of splats along a chain of joins).
    for (BasicBlock *block : ReversePostOrderTraversal<Function *>(&function))
      for (PHINode &phi : llvm::make_early_inc_range(block->phis()))
        if (isa<FixedVectorType>(phi.getType()))
          rewriteSplatPhi(phi);
  }
}
