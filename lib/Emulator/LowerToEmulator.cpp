//===- LowerToEmulator.cpp - gpu.module kernels to host code ----*- C++ -*-===//
//
// The kernels the AMDGPU backend would compile become host functions the
// emulator's SIMT runtime runs once per lane. Everything a lane cannot do on
// its own (know its ids, meet its wave or workgroup, touch LDS or a buffer
// resource) becomes a call into the runtime (RuntimeABI.h); every memory
// access is preceded by a check call. See the pass description in
// tessel/Emulator/Passes.td.
//
//===----------------------------------------------------------------------===//

#include "RuntimeABI.h"
#include "tessel/Emulator/Passes.h"
#include "tessel/Target/Chip.h"
#include "tessel/Target/Mma.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

namespace tessel {
#define GEN_PASS_DEF_TESSELLOWERTOEMULATORPASS
#include "tessel/Emulator/Passes.h.inc"
} // namespace tessel

using namespace mlir;
using namespace tessel;

namespace {

/// Rewrites the functions of one host module (a former gpu.module body).
class KernelLowering {
public:
  KernelLowering(ModuleOp host, const Chip &chip)
      : host(host), chip(chip), layout(host) {}

  LogicalResult run();

private:
  MLIRContext *ctx() { return host.getContext(); }
  Type i1() { return IntegerType::get(ctx(), 1); }
  Type i32() { return IntegerType::get(ctx(), 32); }
  Type i64() { return IntegerType::get(ctx(), 64); }
  Type f32() { return Float32Type::get(ctx()); }
  Type ptr(unsigned space = 0) {
    return LLVM::LLVMPointerType::get(ctx(), space);
  }
  Type voidType() { return LLVM::LLVMVoidType::get(ctx()); }

  Value constI32(OpBuilder &b, Location loc, int64_t value) {
    return LLVM::ConstantOp::create(b, loc, i32(), value);
  }
  Value constI64(OpBuilder &b, Location loc, int64_t value) {
    return LLVM::ConstantOp::create(b, loc, i64(), value);
  }
  int64_t sizeOf(Type type) { return layout.getTypeSize(type); }

  /// Calls runtime entry point `__tessel_emu_<name>`, declaring it first.
  Value call(OpBuilder &b, Location loc, StringRef name, Type result,
             ValueRange args);
  /// A stack slot for a `type` in the entry block of the enclosing function
  /// (so that loops do not grow the lane's stack).
  Value slot(OpBuilder &b, Location loc, Type type);
  /// `value` stored to a fresh slot; returns the slot.
  Value spill(OpBuilder &b, Location loc, Value value);
  /// Casts `value` (an integer or float of 32 or 64 bits, or a pointer) to a
  /// pointer of address space 0.
  Value toFlatPointer(OpBuilder &b, Location loc, Value pointer);
  /// Registers `loc` in the module's site table; returns its index.
  int32_t addSite(Location loc);

  LogicalResult lowerLdsGlobals();
  void lowerPrivateAllocas();
  LogicalResult lowerRocdlOp(Operation *op);
  /// The LDS side of a lane's copy to LDS: `value` (`size` bytes) written
  /// at the wave's LDS address `ldsPointer` plus `offset` in lane order.
  void storeCopyToLds(OpBuilder &b, Location loc, Value ldsPointer, Value value,
                      int64_t size, int64_t offset);
  /// The AMDGPU intrinsics the lowering calls by name
  /// (`llvm.call_intrinsic`): `llvm.amdgcn.fdot2` (v_dot2_f32_f16) as host
  /// arithmetic; any other is an error, not a call the host cannot make.
  LogicalResult lowerIntrinsicCall(LLVM::CallIntrinsicOp op);
  LogicalResult lowerMma(Operation *op, StringRef mnemonic);
  LogicalResult lowerScaledMma(Operation *op, StringRef mnemonic);
  /// Replaces `op` by the emulator's call of catalogue entry `instr` on
  /// (A, B, C).
  LogicalResult emitMmaCall(Operation *op, const MmaInstr &instr,
                            ValueRange operands, int32_t flags);
  void instrumentAccesses();
  void instrumentAccess(Operation *op, Value pointer, Type valueType,
                        int64_t alignment, bool isWrite);
  void instrumentMaskedAccess(Operation *op, Value pointer, Value mask,
                              Type valueType, int64_t alignment, bool isWrite);
  /// What an access of `valueType` assumes of its address: `declared` when
  /// given, else what LLVM assumes without it.
  int64_t alignmentOf(std::optional<uint64_t> declared, Type valueType,
                      bool isAtomic);
  void guardDivisions();
  void guardDivision(Operation *op);
  /// A constant of integer or integer-vector `type` with every element
  /// `value`.
  Value splat(OpBuilder &b, Location loc, Type type, const APInt &value);
  /// Whether any element of the i1 or i1-vector `bits` is set, as an i1.
  Value anyOf(OpBuilder &b, Location loc, Value bits);
  void cleanUpKernelAttributes();

  ModuleOp host;
  const Chip &chip;
  DataLayout layout;
  SmallVector<Attribute> sites;
};

} // namespace

Value KernelLowering::call(OpBuilder &b, Location loc, StringRef name,
                           Type result, ValueRange args) {
  std::string symbol = ("__tessel_emu_" + name).str();
  auto callee = host.lookupSymbol<LLVM::LLVMFuncOp>(symbol);
  if (!callee) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(host.getBody());
    SmallVector<Type> argTypes(args.getTypes());
    callee = LLVM::LLVMFuncOp::create(
        b, loc, symbol, LLVM::LLVMFunctionType::get(result, argTypes));
  }
  auto op = LLVM::CallOp::create(b, loc, callee, args);
  return op.getNumResults() ? op.getResult() : Value();
}

