//===- Cache.cpp - Compiled-kernel cache in memory and on disk ------------===//

#include "tessel/Runtime/Cache.h"
#include "tessel/Runtime/Compiler.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <thread>

#include <sys/time.h>

using namespace tessel;

/// First line of every entry; bump the number when the payload changes.
static constexpr llvm::StringLiteral kMagic = "TESSEL-CACHE 7\n";
/// Larger files are not entries (a large kernel's entry is a few MiB).
static constexpr uint64_t kMaxEntryBytes = uint64_t(1) << 30;

CacheOptions CacheOptions::fromEnvironment() {
  CacheOptions options;
  if (std::optional<std::string> megabytes =
          llvm::sys::Process::GetEnv("TESSEL_CACHE_MAX_MB")) {
    uint64_t value;
    // A malformed bound keeps the default rather than disabling the bound.
    if (!llvm::StringRef(*megabytes).trim().getAsInteger(10, value) &&
        value <= (UINT64_MAX >> 20))
      options.maxDiskBytes = value << 20;
  }
  if (std::optional<std::string> dir =
          llvm::sys::Process::GetEnv("TESSEL_CACHE_DIR")) {
    options.directory = *dir; // empty: disk cache off
    return options;
  }
  llvm::SmallString<256> path;
  if (std::optional<std::string> xdg =
          llvm::sys::Process::GetEnv("XDG_CACHE_HOME");
      xdg && !xdg->empty())
    path = *xdg;
  else if (llvm::sys::path::home_directory(path))
    llvm::sys::path::append(path, ".cache");
  else
    return options;
  llvm::sys::path::append(path, "tessel");
  options.directory = std::string(path);
  return options;
}

//===----------------------------------------------------------------------===//
// Entry format
//===----------------------------------------------------------------------===//

static llvm::StringRef kindName(GridRule::Kind kind) {
  switch (kind) {
  case GridRule::Kind::Matmul:
    return "matmul";
  case GridRule::Kind::Attention:
    return "attention";
  case GridRule::Kind::AttentionKeys:
    return "attention_keys";
  }
  llvm_unreachable("unknown grid kind");
}

static llvm::json::Array toJSON(const std::vector<std::string> &names) {
  llvm::json::Array array;
  for (const std::string &name : names)
    array.push_back(name);
  return array;
}

std::string tessel::serializeCompiledModule(const CompiledModule &entry,
                                            llvm::StringRef key) {
  llvm::json::Array kernels;
  for (const CompiledKernel &kernel : entry.kernels) {
    llvm::json::Array arguments;
    for (const ArgumentType &argument : kernel.arguments)
      arguments.push_back(
          llvm::json::Object{{"memref", argument.isMemref},
                             {"bytes", argument.elementBytes},
                             {"type", argument.elementType},
                             {"shape", llvm::json::Array(argument.shape)},
                             {"strides", llvm::json::Array(argument.strides)},
                             {"dimensions", toJSON(argument.dimensions)},
                             {"written", argument.written},
                             {"zeroed", argument.zeroed},
                             {"used", argument.used}});
    kernels.push_back(llvm::json::Object{
        {"arguments", std::move(arguments)},
        {"problem_arguments", kernel.problemArguments},
        {"name", kernel.name},
        {"problem", kernel.problem},
        {"block", kernel.blockSize},
        {"kind", kindName(kernel.grid.kind)},
        {"tile", llvm::json::Array{kernel.grid.tile[0], kernel.grid.tile[1]}},
        {"plan_of", kernel.grid.planOf},
        {"stage", kernel.grid.stage},
        {"splits", kernel.grid.splits},
        {"stream_k", kernel.grid.streamK},
        {"packed_heads", kernel.grid.packedHeads},
        {"longest_first", kernel.grid.longestFirst},
        {"key_loop_unroll", kernel.grid.keyLoopUnroll},
        {"merge_loop_iterations",
         llvm::json::Array(kernel.grid.mergeLoopIterations)}});
  }
  // The launch facts as one JSON line, then the two large sections raw (no
  // escaping or base64 to undo on a hit).
  llvm::json::Object facts{
      {"key", key},
      {"chip", entry.chip},
      {"report", entry.reportJSON},
      {"kernels", std::move(kernels)},
      {"hsaco_bytes", uint64_t(entry.hsaco.size())},
      {"emulator_ir_bytes", uint64_t(entry.emulatorIR.size())}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(facts)) << "\n";
  os.write(entry.hsaco.data(), entry.hsaco.size());
  os << entry.emulatorIR;
  return frameCacheEntry(text);
}

