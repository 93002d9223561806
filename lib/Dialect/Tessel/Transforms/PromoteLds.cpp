//===- PromoteLds.cpp - Dot operands through swizzled LDS -------*- C++ -*-===//

#include "tessel/Dialect/Tessel/IR/TesselOps.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"
#include "tessel/Layout/Layouts.h"
#include "tessel/Perf/MatmulEstimate.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "tessel-promote-lds"

namespace tessel {
#define GEN_PASS_DEF_TESSELPROMOTELDSPASS
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace tessel

using namespace mlir;
using namespace tessel;

namespace {

/// A convert_layout of a globally loaded tile into an MFMA operand layout.
struct Promotion {
  ConvertLayoutOp convert;
  BlockedAttr writeLayout;
  MmaOperandAttr readLayout;
  /// Read from LDS right before each use (kLdsReadAtUseAttrName), or one
  /// product ahead of it (kLdsReadAheadAttrName).
  bool readAtUse = false;
  bool readAhead = false;
  /// Read with transposing LDS reads (set by chooseBuffer).
  bool transposedRead = false;
};

/// An LDS buffer and whether later blocks may take it over: not when the
/// operand in it is read inside them (read at use from a loop).
struct PooledBuffer {
  LdsType type;
  Value buffer;
  bool pinned;
};

struct PromoteLdsPass
    : public tessel::impl::TesselPromoteLdsPassBase<PromoteLdsPass> {
  using Base::Base;

  /// The swizzled LDS buffer type for one promotion; decides whether it is
  /// read transposed.
  FailureOr<LdsType> chooseBuffer(Promotion &promotion, const Chip &target,
                                  SwizzleChoice &choice);
  void runOnOperation() override;

  /// The swizzles chosen for this function: the search analyses a few
  /// hundred candidates, and attention's key loops ask the same queries
  /// twice.
  SmallVector<std::pair<SwizzleQuery, SwizzleChoice>, 4> chosenSwizzles;
};

} // namespace

/// `layout` with the register bits that step 1, 2, 4, ... along `dim`
/// moved to the front: the bank analysis reads registers 0..n-1 as one
/// access, and the lowering stores such a run as one access wherever its
/// bits are.
static LinearLayout runRegistersFirst(const LinearLayout &layout,
                                      unsigned dim) {
  SmallVector<LinearLayout::InDim> ins(layout.getInDims());
  for (LinearLayout::InDim &in : ins) {
    if (in.name != dims::kRegister)
      continue;
    auto isStep = [&](ArrayRef<int32_t> basis, int32_t step) {
      for (auto [d, value] : llvm::enumerate(basis))
        if (d == dim ? value != step : value != 0)
          return false;
      return true;
    };
    size_t front = 0;
    for (int32_t step = 1; front < in.bases.size(); step *= 2) {
      auto it =
          llvm::find_if(llvm::drop_begin(in.bases, front),
                        [&](const auto &basis) { return isStep(basis, step); });
      if (it == in.bases.end())
        break;
      std::rotate(in.bases.begin() + front, it, it + 1);
      ++front;
    }
  }
  SmallVector<LinearLayout::OutDim> outs;
  for (auto [d, size] : llvm::enumerate(layout.getOutDimSizes()))
    outs.push_back({dims::tileDim(d), size});
  return cantFail(LinearLayout::get(ins, outs));
}

/// Whether `addresses` (a transposing read's address layout over the tile)
/// reads four consecutive elements along `contiguous` per lane: registers
/// 0-1 step one and two elements along it, every other basis a multiple of
/// four.
static bool readsRunsOfFour(const LinearLayout &addresses, int64_t contiguous) {
  for (const LinearLayout::InDim &in : addresses.getInDims())
    for (auto [bit, basis] : llvm::enumerate(in.bases)) {
      if (in.name == dims::kRegister && bit < 2) {
        for (auto [d, value] : llvm::enumerate(basis))
          if (value != (int64_t(d) == contiguous ? 1 << bit : 0))
            return false;
      } else if (basis[contiguous] % 4 != 0) {
        return false;
      }
    }
  return true;
}

FailureOr<LdsType> PromoteLdsPass::chooseBuffer(Promotion &promotion,
                                                const Chip &target,
                                                SwizzleChoice &chosen) {
  ConvertLayoutOp convert = promotion.convert;
  RankedTensorType type = convert.getResult().getType();
  auto emitError = [&] { return convert.emitOpError(); };
  FailureOr<LinearLayout> readLayout = getTileLayout(type, emitError);
  if (failed(readLayout))
    return failure();
  unsigned elementBytes =
      llvm::divideCeil(type.getElementType().getIntOrFloatBitWidth(), 8);
  BlockedAttr write = promotion.writeLayout;
  int64_t kDim = promotion.readLayout.getOperandIndex() == 0 ? 1 : 0;
  int64_t maxRun = 16 / elementBytes;
  // LDS keeps contiguous the dimension the writes run along, unless the
  // lanes also hold runs along the operand's K dimension and keeping K
  // contiguous takes fewer LDS instructions: a K-major operand written from
  // a tile whose memory runs along the other dimension (attention's V^T)
  // is then read in K runs, not element by element. Where the chip's LDS
  // reads can transpose, the other dimension is read four K elements at a
  // time too.
  const MmaInstr &instr = promotion.readLayout.getParent().getInstruction();
  bool transposable = readsOperandTransposed(target, instr, elementBytes);
  auto accessesPerElement = [&](int64_t contiguous) {
    int64_t writeRun = std::min(write.getSizePerThread()[contiguous], maxRun);
    int64_t readRun = contiguous == kDim
                          ? std::min(promotion.readLayout.getKWidth(), maxRun)
                      : transposable ? 4
                                     : 1;
    return 1.0 / writeRun + 1.0 / readRun;
  };
  int64_t contiguous = write.getOrder()[0];
  if (accessesPerElement(kDim) < accessesPerElement(contiguous))
    contiguous = kDim;
  SwizzleQuery query;
  query.shape.assign(type.getShape().begin(), type.getShape().end());
  query.order = {contiguous, 1 - contiguous};
  query.elementBytes = elementBytes;
  query.storeBytes =
      std::min(write.getSizePerThread()[contiguous], maxRun) * elementBytes;
  int64_t waves = 1;
  for (int64_t count : write.getWaves())
    waves *= count;
  query.numWaves = waves;
  query.readLayout = *readLayout;
  if (contiguous != write.getOrder()[0]) {
    FailureOr<LinearLayout> writeLayout =
        getTileLayout(convert.getSource().getType(), emitError);
    if (failed(writeLayout))
      return failure();
    query.writeLayout = runRegistersFirst(*writeLayout, contiguous);
  }
  // The operand's K run is one access when K is contiguous in LDS.
  query.readBytes = contiguous == kDim
                        ? promotion.readLayout.getKWidth() * elementBytes
                        : elementBytes;
  query.readBytes = std::min<unsigned>(query.readBytes, 16);
  query.banking = {target.ldsBanks, target.ldsBankBytes};
  query.waveSize = target.defaultWaveSize;
  // Otherwise, where the chip has transposing reads, four K elements per
  // read, at the addresses of the rotated layout.
  SwizzleQuery plainQuery = query;
  if (contiguous != kDim && transposable) {
    llvm::Expected<LinearLayout> addresses = transposedReadLayout(*readLayout);
    if (!addresses)
      llvm::consumeError(addresses.takeError());
    else if (readsRunsOfFour(*addresses, contiguous)) {
      promotion.transposedRead = true;
      query.readLayout = *addresses;
      query.readBytes = 4 * elementBytes;
    }
  }
  auto choose = [&](const SwizzleQuery &asked) {
    auto known = llvm::find_if(chosenSwizzles, [&](const auto &entry) {
      return entry.first == asked;
    });
    llvm::Expected<SwizzleChoice> choice =
        known != chosenSwizzles.end() ? known->second : chooseSwizzle(asked);
    if (choice && known == chosenSwizzles.end())
      chosenSwizzles.push_back({asked, *choice});
    return choice;
  };
  llvm::Expected<SwizzleChoice> choice = choose(query);
  // A transposing read needs its four-element runs whole; should no layout
  // keep them, the operand is read as before.
  if (promotion.transposedRead && (!choice || choice->vec < 4)) {
    if (!choice)
      llvm::consumeError(choice.takeError());
    promotion.transposedRead = false;
    choice = choose(plainQuery);
  }
  if (!choice) {
    convert.emitOpError() << "no LDS layout for this operand: "
                          << llvm::toString(choice.takeError());
    return failure();
  }
  LLVM_DEBUG(llvm::dbgs() << "swizzle vec=" << choice->vec
                          << " perPhase=" << choice->perPhase << " maxPhase="
                          << choice->maxPhase << (choice->fold ? " folded" : "")
                          << ": " << choice->write.conflictCycles
                          << " write and " << choice->read.conflictCycles
                          << " read conflict cycles\n");
  chosen = *choice;
  SmallVector<int64_t> order;
  if (contiguous != 1)
    order = {0, 1};
  auto swizzle = SwizzleAttr::get(&getContext(), choice->vec, choice->perPhase,
                                  choice->maxPhase, order, choice->fold);
  return LdsType::get(&getContext(), /*slots=*/1, type.getShape(),
                      type.getElementType(), swizzle);
}

/// The first op of `convert`'s block that uses its result (the op holding
/// the use, for a use nested in a region); the op after it if none.
static Operation *getFirstUser(ConvertLayoutOp convert) {
  Block *block = convert->getBlock();
  Operation *first = nullptr;
  for (Operation *user : convert->getUsers()) {
    Operation *inBlock = block->findAncestorOpInBlock(*user);
    if (inBlock && (!first || inBlock->isBeforeInBlock(first)))
      first = inBlock;
  }
  return first ? first : convert->getNextNode();
}

/// Whether `op` runs repeatedly for one tile: inside a loop other than a
/// stream-K workgroup's loop over its tiles (kTileLoopAttrName).
static bool isInsideRepeatedLoop(Operation *op) {
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp())
    if (isa<LoopLikeOpInterface>(parent) && !parent->hasAttr(kTileLoopAttrName))
      return true;
  return false;
}