Value KernelLowering::slot(OpBuilder &b, Location loc, Type type) {
  auto function =
      b.getInsertionBlock()->getParentOp()->getParentOfType<LLVM::LLVMFuncOp>();
  if (!function)
    function = cast<LLVM::LLVMFuncOp>(b.getInsertionBlock()->getParentOp());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&function.getBody().front());
  Value one = constI64(b, loc, 1);
  // The host loads and stores the slot with the type's natural alignment
  // (64 bytes for <16 x float> with AVX-512): give it at least that.
  uint64_t alignment = std::max<uint64_t>(16, llvm::PowerOf2Ceil(sizeOf(type)));
  return LLVM::AllocaOp::create(b, loc, ptr(), type, one,
                                std::min<uint64_t>(alignment, 128));
}

Value KernelLowering::spill(OpBuilder &b, Location loc, Value value) {
  Value memory = slot(b, loc, value.getType());
  LLVM::StoreOp::create(b, loc, value, memory);
  return memory;
}

Value KernelLowering::toFlatPointer(OpBuilder &b, Location loc, Value pointer) {
  auto type = cast<LLVM::LLVMPointerType>(pointer.getType());
  if (type.getAddressSpace() == 0)
    return pointer;
  return LLVM::AddrSpaceCastOp::create(b, loc, ptr(), pointer);
}

/// "file:line:col" of the first file location in `loc` (for an inlined op,
/// its own before its caller's), or "" when there is none.
static std::string describeLocation(Location loc) {
  std::string text;
  loc->walk([&](Location nested) {
    auto file = dyn_cast<FileLineColLoc>(nested);
    if (!file)
      return WalkResult::advance();
    text = llvm::formatv("{0}:{1}:{2}", file.getFilename().getValue(),
                         file.getLine(), file.getColumn())
               .str();
    return WalkResult::interrupt();
  });
  return text;
}

