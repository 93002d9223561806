//===- tessel-gen.cpp - Print problem-level (L0) IR -------------*- C++ -*-===//
//
//   tessel-gen matmul -m 4096 -n 4096 -k 4096 -t bf16 --transpose-b
//   tessel-gen attention -b 2 -h 32 --kv-heads 8 --seq-q 1024 --seq-kv 1024
//                        -d 128 --causal -t f16
//
// The IR is built with the dialect's builders and verified before it is
// printed, so what tessel-gen prints always parses.
//
//===----------------------------------------------------------------------===//

#include "tessel/Dialect/Tessel/IR/TesselOps.h"
#include "tessel/Problems/Problems.h"
#include "tessel/Support/Version.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace tessel;
namespace cl = llvm::cl;

static cl::SubCommand matmulCommand("matmul",
                                    "C = epilogue(A x B) (tessel.matmul)");
static cl::SubCommand
    attentionCommand("attention", "FlashAttention forward (tessel.attention)");

// Shared options.
static cl::opt<std::string> elementType(
    "t",
    cl::desc(
        "Input element type: f32, f16, bf16, i8, f8E4M3FNUZ, "
        "f8E5M2FNUZ, f8E4M3FN, f8E5M2 (fp8/bf8: the FNUZ pair; default f16)"),
    cl::init("f16"), cl::sub(matmulCommand), cl::sub(attentionCommand));
static cl::list<std::string>
    dynamicDims("dynamic",
                cl::desc("Sizes that are kernel arguments: m,n,k,batch "
                         "(matmul) or seq-q,seq-kv,batch (attention)"),
                cl::CommaSeparated, cl::sub(matmulCommand),
                cl::sub(attentionCommand));
static cl::opt<std::string> kernelName(
    "name", cl::desc("Kernel (function) name (default: matmul or attention)"),
    cl::init(""), cl::sub(matmulCommand), cl::sub(attentionCommand));
static cl::opt<std::string>
    outputFile("o", cl::desc("Output file (default -: stdout)"), cl::init("-"),
               cl::sub(matmulCommand), cl::sub(attentionCommand));

// matmul.
static cl::opt<int64_t> sizeM("m", cl::desc("Rows of A and C (default 1024)"),
                              cl::init(1024), cl::sub(matmulCommand));
static cl::opt<int64_t> sizeN("n",
                              cl::desc("Columns of B and C (default 1024)"),
                              cl::init(1024), cl::sub(matmulCommand));
static cl::opt<int64_t> sizeK("k", cl::desc("Reduction size (default 1024)"),
                              cl::init(1024), cl::sub(matmulCommand));
static cl::opt<int64_t> batch("batch",
                              cl::desc("Batch count (default 0: rank-2 "
                                       "operands)"),
                              cl::init(0), cl::sub(matmulCommand));
static cl::opt<std::string>
    bElementType("b-type",
                 cl::desc("Element type of B when it differs from A (fp8 "
                          "pairs of one family)"),
                 cl::init(""), cl::sub(matmulCommand));
static cl::opt<std::string> outElementType(
    "out-type",
    cl::desc("Element type of C (default: the input type; i32 for i8; f32 for "
             "fp8)"),
    cl::init(""), cl::sub(matmulCommand), cl::sub(attentionCommand));
static cl::opt<bool>
    transposeA("transpose-a", cl::desc("A stored column-major (M contiguous)"),
               cl::sub(matmulCommand));
static cl::opt<bool> transposeB("transpose-b",
                                cl::desc("B stored as N x K (K contiguous)"),
                                cl::sub(matmulCommand));
static cl::opt<bool>
    transposeC("transpose-c", cl::desc("C stored column-major (M contiguous)"),
               cl::sub(matmulCommand));
static cl::opt<std::string> bias("bias",
                                 cl::desc("Fused bias: none, m (one per row) "
                                          "or n (one per column)"),
                                 cl::init("none"), cl::sub(matmulCommand));
static cl::opt<bool> residual("residual",
                              cl::desc("Fuse the addition of a residual M x N "
                                       "tensor"),
                              cl::sub(matmulCommand));
static cl::opt<std::string>
    activation("activation",
               cl::desc("Fused activation: none (default), relu, gelu, silu"),
               cl::init("none"), cl::sub(matmulCommand));
