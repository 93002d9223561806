//===- CacheTraffic.cpp - What the XCDs' L2 caches fetch ------------------===//
//
// Both estimates walk the grid as the hardware dispatches it: workgroup i
// goes to XCD i mod numXCDs, and each XCD runs its workgroups in rounds of
// (workgroups per CU x CUs per XCD). Within a round the XCD's L2 fetches
// each distinct piece of input once; nothing is reused across rounds.
//
//===----------------------------------------------------------------------===//

#include "tessel/Perf/CacheTraffic.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace tessel;

/// Workgroups one XCD runs at a time.
static uint64_t getResidentPerXcd(const Chip &chip, unsigned workgroupsPerCU) {
  unsigned xcds = std::max(1u, chip.numXCDs);
  return std::max<uint64_t>(1, uint64_t(std::max(1u, workgroupsPerCU)) *
                                   std::max(1u, chip.numCUs / xcds));
}

CacheTraffic tessel::estimateGemmL2Fill(const Chip &chip, int64_t m, int64_t n,
                                        int64_t k, int64_t batch, int64_t tileM,
                                        int64_t tileN, unsigned aBytes,
                                        unsigned bBytes,
                                        unsigned workgroupsPerCU) {
  CacheTraffic traffic;
  traffic.xcds = std::max(1u, chip.numXCDs);
  batch = std::max<int64_t>(1, batch);
  if (m <= 0 || n <= 0 || k <= 0 || tileM <= 0 || tileN <= 0)
    return traffic;
  int64_t gridX = llvm::divideCeil(n, tileN),
          gridY = llvm::divideCeil(m, tileM);
  uint64_t total = uint64_t(gridX) * gridY * batch;
  traffic.residentPerXcd = getResidentPerXcd(chip, workgroupsPerCU);
  // Bytes of the A panel of tile row y and the B panel of tile column x
  // (the last ones may be partial).
  auto aPanel = [&](int64_t y) {
    return double(std::min(tileM, m - y * tileM)) * k * aBytes;
  };
  auto bPanel = [&](int64_t x) {
    return double(std::min(tileN, n - x * tileN)) * k * bBytes;
  };
  for (int64_t y = 0; y < gridY; ++y)
    traffic.operandBytes += aPanel(y) * batch;
  for (int64_t x = 0; x < gridX; ++x)
    traffic.operandBytes += bPanel(x) * batch;
  for (unsigned xcd = 0; xcd < traffic.xcds; ++xcd) {
    llvm::DenseSet<int64_t> aPanels, bPanels; // (z, y) and (z, x)
    uint64_t inRound = 0;
    auto flush = [&] {
      for (int64_t key : aPanels)
        traffic.l2FillBytes += aPanel(key % gridY);
      for (int64_t key : bPanels)
        traffic.l2FillBytes += bPanel(key % gridX);
      aPanels.clear();
      bPanels.clear();
      inRound = 0;
    };
    uint64_t perBatch = uint64_t(gridX) * gridY;
    for (uint64_t id = xcd; id < total; id += traffic.xcds) {
      // The kernel renumbers the ids of each batch (getMatmulTilePosition).
      TilePosition tile = getMatmulTilePosition(int64_t(id % perBatch), gridX,
                                                gridY, traffic.xcds);
      int64_t x = tile.col, y = tile.row, z = int64_t(id / perBatch);
      aPanels.insert(z * gridY + y);
      bPanels.insert(z * gridX + x);
      if (++inRound == traffic.residentPerXcd)
        flush();
    }
    flush();
  }
  return traffic;
}

