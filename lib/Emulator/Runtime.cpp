//===- Runtime.cpp - The SIMT runtime of the emulator -----------*- C++ -*-===//

#include "Runtime.h"
#include "RuntimeABI.h"

#include "tessel/Emulator/Collectives.h"

#include "llvm/ADT/APInt.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Alignment.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstring>

using namespace tessel;
using namespace tessel::emu;

static constexpr size_t kLaneStackBytes = 256 * 1024;
/// LDS starts undefined on hardware; filling it with 0xff (NaN in every
/// float type) makes reads of never-written LDS show up in results.
static constexpr uint8_t kLdsPoison = 0xff;
/// LDS starts at address 0 on hardware, so an offset aligned as an access
/// assumes is an aligned address; the host copy starts at a page boundary to
/// keep that true.
static constexpr uint64_t kLdsAlignment = 4096;

static thread_local SimtRuntime *activeRuntime = nullptr;

SimtRuntime *SimtRuntime::active() { return activeRuntime; }

SimtRuntime::SimtRuntime(const Chip &chip, llvm::StringRef kernel,
                         PackedKernel entry, llvm::ArrayRef<void *> args,
                         llvm::ArrayRef<BufferRegion> buffers,
                         const LaunchDims &dims, uint64_t ldsBytes,
                         llvm::ArrayRef<std::string> sites)
    : chip(chip), kernel(kernel.str()), entry(entry),
      args(args.begin(), args.end()), buffers(buffers.begin(), buffers.end()),
      sites(sites.begin(), sites.end()), dims(dims),
      waveSize(chip.defaultWaveSize), ldsBytes(ldsBytes) {}

void *SimtRuntime::allocate(size_t bytes) {
  allocations.push_back(std::make_unique<char[]>(bytes));
  return allocations.back().get();
}

//===----------------------------------------------------------------------===//
// Scheduling
//===----------------------------------------------------------------------===//

void SimtRuntime::laneMain() {
  SimtRuntime &runtime = *activeRuntime;
  runtime.entry(runtime.args.data());
  runtime.current->state = LaneState::Exited;
  // A fiber never returns: back to the scheduler for good.
  switchFiber(runtime.current->context, runtime.scheduler);
  std::abort();
}

void SimtRuntime::waitAtBarrier(int32_t site, bool phase) {
  current->barrierSite = site;
  current->atPhaseBarrier = phase;
  current->state = LaneState::AtBarrier;
  switchFiber(current->context, scheduler);
}

void SimtRuntime::waitAtCollective(const CollectiveRequest &request) {
  current->request = request;
  current->state = LaneState::AtCollective;
  switchFiber(current->context, scheduler);
}

void SimtRuntime::fail(const llvm::Twine &message) {
  if (!failed) {
    failed = true;
    error = (describeLane(*current) + ": " + message).str();
  }
  // The scheduler never resumes a lane of a failed launch.
  switchFiber(current->context, scheduler);
  std::abort();
}

llvm::Error SimtRuntime::failAt(const Lane &lane, const llvm::Twine &message) {
  failed = true;
  error = (describeLane(lane) + ": " + message).str();
  return llvm::createStringError(error);
}

llvm::StringRef SimtRuntime::getSiteLocation(int32_t site) const {
  if (site < 0 || size_t(site) >= sites.size())
    return "";
  return sites[site];
}

std::string SimtRuntime::describeBarrier(int32_t site) const {
  return ("barrier #" + llvm::Twine(site) + describeSite(site)).str();
}

std::string SimtRuntime::describeLane(const Lane &lane) const {
  return llvm::formatv("kernel '{0}', workgroup ({1}, {2}, {3}), wave {4}, "
                       "lane {5} (thread ({6}, {7}, {8}))",
                       kernel, workgroup[0], workgroup[1], workgroup[2],
                       lane.wave, lane.laneInWave, lane.id[0], lane.id[1],
                       lane.id[2])
      .str();
}

