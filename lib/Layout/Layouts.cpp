//===- Layouts.cpp - Named layouts and the LDS swizzle chooser --*- C++ -*-===//

#include "tessel/Layout/Layouts.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace tessel;
using llvm::ArrayRef;
using llvm::SmallVector;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static llvm::Error checkPowersOfTwo(ArrayRef<int64_t> values,
                                    llvm::StringRef what) {
  for (int64_t value : values)
    if (value <= 0 || !llvm::isPowerOf2_64(value))
      return makeError(what + " must be powers of two, got " +
                       llvm::Twine(value));
  return llvm::Error::success();
}

/// Whether `order` is a permutation of 0..rank-1.
static bool isPermutation(ArrayRef<int64_t> order, size_t rank) {
  if (order.size() != rank)
    return false;
  SmallVector<bool> seen(rank, false);
  for (int64_t d : order) {
    if (d < 0 || d >= int64_t(rank) || seen[d])
      return false;
    seen[d] = true;
  }
  return true;
}

llvm::Expected<LinearLayout>
tessel::blockedLayout(ArrayRef<int64_t> shape, ArrayRef<int64_t> sizePerThread,
                      ArrayRef<int64_t> threadsPerWave,
                      ArrayRef<int64_t> wavesPerWorkgroup,
                      ArrayRef<int64_t> order) {
  size_t rank = shape.size();
  if (sizePerThread.size() != rank || threadsPerWave.size() != rank ||
      wavesPerWorkgroup.size() != rank)
    return makeError("blocked layout parameters must have one entry per tile "
                     "dimension (" +
                     llvm::Twine(rank) + ")");
  if (!isPermutation(order, rank))
    return makeError("order must be a permutation of the tile dimensions");
  for (auto [values, what] : {std::pair{shape, "tile sizes"},
                              {sizePerThread, "sizes per thread"},
                              {threadsPerWave, "threads per wave"},
                              {wavesPerWorkgroup, "waves per workgroup"}})
    if (llvm::Error error = checkPowersOfTwo(values, what))
      return std::move(error);

  SmallVector<LinearLayout::InDim, 4> ins = {{dims::kRegister.str(), {}},
                                             {dims::kLane.str(), {}},
                                             {dims::kWave.str(), {}}};
  SmallVector<int64_t, 4> covered(rank, 1);
  // Bit `value` of dimension d, or 0 once the tile is exhausted (replication).
  auto basisFor = [&](int64_t d, int64_t value) {
    SmallVector<int32_t, 4> basis(rank, 0);
    basis[d] = value < shape[d] ? value : 0;
    return basis;
  };
  auto addBits = [&](unsigned in, ArrayRef<int64_t> counts) {
    for (int64_t d : order)
      for (int64_t step = 1; step < counts[d]; step *= 2) {
        ins[in].bases.push_back(basisFor(d, covered[d]));
        covered[d] *= 2;
      }
  };
  addBits(0, sizePerThread);
  addBits(1, threadsPerWave);
  addBits(2, wavesPerWorkgroup);
  // What one pass of the workgroup does not cover repeats in registers.
  for (int64_t d : order)
    for (; covered[d] < shape[d]; covered[d] *= 2)
      ins[0].bases.push_back(basisFor(d, covered[d]));

  SmallVector<LinearLayout::OutDim, 4> outs;
  for (auto [d, size] : llvm::enumerate(shape))
    outs.push_back({dims::tileDim(d), int32_t(size)});
  return LinearLayout::get(ins, outs);
}