std::string tessel::frameCacheEntry(llvm::StringRef payload) {
  return (kMagic + llvm::Twine(payload.size()) + " " +
          llvm::utohexstr(llvm::xxh3_64bits(payload)) + "\n" + payload)
      .str();
}

/// Reads a JSON array of integers; false if it is not one.
static bool readIntegers(const llvm::json::Array *array,
                         std::vector<int64_t> &out) {
  if (!array)
    return false;
  for (const llvm::json::Value &value : *array) {
    std::optional<int64_t> integer = value.getAsInteger();
    if (!integer)
      return false;
    out.push_back(*integer);
  }
  return true;
}

/// Reads one kernel argument's type; false if any part is missing.
static bool readArgument(const llvm::json::Object &object, ArgumentType &type) {
  std::optional<bool> memref = object.getBoolean("memref");
  std::optional<int64_t> bytes = object.getInteger("bytes");
  std::optional<llvm::StringRef> element = object.getString("type");
  std::optional<bool> written = object.getBoolean("written");
  std::optional<bool> used = object.getBoolean("used");
  std::optional<bool> zeroed = object.getBoolean("zeroed");
  const llvm::json::Array *dimensions = object.getArray("dimensions");
  if (!memref || !bytes || *bytes <= 0 || *bytes > 16 || !element || !written ||
      !used || !zeroed || !dimensions ||
      !readIntegers(object.getArray("shape"), type.shape) ||
      !readIntegers(object.getArray("strides"), type.strides))
    return false;
  type.isMemref = *memref;
  type.elementBytes = unsigned(*bytes);
  type.elementType = element->str();
  type.written = *written;
  type.used = *used;
  type.zeroed = *zeroed;
  for (const llvm::json::Value &value : *dimensions) {
    std::optional<llvm::StringRef> name = value.getAsString();
    if (!name)
      return false;
    type.dimensions.push_back(name->str());
  }
  return type.strides.size() == type.shape.size() &&
         (type.dimensions.empty() ||
          type.dimensions.size() == type.shape.size());
}

/// Reads one kernel's launch facts; false if any is missing.
static bool readKernel(const llvm::json::Object &object,
                       CompiledKernel &kernel) {
  std::optional<llvm::StringRef> name = object.getString("name");
  std::optional<llvm::StringRef> problem = object.getString("problem");
  std::optional<int64_t> block = object.getInteger("block");
  std::optional<llvm::StringRef> kind = object.getString("kind");
  const llvm::json::Array *tile = object.getArray("tile");
  std::optional<llvm::StringRef> planOf = object.getString("plan_of");
  std::optional<int64_t> stage = object.getInteger("stage");
  std::optional<int64_t> splits = object.getInteger("splits");
  std::optional<int64_t> streamK = object.getInteger("stream_k");
  std::optional<int64_t> packedHeads = object.getInteger("packed_heads");
  if (!name || !problem || !block || !kind || !tile || tile->size() != 2 ||
      !planOf || !stage || !splits || !streamK || !packedHeads)
    return false;
  std::optional<int64_t> rows = (*tile)[0].getAsInteger();
  std::optional<int64_t> columns = (*tile)[1].getAsInteger();
  // Values a launch divides by or sizes a grid with must be sane even in
  // an entry whose checksum is intact.
  if (!rows || !columns || *rows <= 0 || *columns <= 0 || *block <= 0 ||
      *block > 1024 || *splits < 1 || *streamK < 0 || *streamK > UINT32_MAX ||
      *packedHeads < 1 || *stage < 0 ||
      (*kind != "matmul" && *kind != "attention" && *kind != "attention_keys"))
    return false;
  kernel.name = name->str();
  kernel.problem = problem->str();
  kernel.blockSize = unsigned(*block);
  kernel.grid.kind = *kind == "matmul"      ? GridRule::Kind::Matmul
                     : *kind == "attention" ? GridRule::Kind::Attention
                                            : GridRule::Kind::AttentionKeys;
  kernel.grid.tile = {*rows, *columns};
  kernel.grid.planOf = planOf->str();
  kernel.grid.stage = *stage;
  kernel.grid.splits = *splits;
  kernel.grid.streamK = *streamK;
  kernel.grid.packedHeads = *packedHeads;
  kernel.grid.longestFirst = object.getBoolean("longest_first").value_or(false);
  kernel.grid.keyLoopUnroll = std::clamp<int64_t>(
      object.getInteger("key_loop_unroll").value_or(1), 1, 16);
  if (const llvm::json::Array *merges =
          object.getArray("merge_loop_iterations"))
    for (const llvm::json::Value &merge : *merges)
      if (std::optional<int64_t> iterations = merge.getAsInteger())
        kernel.grid.mergeLoopIterations.push_back(*iterations);
  const llvm::json::Array *arguments = object.getArray("arguments");
  std::optional<int64_t> problemArguments =
      object.getInteger("problem_arguments");
  if (!arguments || !problemArguments || *problemArguments < 0 ||
      size_t(*problemArguments) > arguments->size())
    return false;
  kernel.problemArguments = unsigned(*problemArguments);
  for (const llvm::json::Value &value : *arguments) {
    const llvm::json::Object *argument = value.getAsObject();
    ArgumentType type;
    if (!argument || !readArgument(*argument, type))
      return false;
    kernel.arguments.push_back(std::move(type));
  }
  return true;
}

