/*===- tessel-capi-test.c - Exercises the C API end to end
-----------------===*\
|*                                                                            *|
|* tessel-capi-test CACHE_DIR: compiles an f32 matmul through libTesselC,     *|
|* inspects the code object, runs it (HIP if present, else the emulator)      *|
|* against a host reference, and checks the memory and disk caches and the    *|
|* error path. Prints what it checked; exits 1 on any failure.                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "tessel-c/Tessel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define M 45
#define N 38
#define K 27

static const char *kMatmul =
    "func.func @mm(%a: memref<45x27xf32>, %b: memref<27x38xf32>,\n"
    "              %c: memref<45x38xf32>) {\n"
    "  tessel.matmul ins(%a, %b : memref<45x27xf32>, memref<27x38xf32>)\n"
    "                outs(%c : memref<45x38xf32>)\n"
    "  return\n"
    "}\n";

static int failures = 0;

static void check(int ok, const char *what) {
  printf("%s: %s\n", ok ? "ok" : "FAILED", what);
  if (!ok)
    failures++;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: tessel-capi-test CACHE_DIR\n");
    return 2;
  }
  check(tesselGetVersionNumber() == TESSEL_VERSION,
        "the library's version is the header's");
  printf("version: %s\n", tesselGetVersion());
  TesselCompiler *compiler = tesselCompilerCreate(argv[1]);
  TesselModule *module = tesselCompile(compiler, kMatmul, "gfx942");
  if (!module) {
    printf("compile failed: %s\n", tesselGetLastError());
    return 1;
  }
  size_t size = 0;
  const char *code = (const char *)tesselModuleGetCodeObject(module, &size);
  check(size > 4 && memcmp(code + 1, "ELF", 3) == 0, "code object is ELF");
  check(tesselModuleGetNumKernels(module) == 1, "one kernel");
  printf("kernel %s, %u lanes, %llu LDS bytes\n",
         tesselModuleGetKernelName(module, 0),
         tesselModuleGetKernelBlockSize(module, 0),
         (unsigned long long)tesselModuleGetKernelLdsBytes(module, 0));
  check(strstr(tesselModuleGetReport(module), "\"vgpr_count\"") != NULL,
        "report has register counts");
  const char *assembly = tesselModuleGetAssembly(module);
  check(assembly && strstr(assembly, "v_mfma_f32") != NULL,
        "assembly on request uses MFMA");

  static float a[M * K], b[K * N], c[M * N];
  for (int i = 0; i < M * K; ++i)
    a[i] = (float)((i * 7) % 13) / 8.0f - 0.75f;
  for (int i = 0; i < K * N; ++i)
    b[i] = (float)((i * 5) % 11) / 4.0f - 1.25f;
  int64_t shapeA[2] = {M, K}, shapeB[2] = {K, N}, shapeC[2] = {M, N};
  TesselBuffer buffers[3] = {{a, sizeof(a), 2, shapeA},
                             {b, sizeof(b), 2, shapeB},
                             {c, sizeof(c), 2, shapeC}};
  TesselProblemSizes sizes = {M, N, 0, 0, 0};
  if (!tesselHipAvailable())
    printf("no GPU (%s): running on the emulator\n", tesselGetLastError());
  int status = tesselRun(module, "mm", &sizes, buffers, 3, TESSEL_DEVICE_AUTO);
  if (status)
    printf("run failed: %s\n", tesselGetLastError());
  check(status == 0, "run");
  double maxError = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double expected = 0;
      for (int p = 0; p < K; ++p)
        expected += (double)a[i * K + p] * b[p * N + j];
      double error = fabs(c[i * N + j] - expected);
      if (error > maxError)
        maxError = error;
    }
  printf("max abs error %g\n", maxError);
  check(maxError == 0, "result equals the host reference");

  /* Too few buffers is an error, not a crash. */
  check(tesselRun(module, "mm", &sizes, buffers, 2, TESSEL_DEVICE_EMULATOR) !=
            0,
        "missing argument rejected");
  printf("error: %s\n", tesselGetLastError());
  check(tesselRun(module, "mm", &sizes, buffers, 3, (TesselDevice)7) != 0,
        "unknown device rejected");

  TesselModule *again = tesselCompile(compiler, kMatmul, "gfx942");
  TesselCacheStats stats;
  tesselCompilerGetCacheStats(compiler, &stats);
  check(again && stats.memory_hits == 1 && stats.misses == 1,
        "second compile served from memory");
  tesselModuleDestroy(again);

  TesselCompiler *fresh = tesselCompilerCreate(argv[1]);
  TesselModule *fromDisk = tesselCompile(fresh, kMatmul, "gfx942");
  tesselCompilerGetCacheStats(fresh, &stats);
  check(fromDisk && stats.disk_hits == 1 && stats.misses == 0,
        "a new compiler reads the disk cache");
  tesselModuleDestroy(fromDisk);

  TesselModule *bad =
      tesselCompile(fresh, "func.func @f() {\n  tessel.nope\n}\n", "gfx942");
  check(bad == NULL, "invalid IR is an error");
  printf("error: %s\n", tesselGetLastError());
  check(tesselCompile(fresh, kMatmul, "gfx123") == NULL, "unknown chip");
  printf("error: %s\n", tesselGetLastError());

  /* Problem descriptions: a bf16 GEMM with bias and GELU, and the IR a
   * decode attention stands for. */
  TesselMatmulProblem gemm;
  memset(&gemm, 0, sizeof(gemm));
  gemm.m = 100;
  gemm.n = 64;
  gemm.k = 48;
  gemm.a_type = "bf16";
  gemm.transpose_b = 1;
  gemm.bias = "n";
  gemm.activation = "gelu";
  TesselModule *described = tesselCompileMatmul(fresh, &gemm, "gfx942");
  check(described && tesselModuleGetNumKernels(described) == 1 &&
            strcmp(tesselModuleGetKernelName(described, 0), "matmul") == 0,
        "matmul problem description compiles");
  tesselModuleDestroy(described);
  /* A scaled fp8 GEMM (row-wise A, per-tensor B scales), M at run time, a
   * fixed config. */
  TesselMatmulProblem scaled;
  memset(&scaled, 0, sizeof(scaled));
  scaled.m = 64;
  scaled.n = 64;
  scaled.k = 128;
  scaled.a_type = "fp8";
  scaled.c_type = "bf16";
  scaled.transpose_b = 1;
  scaled.scale_a = "row";
  scaled.scale_b = "tensor";
  scaled.dynamic = "m";
  scaled.config = "#tessel.config<tile = [32, 32, 64], waves = [1, 1], "
                  "stages = 2, instr = \"v_mfma_f32_32x32x16_fp8_fp8\">";
  char *ir = tesselMatmulIR(&scaled);
  check(ir && strstr(ir, "%arg0: memref<?x128xf8E4M3FNUZ>") &&
            strstr(ir, "memref<?x1xf32>, memref<1xf32>") &&
            strstr(ir, "v_mfma_f32_32x32x16_fp8_fp8"),
        "scaled fp8 problem with a dynamic M and a config prints its IR");
  tesselFreeString(ir);
  scaled.dynamic = "m,q";
  check(tesselMatmulIR(&scaled) == NULL, "an unknown dynamic size");
  printf("error: %s\n", tesselGetLastError());
  TesselAttentionProblem decode;
  memset(&decode, 0, sizeof(decode));
  decode.batch = 1;
  decode.heads = 8;
  decode.kv_heads = 2;
  decode.seq_q = 1;
  decode.seq_kv = 4096;
  decode.head_dim = 128;
  decode.causal = 1;
  ir = tesselAttentionIR(&decode);
  check(ir && strstr(ir, "tessel.attention") && strstr(ir, "causal"),
        "attention problem prints its IR");
  tesselFreeString(ir);
  decode.has_window = 1;
  decode.window_left = 1024;
  decode.window_right = -1;
  decode.sinks = 1;
  decode.head_dim_v = 64;
  ir = tesselAttentionIR(&decode);
  check(ir && strstr(ir, "window = array<i64: 1024, -1>") &&
            strstr(ir, "sinks(%arg4 : memref<8xf32>)") &&
            strstr(ir, "outs(%arg3 : memref<1x8x1x64xf16>)"),
        "attention problem with a window, sinks and a V head dim prints its "
        "IR");
  tesselFreeString(ir);
  decode.has_window = 0;
  decode.sinks = 0;
  decode.type = "f8E4M3FN";
  decode.descale = 1;
  ir = tesselAttentionIR(&decode);
  check(ir && strstr(ir, "outs(%arg3 : memref<1x8x1x64xbf16>) descale(%arg4, "
                         "%arg5, %arg6 : memref<1xf32>, memref<1xf32>, "
                         "memref<1xf32>)"),
        "8-bit attention with descales prints its IR");
  tesselFreeString(ir);
  decode.type = NULL;
  decode.descale = 0;
  decode.has_window = 1;
  decode.sinks = 1;
  decode.window_left = -3;
  check(tesselAttentionIR(&decode) == NULL, "a window bound below -1");
  printf("error: %s\n", tesselGetLastError());
  decode.has_window = 0;
  decode.sinks = 0;
  decode.head_dim_v = 0;
  TesselModule *plan = tesselCompileAttention(fresh, &decode, "gfx942");
  check(plan && tesselModuleGetNumKernels(plan) == 1,
        "decode attention compiles to one split-KV kernel");
  tesselModuleDestroy(plan);

  /* The backward: a plan of two kernels. With q = k = 0 every key has
   * probability 1/16; v = o = do = 1 makes dP equal D, so dS, dq and dk
   * are 0, and dv sums 1/16 over 8 queries of each of the 2 query heads
   * that share the key/value head: exactly 1. */
  TesselAttentionProblem backward;
  memset(&backward, 0, sizeof(backward));
  backward.batch = 1;
  backward.heads = 2;
  backward.kv_heads = 1;
  backward.seq_q = 8;
  backward.seq_kv = 16;
  backward.head_dim = 32;
  backward.backward = 1;
  TesselModule *grad = tesselCompileAttention(fresh, &backward, "gfx942");
  check(grad && tesselModuleGetNumKernels(grad) == 2 &&
            tesselModuleGetNumArguments(grad, "attention") == 9,
        "attention backward compiles to a plan of two kernels");
  enum { Q = 2 * 8 * 32, KV = 16 * 32, S = 2 * 8 };
  static uint16_t gq[Q], gk[KV], gv[KV], go[Q], gdo[Q], gdq[Q], gdk[KV],
      gdv[KV];
  static float glse[S];
  for (int i = 0; i < Q; ++i)
    go[i] = gdo[i] = 0x3C00; /* 1.0 in f16 */
  for (int i = 0; i < KV; ++i)
    gv[i] = 0x3C00;
  for (int i = 0; i < S; ++i)
    glse[i] = logf(16.0f);
  int64_t qShape[4] = {1, 2, 8, 32}, kvShape[4] = {1, 1, 16, 32},
          lseShape[3] = {1, 2, 8};
  TesselBuffer gradBuffers[9] = {
      {gq, sizeof(gq), 4, qShape},   {gk, sizeof(gk), 4, kvShape},
      {gv, sizeof(gv), 4, kvShape},  {go, sizeof(go), 4, qShape},
      {gdo, sizeof(gdo), 4, qShape}, {glse, sizeof(glse), 3, lseShape},
      {gdq, sizeof(gdq), 4, qShape}, {gdk, sizeof(gdk), 4, kvShape},
      {gdv, sizeof(gdv), 4, kvShape}};
  check(grad && tesselRun(grad, "attention", NULL, gradBuffers, 9,
                          TESSEL_DEVICE_EMULATOR) == 0,
        "attention backward runs");
  int gradOk = 1;
  for (int i = 0; i < Q; ++i)
    gradOk &= gdq[i] == 0 || gdq[i] == 0x8000;
  for (int i = 0; i < KV; ++i)
    gradOk &= (gdk[i] == 0 || gdk[i] == 0x8000) && gdv[i] == 0x3C00;
  check(gradOk, "attention backward gradients: dq = dk = 0, dv = 1");
  tesselModuleDestroy(grad);
  /* Packed (varlen) sequences and a paged KV cache. */
  backward.varlen = 1;
  ir = tesselAttentionIR(&backward);
  check(ir && strstr(ir, "tessel.attention_grad") &&
            strstr(ir, "varlen(%arg9, %arg10, %arg11, %arg12 : "
                       "memref<2xi32>, memref<2xi32>)"),
        "varlen attention backward prints its IR");
  tesselFreeString(ir);
  backward.backward = 0;
  ir = tesselAttentionIR(&backward);
  check(ir && strstr(ir, "varlen(%arg4, %arg5, %arg6 : memref<2xi32>, "
                         "memref<2xi32>)"),
        "varlen attention prints its IR");
  tesselFreeString(ir);
  backward.varlen = 0;
  backward.page_size = 16;
  ir = tesselAttentionIR(&backward);
  check(ir &&
            strstr(ir, "paged(%arg4, %arg5 : memref<1x1xi32>, "
                       "memref<1xi32>)") &&
            strstr(ir, "memref<?x1x16x32xf16, strided<[512, 32, 32, 1]>>"),
        "paged attention prints its IR");
  tesselFreeString(ir);
  gemm.a_type = "f64";
  check(tesselCompileMatmul(fresh, &gemm, "gfx942") == NULL,
        "bad problem description");
  printf("error: %s\n", tesselGetLastError());

  /* Bad input of every kind is an error message, never a crash. */
  check(tesselRun(module, "mm", NULL, buffers, 3, TESSEL_DEVICE_EMULATOR) == 0,
        "sizes may be NULL: they come from the arrays");
  TesselProblemSizes negative = {-5, N, 0, 0, 0};
  check(tesselRun(module, "mm", &negative, buffers, 3,
                  TESSEL_DEVICE_EMULATOR) != 0,
        "negative sizes rejected");
  printf("error: %s\n", tesselGetLastError());
  TesselProblemSizes huge = {(int64_t)1 << 33, N, 0, 0, 0};
  check(tesselRun(module, "mm", &huge, buffers, 3, TESSEL_DEVICE_EMULATOR) != 0,
        "sizes the arrays do not have rejected");
  printf("error: %s\n", tesselGetLastError());
  TesselBuffer badRank[3] = {{a, sizeof(a), -2, shapeA},
                             {b, sizeof(b), 2, shapeB},
                             {c, sizeof(c), 2, shapeC}};
  check(tesselRun(module, "mm", NULL, badRank, 3, TESSEL_DEVICE_EMULATOR) != 0,
        "rank -2 rejected");
  printf("error: %s\n", tesselGetLastError());
  TesselBuffer noData[3] = {{NULL, sizeof(a), 2, shapeA},
                            {b, sizeof(b), 2, NULL},
                            {c, sizeof(c), 2, shapeC}};
  check(tesselRun(module, "mm", NULL, noData, 3, TESSEL_DEVICE_EMULATOR) != 0,
        "NULL data rejected");
  printf("error: %s\n", tesselGetLastError());
  check(tesselRun(module, "mm", NULL, NULL, 3, TESSEL_DEVICE_EMULATOR) != 0,
        "NULL buffers rejected");
  check(tesselRun(NULL, "mm", NULL, buffers, 3, TESSEL_DEVICE_EMULATOR) != 0,
        "NULL module rejected");
  printf("error: %s\n", tesselGetLastError());
  check(tesselModuleGetCodeObject(NULL, &size) == NULL && size == 0 &&
            tesselModuleGetReport(NULL) == NULL &&
            tesselModuleGetAssembly(NULL) == NULL &&
            tesselModuleGetNumKernels(NULL) == 0 &&
            tesselModuleGetKernelName(NULL, 0) == NULL &&
            tesselModuleGetKernelName(module, 99) == NULL &&
            tesselModuleGetKernelBlockSize(NULL, 0) == 0 &&
            tesselModuleGetKernelLdsBytes(NULL, 0) == 0 &&
            tesselModuleGetCodeObject(module, NULL) == NULL,
        "getters take NULL handles and bad indices");
  TesselCacheStats zeroed;
  tesselCompilerGetCacheStats(NULL, &zeroed);
  tesselCompilerGetCacheStats(fresh, NULL);
  check(zeroed.misses == 0, "cache stats of a NULL compiler");
  check(tesselCompile(NULL, kMatmul, "gfx942") == NULL, "NULL compiler");
  printf("error: %s\n", tesselGetLastError());

  /* Arguments describe themselves: C is the output. */
  TesselArgumentInfo info;
  check(tesselModuleGetNumArguments(module, "mm") == 3 &&
            tesselModuleGetArgument(module, "mm", 2, &info) == 0 &&
            info.is_array && info.written && info.rank == 2 &&
            info.shape[0] == M && strcmp(info.element_type, "f32") == 0 &&
            tesselModuleGetArgument(module, "mm", 0, &info) == 0 &&
            !info.written,
        "argument descriptions");
  check(tesselModuleGetNumArguments(module, "nope") == -1,
        "unknown problem in argument query");
  printf("error: %s\n", tesselGetLastError());

  /* A crash inside the upstream MLIR parser is caught: this process goes on. */
  TesselModule *crashing = tesselCompile(
      fresh, "func.func @f() attributes {a = array<index: 1>} { return }\n",
      "gfx942");
  check(crashing == NULL, "an input that crashes the upstream parser");
  printf("error: %s\n", tesselGetLastError());

  tesselCompilerDestroy(fresh);
  tesselModuleDestroy(module);
  tesselCompilerDestroy(compiler);
  /* Destroying twice is an error message, not a double free. */
  tesselModuleDestroy(module);
  printf("error: %s\n", tesselGetLastError());
  tesselCompilerDestroy(compiler);
  printf("error: %s\n", tesselGetLastError());
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