int32_t KernelLowering::addSite(Location loc) {
  sites.push_back(StringAttr::get(ctx(), describeLocation(loc)));
  return sites.size() - 1;
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

LogicalResult KernelLowering::lowerLdsGlobals() {
  llvm::StringMap<LLVM::GlobalOp> ldsGlobals;
  for (auto global : host.getOps<LLVM::GlobalOp>()) {
    if (global.getAddrSpace() != 3)
      continue;
    if (global.getInitializerRegion().getBlocks().size() ||
        global.getValueAttr())
      return global.emitError() << "LDS global '" << global.getSymName()
                                << "' has an initializer; LDS starts "
                                   "undefined on AMD GPUs";
    ldsGlobals[global.getSymName()] = global;
  }
  // Each function lays out the LDS globals it uses, in order of first use,
  // from offset 0 of its workgroup's LDS (kernels call no functions that
  // touch LDS once inlined).
  for (auto function : host.getOps<LLVM::LLVMFuncOp>()) {
    llvm::StringMap<int64_t> offsets;
    int64_t ldsBytes = 0;
    SmallVector<LLVM::AddressOfOp> uses;
    function.walk([&](LLVM::AddressOfOp addressOf) {
      auto it = ldsGlobals.find(addressOf.getGlobalName());
      if (it == ldsGlobals.end())
        return;
      uses.push_back(addressOf);
      if (offsets.count(addressOf.getGlobalName()))
        return;
      LLVM::GlobalOp global = it->second;
      int64_t alignment =
          std::max<int64_t>(global.getAlignment().value_or(16), 1);
      ldsBytes = llvm::alignTo(ldsBytes, alignment);
      offsets[global.getSymName()] = ldsBytes;
      ldsBytes += sizeOf(global.getType());
    });
    for (LLVM::AddressOfOp addressOf : uses) {
      OpBuilder b(addressOf);
      Location loc = addressOf.getLoc();
      Value base = call(b, loc, "lds", ptr(),
                        {constI64(b, loc, offsets[addressOf.getGlobalName()])});
      Value cast =
          LLVM::AddrSpaceCastOp::create(b, loc, addressOf.getType(), base);
      addressOf.replaceAllUsesWith(cast);
      addressOf.erase();
    }
    function->setAttr(emu::kLdsBytesAttr,
                      IntegerAttr::get(IntegerType::get(ctx(), 64), ldsBytes));
  }
  for (auto &entry : ldsGlobals)
    entry.second.erase();
  return success();
}

void KernelLowering::lowerPrivateAllocas() {
  // The host data layout puts allocas in address space 0.
  SmallVector<LLVM::AllocaOp> allocas;
  host.walk([&](LLVM::AllocaOp alloca) {
    if (alloca.getType().getAddressSpace() != 0)
      allocas.push_back(alloca);
  });
  for (LLVM::AllocaOp alloca : allocas) {
    OpBuilder b(alloca);
    auto hostAlloca = LLVM::AllocaOp::create(
        b, alloca.getLoc(), ptr(), alloca.getElemType(), alloca.getArraySize(),
        alloca.getAlignment().value_or(0));
    Value cast = LLVM::AddrSpaceCastOp::create(b, alloca.getLoc(),
                                               alloca.getType(), hostAlloca);
    alloca.replaceAllUsesWith(cast);
    alloca.erase();
  }
}

int64_t KernelLowering::alignmentOf(std::optional<uint64_t> declared,
                                    Type valueType, bool isAtomic) {
  if (declared && *declared)
    return *declared;
  // LLVM IR without an alignment: the ABI alignment of the type, or for
  // atomics its size (LLVM's IRBuilder).
  return isAtomic ? sizeOf(valueType) : layout.getTypeABIAlignment(valueType);
}

void KernelLowering::instrumentAccess(Operation *op, Value pointer,
                                      Type valueType, int64_t alignment,
                                      bool isWrite) {
  unsigned space =
      cast<LLVM::LLVMPointerType>(pointer.getType()).getAddressSpace();
  if (space == 5)
    return; // private memory: the lane's own stack
  OpBuilder b(op);
  Location loc = op->getLoc();
  int32_t kind = (isWrite ? emu::abi::kWriteBit : 0) |
                 int32_t(space << emu::abi::kAddressSpaceShift);
  call(b, loc, "check", voidType(),
       {toFlatPointer(b, loc, pointer), constI64(b, loc, sizeOf(valueType)),
        constI64(b, loc, alignment), constI32(b, loc, kind)});
}

void KernelLowering::instrumentMaskedAccess(Operation *op, Value pointer,
                                            Value mask, Type valueType,
                                            int64_t alignment, bool isWrite) {
  unsigned space =
      cast<LLVM::LLVMPointerType>(pointer.getType()).getAddressSpace();
  if (space == 5)
    return;
  OpBuilder b(op);
  Location loc = op->getLoc();
  auto vectorType = cast<VectorType>(valueType);
  int64_t count = vectorType.getNumElements();
  auto byteMask = VectorType::get({count}, IntegerType::get(ctx(), 8));
  Value bytes = LLVM::ZExtOp::create(b, loc, byteMask, mask);
  int32_t kind = (isWrite ? emu::abi::kWriteBit : 0) |
                 int32_t(space << emu::abi::kAddressSpaceShift);
  call(b, loc, "check_masked", voidType(),
       {toFlatPointer(b, loc, pointer),
        constI64(b, loc, sizeOf(vectorType.getElementType())),
        constI64(b, loc, count), spill(b, loc, bytes),
        constI64(b, loc, alignment), constI32(b, loc, kind)});
}

void KernelLowering::instrumentAccesses() {
  SmallVector<Operation *> accesses;
  host.walk([&](Operation *op) {
    if (isa<LLVM::LoadOp, LLVM::StoreOp, LLVM::AtomicRMWOp,
            LLVM::AtomicCmpXchgOp, LLVM::MaskedLoadOp, LLVM::MaskedStoreOp>(op))
      accesses.push_back(op);
  });
  for (Operation *op : accesses) {
    if (auto load = dyn_cast<LLVM::LoadOp>(op)) {
      Type type = load.getType();
      instrumentAccess(op, load.getAddr(), type,
                       alignmentOf(load.getAlignment(), type, false), false);
    } else if (auto store = dyn_cast<LLVM::StoreOp>(op)) {
      Type type = store.getValue().getType();
      instrumentAccess(op, store.getAddr(), type,
                       alignmentOf(store.getAlignment(), type, false), true);
    } else if (auto rmw = dyn_cast<LLVM::AtomicRMWOp>(op)) {
      Type type = rmw.getVal().getType();
      instrumentAccess(op, rmw.getPtr(), type,
                       alignmentOf(rmw.getAlignment(), type, true), true);
    } else if (auto cmpxchg = dyn_cast<LLVM::AtomicCmpXchgOp>(op)) {
      Type type = cmpxchg.getVal().getType();
      instrumentAccess(op, cmpxchg.getPtr(), type,
                       alignmentOf(cmpxchg.getAlignment(), type, true), true);
    } else if (auto load = dyn_cast<LLVM::MaskedLoadOp>(op)) {
      Type type = load.getType();
      instrumentMaskedAccess(op, load.getData(), load.getMask(), type,
                             alignmentOf(load.getAlignment(), type, false),
                             false);
    } else if (auto store = dyn_cast<LLVM::MaskedStoreOp>(op)) {
      Type type = store.getValue().getType();
      instrumentMaskedAccess(op, store.getData(), store.getMask(), type,
                             alignmentOf(store.getAlignment(), type, false),
                             true);
    }
  }
}

//===----------------------------------------------------------------------===//
// Integer division
//===----------------------------------------------------------------------===//

/// Whether `divisor` is a constant no element of which can fault: none is
/// zero and, for a signed division, none is -1.
static bool isSafeDivisor(Value divisor, bool isSigned) {
  Attribute attr;
  if (!matchPattern(divisor, m_Constant(&attr)))
    return false;
  auto isSafe = [&](const APInt &value) {
    return !value.isZero() && !(isSigned && value.isAllOnes());
  };
  if (auto integer = dyn_cast<IntegerAttr>(attr))
    return isSafe(integer.getValue());
  if (auto elements = dyn_cast<DenseIntElementsAttr>(attr))
    return llvm::all_of(elements.getValues<APInt>(), isSafe);
  return false;
}

Value KernelLowering::splat(OpBuilder &b, Location loc, Type type,
                            const APInt &value) {
  if (auto vector = dyn_cast<VectorType>(type))
    return LLVM::ConstantOp::create(b, loc, type,
                                    DenseElementsAttr::get(vector, value));
  return LLVM::ConstantOp::create(b, loc, type, b.getIntegerAttr(type, value));
}

Value KernelLowering::anyOf(OpBuilder &b, Location loc, Value bits) {
  auto vector = dyn_cast<VectorType>(bits.getType());
  if (!vector)
    return bits;
  // <N x i1> and iN have the same bits.
  Type word = IntegerType::get(ctx(), vector.getNumElements());
  Value packed = LLVM::BitcastOp::create(b, loc, word, bits);
  return LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, packed,
                              LLVM::ConstantOp::create(b, loc, word, 0));
}

/// The DivisionOp (RuntimeABI.h) of `op`.
static emu::abi::DivisionOp getDivisionOp(Operation *op) {
  if (isa<LLVM::SDivOp>(op))
    return emu::abi::kSDiv;
  if (isa<LLVM::UDivOp>(op))
    return emu::abi::kUDiv;
  if (isa<LLVM::SRemOp>(op))
    return emu::abi::kSRem;
  return emu::abi::kURem;
}

