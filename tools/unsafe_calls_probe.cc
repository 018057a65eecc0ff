// What driver 580 does with the two VMM calls vmm-run never sends at top level (#29 item 8), each
// in a child process of its own (a crash there is the answer, not a problem): a release of a
// handle already released (never mapped, and released while mapped), a map of a released handle,
// and a map past the end of a reservation (then what a set_access, a memset through it and the
// unmap return). Straight from the driver API, no vmm-run code. Not built by CMake; on a GPU
// machine:
//   g++ -O1 tools/unsafe_calls_probe.cc -I/usr/local/cuda/include -L/usr/local/cuda/lib64/stubs \
//       -lcuda -o unsafe_calls_probe && ./unsafe_calls_probe
#include <cuda.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstring>

typedef unsigned long long U;
const U G = 2ull << 20;
const char* N(CUresult r) {
  const char* s = 0;
  cuGetErrorName(r, &s);
  return s ? s : "?";
}
#define P(n, x)                       \
  do {                                \
    CUresult r_ = (x);                \
    printf("  %-40s %s\n", n, N(r_)); \
    fflush(stdout);                   \
  } while (0)

CUmemAllocationProp Prop() {
  CUmemAllocationProp p = {};
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = 0;
  return p;
}
void Init() {
  cuInit(0);
  CUdevice d;
  cuDeviceGet(&d, 0);
  CUcontext c;
  cuDevicePrimaryCtxRetain(&c, d);
  cuCtxSetCurrent(c);
}

void DoubleReleaseNeverMapped() {
  CUmemAllocationProp p = Prop();
  CUmemGenericAllocationHandle h;
  P("create", cuMemCreate(&h, G, &p, 0));
  P("release", cuMemRelease(h));
  P("release again (never mapped)", cuMemRelease(h));
}
void DoubleReleaseMapped() {
  CUmemAllocationProp p = Prop();
  CUdeviceptr va;
  CUmemGenericAllocationHandle h;
  P("reserve", cuMemAddressReserve(&va, G, 0, 0, 0));
  P("create", cuMemCreate(&h, G, &p, 0));
  P("map", cuMemMap(va, G, 0, h, 0));
  P("release (still mapped)", cuMemRelease(h));
  P("release again (still mapped)", cuMemRelease(h));
  P("unmap", cuMemUnmap(va, G));
  P("free", cuMemAddressFree(va, G));
}
void MapAfterRelease() {
  CUmemAllocationProp p = Prop();
  CUdeviceptr va;
  CUmemGenericAllocationHandle h;
  P("reserve", cuMemAddressReserve(&va, G, 0, 0, 0));
  P("create", cuMemCreate(&h, G, &p, 0));
  P("release", cuMemRelease(h));
  P("map the released handle", cuMemMap(va, G, 0, h, 0));
}
void MapPastEnd() {
  CUmemAllocationProp p = Prop();
  CUdeviceptr va, next;
  CUmemGenericAllocationHandle h;
  P("reserve 2 MiB", cuMemAddressReserve(&va, G, 0, 0, 0));
  P("reserve the next 2 MiB as well (hint)", cuMemAddressReserve(&next, G, 0, va + G, 0));
  printf("  (next reservation %s the hint)\n", next == va + G ? "at" : "not at");
  P("create 4 MiB", cuMemCreate(&h, 2 * G, &p, 0));
  P("map 4 MiB into the 2 MiB reservation", cuMemMap(va, 2 * G, 0, h, 0));
  CUmemAccessDesc a = {};
  a.location = p.location;
  a.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  P("set_access over the 4 MiB", cuMemSetAccess(va, 2 * G, &a, 1));
  P("memset the 4 MiB", cuMemsetD32(va, 7, 2 * G / 4));
  P("synchronize", cuCtxSynchronize());
  P("unmap the 4 MiB", cuMemUnmap(va, 2 * G));
  P("release", cuMemRelease(h));
  P("free the first reservation", cuMemAddressFree(va, G));
  P("free the second", cuMemAddressFree(next, G));
}
void MapPastEndAlone() {
  CUmemAllocationProp p = Prop();
  CUdeviceptr va;
  CUmemGenericAllocationHandle h;
  P("reserve 2 MiB", cuMemAddressReserve(&va, G, 0, 0, 0));
  P("create 4 MiB", cuMemCreate(&h, 2 * G, &p, 0));
  P("map 4 MiB into the 2 MiB reservation", cuMemMap(va, 2 * G, 0, h, 0));
  P("unmap the 4 MiB", cuMemUnmap(va, 2 * G));
  P("release", cuMemRelease(h));
  P("free", cuMemAddressFree(va, G));
}

void InChild(const char* name, void (*f)()) {
  printf("%s\n", name);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    Init();
    f();
    fflush(stdout);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status))
    printf("  => child killed by signal %d (%s)\n", WTERMSIG(status), strsignal(WTERMSIG(status)));
  else
    printf("  => child exit %d\n", WEXITSTATUS(status));
  fflush(stdout);
}

int main() {
  InChild("double_release (never mapped)", DoubleReleaseNeverMapped);
  InChild("double_release (mapped)", DoubleReleaseMapped);
  InChild("map_after_release", MapAfterRelease);
  InChild("map_past_reservation_end (next range reserved)", MapPastEnd);
  InChild("map_past_reservation_end (alone)", MapPastEndAlone);
  int v = 0;
  cuDriverGetVersion(&v);
  printf("driver API %d\n", v);
}
