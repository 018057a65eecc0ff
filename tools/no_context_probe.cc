// Which driver calls need a current context? A host thread that never made one current (a worker of
// a thread pool: HAMi-core#172, LMCache#5168 met CUDA_ERROR_INVALID_CONTEXT there) calls each VMM
// call and a few neighbours, straight driver API (no vmm-run code), and prints one line per call:
//   <mode> <call> <result code>
// Modes: `retained` (the process's main thread made the primary context current first, as
// vmm-run's does), `fresh` (cuInit only: no context exists in the process). The answers are the
// twin's table (runner/engine/host/context_rules.h) and docs/backends.md's. Not built by CMake; on
// a GPU machine:
//   g++ -O1 -pthread tools/no_context_probe.cc -I/usr/local/cuda/include
//       -L/usr/local/cuda/lib64/stubs -lcuda -o no_context_probe   (one line)
//   ./no_context_probe; ./no_context_probe fresh
#include <cuda.h>

#include <cstdio>
#include <cstring>
#include <thread>

namespace {

const char* Mode = "";

void Report(const char* call, CUresult r) {
  const char* name = nullptr;
  cuGetErrorName(r, &name);
  std::printf("%s %s %s\n", Mode, call, name != nullptr ? name : "?");
}

#define PROBE(x) Report(#x, (x))

// Each call in turn on a thread with no current context; later calls use what earlier ones made,
// and a failed maker leaves its result 0 (the next call then reports on a null handle, which the
// line makes plain).
void Worker() {
  CUcontext current = reinterpret_cast<CUcontext>(1);
  PROBE(cuCtxGetCurrent(&current));
  std::printf("%s current_is_null %d\n", Mode, current == nullptr ? 1 : 0);
  CUdevice dev = -1;
  PROBE(cuCtxGetDevice(&dev));
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  size_t gran = 0;
  PROBE(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  if (gran == 0) gran = 2u << 20;
  CUdeviceptr va = 0;
  PROBE(cuMemAddressReserve(&va, gran, 0, 0, 0));
  CUmemGenericAllocationHandle handle = 0;
  PROBE(cuMemCreate(&handle, gran, &prop, 0));
  PROBE(cuMemMap(va, gran, 0, handle, 0));
  CUmemAccessDesc access = {};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  PROBE(cuMemSetAccess(va, gran, &access, 1));
  unsigned long long flags = 0;
  PROBE(cuMemGetAccess(&flags, &prop.location, va));
  CUmemGenericAllocationHandle retained = 0;
  PROBE(cuMemRetainAllocationHandle(&retained, reinterpret_cast<void*>(va)));
  if (retained != 0) cuMemRelease(retained);
  CUmemAllocationProp got = {};
  PROBE(cuMemGetAllocationPropertiesFromHandle(&got, handle));
  int fd = -1;
  PROBE(cuMemExportToShareableHandle(&fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  size_t free_bytes = 0, total_bytes = 0;
  PROBE(cuMemGetInfo(&free_bytes, &total_bytes));
  PROBE(cuMemsetD32(va, 7, gran / 4));
  PROBE(cuCtxSynchronize());
  CUdeviceptr base = 0;
  size_t range = 0;
  PROBE(cuMemGetAddressRange(&base, &range, va));
  PROBE(cuMemUnmap(va, gran));
  PROBE(cuMemRelease(handle));
  PROBE(cuMemAddressFree(va, gran));
}

}  // namespace

int main(int argc, char** argv) {
  const bool fresh = argc > 1 && std::strcmp(argv[1], "fresh") == 0;
  Mode = fresh ? "fresh" : "retained";
  if (cuInit(0) != CUDA_SUCCESS) return 1;
  if (!fresh) {
    CUdevice dev;
    CUcontext ctx;
    if (cuDeviceGet(&dev, 0) != CUDA_SUCCESS) return 1;
    if (cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS) return 1;
    if (cuCtxSetCurrent(ctx) != CUDA_SUCCESS) return 1;
  }
  std::thread worker(Worker);
  worker.join();
  return 0;
}
