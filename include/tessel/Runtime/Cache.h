//===- Cache.h - Compiled-kernel cache in memory and on disk ----*- C++ -*-===//
//
// Entries are keyed by a hash of the input IR, the chip, the options and the
// compiler's own version. On disk an entry is one file written to a
// temporary name and renamed into place, so readers never see half an
// entry; its header carries the payload's length and checksum, and an entry
// that fails either is deleted and reported as a miss, never loaded.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_RUNTIME_CACHE_H
#define TESSEL_RUNTIME_CACHE_H

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace tessel {

struct CompiledModule;

struct CacheOptions {
  bool inMemory = true;
  /// Directory of the on-disk cache; empty disables it.
  std::string directory;
  /// The disk cache's bound: after a write, the least recently used entries
  /// (a disk hit refreshes an entry) are removed until the entries take at most
  /// this many bytes. 0: unbounded.
  uint64_t maxDiskBytes = kDefaultMaxDiskBytes;
  static constexpr uint64_t kDefaultMaxDiskBytes = uint64_t(1) << 30;

  /// TESSEL_CACHE_DIR if set (set but empty: no disk cache), else
  /// $XDG_CACHE_HOME/tessel or ~/.cache/tessel; the bound from
  /// TESSEL_CACHE_MAX_MB (megabytes, 0: unbounded; default 1024).
  static CacheOptions fromEnvironment();
};

struct CacheStats {
  uint64_t memoryHits = 0;
  uint64_t diskHits = 0;
  uint64_t misses = 0;
  uint64_t corruptEntries = 0; // found on disk, rejected and removed
  uint64_t writeFailures = 0;
  uint64_t prunedEntries = 0; // removed to keep the disk cache in its bound
};

class KernelCache {
public:
  explicit KernelCache(CacheOptions options);

  std::shared_ptr<const CompiledModule> lookup(llvm::StringRef key);
  void insert(llvm::StringRef key, std::shared_ptr<const CompiledModule> entry);
  /// Drops the in-memory entries (the disk stays).
  void clearMemory();

  CacheStats getStats() const;
  const CacheOptions &getOptions() const { return options; }
  /// Where the entry of `key` lives on disk (empty without a disk cache).
  std::string pathFor(llvm::StringRef key) const;

private:
  /// Keeps the disk cache within options.maxDiskBytes (least recently used
  /// entries first; never `justWritten`).
  void pruneDisk(llvm::StringRef justWritten);
  std::shared_ptr<const CompiledModule> readFromDisk(llvm::StringRef key);
  void writeToDisk(llvm::StringRef key, const CompiledModule &entry);

  CacheOptions options;
  mutable std::mutex mutex;
  llvm::StringMap<std::shared_ptr<const CompiledModule>> memory;
  CacheStats stats;
};

/// The on-disk form of the compiled module of `key`, and back; std::nullopt
/// when the bytes are not a complete, intact entry written for `key` (with
/// a code object for the chip it names).
std::string serializeCompiledModule(const CompiledModule &entry,
                                    llvm::StringRef key);
std::optional<CompiledModule> deserializeCompiledModule(llvm::StringRef bytes,
                                                        llvm::StringRef key);
/// An entry's payload (the facts line and the raw sections) behind the header
/// that carries its format version, length and checksum.
std::string frameCacheEntry(llvm::StringRef payload);

} // namespace tessel

#endif // TESSEL_RUNTIME_CACHE_H
