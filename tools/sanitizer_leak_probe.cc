// Does compute-sanitizer's leak check see VMM memory? Straight driver API (no vmm-run code): one
// cuMemCreate'd handle mapped and given access, then left alive at exit on purpose, beside one
// cuMemAlloc left alive as the control. Run under
//   compute-sanitizer --tool memcheck --leak-check full ./sanitizer_leak_probe
// the control must be reported as a leak; whether the VMM handle is too says how much a clean leak
// check over vmm-run's VMM paths proves (docs/limits-and-safety.md). Not built by CMake; on a GPU
// machine:
//   g++ -O1 tools/sanitizer_leak_probe.cc -I/usr/local/cuda/include -L/usr/local/cuda/lib64/stubs \
//       -lcuda -o sanitizer_leak_probe
#include <cuda.h>

#include <cstdio>

#define CHECK(x)                                  \
  do {                                            \
    CUresult r = (x);                             \
    if (r != CUDA_SUCCESS) {                      \
      std::printf("%s failed: %d\n", #x, (int)r); \
      return 1;                                   \
    }                                             \
  } while (0)

int main() {
  CHECK(cuInit(0));
  CUdevice dev;
  CHECK(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK(cuCtxSetCurrent(ctx));
  const size_t size = 2u << 20;
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  CUmemGenericAllocationHandle handle;
  CHECK(cuMemCreate(&handle, size, &prop, 0));
  CUdeviceptr va;
  CHECK(cuMemAddressReserve(&va, size, 0, 0, 0));
  CHECK(cuMemMap(va, size, 0, handle, 0));
  CUmemAccessDesc access = {};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CHECK(cuMemSetAccess(va, size, &access, 1));
  CUdeviceptr plain;
  CHECK(cuMemAlloc(&plain, size));  // the control
  std::printf("left alive: VMM handle mapped at 0x%llx (2 MiB), cuMemAlloc at 0x%llx (2 MiB)\n",
              (unsigned long long)va, (unsigned long long)plain);
  return 0;
}