static cl::opt<bool>
    alpha("alpha", cl::desc("Scale the product by a scalar f32 argument"),
          cl::sub(matmulCommand));
static cl::opt<std::string> scaleA(
    "scale-a",
    cl::desc("Dequantization scale of A (torch._scaled_mm's scale_a): none, "
             "tensor (one f32) or row (one f32 per row)"),
    cl::init("none"), cl::sub(matmulCommand));
static cl::opt<std::string> scaleB(
    "scale-b",
    cl::desc("Dequantization scale of B (scale_b): none, tensor (one f32) or "
             "column (one f32 per column)"),
    cl::init("none"), cl::sub(matmulCommand));

// attention.
static cl::opt<int64_t> attnBatch("b", cl::desc("Batch size (default 1)"),
                                  cl::init(1), cl::sub(attentionCommand));
static cl::opt<int64_t> heads("h", cl::desc("Query heads (default 8)"),
                              cl::init(8), cl::sub(attentionCommand));
static cl::opt<int64_t> kvHeads("kv-heads",
                                cl::desc("Key/value heads (default: -h)"),
                                cl::init(0), cl::sub(attentionCommand));
static cl::opt<int64_t> seqQ("seq-q", cl::desc("Query length (default 1024)"),
                             cl::init(1024), cl::sub(attentionCommand));
static cl::opt<int64_t> seqKV("seq-kv",
                              cl::desc("Key/value length (default 1024)"),
                              cl::init(1024), cl::sub(attentionCommand));
static cl::opt<int64_t> headDim("d", cl::desc("Head dimension (default 128)"),
                                cl::init(128), cl::sub(attentionCommand));
static cl::opt<int64_t>
    headDimV("head-dim-v",
             cl::desc("Head dimension of V and O (default: -d; e.g. -d 192 "
                      "--head-dim-v 128)"),
             cl::init(0), cl::sub(attentionCommand));
static cl::opt<bool> causal("causal", cl::desc("Causal mask"),
                            cl::sub(attentionCommand));
static cl::opt<float> scale("scale",
                            cl::desc("Softmax scale (default 1/sqrt(d))"),
                            cl::init(0.0f), cl::sub(attentionCommand));
static cl::opt<bool> withLse("lse", cl::desc("Also output the logsumexp"),
                             cl::sub(attentionCommand));
static cl::list<int64_t> window(
    "window",
    cl::desc("Local attention: keys left,right of each query's position that "
             "it sees (-1: unbounded), as FlashAttention's window_size"),
    cl::CommaSeparated, cl::sub(attentionCommand));
static cl::opt<bool> withSinks(
    "sinks",
    cl::desc("Attention sinks: one f32 logit per query head (an argument "
             "after O and the lse) that joins each row's softmax "
             "denominator"),
    cl::sub(attentionCommand));
static cl::opt<bool> withDescale(
    "descale",
    cl::desc("8-bit inputs: per-tensor f32 dequantization scales of q, k and "
             "v (three memref<1xf32> arguments, last), as "
             "FlashAttention-3's descale_q/k/v"),
    cl::sub(attentionCommand));
static cl::opt<bool> backward(
    "backward",
    cl::desc("The backward pass (tessel.attention_grad): arguments q, k, v, "
             "o, do and the forward's logsumexp, then dq, dk, dv (of "
             "--out-type)"),
    cl::sub(attentionCommand));

static cl::opt<bool> varlen(
    "varlen",
    cl::desc("Variable-length (packed) sequences, as flash_attn_varlen_func: "
             "q, k, v, o as [1, heads, total, head_dim] views of "
             "(total, heads, head_dim) arrays, then cu_seqlens_q, "
             "cu_seqlens_k (i32, batch + 1) and max_seqlen_q (index)"),
    cl::sub(attentionCommand));

static cl::opt<int64_t> pageSize(
    "page-size",
    cl::desc("A paged KV cache (vLLM's) with pages of this many keys (16, "
             "32, 64, 128): k and v are [pages, page_size, kv_heads, "
             "head_dim] caches, then block_table [batch, pages per sequence] "
             "and context_lens [batch] (i32) follow"),
    cl::init(0), cl::sub(attentionCommand));

