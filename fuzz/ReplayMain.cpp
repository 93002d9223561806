//===- ReplayMain.cpp - Run a fuzz target over saved inputs ----*- C++ -*-===//
//
// The main of every `tessel-fuzz-*-replay` program: it feeds each file named
// on the command line (directories are walked recursively) to the harness's
// LLVMFuzzerTestOneInput, as libFuzzer does with a corpus. Built with any
// compiler, it lets the regular test suite replay the seed and regression
// corpora; the libFuzzer build links the same harness with -fsanitize=fuzzer.
//
//===----------------------------------------------------------------------===//

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv)
    __attribute__((weak));

/// The regular files at `path`: itself, or every file below it in name order.
static void collectInputs(const std::string &path,
                          std::vector<std::string> &inputs) {
  if (!llvm::sys::fs::is_directory(path)) {
    inputs.push_back(path);
    return;
  }
  std::error_code ec;
  std::vector<std::string> found;
  for (llvm::sys::fs::recursive_directory_iterator it(path, ec), end;
       it != end && !ec; it.increment(ec))
    if (llvm::sys::fs::is_regular_file(it->path()))
      found.push_back(it->path());
  std::sort(found.begin(), found.end());
  inputs.insert(inputs.end(), found.begin(), found.end());
}

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  std::vector<std::string> inputs;
  for (int i = 1; i < argc; ++i)
    collectInputs(argv[i], inputs);
  for (const std::string &input : inputs) {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
        llvm::MemoryBuffer::getFile(input, /*IsText=*/false);
    if (!file) {
      llvm::errs() << "error: cannot read '" << input
                   << "': " << file.getError().message() << "\n";
      return 1;
    }
    // A copy of exactly the input's size, so that reads past the end are
    // caught by the sanitizers as they would be under libFuzzer.
    std::vector<uint8_t> bytes((*file)->getBufferStart(),
                               (*file)->getBufferEnd());
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  }
  llvm::outs() << "replayed " << inputs.size() << " inputs\n";
  return 0;
}
