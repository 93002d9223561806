//===- TuningDatabase.cpp - Configs tuned per chip and problem ------------===//

#include "tessel/Dialect/Tessel/Transforms/TuningDatabase.h"
#include "tessel/Dialect/Tessel/Transforms/KernelConfig.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace tessel;

static constexpr int64_t kVersion = 1;

static llvm::Error fail(llvm::StringRef path, const llvm::Twine &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "tuning database '" + path + "': " + why);
}

llvm::Expected<TuningDatabase> TuningDatabase::load(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return fail(path, buffer.getError().message());
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return fail(path, "not JSON: " + llvm::toString(json.takeError()));
  const llvm::json::Object *root = json->getAsObject();
  if (!root || root->getInteger("version") != kVersion)
    return fail(path, llvm::formatv("expected an object with \"version\": {0}",
                                    kVersion));
  const llvm::json::Array *list = root->getArray("entries");
  if (!list)
    return fail(path, "expected an \"entries\" array");
  TuningDatabase database;
  for (auto [index, value] : llvm::enumerate(*list)) {
    const llvm::json::Object *object = value.getAsObject();
    std::optional<llvm::StringRef> chip, problem, config;
    if (object) {
      chip = object->getString("chip");
      problem = object->getString("problem");
      config = object->getString("config");
    }
    if (!chip || !problem || !config)
      return fail(path, llvm::formatv("entry {0} needs \"chip\", \"problem\" "
                                      "and \"config\" strings",
                                      index));
    TuningEntry entry;
    entry.config = config->str();
    entry.predictedMicroseconds = object->getNumber("predicted_us").value_or(0);
    entry.measuredMicroseconds = object->getNumber("measured_us").value_or(0);
    entry.source = object->getString("source").value_or("").str();
    database.insert(*chip, *problem, std::move(entry));
  }
  return database;
}

llvm::Error TuningDatabase::save(llvm::StringRef path) const {
  llvm::json::Array list;
  for (const auto &[key, entry] : entries) {
    llvm::json::Object object{{"chip", key.first},
                              {"problem", key.second},
                              {"config", entry.config},
                              {"predicted_us", entry.predictedMicroseconds},
                              {"source", entry.source}};
    if (entry.measuredMicroseconds > 0)
      object["measured_us"] = entry.measuredMicroseconds;
    list.push_back(std::move(object));
  }
  std::error_code error;
  llvm::raw_fd_ostream os(path, error, llvm::sys::fs::OF_Text);
  if (error)
    return fail(path, error.message());
  os << llvm::formatv("{0:2}",
                      llvm::json::Value(llvm::json::Object{
                          {"version", kVersion}, {"entries", std::move(list)}}))
     << "\n";
  os.close();
  if (os.has_error())
    return fail(path, os.error().message());
  return llvm::Error::success();
}

const TuningEntry *TuningDatabase::lookup(llvm::StringRef chip,
                                          llvm::StringRef problem) const {
  auto found = entries.find({chip.str(), problem.str()});
  return found == entries.end() ? nullptr : &found->second;
}

void TuningDatabase::insert(llvm::StringRef chip, llvm::StringRef problem,
                            TuningEntry entry) {
  entries[{chip.str(), problem.str()}] = std::move(entry);
}

static std::string sizeText(int64_t size) {
  return ShapedType::isDynamic(size) ? "?" : std::to_string(size);
}

static const char *contiguity(MemRefType type, const char *rowName,
                              const char *columnName) {
  return getContiguousTileDim(type) == 1 ? columnName : rowName;
}

std::string tessel::getMatmulProblemKey(MatmulOp matmul) {
  MemRefType a = matmul.getA().getType(), b = matmul.getB().getType(),
             c = matmul.getC().getType();
  int64_t rank = a.getRank();
  std::string key;
  llvm::raw_string_ostream os(key);
  os << "matmul " << a.getElementType() << " x " << b.getElementType() << " -> "
     << c.getElementType() << ", " << sizeText(a.getDimSize(rank - 2)) << "x"
     << sizeText(b.getDimSize(rank - 1)) << "x"
     << sizeText(a.getDimSize(rank - 1)) << ", batch "
     << (rank == 3 ? sizeText(a.getDimSize(0)) : "1") << ", A "
     << contiguity(a, "m", "k") << "-contiguous, B " << contiguity(b, "k", "n")
     << "-contiguous";
  return key;
}
