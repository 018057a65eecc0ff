// The VMM rule table's driver answers, straight from the driver API (no vmm-run code): each line
// names a rule of runner/vocab/vmm_rules.h and the CUresult the driver returned for the call that
// breaks it. Only calls that are safe to send are made (no released or unknown handles, no
// kernels). Not built by CMake; on a GPU machine:
//   g++ -O1 tools/vmm_rules_probe.cc -I/usr/local/cuda/include -L/usr/local/cuda/lib64/stubs \
//       -lcuda -o vmm_rules_probe && ./vmm_rules_probe
// Output on the H200 (driver 580.159.04), 2026-11-30: reports/h200/vmm_rules_probe.log. This is the
// program that ran there, reformatted.
#include <cuda.h>

#include <cstdio>
typedef unsigned long long U;
const U G = 2ull << 20;
const char* N(CUresult r) {
  const char* s = 0;
  cuGetErrorName(r, &s);
  return s ? s : "?";
}
#define P(n, x) printf("%-34s %s\n", n, N(x))
int main() {
  cuInit(0);
  CUdevice d;
  cuDeviceGet(&d, 0);
  CUcontext c;
  cuDevicePrimaryCtxRetain(&c, d);
  cuCtxSetCurrent(c);
  CUmemAllocationProp p = {};
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = 0;
  size_t g = 0;
  cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
  printf("granularity %zu\n", g);
  CUmemAccessDesc a = {};
  a.location = p.location;
  a.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CUdeviceptr r1, r2, r3, r4, r5, r6, r7;
  CUmemGenericAllocationHandle h4, hp, hq, hm, hx, h2;
  cuMemAddressReserve(&r1, 4 * G, 0, 0, 0);
  cuMemCreate(&h4, 4 * G, &p, 0);
  P("map_part_of_alloc", cuMemMap(r1, 2 * G, 0, h4, 0));
  cuMemAddressReserve(&r2, 2 * G, 0, 0, 0);
  cuMemCreate(&hp, G, &p, 0);
  cuMemCreate(&hq, G, &p, 0);
  P("setup map p", cuMemMap(r2, G, 0, hp, 0));
  P("map_over_live_mapping", cuMemMap(r2, G, 0, hq, 0));
  CUmemGenericAllocationHandle hw;
  cuMemCreate(&hw, 2 * G, &p, 0);
  P("map_over_live_mapping (half over)", cuMemMap(r2, 2 * G, 0, hw, 0));
  cuMemAddressReserve(&r3, 4 * G, 0, 0, 0);
  cuMemCreate(&hm, G, &p, 0);
  P("map_misaligned_address", cuMemMap(r3 + G / 2, G, 0, hm, 0));
  P("create_size_not_granular", cuMemCreate(&hx, G / 2, &p, 0));
  P("reserve_size_not_granular", cuMemAddressReserve(&r7, G / 2, 0, 0, 0));
  cuMemAddressReserve(&r4, 2 * G, 0, 0, 0);
  cuMemCreate(&h2, 2 * G, &p, 0);
  P("setup map 2G", cuMemMap(r4, 2 * G, 0, h2, 0));
  P("set_access_part_of_mapping", cuMemSetAccess(r4, G, &a, 1));
  P("set_access whole", cuMemSetAccess(r4, 2 * G, &a, 1));
  cuMemAddressReserve(&r5, G, 0, 0, 0);
  P("set_access_unmapped", cuMemSetAccess(r5, G, &a, 1));
  P("unmap_not_mapped", cuMemUnmap(r5, G));
  P("unmap_splits_mapping", cuMemUnmap(r4 + G, G));
  P("free_while_mapped", cuMemAddressFree(r4, 2 * G));
  cuMemAddressReserve(&r6, G, 0, 0, 0);
  P("setup free", cuMemAddressFree(r6, G));
  P("double_free", cuMemAddressFree(r6, G));
  P("sync", cuCtxSynchronize());
  return 0;
}