/// The load whose tile `promotion` copies straight into LDS (buffer
/// `type`) with tessel.copy_to_local, or null: a matmul kernel whose
/// config asks for direct_copies, on a chip with 16-byte direct loads, an
/// operand loaded
/// in_bounds for this one conversion inside the K loop, and a layout the
/// workgroup's waves can copy (verifyCopyToLocal).
static LoadOp getDirectCopySource(Promotion &promotion, LdsType type,
                                  const Chip &target, func::FuncOp function) {
  auto config = function->getAttrOfType<ConfigAttr>("tessel.config");
  auto size = function->getAttrOfType<IntegerAttr>("tessel.workgroup_size");
  auto load = promotion.convert.getSource().getDefiningOp<LoadOp>();
  if (!target.hasLdsDirectLoads16() || !config || !config.getDirectCopies() ||
      config.getTile().size() != 3 || !size || !load || !load.getInBounds() ||
      !load->hasOneUse() || promotion.readAtUse ||
      !isInsideRepeatedLoop(promotion.convert))
    return nullptr;
  int64_t waves = size.getInt() / target.defaultWaveSize;
  if (failed(verifyCopyToLocal(load.getSource().getType(), type, waves,
                               [] { return InFlightDiagnostic(); })))
    return nullptr;
  return load;
}

