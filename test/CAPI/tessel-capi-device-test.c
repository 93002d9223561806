/*===- tessel-capi-device-test.c - The device-resident C API -------------===*\
|*                                                                            *|
|* Device memory, streams, events and launches on device arrays, on the      *|
|* emulator device (the same calls run on a GPU through HIP), and every      *|
|* misuse answered with an error message instead of a crash.                 *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "tessel-c/Tessel.h"

#include <stdio.h>
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
  if (!ok) {
    printf("  last error: %s\n", tesselGetLastError());
    failures++;
  }
}

/* Prints the last error after a check that expects one. */
static void checkError(int failed, const char *what) {
  check(failed, what);
  printf("error: %s\n", tesselGetLastError());
}

static float a[M * K], b[K * N], c[M * N], expected[M * N];

static int equalsReference(void) {
  for (int i = 0; i < M * N; ++i)
    if (c[i] != expected[i])
      return 0;
  return 1;
}

int main(void) {
  for (int i = 0; i < M * K; ++i)
    a[i] = (float)((i * 7) % 13) / 8.0f - 0.75f;
  for (int i = 0; i < K * N; ++i)
    b[i] = (float)((i * 5) % 11) / 4.0f - 1.25f;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double sum = 0;
      for (int p = 0; p < K; ++p)
        sum += (double)a[i * K + p] * b[p * N + j];
      expected[i * N + j] = (float)sum;
    }

  TesselCompiler *compiler = tesselCompilerCreate("");
  TesselModule *module = tesselCompile(compiler, kMatmul, "gfx942");
  TesselContext *context = tesselContextCreate(TESSEL_DEVICE_EMULATOR);
  if (!module || !context) {
    printf("set-up failed: %s\n", tesselGetLastError());
    return 1;
  }
  check(tesselContextGetDevice(context) == TESSEL_DEVICE_EMULATOR,
        "an emulator context");

  float *deviceA = tesselDeviceAlloc(context, sizeof(a));
  float *deviceB = tesselDeviceAlloc(context, sizeof(b));
  float *deviceC = tesselDeviceAlloc(context, sizeof(c));
  check(deviceA && deviceB && deviceC, "device memory");
  TesselStream *compute = tesselStreamCreate(context);
  TesselStream *readBack = tesselStreamCreate(context);
  TesselEvent *start = tesselEventCreate(context);
  TesselEvent *done = tesselEventCreate(context);
  check(compute && readBack && start && done, "streams and events");

  /* Upload, launch and read back on two streams ordered by an event; the
     host waits once, at the end. */
  int64_t shapeA[2] = {M, K}, shapeB[2] = {K, N}, shapeC[2] = {M, N};
  TesselBuffer buffers[3] = {{deviceA, sizeof(a), 2, shapeA, NULL},
                             {deviceB, sizeof(b), 2, shapeB, NULL},
                             {deviceC, sizeof(c), 2, shapeC, NULL}};
  int status =
      tesselMemcpy(context, deviceA, a, sizeof(a), TESSEL_COPY_HOST_TO_DEVICE,
                   compute) ||
      tesselMemcpy(context, deviceB, b, sizeof(b), TESSEL_COPY_HOST_TO_DEVICE,
                   compute) ||
      tesselEventRecord(start, compute) ||
      tesselLaunch(context, compute, module, "mm", NULL, buffers, 3) ||
      tesselEventRecord(done, compute) ||
      tesselStreamWaitEvent(readBack, done) ||
      tesselMemcpy(context, c, deviceC, sizeof(c), TESSEL_COPY_DEVICE_TO_HOST,
                   readBack) ||
      tesselStreamSynchronize(readBack);
  check(status == 0, "queued upload, launch and read-back");
  check(equalsReference(), "result equals the host reference");
  check(tesselEventQuery(done) == 1, "the launch's event has completed");
  float milliseconds = -1;
  check(tesselEventElapsedTime(&milliseconds, start, done) == 0 &&
            milliseconds > 0,
        "the launch took measurable time");

  /* The default stream: a launch without a stream, a synchronous copy. */
  memset(c, 0, sizeof(c));
  check(tesselMemset(context, deviceC, 0, sizeof(c), NULL) == 0 &&
            tesselLaunch(context, NULL, module, "mm", NULL, buffers, 3) == 0 &&
            tesselMemcpy(context, c, deviceC, sizeof(c),
                         TESSEL_COPY_DEVICE_TO_HOST, NULL) == 0 &&
            tesselContextSynchronize(context) == 0,
        "default stream");
  check(equalsReference(), "default-stream result equals the reference");

  /* A scalar argument: alpha scales the product (by a power of two, so
     the result is exactly half the reference). */
  TesselMatmulProblem scaled;
  memset(&scaled, 0, sizeof(scaled));
  scaled.name = "mm";
  scaled.m = M;
  scaled.n = N;
  scaled.k = K;
  scaled.a_type = "f32";
  scaled.alpha = 1;
  TesselModule *alphaModule = tesselCompileMatmul(compiler, &scaled, "gfx942");
  float alpha = 0.5f;
  double alpha8 = 0.5;
  TesselBuffer withAlpha[4] = {buffers[0], buffers[1], buffers[2],
                               {&alpha, sizeof(alpha), TESSEL_SCALAR_RANK}};
  int halved = alphaModule &&
               tesselLaunch(context, compute, alphaModule, "mm", NULL,
                            withAlpha, 4) == 0 &&
               tesselMemcpy(context, c, deviceC, sizeof(c),
                            TESSEL_COPY_DEVICE_TO_HOST, compute) == 0 &&
               tesselStreamSynchronize(compute) == 0;
  for (int i = 0; halved && i < M * N; ++i)
    halved = c[i] == 0.5f * expected[i];
  check(halved, "an f32 alpha scalar halves the product");
  withAlpha[3].data = &alpha8;
  withAlpha[3].bytes = sizeof(alpha8);
  checkError(tesselLaunch(context, compute, alphaModule, "mm", NULL, withAlpha,
                          4) != 0,
             "an 8-byte scalar for an f32");
  withAlpha[3].bytes = 2;
  checkError(tesselLaunch(context, compute, alphaModule, "mm", NULL, withAlpha,
                          4) != 0,
             "a 2-byte scalar");
  tesselModuleDestroy(alphaModule);

  /* Misuse. */
  TesselBuffer onHost[3] = {buffers[0], buffers[1], {c, sizeof(c), 2, shapeC}};
  checkError(tesselLaunch(context, compute, module, "mm", NULL, onHost, 3) != 0,
             "a host array in a launch");
  checkError(tesselLaunch(context, compute, module, "mm", NULL, buffers, 2) !=
                 0,
             "a missing argument");
  checkError(tesselMemcpy(context, deviceA, a, sizeof(a) + 4,
                          TESSEL_COPY_HOST_TO_DEVICE, NULL) != 0,
             "a copy past the end of an allocation");
  checkError(tesselMemcpy(context, c, a, 4, TESSEL_COPY_DEVICE_TO_HOST,
                          NULL) != 0,
             "host memory as a copy source on the device");
  checkError(tesselMemcpy(context, c, deviceC, 4, (TesselCopyKind)9, NULL) != 0,
             "an unknown copy kind");
  checkError(tesselStreamWrap(context, NULL) == NULL,
             "wrapping a native stream on the emulator");
  TesselContext *other = tesselContextCreate(TESSEL_DEVICE_EMULATOR);
  checkError(tesselLaunch(other, compute, module, "mm", NULL, buffers, 3) != 0,
             "a stream of another context");
  checkError(tesselLaunch(other, NULL, module, "mm", NULL, buffers, 3) != 0,
             "memory of another context");
  checkError(tesselContextCreate((TesselDevice)5) == NULL,
             "an unknown device kind");
  checkError(tesselDeviceFree(context, c) != 0, "freeing host memory");

  /* A stream keeps its context alive. */
  TesselStream *survivor = tesselStreamCreate(other);
  tesselContextDestroy(other);
  check(tesselStreamSynchronize(survivor) == 0,
        "a stream outlives its destroyed context handle");
  tesselStreamDestroy(survivor);
  checkError(tesselStreamSynchronize(survivor) != 0, "a destroyed stream");
  checkError(tesselEventQuery(NULL) == -1, "a NULL event");
  checkError(tesselDeviceAlloc(other, 16) == NULL, "a destroyed context");

  check(tesselDeviceFree(context, deviceA) == 0 &&
            tesselDeviceFree(context, deviceB) == 0 &&
            tesselDeviceFree(context, deviceC) == 0,
        "memory freed");
  checkError(tesselDeviceFree(context, deviceA) != 0, "a double free");
  tesselEventDestroy(start);
  tesselEventDestroy(done);
  tesselStreamDestroy(compute);
  tesselStreamDestroy(readBack);
  tesselContextDestroy(context);
  tesselModuleDestroy(module);
  tesselCompilerDestroy(compiler);
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures != 0;
}