llvm::Error SimtRuntime::run(LaunchStats &stats) {
  uint64_t laneCount = uint64_t(dims.block[0]) * dims.block[1] * dims.block[2];
  if (laneCount == 0 || dims.grid[0] * dims.grid[1] * dims.grid[2] == 0)
    return llvm::createStringError("kernel '" + kernel +
                                   "': empty grid or workgroup");
  if (laneCount > chip.maxWorkgroupSize)
    return llvm::createStringError(llvm::formatv(
        "kernel '{0}': a workgroup of {1} lanes exceeds the {2} lanes {3} "
        "allows",
        kernel, laneCount, chip.maxWorkgroupSize, chip.name));
  if (ldsBytes > chip.maxLdsBytesPerWorkgroup)
    return llvm::createStringError(llvm::formatv(
        "kernel '{0}': {1} bytes of LDS exceed the {2} bytes per workgroup "
        "{3} allows",
        kernel, ldsBytes, chip.maxLdsBytesPerWorkgroup, chip.name));

  SimtRuntime *previous = activeRuntime;
  activeRuntime = this;
  llvm::scope_exit restore([&] { activeRuntime = previous; });
  lanes.resize(laneCount);
  for (Lane &lane : lanes)
    lane.stack.reset(new char[kLaneStackBytes]);
  ldsStorage.assign(ldsBytes + kLdsAlignment, kLdsPoison);
  lds = reinterpret_cast<uint8_t *>(
      llvm::alignAddr(ldsStorage.data(), llvm::Align(kLdsAlignment)));
  shadow.assign(ldsBytes, LdsShadow());
  waveEpochs.assign((laneCount + waveSize - 1) / waveSize, 0);

  for (unsigned z = 0; z < dims.grid[2]; ++z)
    for (unsigned y = 0; y < dims.grid[1]; ++y)
      for (unsigned x = 0; x < dims.grid[0]; ++x)
        if (llvm::Error error = runWorkgroup(x, y, z, stats))
          return error;
  stats.memoryChecks += memoryChecks;
  return llvm::Error::success();
}

llvm::Error SimtRuntime::runWorkgroup(unsigned x, unsigned y, unsigned z,
                                      LaunchStats &stats) {
  workgroup[0] = x;
  workgroup[1] = y;
  workgroup[2] = z;
  std::fill(lds, lds + ldsBytes, kLdsPoison);
  // A new barrier epoch: accesses of earlier workgroups never race with
  // this one's.
  ++barrierEpoch;
  for (auto [flat, lane] : llvm::enumerate(lanes)) {
    lane.flatId = flat;
    lane.id[0] = flat % dims.block[0];
    lane.id[1] = (flat / dims.block[0]) % dims.block[1];
    lane.id[2] = flat / (dims.block[0] * dims.block[1]);
    lane.wave = flat / waveSize;
    lane.laneInWave = flat % waveSize;
    lane.state = LaneState::Runnable;
    initFiber(lane.context, lane.stack.get(), kLaneStackBytes,
              &SimtRuntime::laneMain);
  }
  ++stats.workgroups;
  stats.lanes += lanes.size();

  for (;;) {
    for (Lane &lane : lanes) {
      if (lane.state != LaneState::Runnable)
        continue;
      current = &lane;
      switchFiber(scheduler, lane.context);
      if (failed)
        return llvm::createStringError(error);
    }
    if (llvm::all_of(lanes, [](const Lane &lane) {
          return lane.state == LaneState::Exited;
        }))
      return llvm::Error::success();
    llvm::Expected<bool> progressed = completeCollectives(stats);
    if (!progressed)
      return progressed.takeError();
    if (*progressed)
      continue;
    // No collective is pending: every lane still running is at a barrier.
    if (llvm::Error error = checkBarrierArrival())
      return error;
    for (Lane &lane : lanes)
      if (lane.state == LaneState::AtBarrier)
        lane.state = LaneState::Runnable;
    ++barrierEpoch;
    ++stats.barriers;
  }
}

llvm::Error SimtRuntime::checkBarrierArrival() {
  const Lane *reference = nullptr; // the workgroup's first waiting lane
  const Lane *returned = nullptr;  // the first lane of a wave that returned
  for (size_t first = 0; first < lanes.size(); first += waveSize) {
    llvm::ArrayRef<Lane> wave = llvm::ArrayRef(lanes).slice(
        first, std::min<size_t>(waveSize, lanes.size() - first));
    // The first lane of the wave that waits, and the first that does not
    // wait with it (it has returned or waits at another barrier).
    const Lane *waiting = nullptr, *apart = nullptr;
    for (const Lane &lane : wave) {
      bool atBarrier = lane.state == LaneState::AtBarrier;
      if (atBarrier && !waiting)
        waiting = &lane;
      else if (!apart &&
               !(atBarrier && lane.barrierSite == waiting->barrierSite))
        apart = &lane;
    }
    if (!waiting) {
      if (!returned)
        returned = &wave.front();
      continue;
    }
    if (apart)
      return failAt(
          *waiting,
          "divergent barrier: " + describeBarrier(waiting->barrierSite) +
              " reached by only part of the wave (lane " +
              llvm::Twine(apart->laneInWave) +
              (apart->state == LaneState::AtBarrier
                   ? " is at " + describeBarrier(apart->barrierSite)
                   : std::string(" has returned")) +
              ")");
    if (!reference)
      reference = waiting;
    else if (waiting->barrierSite != reference->barrierSite &&
             !(waiting->atPhaseBarrier && reference->atPhaseBarrier))
      return failAt(*reference,
                    llvm::formatv("mismatched barriers: wave {0} waits at {1} "
                                  "while wave {2} waits at {3}",
                                  reference->wave,
                                  describeBarrier(reference->barrierSite),
                                  waiting->wave,
                                  describeBarrier(waiting->barrierSite)));
  }
  if (returned)
    return failAt(*reference,
                  llvm::formatv("partial barrier: {0} reached by only part "
                                "of the workgroup (wave {1} has returned "
                                "without reaching it)",
                                describeBarrier(reference->barrierSite),
                                returned->wave));
  return llvm::Error::success();
}