/// Moves the reads of operands read at use one product ahead: the reads
/// of each product's chunk go in front of the previous product in the same
/// block (its operands were read right before it), so that their LDS
/// latency runs under that product's matrix instructions instead of
/// stalling the product they feed. The first chunk of the second product
/// (attention's V^T) is then read in front of the first product's last
/// chunk, in flight through the softmax. One more chunk is live at a time.
static void readOneProductAhead(ArrayRef<LocalLoadOp> reads) {
  // The products that use the reads, per block, each with its reads.
  llvm::MapVector<Block *,
                  llvm::MapVector<Operation *, SmallVector<LocalLoadOp>>>
      byBlock;
  for (LocalLoadOp read : reads)
    for (Operation *user : read->getUsers())
      if (user->getBlock() == read->getBlock()) {
        byBlock[read->getBlock()][user].push_back(read);
        break;
      }
  for (auto &[block, products] : byBlock) {
    SmallVector<Operation *> order;
    for (auto &entry : products)
      order.push_back(entry.first);
    llvm::sort(order, [](Operation *x, Operation *y) {
      return x->isBeforeInBlock(y);
    });
    for (size_t i = 1; i < order.size(); ++i)
      for (LocalLoadOp read : products[order[i]])
        read->moveBefore(order[i - 1]);
  }
}

