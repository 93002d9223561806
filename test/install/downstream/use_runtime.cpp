// Compiles an attention problem with the installed C++ JIT
// (tessel::Compiler) and prints what the code object holds.
#include "tessel/Problems/Problems.h"
#include "tessel/Runtime/Compiler.h"
#include "tessel/Support/Version.h"

#include "llvm/Support/raw_ostream.h"

int main() {
  tessel::CacheOptions cache;
  cache.directory = "";
  tessel::Compiler compiler(cache);
  tessel::AttentionProblem problem;
  problem.heads = 4;
  problem.seqQ = problem.seqKV = 256;
  problem.headDim = 64;
  problem.causal = true;
  tessel::CompileOptions options;
  options.chip = "gfx950";
  auto module = compiler.compile(problem, options);
  if (!module) {
    llvm::outs() << "FAIL: " << llvm::toString(module.takeError()) << "\n";
    return 1;
  }
  const tessel::CompiledKernel &kernel = (*module)->kernels.front();
  llvm::outs() << "PASS: Tessel " << tessel::getFullVersion() << " compiled "
               << kernel.name << " for " << (*module)->chip << ": "
               << (*module)->hsaco.size() << " bytes of code object, "
               << kernel.blockSize << " lanes per workgroup\n";
  return 0;
}
