//===- Pipeline.cpp - Prefetch the next K step ------------------*- C++ -*-===//

#include "tessel/Dialect/Tessel/IR/TesselOps.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace tessel {
#define GEN_PASS_DEF_TESSELPIPELINEPASS
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace tessel

using namespace mlir;
using namespace tessel;

/// Global loads of `loop` whose tiles only go to LDS and whose indices are
/// the induction variable or defined outside the loop: those can be issued
/// one step early.
static SmallVector<LoadOp> findPrefetchableLoads(scf::ForOp loop) {
  SmallVector<LoadOp> loads;
  for (auto load : loop.getBody()->getOps<LoadOp>()) {
    bool onlyToLds = llvm::all_of(load->getUsers(), [](Operation *user) {
      return isa<LocalStoreOp>(user);
    });
    bool indicesKnown = llvm::all_of(load->getOperands(), [&](Value operand) {
      return operand == loop.getInductionVar() ||
             !loop->isAncestor(operand.getParentRegion()->getParentOp());
    });
    if (onlyToLds && indicesKnown && !load->use_empty())
      loads.push_back(load);
  }
  return loads;
}

static void pipeline(scf::ForOp loop, SmallVector<LoadOp> loads) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  Value iv = loop.getInductionVar();
  // The first step's tiles, before the loop.
  SmallVector<Value> inits(loop.getInitArgs());
  for (LoadOp load : loads) {
    IRMapping first;
    first.map(iv, loop.getLowerBound());
    inits.push_back(b.clone(*load, first)->getResult(0));
  }
  auto pipelined = scf::ForOp::create(b, loc, loop.getLowerBound(),
                                      loop.getUpperBound(), loop.getStep(),
                                      inits);
  Block *body = pipelined.getBody();
  b.setInsertionPointToStart(body);
  IRMapping mapping;
  mapping.map(iv, pipelined.getInductionVar());
  unsigned numOld = loop.getInitArgs().size();
  for (unsigned i = 0; i < numOld; ++i)
    mapping.map(loop.getRegionIterArgs()[i], pipelined.getRegionIterArgs()[i]);
  for (auto [index, load] : llvm::enumerate(loads))
    mapping.map(LoadOp(load).getResult(),
                pipelined.getRegionIterArgs()[numOld + index]);

  // The next step's tiles go out once this step's are in LDS, ahead of the
  // LDS reads and MFMAs they overlap with.
  SmallVector<Value> next;
  auto issueNext = [&] {
    IRMapping step;
    step.map(iv, arith::AddIOp::create(b, loc, pipelined.getInductionVar(),
                                       pipelined.getStep()));
    for (LoadOp load : loads)
      next.push_back(b.clone(*load, step)->getResult(0));
  };
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (isa<LoadOp>(op) && llvm::is_contained(loads, cast<LoadOp>(op)))
      continue;
    if (next.empty() && isa<LocalLoadOp>(op))
      issueNext();
    b.clone(op, mapping);
  }
  if (next.empty())
    issueNext();
  SmallVector<Value> yields;
  for (Value value : loop.getBody()->getTerminator()->getOperands())
    yields.push_back(mapping.lookupOrDefault(value));
  yields.append(next);
  scf::YieldOp::create(b, loc, yields);
  loop->replaceAllUsesWith(pipelined->getResults().take_front(numOld));
  loop.erase();
}

namespace {
struct PipelinePass
    : public tessel::impl::TesselPipelinePassBase<PipelinePass> {
  using Base::Base;

  void runOnOperation() override {
    auto config =
        getOperation()->getAttrOfType<ConfigAttr>("tessel.config");
    if (!config || config.getStages() < 2)
      return;
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops) {
      SmallVector<LoadOp> loads = findPrefetchableLoads(loop);
      if (loads.empty())
        continue;
      pipeline(loop, loads);
      ++numPipelined;
    }
  }
};
} // namespace