void PromoteLdsPass::runOnOperation() {
  chosenSwizzles.clear();
  const Chip *target = lookupChip(chip);
  if (!target) {
    getOperation().emitError()
        << "unknown chip '" << chip << "'; known chips: " << knownChipNames();
    return signalPassFailure();
  }
  // Loads whose tiles are copied straight into LDS (erased at the end).
  SmallVector<LoadOp> copiedLoads;
  // The reads of operands read one product ahead.
  SmallVector<LocalLoadOp> readsAhead;
  // Promotions grouped by block, in order.
  llvm::MapVector<Block *, SmallVector<Promotion>> byBlock;
  getOperation().walk([&](ConvertLayoutOp convert) {
    auto load = convert.getSource().getDefiningOp<LoadOp>();
    auto write = dyn_cast_or_null<BlockedAttr>(
        convert.getSource().getType().getEncoding());
    auto read = dyn_cast_or_null<MmaOperandAttr>(
        convert.getResult().getType().getEncoding());
    if (!load || !write || !read)
      return;
    // An operand converted outside every loop (attention's Q) is read once
    // (a stream-K workgroup's loop over its tiles runs each tile's program
    // once, so it does not count): each lane loads its own K runs straight
    // from global memory into the operand layout, and the tile takes no LDS,
    // which is what limits how many workgroups share a CU.
    bool readAtUse = load->hasAttr(kLdsReadAtUseAttrName);
    if (!isInsideRepeatedLoop(convert) && load->hasOneUse() && !readAtUse) {
      OpBuilder b(load);
      auto direct = cast<LoadOp>(b.clone(*load));
      direct.getResult().setType(convert.getResult().getType());
      convert.replaceAllUsesWith(direct.getResult());
      convert.erase();
      load.erase();
      return;
    }
    bool readAhead = readAtUse && load->hasAttr(kLdsReadAheadAttrName);
    byBlock[convert->getBlock()].push_back(
        {convert, write, read, readAtUse, readAhead});
  });
  Block &entry = getOperation().getBody().front();
  // Buffers are shared between blocks: a block's promotions are fenced by
  // barriers on both sides, so one block's buffers are free once its reads
  // are done (attention's Q before the key loops, its unmasked key loop
  // before the masked one).
  SmallVector<PooledBuffer> pool;
  for (auto &[block, promotions] : byBlock) {
    SmallVector<bool> taken(pool.size(), false);
    // One write phase for all the block's operands, fenced on both sides:
    // the barrier before keeps it behind the previous iteration's reads, the
    // one after in front of this iteration's.
    // At the block's first conversion, or after the last of the tiles it
    // writes where one is loaded later (Q^T's head-dim chunks, each
    // converted right after its load).
    Operation *writePoint = promotions.front().convert;
    for (Promotion &promotion : promotions) {
      Operation *source = promotion.convert.getSource().getDefiningOp();
      if (source && source->getBlock() == block &&
          writePoint->isBeforeInBlock(source))
        writePoint = source->getNextNode();
    }
    OpBuilder b(writePoint);
    Location loc = promotions.front().convert.getLoc();
    OpBuilder atStart(&entry, entry.begin());
    Value slot = arith::ConstantIndexOp::create(atStart, loc, 0);
    gpu::BarrierOp::create(b, loc);
    SmallVector<Value> buffers;
    // Each tile is stored from registers, or copied straight from global
    // memory where it can be (then the write phase waits for the copies).
    bool copies = false;
    auto writeTile = [&](Promotion &promotion, LdsType type, Value buffer) {
      LoadOp load =
          getDirectCopySource(promotion, type, *target, getOperation());
      if (!load) {
        LocalStoreOp::create(b, loc, promotion.convert.getSource(), buffer,
                             slot);
        return;
      }
      CopyToLocalOp::create(b, load.getLoc(), load.getSource(),
                            load.getIndices(), buffer, slot,
                            /*in_bounds=*/true);
      copiedLoads.push_back(load);
      copies = true;
    };
    for (Promotion &promotion : promotions) {
      SwizzleChoice choice;
      FailureOr<LdsType> type = chooseBuffer(promotion, *target, choice);
      if (failed(type))
        return signalPassFailure();
      auto reusable = llvm::find_if(llvm::enumerate(pool), [&](auto entry) {
        return !taken[entry.index()] && !entry.value().pinned &&
               entry.value().type == *type;
      });
      if (reusable != llvm::enumerate(pool).end()) {
        taken[(*reusable).index()] = true;
        Value buffer = (*reusable).value().buffer;
        writeTile(promotion, *type, buffer);
        buffers.push_back(buffer);
        continue;
      }
      OpBuilder atEntry(&entry, entry.begin());
      auto alloc = LocalAllocOp::create(atEntry, loc, *type);
      // The bank analysis of the chosen layout, for whoever reads the IR:
      // extra cycles per wave-wide access of the write and of the read.
      alloc->setAttr("tessel.write_conflicts",
                     atEntry.getF64FloatAttr(choice.write.perAccess()));
      alloc->setAttr("tessel.read_conflicts",
                     atEntry.getF64FloatAttr(choice.read.perAccess()));
      Value buffer = alloc;
      writeTile(promotion, *type, buffer);
      buffers.push_back(buffer);
      bool readInsideLoops =
          promotion.readAtUse &&
          llvm::any_of(promotion.convert->getUsers(), [&](Operation *user) {
            return user->getBlock() != block;
          });
      pool.push_back({*type, buffer, readInsideLoops});
      taken.push_back(true);
    }
    if (copies)
      WaitCopiesOp::create(b, loc);
    gpu::BarrierOp::create(b, loc);
    // Every read right after the barrier: an operand used later in the
    // block (attention's V^T, after S^T and the softmax) is then in flight
    // while the earlier products run, not requested when it is needed.
    // gfx11's WMMA operands are the exception: each half-wave holds a
    // copy, twice the registers, and keeping V^T live across S^T and the
    // softmax spills a head dim of 128; they are read where they are used.
    // So are operands marked to be read at use (attention's head-dim
    // chunks), once before each user: one chunk is live at a time, and an
    // operand promoted outside the loops (Q^T) is read inside them.
    for (auto [promotion, buffer] : llvm::zip(promotions, buffers)) {
      ConvertLayoutOp convert = promotion.convert;
      if (promotion.readAtUse) {
        for (OpOperand &use : llvm::make_early_inc_range(convert->getUses())) {
          OpBuilder reader(use.getOwner());
          auto read =
              LocalLoadOp::create(reader, convert.getLoc(), convert.getType(),
                                  buffer, slot, promotion.transposedRead);
          use.set(read);
          if (promotion.readAhead)
            readsAhead.push_back(read);
        }
        continue;
      }
      OpBuilder reader = b;
      if (promotion.readLayout.getParent().getInstruction().family ==
          MmaFamily::Rdna3)
        reader.setInsertionPoint(getFirstUser(convert));
      Value loaded =
          LocalLoadOp::create(reader, convert.getLoc(), convert.getType(),
                              buffer, slot, promotion.transposedRead);
      convert.replaceAllUsesWith(loaded);
    }
    // Erased last: the first conversion is the builder's insertion point.
    for (Promotion &promotion : promotions)
      promotion.convert.erase();
  }
  for (LoadOp load : copiedLoads)
    load.erase();
  readOneProductAhead(readsAhead);
}
