//===- tessel-opt.cpp - The Tessel optimizer driver -------------*- C++ -*-===//
//
// mlir-opt with the tessel dialect, the Tessel passes and pipelines, and the
// upstream dialects and passes Tessel builds on.
//
//===----------------------------------------------------------------------===//

#include "tessel/InitAllDialects.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/PrettyStackTrace.h"

int main(int argc, char **argv) {
  llvm::setBugReportMsg("PLEASE report this Tessel bug with the input and the "
                        "command line above.\n");
  mlir::DialectRegistry registry;
  tessel::registerAllDialects(registry);
  tessel::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Tessel optimizer driver\n", registry));
}
