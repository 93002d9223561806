//===- LdsCopyScopes.cpp - LDS reads beside copies to LDS -------*- C++ -*-===//
//
// A copy from global memory straight into LDS (llvm.amdgcn.load.to.lds,
// global_load_lds_dwordx4) writes LDS when its data arrives, counted by
// the wave's vector-memory counter. The backend's wait insertion makes an
// LDS access wait for every copy in flight unless it can tell them apart,
// and an LDS access with no alias metadata it never tells apart: a K loop
// that issues the next step's copies and then reads this step's operands
// from the other slot would wait the whole global latency before its
// first read. Tessel orders its copies itself (tessel.wait_copies, a
// vector-memory wait, before the barrier that publishes a slot), so the
// rewrite gives every LDS read of a function that copies an alias scope of
// its own. A scope that no access lists as `noalias` claims nothing to
// alias analysis; it only gives the accesses alias metadata, which the
// backend (LLVM 21 and later) needs to match reads against copies at all.
// What LLVM 22 does with it, measured on gfx950's K loops: copies through
// a global address need a scope of their own too (without one every LDS
// read waited for them, `s_waitcnt vmcnt(2)`); copies through a buffer
// resource must have none (their LDS address is an integer made a
// pointer, which alias analysis cannot tell apart from any read: with a
// scope each read waited, `s_waitcnt vmcnt(0)`).
//
//===----------------------------------------------------------------------===//

#include "tessel/Target/Hsaco.h"

#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/IntrinsicsAMDGPU.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"

using namespace llvm;

/// Whether `instruction` copies global memory into LDS through a global
/// address (the buffer form, llvm.amdgcn.raw.ptr.buffer.load.lds, is not
/// one of them: see below).
static bool copiesToLdsFromGlobalAddress(Instruction &instruction) {
  auto *call = dyn_cast<IntrinsicInst>(&instruction);
  if (!call)
    return false;
  switch (call->getIntrinsicID()) {
  case Intrinsic::amdgcn_load_to_lds:
  case Intrinsic::amdgcn_global_load_lds:
    return true;
  default:
    return false;
  }
}

/// Whether `instruction` copies global memory into LDS in either form.
static bool copiesToLds(Instruction &instruction) {
  auto *call = dyn_cast<IntrinsicInst>(&instruction);
  return copiesToLdsFromGlobalAddress(instruction) ||
         (call &&
          call->getIntrinsicID() == Intrinsic::amdgcn_raw_ptr_buffer_load_lds);
}

/// Whether `instruction` reads LDS (a load or a transposing LDS read).
static bool readsLds(Instruction &instruction) {
  if (auto *load = dyn_cast<LoadInst>(&instruction))
    return load->getPointerAddressSpace() == 3;
  auto *call = dyn_cast<IntrinsicInst>(&instruction);
  return call && call->getIntrinsicID() == Intrinsic::amdgcn_ds_read_tr16_b64;
}

void tessel::scopeLdsReadsBesideCopies(Module &module) {
  for (Function &function : module) {
    if (function.isDeclaration() ||
        llvm::none_of(instructions(function), copiesToLds))
      continue;
    MDBuilder builder(module.getContext());
    MDNode *domain = builder.createAnonymousAliasScopeDomain(
        "tessel.lds_copies." + function.getName().str());
    auto scopeList = [&](StringRef name) {
      return MDNode::get(module.getContext(),
                         {builder.createAnonymousAliasScope(domain, name)});
    };
    MDNode *reads = scopeList("reads"), *copies = scopeList("copies");
    for (Instruction &instruction : instructions(function)) {
      if (instruction.getMetadata(LLVMContext::MD_alias_scope))
        continue;
      if (readsLds(instruction))
        instruction.setMetadata(LLVMContext::MD_alias_scope, reads);
      else if (copiesToLdsFromGlobalAddress(instruction))
        instruction.setMetadata(LLVMContext::MD_alias_scope, copies);
    }
  }
}