llvm::Expected<LinearLayout>
tessel::swizzledLdsLayout(ArrayRef<int64_t> shape, int64_t vec,
                          int64_t perPhase, int64_t maxPhase,
                          ArrayRef<int64_t> order, bool fold) {
  if (shape.size() != 2)
    return makeError("swizzled LDS layouts are 2-D, got a rank-" +
                     llvm::Twine(shape.size()) + " tile");
  if (!isPermutation(order, 2))
    return makeError("order must be [1, 0] or [0, 1]");
  int64_t params[] = {vec, perPhase, maxPhase};
  if (llvm::Error error = checkPowersOfTwo(shape, "tile sizes"))
    return std::move(error);
  if (llvm::Error error =
          checkPowersOfTwo(params, "vec, perPhase and maxPhase"))
    return std::move(error);
  int64_t contiguous = order[0], strided = order[1];
  int64_t rowLength = shape[contiguous];
  if (vec > rowLength)
    return makeError("swizzle vec " + llvm::Twine(vec) +
                     " exceeds the contiguous tile size " +
                     llvm::Twine(rowLength));
  if (vec * maxPhase > rowLength)
    return makeError("swizzle vec * maxPhase (" + llvm::Twine(vec * maxPhase) +
                     ") exceeds the contiguous tile size " +
                     llvm::Twine(rowLength));

  LinearLayout::InDim offset{dims::kOffset.str(), {}};
  for (int64_t value = 1; value < rowLength; value *= 2) {
    SmallVector<int32_t, 4> basis(2, 0);
    basis[contiguous] = value;
    offset.bases.push_back(basis);
  }
  // Row bit b moves the phase by bit b - log2(perPhase); folded, bits past
  // log2(maxPhase) wrap around instead of dropping out.
  int64_t phaseBits = llvm::Log2_64(maxPhase);
  for (int64_t row = 1; row < shape[strided]; row *= 2) {
    SmallVector<int32_t, 4> basis(2, 0);
    basis[strided] = row;
    int64_t phase = (row / perPhase) % maxPhase;
    if (fold && row >= perPhase && phaseBits > 0)
      phase = int64_t(1) << (llvm::Log2_64(row / perPhase) % phaseBits);
    basis[contiguous] = phase * vec;
    offset.bases.push_back(basis);
  }
  return LinearLayout::get({offset}, {{dims::tileDim(0), int32_t(shape[0])},
                                      {dims::tileDim(1), int32_t(shape[1])}});
}

llvm::Expected<LinearLayout> tessel::ldsWriteLayout(const SwizzleQuery &query) {
  if (query.shape.size() != 2 || query.order.size() != 2)
    return makeError("LDS tiles are 2-D");
  if (query.storeBytes < query.elementBytes)
    return makeError("the store is narrower than one element");
  int64_t contiguous = query.order[0], strided = query.order[1];
  SmallVector<int64_t, 2> perThread(2, 1), threads(2, 1), waves(2, 1);
  perThread[contiguous] = std::min<int64_t>(
      query.storeBytes / query.elementBytes, query.shape[contiguous]);
  threads[contiguous] = std::min<int64_t>(
      query.waveSize, query.shape[contiguous] / perThread[contiguous]);
  threads[strided] = query.waveSize / threads[contiguous];
  waves[strided] = query.numWaves;
  return blockedLayout(query.shape, perThread, threads, waves, query.order);
}

bool tessel::operator==(const SwizzleQuery &a, const SwizzleQuery &b) {
  return a.shape == b.shape && a.order == b.order &&
         a.elementBytes == b.elementBytes && a.storeBytes == b.storeBytes &&
         a.numWaves == b.numWaves && a.readLayout == b.readLayout &&
         a.readBytes == b.readBytes &&
         a.banking.numBanks == b.banking.numBanks &&
         a.banking.bankBytes == b.banking.bankBytes &&
         a.waveSize == b.waveSize && a.writeLayout == b.writeLayout;
}