void KernelLowering::guardDivision(Operation *op) {
  emu::abi::DivisionOp division = getDivisionOp(op);
  bool isSigned = division == emu::abi::kSDiv || division == emu::abi::kSRem;
  Value dividend = op->getOperand(0), divisor = op->getOperand(1);
  if (isSafeDivisor(divisor, isSigned))
    return;
  OpBuilder b(op);
  Location loc = op->getLoc();
  Type type = divisor.getType();
  unsigned width = getElementTypeOrSelf(type).getIntOrFloatBitWidth();
  auto equals = [&](Value value, const APInt &constant) {
    return LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, value,
                                splat(b, loc, type, constant));
  };
  Value byZero = anyOf(b, loc, equals(divisor, APInt::getZero(width)));
  Value faults = byZero;
  // Ops are created one statement at a time: the order of arguments'
  // evaluation, and so of the emitted IR, would differ between compilers.
  if (isSigned) {
    Value byMinusOne = equals(divisor, APInt::getAllOnes(width));
    Value isMin = equals(dividend, APInt::getSignedMinValue(width));
    Value overflows = LLVM::AndOp::create(b, loc, isMin, byMinusOne);
    Value anyOverflows = anyOf(b, loc, overflows);
    faults = LLVM::OrOp::create(b, loc, byZero, anyOverflows);
  }
  int32_t code = division | int32_t(width << emu::abi::kDivisionWidthShift);
  Value overflowCode = constI32(b, loc, code);
  Value zeroCode = constI32(b, loc, code | emu::abi::kDivisorZeroBit);
  Value what = LLVM::SelectOp::create(b, loc, byZero, zeroCode, overflowCode);

  // Branch to a block that reports the fault and never returns; the
  // division itself runs only when it cannot fault.
  Block *before = op->getBlock();
  Block *after = before->splitBlock(op);
  Block *fault = b.createBlock(after);
  call(b, loc, "division_fault", voidType(),
       {what, constI32(b, loc, addSite(loc))});
  LLVM::UnreachableOp::create(b, loc);
  b.setInsertionPointToEnd(before);
  LLVM::CondBrOp::create(b, loc, faults, fault, after);
}

void KernelLowering::guardDivisions() {
  // LLVM leaves a division by zero and the smallest signed value divided by
  // -1 undefined; the host traps on both (SIGFPE), the GPU returns some
  // value. Each becomes a fault of the lane that divides.
  SmallVector<Operation *> divisions;
  host.walk([&](Operation *op) {
    if (isa<LLVM::SDivOp, LLVM::UDivOp, LLVM::SRemOp, LLVM::URemOp>(op))
      divisions.push_back(op);
  });
  for (Operation *op : divisions)
    guardDivision(op);
}

//===----------------------------------------------------------------------===//
// ROCDL operations
//===----------------------------------------------------------------------===//

/// The integer value of a constant operand, if it is one.
static std::optional<int64_t> getConstantInt(Value value) {
  auto constant = value.getDefiningOp<LLVM::ConstantOp>();
  if (auto attr =
          constant ? dyn_cast<IntegerAttr>(constant.getValue()) : IntegerAttr())
    return attr.getInt();
  return std::nullopt;
}

/// gfx950's f8f6f4 MFMAs reach ROCDL in their block-scaled form (a, b, c,
/// cbsz, blgp, opsel A, scale A, opsel B, scale B); with zero scales the
/// backend emits the unscaled instruction. cbsz and blgp give A's and B's
/// formats: 0 an E4M3 and 1 an E5M2 8-bit float (2-4 are the 6- and 4-bit
/// ones, which nothing here produces).
LogicalResult KernelLowering::lowerScaledMma(Operation *op,
                                             StringRef mnemonic) {
  std::string unscaled = mnemonic.str();
  unscaled.erase(unscaled.find("scale_"), 6);
  if (op->getNumOperands() != 9)
    return op->emitError() << "expected 9 operands of " << mnemonic;
  std::optional<MmaElement> formats[2];
  for (auto [index, format] : llvm::enumerate(formats)) {
    std::optional<int64_t> code = getConstantInt(op->getOperand(3 + index));
    if (code == 0 || code == 1)
      format = *code ? MmaElement::Bf8 : MmaElement::Fp8;
    else
      return op->emitError() << "the emulator models " << mnemonic
                             << " with 8-bit float operands (cbsz and blgp "
                                "0 or 1) only";
  }
  for (Value scale : op->getOperands().drop_front(5))
    if (getConstantInt(scale) != 0)
      return op->emitError()
             << "the emulator models " << mnemonic << " without block scales";
  const MmaInstr *instr = lookupMma(unscaled, chip, formats[0], formats[1]);
  if (!instr)
    return op->emitError() << "'" << op->getName() << "' (" << unscaled
                           << ") is not a matrix instruction of " << chip.name
                           << " in the catalogue";
  return emitMmaCall(op, *instr, op->getOperands().take_front(3), 0);
}