std::optional<CompiledModule>
tessel::deserializeCompiledModule(llvm::StringRef bytes, llvm::StringRef key) {
  if (!bytes.consume_front(kMagic))
    return std::nullopt;
  auto [header, payload] = bytes.split('\n');
  auto [sizeText, hashText] = header.split(' ');
  uint64_t size = 0, hash = 0;
  if (sizeText.getAsInteger(10, size) || hashText.getAsInteger(16, hash) ||
      payload.size() != size || llvm::xxh3_64bits(payload) != hash)
    return std::nullopt;
  auto [factsText, sections] = payload.split('\n');
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(factsText);
  if (!json) {
    llvm::consumeError(json.takeError());
    return std::nullopt;
  }
  const llvm::json::Object *object = json->getAsObject();
  if (!object)
    return std::nullopt;
  // An entry answers only the key it was written for: a valid entry of
  // another kernel or chip placed under this name is not this kernel.
  if (object->getString("key") != std::optional<llvm::StringRef>(key))
    return std::nullopt;
  std::optional<llvm::StringRef> chip = object->getString("chip");
  std::optional<llvm::StringRef> report = object->getString("report");
  std::optional<int64_t> hsacoBytes = object->getInteger("hsaco_bytes");
  std::optional<int64_t> emulatorIRBytes =
      object->getInteger("emulator_ir_bytes");
  const llvm::json::Array *kernels = object->getArray("kernels");
  if (!chip || !report || !hsacoBytes || !emulatorIRBytes || !kernels ||
      *hsacoBytes < 0 || *emulatorIRBytes < 0 ||
      uint64_t(*hsacoBytes) + uint64_t(*emulatorIRBytes) != sections.size())
    return std::nullopt;
  CompiledModule entry;
  entry.chip = chip->str();
  entry.reportJSON = report->str();
  entry.hsaco.assign(sections.begin(), sections.begin() + *hsacoBytes);
  entry.emulatorIR = sections.drop_front(*hsacoBytes).str();
  // Registers, LDS and the kernarg layout come from the code object itself.
  llvm::Expected<CodeObjectMetadata> metadata =
      readCodeObjectMetadata(entry.hsaco);
  if (!metadata) {
    llvm::consumeError(metadata.takeError());
    return std::nullopt;
  }
  if (metadata->processor() != entry.chip)
    return std::nullopt;
  for (const llvm::json::Value &value : *kernels) {
    const llvm::json::Object *kernelObject = value.getAsObject();
    CompiledKernel kernel;
    if (!kernelObject || !readKernel(*kernelObject, kernel))
      return std::nullopt;
    auto found = llvm::find_if(metadata->kernels, [&](const KernelMetadata &k) {
      return k.name == kernel.name;
    });
    if (found == metadata->kernels.end())
      return std::nullopt;
    kernel.metadata = *found;
    entry.kernels.push_back(std::move(kernel));
  }
  return entry;
}

//===----------------------------------------------------------------------===//
// KernelCache
//===----------------------------------------------------------------------===//

KernelCache::KernelCache(CacheOptions options) : options(std::move(options)) {}

std::string KernelCache::pathFor(llvm::StringRef key) const {
  if (options.directory.empty())
    return {};
  llvm::SmallString<256> path(options.directory);
  llvm::sys::path::append(path, key + ".tsl");
  return std::string(path);
}

std::shared_ptr<const CompiledModule> KernelCache::lookup(llvm::StringRef key) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (options.inMemory)
      if (auto it = memory.find(key); it != memory.end()) {
        ++stats.memoryHits;
        return it->second;
      }
  }
  std::shared_ptr<const CompiledModule> entry = readFromDisk(key);
  std::lock_guard<std::mutex> lock(mutex);
  if (!entry) {
    ++stats.misses;
    return nullptr;
  }
  ++stats.diskHits;
  if (options.inMemory)
    memory[key] = entry;
  // The entry was just used: pruning removes it last.
  ::utimes(pathFor(key).c_str(), nullptr); // now
  return entry;
}

