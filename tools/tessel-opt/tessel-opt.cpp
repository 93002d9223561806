//===- tessel-opt.cpp - The Tessel optimizer driver -------------*- C++ -*-===//
//
// mlir-opt with the tessel dialect, the Tessel passes and pipelines, and the
// upstream dialects and passes Tessel builds on. The input is checked
// against Tessel's input limits (nesting depth, known upstream parser
// crashes) before MLIR parses it.
//
//===----------------------------------------------------------------------===//

#include "tessel/InitAllDialects.h"
#include "tessel/Support/InputLimits.h"
#include "tessel/Support/Version.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/PrettyStackTrace.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  llvm::setBugReportMsg("PLEASE report this Tessel bug with the input and the "
                        "command line above.\n");
  mlir::DialectRegistry registry;
  tessel::registerAllDialects(registry);
  tessel::registerAllPasses();
  tessel::registerVersionPrinter();
  auto [inputFile, outputFile] = mlir::registerAndParseCLIOptions(
      argc, argv, "Tessel optimizer driver\n", registry);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputFile, outputFile, registry));

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputFile, &error);
  if (!input) {
    llvm::errs() << error << "\n";
    return 1;
  }
  llvm::SourceMgr limits;
  limits.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(input->getBuffer(),
                                       input->getBufferIdentifier()),
      llvm::SMLoc());
  if (!tessel::checkInputLimits(limits, llvm::errs()))
    return 1;
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFile, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (mlir::failed(
          mlir::MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  output->os().flush();
  if (output->os().has_error()) {
    llvm::errs() << "tessel-opt: error: cannot write '" << outputFile
                 << "': " << output->os().error().message() << "\n";
    output->os().clear_error();
    return 1;
  }
  output->keep();
  return 0;
}
