// A stand-in for the HIP runtime (libamdhip64.so.6) for the tests of timing
// on a GPU where there is none. Memory is host memory and kernels do not
// run: each launch advances a clock by a made-up time of 1000 / workgroups
// microseconds (more workgroups, faster), which differs from every model's
// ranking, so a test can tell measured times from predictions. The device
// count comes from FAKE_HIP_DEVICES (default 1).
#include <cstdlib>
#include <cstring>

namespace {
double clockMicroseconds = 0;
struct Event {
  double at = 0;
};
int module, function;
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
                          unsigned, void *, void **, void **) {
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
}