static llvm::StringRef describeState(const Lane &lane) {
  switch (lane.state) {
  case LaneState::Exited:
    return "has returned";
  case LaneState::AtBarrier:
    return "is at a barrier";
  case LaneState::AtCollective:
    return "is at another collective";
  case LaneState::Runnable:
    return "is running";
  }
  return "";
}

static llvm::StringRef describeCollective(const CollectiveRequest &request) {
  switch (request.kind) {
  case CollectiveKind::Mma:
    return getMmaCatalogue()[request.params[0]].name;
  case CollectiveKind::Bpermute:
    return "ds_bpermute";
  case CollectiveKind::Swizzle:
    return "ds_swizzle";
  case CollectiveKind::Dpp:
    return "DPP move";
  case CollectiveKind::Readlane:
    return "readlane";
  case CollectiveKind::Ballot:
    return "ballot";
  case CollectiveKind::PermlaneSwap:
    return "permlane swap";
  case CollectiveKind::TransposeRead16:
    return "ds_read_b64_tr_b16";
  }
  return "collective";
}

llvm::Expected<bool> SimtRuntime::completeCollectives(LaunchStats &stats) {
  bool progressed = false;
  for (size_t first = 0; first < lanes.size(); first += waveSize) {
    llvm::SmallVector<Lane *, 64> wave;
    Lane *arrived = nullptr, *missing = nullptr;
    for (size_t i = first; i < std::min(first + waveSize, lanes.size()); ++i) {
      Lane &lane = lanes[i];
      wave.push_back(&lane);
      if (lane.state == LaneState::AtCollective) {
        if (!arrived)
          arrived = &lane;
        else if (lane.request.kind != arrived->request.kind ||
                 llvm::ArrayRef(lane.request.params) !=
                     llvm::ArrayRef(arrived->request.params))
          missing = &lane;
      } else if (!missing) {
        missing = &lane;
      }
    }
    if (!arrived)
      continue;
    if (missing && missing->state == LaneState::AtBarrier)
      return failAt(
          *missing,
          "divergent barrier: " + describeBarrier(missing->barrierSite) +
              " reached by only part of the wave (lane " +
              llvm::Twine(arrived->laneInWave) + " is at wave collective '" +
              describeCollective(arrived->request) + "')");
    if (missing)
      return failAt(*arrived,
                    "divergent wave collective: '" +
                        describeCollective(arrived->request) +
                        "' reached by only part of the wave (lane " +
                        llvm::Twine(missing->laneInWave) + " " +
                        (missing->state == LaneState::AtCollective
                             ? llvm::StringRef("is at a different collective")
                             : describeState(*missing)) +
                        ")");
    if (llvm::Error error = executeCollective(wave))
      return std::move(error);
    for (Lane *lane : wave)
      lane->state = LaneState::Runnable;
    ++waveEpochs[arrived->wave];
    ++stats.collectives;
    progressed = true;
  }
  return progressed;
}