llvm::Expected<SwizzleChoice> tessel::chooseSwizzle(const SwizzleQuery &query) {
  llvm::Expected<LinearLayout> writeLayout =
      query.writeLayout ? llvm::Expected<LinearLayout>(*query.writeLayout)
                        : ldsWriteLayout(query);
  if (!writeLayout)
    return writeLayout.takeError();
  int64_t rowLength = query.shape[query.order[0]];
  int64_t rows = query.shape[query.order[1]];
  std::optional<SwizzleChoice> best;
  std::string lastError;
  unsigned storeBytes =
      std::min<unsigned>(query.storeBytes, rowLength * query.elementBytes);
  // Analyses one candidate; a strictly better one replaces the best.
  auto tryCandidate = [&](int64_t vec, int64_t perPhase, int64_t maxPhase,
                          bool fold) -> llvm::Error {
    llvm::Expected<LinearLayout> memory = swizzledLdsLayout(
        query.shape, vec, perPhase, maxPhase, query.order, fold);
    if (!memory)
      return memory.takeError();
    llvm::Expected<BankConflictReport> write = analyzeBankConflicts(
        *writeLayout, *memory, query.elementBytes, storeBytes,
        /*isWrite=*/true, query.banking, query.waveSize);
    // Conflicts only add up: a candidate whose writes alone cost as much as
    // the best cannot replace it, whatever its reads.
    if (write && best && write->conflictCycles >= best->totalConflicts())
      return llvm::Error::success();
    llvm::Expected<BankConflictReport> read = analyzeBankConflicts(
        query.readLayout, *memory, query.elementBytes, query.readBytes,
        /*isWrite=*/false, query.banking, query.waveSize);
    if (!write || !read) {
      // This swizzle splits a vector access: not a candidate.
      std::string writeError = write ? "" : llvm::toString(write.takeError());
      std::string readError = read ? "" : llvm::toString(read.takeError());
      lastError = writeError.empty() ? readError : writeError;
      return llvm::Error::success();
    }
    SwizzleChoice choice;
    choice.vec = vec;
    choice.perPhase = perPhase;
    choice.maxPhase = maxPhase;
    choice.fold = fold;
    choice.write = *write;
    choice.read = *read;
    if (!best || choice.totalConflicts() < best->totalConflicts())
      best = choice;
    return llvm::Error::success();
  };
  // Candidates go from the simplest swizzle up and only a strictly better
  // one replaces the best, so the search may stop at the first candidate
  // without conflicts: nothing after it could replace it.
  auto conflictFree = [&] { return best && best->totalConflicts() == 0; };
  for (int64_t maxPhase = 1; maxPhase <= rowLength && !conflictFree();
       maxPhase *= 2)
    for (int64_t vec = rowLength / maxPhase; vec >= 1 && !conflictFree();
         vec /= 2)
      for (int64_t perPhase = 1; perPhase <= rows && !conflictFree();
           perPhase *= 2) {
        if (maxPhase == 1 && perPhase > 1)
          break; // no swizzle: perPhase is meaningless
        if (llvm::Error error = tryCandidate(vec, perPhase, maxPhase, false))
          return std::move(error);
        // Folding changes the layout only when the phase would repeat.
        bool repeats = maxPhase > 1 && rows > perPhase * maxPhase;
        if (repeats && !conflictFree())
          if (llvm::Error error = tryCandidate(vec, perPhase, maxPhase, true))
            return std::move(error);
      }
  if (!best)
    return makeError("no swizzle keeps both LDS accesses vectorized: " +
                     lastError);
  best->writeLayout = *writeLayout;
  return *best;
}

llvm::Expected<LinearLayout>
tessel::transposedReadLayout(const LinearLayout &target) {
  if (!target.hasInDim(dims::kRegister) || !target.hasInDim(dims::kLane) ||
      target.getInDimSizeLog2(dims::kRegister) < 2 ||
      target.getInDimSizeLog2(dims::kLane) < 4)
    return makeError("a transposed LDS read needs at least 4 registers and "
                     "16 lanes");
  SmallVector<LinearLayout::InDim> ins(target.getInDims());
  auto find = [&](llvm::StringRef name) -> LinearLayout::InDim & {
    return *llvm::find_if(ins, [&](const auto &in) { return in.name == name; });
  };
  auto &registers = find(dims::kRegister).bases;
  auto &lanes = find(dims::kLane).bases;
  // Target order (lane 0-3, register 0-1) becomes (register 0-1, lane 0-3).
  SmallVector<SmallVector<int32_t, 4>> group = {
      lanes[0], lanes[1], lanes[2], lanes[3], registers[0], registers[1]};
  registers[0] = group[0];
  registers[1] = group[1];
  for (int i = 0; i < 4; ++i)
    lanes[i] = group[2 + i];
  return LinearLayout::get(ins, target.getOutDims());
}
