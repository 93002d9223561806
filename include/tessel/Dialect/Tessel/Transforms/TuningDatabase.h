//===- TuningDatabase.h - Configs tuned per chip and problem ----*- C++ -*-===//
//
// tessel-tune writes the config it found fastest for a matmul problem on a
// chip; tessel-select-config{tuning-db=FILE} gives that config to the same
// problem instead of the analytical model's choice. The file is JSON:
//
//   {"version": 1, "entries": [{"chip": "gfx942",
//     "problem": "matmul bf16 x bf16 -> bf16, 4096x4096x4096, batch 1, A
//     k-contiguous, B k-contiguous", "config": "#tessel.config<...>",
//     "predicted_us": 144.7, "source": "tessel-tune: ISA-level model"}]}
//
// An entry tuned on a GPU (tessel-tune --measure) also has "measured_us".
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_DIALECT_TESSEL_TRANSFORMS_TUNINGDATABASE_H
#define TESSEL_DIALECT_TESSEL_TRANSFORMS_TUNINGDATABASE_H

#include "tessel/Dialect/Tessel/IR/TesselOps.h"

#include "llvm/Support/Error.h"

#include <map>
#include <string>

namespace tessel {

struct TuningEntry {
  std::string config; ///< a #tessel.config<...> in MLIR syntax
  double predictedMicroseconds = 0;
  double measuredMicroseconds = 0; ///< 0: not measured on a GPU
  std::string source;              ///< how the config was chosen
};

class TuningDatabase {
public:
  /// Reads `path`; an error names the file and what is wrong with it.
  static llvm::Expected<TuningDatabase> load(llvm::StringRef path);
  /// Writes the database (entries sorted by chip and problem).
  llvm::Error save(llvm::StringRef path) const;

  const TuningEntry *lookup(llvm::StringRef chip,
                            llvm::StringRef problem) const;
  void insert(llvm::StringRef chip, llvm::StringRef problem, TuningEntry entry);
  size_t size() const { return entries.size(); }

private:
  std::map<std::pair<std::string, std::string>, TuningEntry> entries;
};

/// What identifies a matmul problem for tuning: element types, sizes ("?"
/// when dynamic), batch and which dimension of each operand is contiguous.
/// Epilogues are not part of it (they do not change the K loop).
std::string getMatmulProblemKey(MatmulOp matmul);

} // namespace tessel

#endif // TESSEL_DIALECT_TESSEL_TRANSFORMS_TUNINGDATABASE_H