LogicalResult KernelLowering::lowerMma(Operation *op, StringRef mnemonic) {
  if (mnemonic.starts_with("v_mfma_scale_"))
    return lowerScaledMma(op, mnemonic);
  const MmaInstr *instr = lookupMma(mnemonic, chip);
  if (!instr)
    return op->emitError() << "'" << op->getName() << "' (" << mnemonic
                           << ") is not a matrix instruction of " << chip.name
                           << " in the catalogue";
  SmallVector<Value> operands;
  int32_t flags = 0;
  if (instr->isWmma()) {
    operands.assign(op->operand_begin(), op->operand_end());
    if (auto signA = op->getAttrOfType<BoolAttr>("signA"))
      flags |= signA.getValue() ? 0 : emu::abi::kMmaUnsignedA;
    if (auto signB = op->getAttrOfType<BoolAttr>("signB"))
      flags |= signB.getValue() ? 0 : emu::abi::kMmaUnsignedB;
    auto opsel = op->getAttrOfType<BoolAttr>("opsel");
    auto clamp = op->getAttrOfType<BoolAttr>("clamp");
    if ((opsel && opsel.getValue()) || (clamp && clamp.getValue()))
      return op->emitError() << "the emulator models " << mnemonic
                             << " without opsel and clamp";
  } else {
    // (a, b, c, cbsz, abid, blgp): the modifiers must be zero.
    operands.assign(op->operand_begin(), op->operand_begin() + 3);
    for (Value modifier : op->getOperands().drop_front(3))
      if (getConstantInt(modifier) != 0)
        return op->emitError() << "the emulator models " << mnemonic
                               << " without cbsz/abid/blgp modifiers";
  }
  if (operands.size() != 3)
    return op->emitError() << "expected A, B and C operands";
  return emitMmaCall(op, *instr, operands, flags);
}

LogicalResult KernelLowering::emitMmaCall(Operation *op, const MmaInstr &instr,
                                          ValueRange operands, int32_t flags) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  int64_t index = &instr - getMmaCatalogue().data();
  Value result = slot(b, loc, op->getResult(0).getType());
  call(b, loc, "mma", voidType(),
       {constI32(b, loc, index), spill(b, loc, operands[0]),
        spill(b, loc, operands[1]), spill(b, loc, operands[2]), result,
        constI32(b, loc, flags)});
  Value value =
      LLVM::LoadOp::create(b, loc, op->getResult(0).getType(), result);
  op->getResult(0).replaceAllUsesWith(value);
  op->erase();
  return success();
}

/// The dimension (0, 1, 2) of an `...x/y/z` op name.
static int64_t dimOf(StringRef name) { return name.back() - 'x'; }

LogicalResult KernelLowering::lowerIntrinsicCall(LLVM::CallIntrinsicOp op) {
  if (op.getIntrin() != "llvm.amdgcn.fdot2")
    return op.emitOpError()
           << "the emulator does not implement " << op.getIntrin();
  IntegerAttr clamp;
  if (op.getNumOperands() != 4 ||
      !matchPattern(op.getOperand(3), m_Constant(&clamp)) || clamp.getInt())
    return op.emitOpError()
           << "the emulator implements llvm.amdgcn.fdot2 without clamping "
              "(a constant false fourth operand)";
  // a.x * b.x + a.y * b.y + c in f64, then rounded to f32: the f16
  // products are exact in f64, and so are their sums with an f32 `c` of a
  // nearby magnitude (attention's row sums: multiples of 2^-24 far from
  // f64's limits), so the result is the exact sum rounded once. The
  // hardware flushes f32 denormals of `c` and of the result, which these
  // sums never are.
  OpBuilder b(op);
  Location loc = op.getLoc();
  Type f64 = Float64Type::get(ctx());
  auto element = [&](Value pair, int64_t index) -> Value {
    Value half = LLVM::ExtractElementOp::create(
        b, loc, pair, LLVM::ConstantOp::create(b, loc, i32(), index));
    return LLVM::FPExtOp::create(b, loc, f64, half);
  };
  Value sum = LLVM::FPExtOp::create(b, loc, f64, op.getOperand(2));
  for (int64_t i = 0; i < 2; ++i) {
    Value a = element(op.getOperand(0), i);
    Value c = element(op.getOperand(1), i);
    sum = LLVM::FAddOp::create(b, loc, LLVM::FMulOp::create(b, loc, a, c), sum);
  }
  op.getResult(0).replaceAllUsesWith(
      LLVM::FPTruncOp::create(b, loc, f32(), sum).getResult());
  op.erase();
  return success();
}

/// The byte counts of a lane's copy to LDS (load.to.lds and the buffer
/// form).
static bool isCopySize(int64_t size) {
  return llvm::is_contained({1, 2, 4, 12, 16}, size);
}

void KernelLowering::storeCopyToLds(OpBuilder &b, Location loc,
                                    Value ldsPointer, Value value, int64_t size,
                                    int64_t offset) {
  // The wave's data goes to LDS in lane order from the first lane's LDS
  // address plus the offset (M0 + offset + lane x size; 1 and 2 bytes are
  // widened to 4, 12 to 16), checked like any access. The copy lands at
  // once: tessel.wait_copies orders it for the issuing wave, and the
  // emulator's LDS race check sees a copy into a slot other waves still
  // read.
  int64_t stride = size < 4 ? 4 : size == 12 ? 16 : size;
  Type stored = IntegerType::get(ctx(), 8 * std::max<int64_t>(size, 4));
  if (stored != value.getType())
    value = LLVM::ZExtOp::create(b, loc, stored, value);
  Type pointerType = ldsPointer.getType();
  Value base = slot(b, loc, pointerType);
  call(b, loc, "readlane", voidType(),
       {spill(b, loc, ldsPointer), base, constI32(b, loc, sizeOf(pointerType)),
        constI32(b, loc, -1)});
  Value allLanes = constI32(b, loc, -1);
  Value laneId =
      call(b, loc, "mbcnt", i32(),
           {constI32(b, loc, 1), allLanes,
            call(b, loc, "mbcnt", i32(),
                 {constI32(b, loc, 0), allLanes, constI32(b, loc, 0)})});
  Value byteOffset = LLVM::AddOp::create(
      b, loc, LLVM::MulOp::create(b, loc, laneId, constI32(b, loc, stride)),
      constI32(b, loc, offset));
  Value target =
      LLVM::GEPOp::create(b, loc, pointerType, IntegerType::get(ctx(), 8),
                          LLVM::LoadOp::create(b, loc, pointerType, base),
                          ArrayRef<LLVM::GEPArg>{byteOffset});
  auto store = LLVM::StoreOp::create(b, loc, value, target, /*alignment=*/4);
  instrumentAccess(store, target, stored, 4, /*isWrite=*/true);
}