llvm::Error SimtRuntime::executeCollective(llvm::ArrayRef<Lane *> wave) {
  const CollectiveRequest &first = wave.front()->request;
  auto failAt = [&](const llvm::Twine &message) {
    return this->failAt(*wave.front(), message);
  };
  switch (first.kind) {
  case CollectiveKind::Mma: {
    const MmaInstr &instr = getMmaCatalogue()[first.params[0]];
    unsigned operandBytes = getMmaOperandBytes(instr, waveSize);
    unsigned accBytes = getMmaAccumulatorBytes(instr, waveSize);
    std::vector<uint8_t> a(operandBytes * waveSize), b(a.size()),
        c(accBytes * waveSize), d(c.size());
    for (auto [index, lane] : llvm::enumerate(wave)) {
      std::memcpy(&a[index * operandBytes], lane->request.inputs[0],
                  operandBytes);
      std::memcpy(&b[index * operandBytes], lane->request.inputs[1],
                  operandBytes);
      std::memcpy(&c[index * accBytes], lane->request.inputs[2], accBytes);
    }
    MmaSignedness signedness;
    signedness.unsignedA = first.params[1] & abi::kMmaUnsignedA;
    signedness.unsignedB = first.params[1] & abi::kMmaUnsignedB;
    if (llvm::Error error =
            executeMma(instr, waveSize, chip.fp8Format, a, b, c, d, signedness))
      return failAt(llvm::toString(std::move(error)));
    for (auto [index, lane] : llvm::enumerate(wave))
      std::memcpy(lane->request.output, &d[index * accBytes], accBytes);
    return llvm::Error::success();
  }
  case CollectiveKind::Bpermute:
  case CollectiveKind::Swizzle: {
    llvm::SmallVector<uint32_t, 64> values, addresses;
    for (Lane *lane : wave) {
      values.push_back(lane->request.value);
      addresses.push_back(lane->request.address);
    }
    auto results = first.kind == CollectiveKind::Bpermute
                       ? dsBpermute(addresses, values)
                       : dsSwizzle(values, first.params[0]);
    for (auto [lane, result] : llvm::zip(wave, results))
      lane->request.result = result;
    return llvm::Error::success();
  }
  case CollectiveKind::Dpp: {
    int32_t bytes = first.params[0];
    for (int32_t word = 0; word < bytes / 4; ++word) {
      llvm::SmallVector<uint32_t, 64> old, src;
      for (Lane *lane : wave) {
        uint32_t o, s;
        std::memcpy(&o, (const char *)lane->request.inputs[0] + 4 * word, 4);
        std::memcpy(&s, (const char *)lane->request.inputs[1] + 4 * word, 4);
        old.push_back(o);
        src.push_back(s);
      }
      auto results = updateDpp(old, src, first.params[1], first.params[2],
                               first.params[3], first.params[4]);
      if (!results)
        return failAt(llvm::toString(results.takeError()));
      for (auto [lane, result] : llvm::zip(wave, *results))
        std::memcpy((char *)lane->request.output + 4 * word, &result, 4);
    }
    return llvm::Error::success();
  }
  case CollectiveKind::Readlane: {
    int32_t bytes = first.params[0], source = first.params[1];
    if (source < 0)
      source = 0; // readfirstlane: every lane is active here
    if (source >= int32_t(wave.size()))
      return failAt("readlane of lane " + llvm::Twine(source) +
                    " outside the wave");
    for (Lane *lane : wave)
      std::memcpy(lane->request.output, wave[source]->request.inputs[0], bytes);
    return llvm::Error::success();
  }
  case CollectiveKind::PermlaneSwap: {
    llvm::SmallVector<uint32_t, 64> old, src;
    for (Lane *lane : wave) {
      old.push_back(lane->request.value);
      src.push_back(lane->request.address);
    }
    auto [newOld, newSrc] = permlaneSwap(old, src, first.params[0]);
    for (auto [index, lane] : llvm::enumerate(wave)) {
      auto *result = static_cast<int32_t *>(lane->request.output);
      result[0] = newOld[index];
      result[1] = newSrc[index];
    }
    return llvm::Error::success();
  }
  case CollectiveKind::TransposeRead16: {
    if (wave.size() % 16)
      return failAt("ds_read_b64_tr_b16 needs whole groups of 16 lanes");
    llvm::SmallVector<uint64_t, 64> loaded;
    for (Lane *lane : wave) {
      uint64_t word;
      std::memcpy(&word, lane->request.inputs[0], sizeof(word));
      loaded.push_back(word);
    }
    llvm::SmallVector<uint64_t, 64> result = transposeRead16(loaded);
    for (auto [index, lane] : llvm::enumerate(wave))
      std::memcpy(lane->request.output, &result[index], sizeof(uint64_t));
    return llvm::Error::success();
  }
  case CollectiveKind::Ballot: {
    uint64_t mask = 0;
    for (auto [index, lane] : llvm::enumerate(wave))
      if (lane->request.value)
        mask |= uint64_t(1) << index;
    for (Lane *lane : wave)
      lane->request.result = mask;
    return llvm::Error::success();
  }
  }
  return failAt("unknown collective");
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

void *SimtRuntime::ldsAddress(int64_t offset) { return lds + offset; }

std::string SimtRuntime::describeAddress(uintptr_t address) const {
  std::string text = llvm::formatv("address {0:x}", address).str();
  // The buffer nearest to the address gives it a meaning.
  const BufferRegion *nearest = nullptr;
  uintptr_t nearestDistance = 4096;
  for (const BufferRegion &buffer : buffers) {
    uintptr_t begin = reinterpret_cast<uintptr_t>(buffer.data);
    uintptr_t end = begin + buffer.bytes;
    uintptr_t distance = address < begin  ? begin - address
                         : address >= end ? address - end
                                          : 0;
    if (distance <= nearestDistance) {
      nearest = &buffer;
      nearestDistance = distance;
    }
  }
  if (!nearest)
    return text;
  uintptr_t begin = reinterpret_cast<uintptr_t>(nearest->data);
  if (address < begin)
    return text + llvm::formatv(" ({0} bytes before {1})", begin - address,
                                nearest->name)
                      .str();
  return text + llvm::formatv(" ({0} bytes past the start of {1}, which has "
                              "{2} bytes)",
                              address - begin, nearest->name, nearest->bytes)
                    .str();
}

bool SimtRuntime::isLaneMemory(uintptr_t address, int64_t bytes) const {
  for (const BufferRegion &buffer : buffers) {
    uintptr_t base = reinterpret_cast<uintptr_t>(buffer.data);
    if (address >= base && address + bytes <= base + buffer.bytes)
      return true;
  }
  // Flat pointers may also point at the lane's own stack (private memory).
  uintptr_t stack = reinterpret_cast<uintptr_t>(current->stack.get());
  return address >= stack && address + bytes <= stack + kLaneStackBytes;
}

void SimtRuntime::checkAlignment(void *pointer, int64_t bytes,
                                 int64_t alignment, int32_t kind) {
  // LLVM leaves an access below the alignment it assumes undefined: the host
  // may fault on it (aligned vector moves) and the GPU may drop low address
  // bits (LDS) or split it differently.
  uintptr_t address = reinterpret_cast<uintptr_t>(pointer);
  if (alignment <= 1 || address % uint64_t(alignment) == 0)
    return;
  llvm::StringRef what = kind & abi::kWriteBit ? "store" : "load";
  uintptr_t ldsBase = reinterpret_cast<uintptr_t>(lds);
  if (address >= ldsBase && address < ldsBase + ldsBytes)
    fail(llvm::formatv("misaligned LDS {0} of {1} bytes at offset {2}: the "
                       "access assumes {3}-byte alignment",
                       what, bytes, address - ldsBase, alignment));
  fail(llvm::formatv("misaligned global {0} of {1} bytes at {2}: the access "
                     "assumes {3}-byte alignment",
                     what, bytes, describeAddress(address), alignment));
}

void SimtRuntime::checkAccess(void *pointer, int64_t bytes, int64_t alignment,
                              int32_t kind) {
  ++memoryChecks;
  uintptr_t address = reinterpret_cast<uintptr_t>(pointer);
  bool isWrite = kind & abi::kWriteBit;
  unsigned space = kind >> abi::kAddressSpaceShift;
  llvm::StringRef what = isWrite ? "store" : "load";
  uintptr_t ldsBase = reinterpret_cast<uintptr_t>(lds);
  bool inLds = address >= ldsBase && address < ldsBase + ldsBytes;
  if (inLds || space == 3) {
    int64_t offset = int64_t(address - ldsBase);
    if (!inLds || address + bytes > ldsBase + ldsBytes)
      fail(llvm::formatv("LDS {0} of {1} bytes at offset {2} is outside the "
                         "{3}-byte LDS allocation",
                         what, bytes, offset, ldsBytes));
    checkAlignment(pointer, bytes, alignment, kind);
    checkLdsAccess(offset, bytes, isWrite);
    return;
  }
  if (!isLaneMemory(address, bytes))
    fail(llvm::formatv("global {0} of {1} bytes at {2} is outside every "
                       "argument buffer",
                       what, bytes, describeAddress(address)));
  checkAlignment(pointer, bytes, alignment, kind);
}

std::string SimtRuntime::describeSite(int32_t site) const {
  llvm::StringRef location = getSiteLocation(site);
  return location.empty() ? std::string() : (" at " + location).str();
}

void SimtRuntime::failDivision(int32_t division, int32_t site) {
  static constexpr llvm::StringLiteral names[] = {"sdiv", "udiv", "srem",
                                                  "urem"};
  unsigned width = uint32_t(division) >> abi::kDivisionWidthShift;
  std::string op = llvm::formatv("an i{0} {1}", width,
                                 names[division & abi::kDivisionOpMask])
                       .str();
  if (division & abi::kDivisorZeroBit)
    fail("integer division by zero in " + op + describeSite(site));
  // Only a signed division overflows: the smallest value by -1.
  fail(llvm::formatv("integer division overflow in {0}{1}: {2} / -1 does not "
                     "fit in i{3}",
                     op, describeSite(site),
                     llvm::toString(llvm::APInt::getSignedMinValue(width),
                                    /*Radix=*/10, /*Signed=*/true),
                     width));
}

/// Whether an earlier access races with one by `lane` now: a different
/// lane, no barrier since, and -- within one wave -- no wave collective.
static bool races(const LdsAccess &earlier, const Lane &lane,
                  uint32_t barrierEpoch, uint32_t waveEpoch,
                  unsigned waveSize) {
  if (earlier.barrierEpoch != barrierEpoch || earlier.lane == lane.flatId)
    return false;
  if (earlier.lane / waveSize != lane.wave)
    return true;
  return earlier.waveEpoch == waveEpoch;
}

void SimtRuntime::checkLdsAccess(uint64_t offset, int64_t bytes, bool isWrite) {
  const Lane &lane = *current;
  uint32_t waveEpoch = waveEpochs[lane.wave];
  LdsAccess now{lane.flatId, barrierEpoch, waveEpoch};
  auto reportRace = [&](const LdsAccess &other, bool otherWrote, uint64_t at) {
    fail(llvm::formatv(
        "LDS race: {0} of {1} bytes at LDS offset {2} and a {3} of byte {4} "
        "by wave {5}, lane {6} with no barrier{7} between them",
        isWrite ? "store" : "load", bytes, offset,
        otherWrote ? "store" : "load", at, other.lane / waveSize,
        other.lane % waveSize,
        other.lane / waveSize == lane.wave ? " or wave collective" : ""));
  };
  for (uint64_t at = offset; at < offset + bytes; ++at) {
    LdsShadow &entry = shadow[at];
    if (races(entry.write, lane, barrierEpoch, waveEpoch, waveSize))
      reportRace(entry.write, true, at);
    if (isWrite) {
      for (const LdsAccess &read : entry.reads)
        if (races(read, lane, barrierEpoch, waveEpoch, waveSize))
          reportRace(read, false, at);
      entry.write = now;
      for (LdsAccess &read : entry.reads)
        read = LdsAccess();
      continue;
    }
    // Remember this read: replace one by the same lane, a stale one, or
    // (all four taken) the oldest slot.
    LdsAccess *target = &entry.reads[0];
    for (LdsAccess &read : entry.reads) {
      if (read.lane == lane.flatId || read.barrierEpoch != barrierEpoch) {
        target = &read;
        break;
      }
    }
    *target = now;
  }
}

//===----------------------------------------------------------------------===//
// Entry points called by lowered kernels
//===----------------------------------------------------------------------===//

static SimtRuntime &runtime() { return *SimtRuntime::active(); }

namespace {
/// What a buffer resource descriptor holds that the emulator honours.
struct BufferResource {
  char *base;
  int64_t numRecords;
  int32_t stride;
};
} // namespace

void *__tessel_emu_make_buffer_rsrc(void *base, int64_t numRecords,
                                    int32_t stride, int32_t flags) {
  auto *rsrc =
      static_cast<BufferResource *>(runtime().allocate(sizeof(BufferResource)));
  *rsrc = {static_cast<char *>(base), numRecords, stride};
  return rsrc;
}

/// Walks a raw buffer access in dwords (the granularity of the hardware's
/// range check): `fn(byteOffset, chunkBytes, inRange)`.
template <typename Fn>
static void forEachBufferChunk(const BufferResource &rsrc, int64_t offset,
                               int32_t bytes, Fn fn) {
  for (int32_t done = 0; done < bytes;) {
    int32_t chunk = std::min(bytes - done, 4);
    int64_t at = offset + done;
    // Raw buffers (stride 0) range-check the byte offset against
    // num_records.
    bool inRange = at >= 0 && at + chunk <= rsrc.numRecords;
    fn(done, at, chunk, inRange);
    done += chunk;
  }
}

extern "C" {

int32_t __tessel_emu_workitem_id(int32_t dim) {
  return runtime().currentLane().id[dim];
}

int32_t __tessel_emu_workgroup_id(int32_t dim) {
  return runtime().workgroupId()[dim];
}

int32_t __tessel_emu_workgroup_dim(int32_t dim) {
  return runtime().getDims().block[dim];
}

int32_t __tessel_emu_grid_dim(int32_t dim) {
  return runtime().getDims().grid[dim];
}

int32_t __tessel_emu_wave_size() { return runtime().getWaveSize(); }

int32_t __tessel_emu_mbcnt(int32_t high, int32_t mask, int32_t add) {
  unsigned lane = runtime().currentLane().laneInWave;
  return high ? mbcntHi(lane, mask, add) : mbcntLo(lane, mask, add);
}

void __tessel_emu_barrier(int32_t site) { runtime().waitAtBarrier(site); }

void __tessel_emu_phase_barrier(int32_t site) {
  runtime().waitAtBarrier(site, /*phase=*/true);
}

void __tessel_emu_mma(int32_t instr, const void *a, const void *b,
                      const void *c, void *d, int32_t flags) {
  CollectiveRequest request;
  request.kind = CollectiveKind::Mma;
  request.params[0] = instr;
  request.params[1] = flags;
  request.inputs[0] = a;
  request.inputs[1] = b;
  request.inputs[2] = c;
  request.output = d;
  runtime().waitAtCollective(request);
}

int32_t __tessel_emu_ds_bpermute(int32_t address, int32_t value) {
  CollectiveRequest request;
  request.kind = CollectiveKind::Bpermute;
  request.address = address;
  request.value = value;
  runtime().waitAtCollective(request);
  return runtime().currentLane().request.result;
}

int32_t __tessel_emu_ds_swizzle(int32_t value, int32_t pattern) {
  CollectiveRequest request;
  request.kind = CollectiveKind::Swizzle;
  request.params[0] = pattern;
  request.value = value;
  runtime().waitAtCollective(request);
  return runtime().currentLane().request.result;
}

void __tessel_emu_permlane_swap(int32_t old, int32_t src, int32_t rows,
                                int32_t *result) {
  CollectiveRequest request;
  request.kind = CollectiveKind::PermlaneSwap;
  request.params[0] = rows;
  request.value = old;
  request.address = src;
  request.output = result;
  runtime().waitAtCollective(request);
}

void __tessel_emu_ds_read_tr16_b64(const void *loaded, void *result) {
  CollectiveRequest request;
  request.kind = CollectiveKind::TransposeRead16;
  request.inputs[0] = loaded;
  request.output = result;
  runtime().waitAtCollective(request);
}

void __tessel_emu_dpp(const void *old, const void *src, void *dst,
                      int32_t bytes, int32_t ctrl, int32_t rowMask,
                      int32_t bankMask, int32_t boundCtrl) {
  if (bytes % 4)
    runtime().fail("DPP moves of " + llvm::Twine(bytes) +
                   "-byte values are not modelled");
  CollectiveRequest request;
  request.kind = CollectiveKind::Dpp;
  request.params[0] = bytes;
  request.params[1] = ctrl;
  request.params[2] = rowMask;
  request.params[3] = bankMask;
  request.params[4] = boundCtrl;
  request.inputs[0] = old;
  request.inputs[1] = src;
  request.output = dst;
  runtime().waitAtCollective(request);
}

void __tessel_emu_readlane(const void *src, void *dst, int32_t bytes,
                           int32_t lane) {
  CollectiveRequest request;
  request.kind = CollectiveKind::Readlane;
  request.params[0] = bytes;
  request.params[1] = lane;
  request.inputs[0] = src;
  request.output = dst;
  runtime().waitAtCollective(request);
}

int64_t __tessel_emu_ballot(int32_t predicate) {
  CollectiveRequest request;
  request.kind = CollectiveKind::Ballot;
  request.value = predicate != 0;
  runtime().waitAtCollective(request);
  return runtime().currentLane().request.result;
}

void *__tessel_emu_lds(int64_t offset) { return runtime().ldsAddress(offset); }

void __tessel_emu_check(void *pointer, int64_t bytes, int64_t alignment,
                        int32_t kind) {
  runtime().checkAccess(pointer, bytes, alignment, kind);
}

void __tessel_emu_check_masked(void *pointer, int64_t elementBytes,
                               int64_t count, const uint8_t *mask,
                               int64_t alignment, int32_t kind) {
  // Each enabled element must be in bounds; the alignment is the base
  // pointer's, assumed as soon as any element is enabled.
  if (llvm::none_of(llvm::ArrayRef(mask, count),
                    [](uint8_t enabled) { return enabled; }))
    return;
  runtime().checkAlignment(pointer, elementBytes * count, alignment, kind);
  for (int64_t i = 0; i < count; ++i)
    if (mask[i])
      runtime().checkAccess(static_cast<char *>(pointer) + i * elementBytes,
                            elementBytes, /*alignment=*/1, kind);
}

void __tessel_emu_division_fault(int32_t division, int32_t site) {
  runtime().failDivision(division, site);
}

void __tessel_emu_buffer_load(void *rsrcPointer, int32_t offset,
                              int32_t soffset, void *dst, int32_t bytes) {
  const auto &rsrc = *static_cast<BufferResource *>(rsrcPointer);
  forEachBufferChunk(
      rsrc, int64_t(offset) + soffset, bytes,
      [&](int32_t done, int64_t at, int32_t chunk, bool inRange) {
        char *out = static_cast<char *>(dst) + done;
        if (!inRange) {
          std::memset(out, 0, chunk); // as on hardware
          return;
        }
        // Copied bytewise: any alignment will do (as for buffer
        // instructions in the unaligned mode ROCm enables).
        runtime().checkAccess(rsrc.base + at, chunk, /*alignment=*/1, 0);
        std::memcpy(out, rsrc.base + at, chunk);
      });
}

void __tessel_emu_buffer_store(const void *src, void *rsrcPointer,
                               int32_t offset, int32_t soffset, int32_t bytes) {
  const auto &rsrc = *static_cast<BufferResource *>(rsrcPointer);
  forEachBufferChunk(
      rsrc, int64_t(offset) + soffset, bytes,
      [&](int32_t done, int64_t at, int32_t chunk, bool inRange) {
        if (!inRange)
          return; // dropped, as on hardware
        runtime().checkAccess(rsrc.base + at, chunk, /*alignment=*/1,
                              abi::kWriteBit);
        std::memcpy(rsrc.base + at, static_cast<const char *>(src) + done,
                    chunk);
      });
}

float __tessel_emu_cvt_f32_fp8(int32_t source, int32_t byteSel, int32_t isBf8) {
  const Chip &chip = runtime().getChip();
  uint8_t bits = uint32_t(source) >> (8 * byteSel);
  return decodeFp8(bits, fp8KindFor(isBf8 ? MmaElement::Bf8 : MmaElement::Fp8,
                                    chip.fp8Format));
}

int32_t __tessel_emu_cvt_pk_fp8_f32(float a, float b, int32_t old,
                                    int32_t wordSel, int32_t isBf8) {
  const Chip &chip = runtime().getChip();
  Fp8Kind kind =
      fp8KindFor(isBf8 ? MmaElement::Bf8 : MmaElement::Fp8, chip.fp8Format);
  uint32_t packed = encodeFp8(a, kind, /*saturate=*/false) |
                    uint32_t(encodeFp8(b, kind, /*saturate=*/false)) << 8;
  uint32_t result = uint32_t(old);
  unsigned shift = wordSel ? 16 : 0;
  result = (result & ~(0xffffu << shift)) | (packed << shift);
  return int32_t(result);
}

int32_t __tessel_emu_cvt_pkrtz_f16_f32(float a, float b) {
  return int32_t(uint32_t(floatToHalfTowardZero(a)) |
                 uint32_t(floatToHalfTowardZero(b)) << 16);
}

float __tessel_emu_math_f32(int32_t op, float x) {
  switch (op) {
  case abi::kExp2: {
    // v_exp_f32 does not produce denormals: results below 2^-126 are 0.
    float result = std::exp2(x);
    return std::fpclassify(result) == FP_SUBNORMAL ? 0.0f : result;
  }
  case abi::kLog2:
    return std::log2(x);
  case abi::kSqrt:
    return std::sqrt(x);
  case abi::kRcp:
    return 1.0f / x;
  case abi::kSin:
    return std::sin(x * 6.28318530717958647692f);
  case abi::kCos:
    return std::cos(x * 6.28318530717958647692f);
  case abi::kTanh:
    return std::tanh(x);
  }
  runtime().fail("unknown math operation " + llvm::Twine(op));
}

float __tessel_emu_fmed3_f32(float a, float b, float c) {
  return std::max(std::min(a, b), std::min(std::max(a, b), c));
}

} // extern "C"