/// The keys [begin, end) workgroup (x, split) of an attention grid reads.
static std::pair<int64_t, int64_t>
getAttentionKeyRange(const AttentionTrafficShape &shape, int64_t x,
                     int64_t split) {
  // The keys of the block's first query's window start, through its last
  // query's window end; splits take whole blocks of that range.
  int64_t blockN = std::max<int64_t>(1, shape.blockN);
  int64_t firstQuery = x * shape.tileM,
          lastQuery = firstQuery + shape.tileM - 1;
  int64_t end = shape.window.hasRight()
                    ? shape.window.end(lastQuery, shape.seqQ, shape.seqKV)
                    : shape.seqKV;
  int64_t begin =
      shape.window.begin(firstQuery, shape.seqQ, shape.seqKV) / blockN * blockN;
  if (shape.splits > 1) {
    int64_t perSplit =
        llvm::divideCeil(std::max<int64_t>(0, end - begin), shape.splits);
    int64_t chunk = llvm::divideCeil(perSplit, blockN) * blockN;
    begin += split * chunk;
    end = std::min(end, begin + chunk);
  }
  return {begin, std::max(begin, end)};
}

CacheTraffic tessel::estimateAttentionL2Fill(const Chip &chip,
                                             const AttentionTrafficShape &shape,
                                             unsigned workgroupsPerCU) {
  CacheTraffic traffic;
  traffic.xcds = std::max(1u, chip.numXCDs);
  if (shape.batch <= 0 || shape.heads <= 0 || shape.kvHeads <= 0 ||
      shape.seqQ <= 0 || shape.seqKV <= 0 || shape.tileM <= 0 ||
      shape.heads % shape.kvHeads != 0)
    return traffic;
  int64_t splits = std::max<int64_t>(1, shape.splits);
  int64_t gridX = llvm::divideCeil(shape.seqQ, shape.tileM);
  int64_t groups = shape.heads / shape.kvHeads;
  double bytesPerKey =
      double(shape.headDim + shape.headDimV) * shape.elementBytes;
  double bytesPerQuery = double(shape.headDim) * shape.elementBytes;
  traffic.operandBytes =
      bytesPerQuery * shape.batch * shape.heads * shape.seqQ +
      bytesPerKey * shape.batch * shape.kvHeads * shape.seqKV;
  traffic.residentPerXcd = getResidentPerXcd(chip, workgroupsPerCU);
  uint64_t total = uint64_t(gridX) * shape.heads * shape.batch * splits;
  for (unsigned xcd = 0; xcd < traffic.xcds; ++xcd) {
    // Per (batch, key/value head, split): the furthest key a resident
    // workgroup reads (all of them start at the split's first key).
    llvm::DenseMap<int64_t, std::pair<int64_t, int64_t>> keys;
    // Query blocks (batch, head, x): the splits of one block share it.
    llvm::DenseSet<int64_t> queryBlocks;
    uint64_t inRound = 0;
    auto flush = [&] {
      for (auto &entry : keys)
        traffic.l2FillBytes +=
            bytesPerKey * double(entry.second.second - entry.second.first);
      for (int64_t block : queryBlocks) {
        int64_t x = block % gridX;
        traffic.l2FillBytes +=
            bytesPerQuery *
            double(std::min(shape.tileM, shape.seqQ - x * shape.tileM));
      }
      keys.clear();
      queryBlocks.clear();
      inRound = 0;
    };
    for (uint64_t id = xcd; id < total; id += traffic.xcds) {
      int64_t x = int64_t(id % gridX);
      int64_t head = int64_t(id / gridX % shape.heads);
      int64_t z = int64_t(id / (uint64_t(gridX) * shape.heads));
      if (shape.longestFirst) {
        uint64_t perPosition = uint64_t(shape.heads) * shape.batch * splits;
        x = gridX - 1 - int64_t(id / perPosition);
        head = int64_t(id % perPosition % shape.heads);
        z = int64_t(id % perPosition / shape.heads);
      }
      int64_t split = z % splits, batch = z / splits;
      queryBlocks.insert((batch * shape.heads + head) * gridX + x);
      auto [begin, end] = getAttentionKeyRange(shape, x, split);
      int64_t key = (batch * shape.kvHeads + head / groups) * splits + split;
      auto [it, inserted] = keys.try_emplace(key, begin, end);
      if (!inserted)
        it->second.second = std::max(it->second.second, end);
      if (++inRound == traffic.residentPerXcd)
        flush();
    }
    flush();
  }
  return traffic;
}
