/* Compiles a matmul problem through the installed C API, runs it on the
 * emulator and checks it against a loop on the host. */
#include "tessel-c/Tessel.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  if (tesselGetVersionNumber() != TESSEL_VERSION) {
    printf("FAIL: header %d, library %d\n", TESSEL_VERSION,
           tesselGetVersionNumber());
    return 1;
  }
  printf("Tessel %s\n", tesselGetVersion());
  TesselCompiler *compiler = tesselCompilerCreate("");
  TesselMatmulProblem problem;
  memset(&problem, 0, sizeof(problem));
  problem.m = 40;
  problem.n = 24;
  problem.k = 16;
  problem.a_type = "f32";
  TesselModule *module = tesselCompileMatmul(compiler, &problem, "gfx942");
  if (!module) {
    printf("FAIL: %s\n", tesselGetLastError());
    return 1;
  }
  enum { M = 40, N = 24, K = 16 };
  static float a[M * K], b[K * N], c[M * N];
  for (int i = 0; i < M * K; ++i)
    a[i] = (float)(i % 7) - 3.0f;
  for (int i = 0; i < K * N; ++i)
    b[i] = (float)(i % 5) - 2.0f;
  int64_t shapeA[2] = {M, K}, shapeB[2] = {K, N}, shapeC[2] = {M, N};
  int64_t strideA[2] = {K, 1}, strideB[2] = {N, 1}, strideC[2] = {N, 1};
  TesselBuffer buffers[3] = {{a, sizeof(a), 2, shapeA, strideA},
                             {b, sizeof(b), 2, shapeB, strideB},
                             {c, sizeof(c), 2, shapeC, strideC}};
  if (tesselRun(module, "matmul", NULL, buffers, 3, TESSEL_DEVICE_EMULATOR)) {
    printf("FAIL: %s\n", tesselGetLastError());
    return 1;
  }
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float expected = 0;
      for (int k = 0; k < K; ++k)
        expected += a[i * K + k] * b[k * N + j];
      if (fabsf(c[i * N + j] - expected) > 0) {
        printf("FAIL: c[%d][%d] = %g, expected %g\n", i, j, c[i * N + j],
               expected);
        return 1;
      }
    }
  printf("PASS: %s on the emulator matches the host\n",
         tesselModuleGetKernelName(module, 0));
  tesselModuleDestroy(module);
  tesselCompilerDestroy(compiler);
  return 0;
}