LogicalResult KernelLowering::lowerRocdlOp(Operation *op) {
  StringRef name = op->getName().getStringRef();
  StringRef rest = name.drop_front(strlen("rocdl."));
  OpBuilder b(op);
  Location loc = op->getLoc();
  auto replaceWith = [&](Value value) {
    Type type = op->getResult(0).getType();
    if (value.getType() != type) {
      if (isa<IntegerType>(type) && isa<IntegerType>(value.getType()))
        value = type.getIntOrFloatBitWidth() >
                        value.getType().getIntOrFloatBitWidth()
                    ? LLVM::ZExtOp::create(b, loc, type, value).getResult()
                    : LLVM::TruncOp::create(b, loc, type, value).getResult();
      else
        value = LLVM::BitcastOp::create(b, loc, type, value);
    }
    op->getResult(0).replaceAllUsesWith(value);
    op->erase();
    return success();
  };

  // Ids and sizes.
  for (auto [prefix, entry] : {std::pair{"workitem.id.", "workitem_id"},
                               {"workgroup.id.", "workgroup_id"},
                               {"workgroup.dim.", "workgroup_dim"},
                               {"grid.dim.", "grid_dim"}})
    if (rest.starts_with(prefix))
      return replaceWith(
          call(b, loc, entry, i32(), {constI32(b, loc, dimOf(rest))}));
  if (rest == "wavefrontsize")
    return replaceWith(call(b, loc, "wave_size", i32(), {}));
  if (rest == "mbcnt.lo" || rest == "mbcnt.hi")
    return replaceWith(call(b, loc, "mbcnt", i32(),
                            {constI32(b, loc, rest == "mbcnt.hi"),
                             op->getOperand(0), op->getOperand(1)}));

  // Synchronization and scheduling.
  if (rest == "barrier" || rest == "s.barrier") {
    // tessel-lower-to-gpu marks the barriers of a ping-pong loop
    // (kPhaseBarrierAttrName), whose waves meet at different ones.
    StringRef entry =
        op->hasAttr("tessel.phase_barrier") ? "phase_barrier" : "barrier";
    call(b, loc, entry, voidType(), {constI32(b, loc, addSite(loc))});
    op->erase();
    return success();
  }
  if (op->getNumResults() == 0 &&
      llvm::is_contained({"s.waitcnt", "sched.barrier", "sched.group.barrier",
                          "s.setprio", "iglp.opt", "s.nop", "s.sleep",
                          "s.wait.dscnt", "s.wait.loadcnt", "s.wait.storecnt",
                          "s.wait.expcnt", "s.wait.asynccnt", "global.prefetch",
                          "flat.prefetch"},
                         rest)) {
    op->erase();
    return success();
  }

  // Wave collectives.
  if (rest.starts_with("mfma.") || rest.starts_with("wmma."))
    return lowerMma(op, getRocdlOpMnemonic(name));
  if (rest == "ds_bpermute" || rest == "ds_swizzle") {
    SmallVector<Value> args;
    for (Value operand : op->getOperands())
      args.push_back(
          operand.getType() == i32()
              ? operand
              : LLVM::BitcastOp::create(b, loc, i32(), operand).getResult());
    return replaceWith(call(b, loc, rest, i32(), args));
  }
  if (rest == "permlane16.swap" || rest == "permlane32.swap") {
    // (old, src) -> {new old, new src}, through a two-word slot.
    Type pair = op->getResult(0).getType();
    Value result = slot(b, loc, LLVM::LLVMArrayType::get(i32(), 2));
    call(b, loc, "permlane_swap", voidType(),
         {op->getOperand(0), op->getOperand(1),
          constI32(b, loc, rest == "permlane16.swap" ? 16 : 32), result});
    Value words = LLVM::LoadOp::create(
        b, loc, LLVM::LLVMArrayType::get(i32(), 2), result);
    Value value = LLVM::UndefOp::create(b, loc, pair);
    for (int64_t i = 0; i < 2; ++i)
      value = LLVM::InsertValueOp::create(
          b, loc, value, LLVM::ExtractValueOp::create(b, loc, words, i), i);
    op->getResult(0).replaceAllUsesWith(value);
    op->erase();
    return success();
  }
  if (rest == "ds.read.tr16.b64") {
    // The lane's own 8-byte read (checked like any LDS access), then the
    // exchange within groups of 16 lanes.
    Type type = op->getResult(0).getType();
    Value pointer = op->getOperand(0);
    auto load = LLVM::LoadOp::create(b, loc, type, pointer, /*alignment=*/8);
    instrumentAccess(load, pointer, type, 8, /*isWrite=*/false);
    Value result = slot(b, loc, type);
    call(b, loc, "ds_read_tr16_b64", voidType(), {spill(b, loc, load), result});
    return replaceWith(LLVM::LoadOp::create(b, loc, type, result));
  }
  if (auto copy = dyn_cast<ROCDL::LoadToLDSOp>(op)) {
    // The lane loads `size` bytes at its address plus the offset
    // (storeCopyToLds for the LDS side).
    int64_t size = copy.getSize(), offset = copy.getOffset();
    if (!isCopySize(size))
      return op->emitError() << "'" << name << "' of " << size
                             << " bytes is not supported by the emulator";
    Type data = IntegerType::get(ctx(), 8 * size);
    Value source = LLVM::GEPOp::create(
        b, loc, copy.getGlobalPtr().getType(), IntegerType::get(ctx(), 8),
        copy.getGlobalPtr(), ArrayRef<LLVM::GEPArg>{int32_t(offset)});
    auto load = LLVM::LoadOp::create(b, loc, data, source, /*alignment=*/1);
    instrumentAccess(load, source, data, 1, /*isWrite=*/false);
    storeCopyToLds(b, loc, copy.getLdsPtr(), load, size, offset);
    op->erase();
    return success();
  }
  if (auto copy = dyn_cast<ROCDL::RawPtrBufferLoadLdsOp>(op)) {
    // The lane loads `size` bytes through the buffer resource at the
    // vector offset plus the scalar one plus the instruction's, zeros out
    // of range as buffer loads read; the instruction's offset applies to
    // the LDS side too (storeCopyToLds).
    std::optional<int64_t> size = getConstantInt(copy.getSize());
    std::optional<int64_t> offset = getConstantInt(copy.getOffset());
    if (!size || !offset || !isCopySize(*size))
      return op->emitError() << "'" << name
                             << "' needs a constant size of 1, 2, 4, 12 or 16 "
                                "bytes and a constant offset in the emulator";
    Type data = IntegerType::get(ctx(), 8 * *size);
    Value result = slot(b, loc, data);
    Value laneOffset = LLVM::AddOp::create(b, loc, copy.getVoffset(),
                                           constI32(b, loc, *offset));
    call(b, loc, "buffer_load", voidType(),
         {toFlatPointer(b, loc, copy.getRsrc()), laneOffset, copy.getSoffset(),
          result, constI32(b, loc, *size)});
    storeCopyToLds(b, loc, copy.getLdsPtr(),
                   LLVM::LoadOp::create(b, loc, data, result), *size, *offset);
    op->erase();
    return success();
  }
  if (rest == "readlane" || rest == "readfirstlane") {
    Type type = op->getResult(0).getType();
    Value result = slot(b, loc, type);
    Value lane = rest == "readlane" ? op->getOperand(1) : constI32(b, loc, -1);
    call(b, loc, "readlane", voidType(),
         {spill(b, loc, op->getOperand(0)), result,
          constI32(b, loc, sizeOf(type)), lane});
    return replaceWith(LLVM::LoadOp::create(b, loc, type, result));
  }
  if (auto dpp = dyn_cast<ROCDL::DPPUpdateOp>(op)) {
    Type type = dpp.getType();
    Value result = slot(b, loc, type);
    call(b, loc, "dpp", voidType(),
         {spill(b, loc, dpp.getOld()), spill(b, loc, dpp.getSrc()), result,
          constI32(b, loc, sizeOf(type)), constI32(b, loc, dpp.getDppCtrl()),
          constI32(b, loc, dpp.getRowMask()),
          constI32(b, loc, dpp.getBankMask()),
          constI32(b, loc, dpp.getBoundCtrl())});
    return replaceWith(LLVM::LoadOp::create(b, loc, type, result));
  }
  if (rest == "ballot") {
    Value predicate = LLVM::ZExtOp::create(b, loc, i32(), op->getOperand(0));
    Value mask = call(b, loc, "ballot", i64(), {predicate});
    // A wave of 32 lanes asks for its 32-bit mask.
    Type type = op->getResult(0).getType();
    if (type != i64())
      mask = LLVM::TruncOp::create(b, loc, type, mask);
    return replaceWith(mask);
  }

  // Buffer resources.
  if (auto make = dyn_cast<ROCDL::MakeBufferRsrcOp>(op)) {
    Value stride = LLVM::ZExtOp::create(b, loc, i32(), make.getStride());
    Value rsrc = call(b, loc, "make_buffer_rsrc", ptr(),
                      {toFlatPointer(b, loc, make.getBase()),
                       make.getNumRecords(), stride, make.getFlags()});
    return replaceWith(
        LLVM::AddrSpaceCastOp::create(b, loc, make.getType(), rsrc));
  }
  if (auto load = dyn_cast<ROCDL::RawPtrBufferLoadOp>(op)) {
    Type type = load.getType();
    Value result = slot(b, loc, type);
    call(b, loc, "buffer_load", voidType(),
         {toFlatPointer(b, loc, load.getRsrc()), load.getOffset(),
          load.getSoffset(), result, constI32(b, loc, sizeOf(type))});
    return replaceWith(LLVM::LoadOp::create(b, loc, type, result));
  }
  if (auto store = dyn_cast<ROCDL::RawPtrBufferStoreOp>(op)) {
    call(b, loc, "buffer_store", voidType(),
         {spill(b, loc, store.getVdata()),
          toFlatPointer(b, loc, store.getRsrc()), store.getOffset(),
          store.getSoffset(),
          constI32(b, loc, sizeOf(store.getVdata().getType()))});
    op->erase();
    return success();
  }

  // 8-bit float conversions.
  if (auto cvt = dyn_cast<ROCDL::CvtF32Fp8Op>(op))
    return replaceWith(call(b, loc, "cvt_f32_fp8", f32(),
                            {cvt.getSrcA(), constI32(b, loc, cvt.getByteSel()),
                             constI32(b, loc, 0)}));
  if (auto cvt = dyn_cast<ROCDL::CvtF32Bf8Op>(op))
    return replaceWith(call(b, loc, "cvt_f32_fp8", f32(),
                            {cvt.getSrcA(), constI32(b, loc, cvt.getByteSel()),
                             constI32(b, loc, 1)}));
  if (isa<ROCDL::CvtPkF32Fp8Op, ROCDL::CvtPkF32Bf8Op>(op)) {
    // Two f32 from the low or high 16 bits of the source.
    bool isBf8 = isa<ROCDL::CvtPkF32Bf8Op>(op);
    bool high = op->getAttrOfType<BoolAttr>("wordSel").getValue();
    Type type = op->getResult(0).getType();
    Value vector = LLVM::UndefOp::create(b, loc, type);
    for (int i = 0; i < 2; ++i) {
      Value element = call(b, loc, "cvt_f32_fp8", f32(),
                           {op->getOperand(0), constI32(b, loc, 2 * high + i),
                            constI32(b, loc, isBf8)});
      vector = LLVM::InsertElementOp::create(b, loc, vector, element,
                                             constI32(b, loc, i));
    }
    return replaceWith(vector);
  }
  if (isa<ROCDL::CvtPkFp8F32Op, ROCDL::CvtPkBf8F32Op>(op)) {
    bool isBf8 = isa<ROCDL::CvtPkBf8F32Op>(op);
    bool high = op->getAttrOfType<BoolAttr>("wordSel").getValue();
    return replaceWith(
        call(b, loc, "cvt_pk_fp8_f32", i32(),
             {op->getOperand(0), op->getOperand(1), op->getOperand(2),
              constI32(b, loc, high), constI32(b, loc, isBf8)}));
  }

  if (auto cvt = dyn_cast<ROCDL::CvtPkRtz>(op))
    return replaceWith(call(b, loc, "cvt_pkrtz_f16_f32", i32(),
                            {cvt.getSrcA(), cvt.getSrcB()}));

  // Transcendental approximations (f32 only).
  std::optional<int32_t> math = llvm::StringSwitch<std::optional<int32_t>>(rest)
                                    .Case("exp2", emu::abi::kExp2)
                                    .Case("exp", emu::abi::kExp2)
                                    .Case("log", emu::abi::kLog2)
                                    .Case("sqrt", emu::abi::kSqrt)
                                    .Case("rcp", emu::abi::kRcp)
                                    .Case("sin", emu::abi::kSin)
                                    .Case("cos", emu::abi::kCos)
                                    .Case("tanh", emu::abi::kTanh)
                                    .Default(std::nullopt);
  if (math && op->getNumOperands() == 1 && op->getOperand(0).getType() == f32())
    return replaceWith(call(b, loc, "math_f32", f32(),
                            {constI32(b, loc, *math), op->getOperand(0)}));
  if (rest == "fmed3" && op->getResult(0).getType() == f32())
    return replaceWith(call(b, loc, "fmed3_f32", f32(),
                            SmallVector<Value>(op->getOperands())));

  return op->emitError() << "'" << name << "' is not supported by the emulator";
}