void KernelCache::insert(llvm::StringRef key,
                         std::shared_ptr<const CompiledModule> entry) {
  writeToDisk(key, *entry);
  std::lock_guard<std::mutex> lock(mutex);
  if (options.inMemory)
    memory[key] = std::move(entry);
}

void KernelCache::clearMemory() {
  std::lock_guard<std::mutex> lock(mutex);
  memory.clear();
}

CacheStats KernelCache::getStats() const {
  std::lock_guard<std::mutex> lock(mutex);
  return stats;
}

std::shared_ptr<const CompiledModule>
KernelCache::readFromDisk(llvm::StringRef key) {
  std::string path = pathFor(key);
  if (path.empty())
    return nullptr;
  // Only a regular file is an entry: opening a FIFO blocks, and a link to a
  // device (/dev/zero) reads forever. Such a path is treated as damaged.
  llvm::sys::fs::file_status status;
  if (llvm::sys::fs::status(path, status, /*Follow=*/false))
    return nullptr; // no entry
  bool isEntryFile = status.type() == llvm::sys::fs::file_type::regular_file &&
                     status.getSize() <= kMaxEntryBytes;
  std::optional<CompiledModule> entry;
  if (isEntryFile) {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
        llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                    /*RequiresNullTerminator=*/false);
    if (!buffer)
      return nullptr; // unreadable (permissions): a miss, left alone
    entry = deserializeCompiledModule((*buffer)->getBuffer(), key);
  }
  if (!entry) {
    // Truncated or damaged: never load it, and let the recompile replace it.
    llvm::sys::fs::remove(path);
    std::lock_guard<std::mutex> lock(mutex);
    ++stats.corruptEntries;
    return nullptr;
  }
  return std::make_shared<const CompiledModule>(std::move(*entry));
}

void KernelCache::writeToDisk(llvm::StringRef key,
                              const CompiledModule &entry) {
  std::string path = pathFor(key);
  if (path.empty())
    return;
  auto failed = [&] {
    std::lock_guard<std::mutex> lock(mutex);
    ++stats.writeFailures;
  };
  if (llvm::sys::fs::create_directories(options.directory)) {
    failed();
    return;
  }
  // A name no other writer uses, then an atomic rename into place.
  std::string temporary =
      llvm::formatv("{0}.{1}.{2}.tmp", path, llvm::sys::Process::getProcessId(),
                    std::hash<std::thread::id>()(std::this_thread::get_id()));
  {
    std::error_code error;
    llvm::raw_fd_ostream os(temporary, error);
    if (error) {
      failed();
      return;
    }
    os << serializeCompiledModule(entry, key);
    os.close();
    if (os.has_error()) {
      os.clear_error();
      llvm::sys::fs::remove(temporary);
      failed();
      return;
    }
  }
  if (llvm::sys::fs::rename(temporary, path)) {
    llvm::sys::fs::remove(temporary);
    failed();
    return;
  }
  pruneDisk(path);
}

void KernelCache::pruneDisk(llvm::StringRef justWritten) {
  if (options.maxDiskBytes == 0)
    return;
  struct Entry {
    std::string path;
    uint64_t bytes;
    llvm::sys::TimePoint<> used;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code error;
  for (llvm::sys::fs::directory_iterator it(options.directory, error), end;
       it != end && !error; it.increment(error)) {
    if (llvm::sys::path::extension(it->path()) != ".tsl")
      continue;
    llvm::sys::fs::file_status status;
    if (llvm::sys::fs::status(it->path(), status, /*Follow=*/false) ||
        status.type() != llvm::sys::fs::file_type::regular_file)
      continue;
    entries.push_back(
        {it->path(), status.getSize(), status.getLastModificationTime()});
    total += status.getSize();
  }
  if (total <= options.maxDiskBytes)
    return;
  // Least recently used first; the entry just written goes last even when
  // it alone is over the bound (it is what the caller is about to use).
  llvm::sort(entries, [&](const Entry &x, const Entry &y) {
    bool xNew = x.path == justWritten, yNew = y.path == justWritten;
    if (xNew != yNew)
      return yNew;
    return x.used < y.used;
  });
  uint64_t pruned = 0;
  for (const Entry &entry : entries) {
    if (total <= options.maxDiskBytes || entry.path == justWritten)
      break;
    if (!llvm::sys::fs::remove(entry.path)) {
      total -= entry.bytes;
      ++pruned;
    }
  }
  std::lock_guard<std::mutex> lock(mutex);
  stats.prunedEntries += pruned;
}