static cl::opt<int64_t>
    numPages("num-pages",
             cl::desc("With --page-size: the cache's pages, static (default: a "
                      "run-time count)"),
             cl::init(0), cl::sub(attentionCommand));

static cl::opt<std::string> configText(
    "config",
    cl::desc("A #tessel.config<...> for the kernel (default: the compiler "
             "chooses one)"),
    cl::init(""), cl::sub(matmulCommand), cl::sub(attentionCommand));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "tessel-gen: error: " << message << "\n";
  return 1;
}

/// The problem the command line describes.
static MatmulProblem matmulFromCommandLine() {
  MatmulProblem problem;
  if (!kernelName.empty())
    problem.name = kernelName;
  problem.m = sizeM;
  problem.n = sizeN;
  problem.k = sizeK;
  problem.batch = batch;
  problem.dynamic.assign(dynamicDims.begin(), dynamicDims.end());
  problem.aType = elementType;
  problem.bType = bElementType;
  problem.cType = outElementType;
  problem.transposeA = transposeA;
  problem.transposeB = transposeB;
  problem.transposeC = transposeC;
  problem.alpha = alpha;
  problem.scaleA = scaleA;
  problem.scaleB = scaleB;
  problem.bias = bias;
  problem.residual = residual;
  problem.activation = activation;
  problem.config = configText;
  return problem;
}

static AttentionProblem attentionFromCommandLine() {
  AttentionProblem problem;
  if (!kernelName.empty())
    problem.name = kernelName;
  problem.batch = attnBatch;
  problem.heads = heads;
  problem.kvHeads = kvHeads;
  problem.seqQ = seqQ;
  problem.seqKV = seqKV;
  problem.headDim = headDim;
  problem.headDimV = headDimV;
  problem.dynamic.assign(dynamicDims.begin(), dynamicDims.end());
  problem.type = elementType;
  problem.outType = outElementType;
  problem.causal = causal;
  if (scale.getNumOccurrences())
    problem.scale = scale;
  problem.lse = withLse;
  problem.window.assign(window.begin(), window.end());
  problem.sinks = withSinks;
  problem.descale = withDescale;
  problem.backward = backward;
  problem.varlen = varlen;
  problem.pageSize = pageSize;
  problem.numPages = numPages;
  problem.config = configText;
  return problem;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  tessel::registerVersionPrinter();
  // The subcommands list their own options; the top level lists no LLVM
  // ones.
  cl::HideUnrelatedOptions(llvm::ArrayRef<const cl::OptionCategory *>{});
  cl::ParseCommandLineOptions(argc, argv,
                              "Tessel problem generator: prints L0 IR\n");
  if (!matmulCommand && !attentionCommand)
    return fail("expected a problem: tessel-gen matmul ... or tessel-gen "
                "attention ... (see --help)");

  MLIRContext context;
  context.loadDialect<TesselDialect, func::FuncDialect, arith::ArithDialect,
                      math::MathDialect, memref::MemRefDialect>();
  // Verifier messages go to stderr like any tool diagnostic.
  ScopedDiagnosticHandler diagnostics(&context, [](Diagnostic &diag) {
    llvm::errs() << "tessel-gen: "
                 << (diag.getSeverity() == DiagnosticSeverity::Error ? "error: "
                                                                     : "note: ")
                 << diag << "\n";
    return success();
  });
  Location loc = UnknownLoc::get(&context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  OpBuilder builder = OpBuilder::atBlockBegin(module->getBody());
  FailureOr<func::FuncOp> func =
      matmulCommand ? buildProblem(builder, loc, matmulFromCommandLine())
                    : buildProblem(builder, loc, attentionFromCommandLine());
  if (failed(func) || failed(verify(*module)))
    return 1;

  std::string errorMessage;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFile, &errorMessage);
  if (!output)
    return fail(errorMessage);
  module->print(output->os());
  // A full disk or a closed pipe is a diagnostic, not LLVM's fatal error
  // when the stream is destroyed with a pending error.
  output->os().flush();
  if (std::error_code error = output->os().error()) {
    output->os().clear_error();
    return fail("cannot write '" + outputFile + "': " + error.message());
  }
  output->keep();
  return 0;
}