void KernelLowering::cleanUpKernelAttributes() {
  for (auto function : host.getOps<LLVM::LLVMFuncOp>()) {
    bool isKernel = function->hasAttr("rocdl.kernel") ||
                    function->hasAttr(gpu::GPUDialect::getKernelFuncAttrName());
    SmallVector<StringAttr> drop;
    for (NamedAttribute attr : function->getDiscardableAttrs())
      if (attr.getName().getValue().starts_with("rocdl.") ||
          attr.getName().getValue().starts_with("gpu."))
        drop.push_back(attr.getName());
    for (StringAttr name : drop)
      function->removeAttr(name);
    if (isKernel)
      function->setAttr("tessel.emu.kernel", UnitAttr::get(ctx()));
    // Host code is not AMDGPU code: no amdgpu_kernel calling convention.
    function.setCConv(LLVM::CConv::C);
  }
}

LogicalResult KernelLowering::run() {
  cleanUpKernelAttributes();
  if (failed(lowerLdsGlobals()))
    return failure();
  lowerPrivateAllocas();

  SmallVector<Operation *> rocdlOps;
  host.walk([&](Operation *op) {
    if (isa<ROCDL::ROCDLDialect>(op->getDialect()))
      rocdlOps.push_back(op);
  });
  // Accesses first: the lowering of collectives adds loads and stores of its
  // own stack slots, which need no checks.
  instrumentAccesses();
  SmallVector<LLVM::CallIntrinsicOp> intrinsicCalls;
  host.walk([&](LLVM::CallIntrinsicOp op) {
    if (op.getIntrin().starts_with("llvm.amdgcn."))
      intrinsicCalls.push_back(op);
  });
  bool failedAny = false;
  for (Operation *op : rocdlOps)
    failedAny |= failed(lowerRocdlOp(op));
  for (LLVM::CallIntrinsicOp op : intrinsicCalls)
    failedAny |= failed(lowerIntrinsicCall(op));
  // After the barriers, which so take the first site numbers.
  guardDivisions();
  if (!sites.empty())
    host->setAttr(emu::kSitesAttr, ArrayAttr::get(ctx(), sites));
  return failure(failedAny);
}

namespace {
struct LowerToEmulatorPass
    : public tessel::impl::TesselLowerToEmulatorPassBase<LowerToEmulatorPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    const Chip *target = lookupChip(chip);
    if (!target) {
      module.emitError() << "unknown chip '" << chip
                         << "'; known chips: " << knownChipNames();
      return signalPassFailure();
    }
    SmallVector<gpu::GPUModuleOp> gpuModules(module.getOps<gpu::GPUModuleOp>());
    for (gpu::GPUModuleOp gpuModule : gpuModules) {
      OpBuilder b(gpuModule);
      auto host = ModuleOp::create(b, gpuModule.getLoc(), gpuModule.getName());
      host->setAttr(emu::kChipAttr, b.getStringAttr(target->name));
      // Move the body over; the gpu.module's data layout is the AMDGPU one
      // and stays behind.
      Block &body = gpuModule.getBodyRegion().front();
      for (Operation &op : llvm::make_early_inc_range(body))
        op.moveBefore(host.getBody(), host.getBody()->end());
      gpuModule.erase();
      if (failed(KernelLowering(host, *target).run()))
        return signalPassFailure();
    }
  }
};
} // namespace
