//===- InputLimits.cpp - Bounds on IR text before it is parsed ------------===//

#include "tessel/Support/InputLimits.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Regex.h"

using namespace tessel;

/// Whether the element type of a dense array (`array<TYPE: ...>`) is one the
/// parser handles: a signless integer or a float type.
static bool isDenseArrayElementType(llvm::StringRef type) {
  static const llvm::Regex integer("^i[0-9]+$");
  static const llvm::Regex floating("^(f16|bf16|f32|f64|f80|f128|tf32|f8E[0-9A-"
                                    "Za-z]+|f6E[0-9A-Za-z]+|f4E[0-9A-Za-z]+)$");
  return integer.match(type) || floating.match(type);
}

/// The identifier starting at `pos` (letters, digits, `_`, `.`, `$`).
static llvm::StringRef identifierAt(llvm::StringRef text, size_t pos) {
  size_t end = pos;
  while (end < text.size() &&
         (llvm::isAlnum(text[end]) || llvm::is_contained("_.$", text[end])))
    ++end;
  return text.slice(pos, end);
}

std::optional<InputViolation> tessel::checkInputLimits(llvm::StringRef text) {
  if (text.size() > kMaxInputBytes)
    return InputViolation{0, llvm::formatv("the input has {0} bytes; at most "
                                           "{1} are accepted",
                                           text.size(), kMaxInputBytes)};
  unsigned depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') { // a string: skip to its closing quote
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      continue;
    }
    if (c == '/' && text.substr(i).starts_with("//")) {
      i = text.find('\n', i);
      if (i == llvm::StringRef::npos)
        break;
      continue;
    }
    if (llvm::is_contained("([{<", c)) {
      if (++depth > kMaxInputNesting)
        return InputViolation{
            i, llvm::formatv("brackets nest deeper than {0} levels",
                             kMaxInputNesting)};
      if (c == '<' && i >= 5 && text.slice(i - 5, i) == "array" &&
          (i == 5 || !llvm::isAlnum(text[i - 6]))) {
        size_t start = text.find_first_not_of(" \t\r\n", i + 1);
        llvm::StringRef type = identifierAt(text, start);
        if (start != llvm::StringRef::npos && !type.empty() &&
            !isDenseArrayElementType(type))
          return InputViolation{
              start, llvm::formatv("a dense array's elements must be integers "
                                   "or floats, not '{0}'",
                                   type)};
      }
    } else if (llvm::is_contained(")]}", c) ||
               (c == '>' && (i == 0 || text[i - 1] != '-'))) {
      if (depth)
        --depth;
    }
  }
  return std::nullopt;
}

bool tessel::checkInputLimits(const llvm::SourceMgr &sourceMgr,
                              llvm::raw_ostream &os) {
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  std::optional<InputViolation> violation =
      checkInputLimits(buffer->getBuffer());
  if (!violation)
    return true;
  sourceMgr.PrintMessage(
      os,
      llvm::SMLoc::getFromPointer(buffer->getBufferStart() + violation->offset),
      llvm::SourceMgr::DK_Error, violation->message);
  return false;
}
