// A stand-in for the HIP runtime (libamdhip64.so.6) for the tests of timing
// and of the HIP device runtime on a machine without a GPU. Memory is host
// memory, streams run nothing asynchronously (copies happen at once) and
// kernels do not run: each launch advances a clock by a made-up time of
// 1000 / workgroups microseconds (more workgroups, faster), which differs
// from every model's ranking, so a test can tell measured times from
// predictions. The device count comes from FAKE_HIP_DEVICES (default 1);
// FAKE_HIP_LOG=1 prints each stream call on stderr.
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {
double clockMicroseconds = 0;
struct Event {
  double at = 0;
};
int module, function;

void log(const char *call, const void *stream) {
  if (std::getenv("FAKE_HIP_LOG"))
    std::fprintf(stderr, "fake hip: %s on %s stream\n", call,
                 stream ? "a created" : "the null");
}
} // namespace

extern "C" {
int hipGetDeviceCount(int *count) {
  const char *devices = std::getenv("FAKE_HIP_DEVICES");
  *count = devices ? std::atoi(devices) : 1;
  return 0;
}
int hipSetDevice(int) { return 0; }
const char *hipGetErrorString(int) { return "fake HIP error"; }
int hipMalloc(void **address, size_t bytes) {
  *address = std::calloc(bytes, 1);
  return *address ? 0 : 2;
}
int hipFree(void *address) {
  std::free(address);
  return 0;
}
int hipMemcpy(void *to, const void *from, size_t bytes, int) {
  std::memcpy(to, from, bytes);
  return 0;
}
int hipModuleLoadData(void **loaded, const void *) {
  *loaded = &module;
  return 0;
}
int hipModuleUnload(void *) { return 0; }
int hipModuleGetFunction(void **found, void *, const char *) {
  *found = &function;
  return 0;
}
int hipModuleLaunchKernel(void *, unsigned gridX, unsigned gridY,
                          unsigned gridZ, unsigned, unsigned, unsigned,
                          unsigned, void *stream, void **, void **) {
  log("hipModuleLaunchKernel", stream);
  clockMicroseconds += 1000.0 / (double(gridX) * gridY * gridZ);
  return 0;
}
int hipDeviceSynchronize() { return 0; }
int hipEventCreate(void **event) {
  *event = new Event();
  return 0;
}
int hipEventRecord(void *event, void *) {
  static_cast<Event *>(event)->at = clockMicroseconds;
  return 0;
}
int hipEventSynchronize(void *) { return 0; }
int hipEventElapsedTime(float *milliseconds, void *start, void *stop) {
  *milliseconds =
      float((static_cast<Event *>(stop)->at - static_cast<Event *>(start)->at) /
            1000.0);
  return 0;
}
int hipEventDestroy(void *event) {
  delete static_cast<Event *>(event);
  return 0;
}
int hipEventQuery(void *) { return 0; }
int hipStreamCreate(void **stream) {
  *stream = new int(0);
  return 0;
}
int hipStreamDestroy(void *stream) {
  delete static_cast<int *>(stream);
  return 0;
}
int hipStreamSynchronize(void *stream) {
  log("hipStreamSynchronize", stream);
  return 0;
}
int hipStreamWaitEvent(void *stream, void *, unsigned) {
  log("hipStreamWaitEvent", stream);
  return 0;
}
int hipMemcpyAsync(void *to, const void *from, size_t bytes, int,
                   void *stream) {
  log("hipMemcpyAsync", stream);
  std::memcpy(to, from, bytes);
  return 0;
}
int hipMemsetAsync(void *to, int value, size_t bytes, void *stream) {
  log("hipMemsetAsync", stream);
  std::memset(to, value, bytes);
  return 0;
}
}
