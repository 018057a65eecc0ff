// What the host twin must learn from the GPU (issue: the host twin tells the GPU's truth), straight
// from the driver and runtime APIs, no vmm-run code:
//   memory   the device memory the driver takes for itself around VMM calls (cuMemGetInfo deltas
//            against the bytes the program created), by experiment;
//   nodes    what cudaGraphInstantiate, cudaGraphExecMemsetNodeSetParams and a launch answer for
//            memset and memcpy nodes over memory without the access they need;
//   update   cudaGraphExecUpdate between graphs with conditional nodes (if/while, bodies of
//            another shape).
// Not built by CMake; on a GPU machine:
//   nvcc -O1 tools/twin_fidelity_probe.cc -lcuda -o twin_fidelity_probe && ./twin_fidelity_probe
// A launch that may fault runs in a child (`twin_fidelity_probe child`), so the parent's context
// stays clean. Output on the H200: reports/h200/session9/twin_fidelity_probe.log.
#include <cuda.h>
#include <cuda_runtime.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <vector>

extern char** environ;

namespace {

typedef unsigned long long U;
const U G = 2ull << 20, MiB = 1ull << 20;

const char* N(CUresult r) {
  const char* s = nullptr;
  cuGetErrorName(r, &s);
  return s ? s : "?";
}
const char* R(cudaError_t e) { return cudaGetErrorName(e); }

#define CK(x)                                    \
  do {                                           \
    CUresult r_ = (x);                           \
    if (r_ != CUDA_SUCCESS) {                    \
      std::printf("FAILED %s: %s\n", #x, N(r_)); \
      return;                                    \
    }                                            \
  } while (0)

long long FreeBytes() {
  size_t free = 0, total = 0;
  cudaDeviceSynchronize();
  cuMemGetInfo(&free, &total);
  return static_cast<long long>(free);
}

CUmemAllocationProp Prop() {
  CUmemAllocationProp p = {};
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = 0;
  return p;
}

void Access(CUdeviceptr va, U size, CUmemAccess_flags flags) {
  CUmemAccessDesc a = {};
  a.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  a.location.id = 0;
  a.flags = flags;
  cuMemSetAccess(va, size, &a, 1);
}

// Prints one line per step: what the program holds, what the device lost since the start, and
// the difference (the driver's own memory).
struct Ledger {
  long long start = FreeBytes();
  long long own = 0;
  void Line(const char* experiment, const char* step) {
    const long long used = start - FreeBytes();
    std::printf("memory %-22s %-44s own %6.0f MiB  device %6.0f MiB  driver %+6.0f MiB\n",
                experiment, step, own / double(MiB), used / double(MiB),
                (used - own) / double(MiB));
  }
};

void Memory() {
  CUmemAllocationProp p = Prop();
  // Reservations alone.
  for (U size : {G, 64 * MiB, 1024 * MiB, 64 * 1024 * MiB, 1024ull * 1024 * MiB}) {
    Ledger l;
    CUdeviceptr va = 0;
    CK(cuMemAddressReserve(&va, size, 0, 0, 0));
    char step[64];
    std::snprintf(step, sizeof step, "reserve %llu MiB", size / MiB);
    l.Line("reserve", step);
    CK(cuMemAddressFree(va, size));
    l.Line("reserve", "free");
  }
  // Growth: pages mapped one after another at the end of a reservation (expandable segments).
  for (U reservation : {64 * MiB, 1024 * MiB}) {
    Ledger l;
    char name[32];
    std::snprintf(name, sizeof name, "grow in %llu MiB", reservation / MiB);
    CUdeviceptr va = 0;
    CK(cuMemAddressReserve(&va, reservation, 0, 0, 0));
    l.Line(name, "reserve");
    std::vector<CUmemGenericAllocationHandle> h(16);
    for (int i = 0; i < 16 && U(i + 1) * G <= reservation; ++i) {
      CK(cuMemCreate(&h[i], G, &p, 0));
      l.own += G;
      CK(cuMemMap(va + i * G, G, 0, h[i], 0));
      char step[64];
      std::snprintf(step, sizeof step, "page %d mapped", i + 1);
      if (i == 0) l.Line(name, step);
      Access(va + i * G, G, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
      std::snprintf(step, sizeof step, "page %d mapped + access", i + 1);
      if (i < 4 || i % 4 == 3) l.Line(name, step);
    }
    const int pages = static_cast<int>(l.own / G);
    CK(cuMemUnmap(va, pages * G));
    l.Line(name, "unmap all");
    for (int i = 0; i < pages; ++i) CK(cuMemRelease(h[i]));
    l.own = 0;
    l.Line(name, "release all");
    CK(cuMemAddressFree(va, reservation));
    l.Line(name, "free");
  }
  // Pages far apart in one reservation (one per 64 MiB of a 1 GiB range).
  {
    Ledger l;
    CUdeviceptr va = 0;
    CK(cuMemAddressReserve(&va, 1024 * MiB, 0, 0, 0));
    std::vector<CUmemGenericAllocationHandle> h(16);
    for (int i = 0; i < 16; ++i) {
      CK(cuMemCreate(&h[i], G, &p, 0));
      l.own += G;
      CK(cuMemMap(va + i * 64 * MiB, G, 0, h[i], 0));
      Access(va + i * 64 * MiB, G, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
      if (i < 2 || i % 4 == 3) {
        char step[64];
        std::snprintf(step, sizeof step, "page %d at +%d MiB", i + 1, i * 64);
        l.Line("spread 64 MiB apart", step);
      }
    }
    for (int i = 0; i < 16; ++i) CK(cuMemUnmap(va + i * 64 * MiB, G));
    for (int i = 0; i < 16; ++i) CK(cuMemRelease(h[i]));
    l.own = 0;
    l.Line("spread 64 MiB apart", "unmap + release all");
    CK(cuMemAddressFree(va, 1024 * MiB));
    l.Line("spread 64 MiB apart", "free");
  }
  // Handles created once, mapped again elsewhere (a remap with no new memory).
  {
    Ledger l;
    CUdeviceptr a = 0, b = 0;
    CK(cuMemAddressReserve(&a, 64 * MiB, 0, 0, 0));
    CK(cuMemAddressReserve(&b, 64 * MiB, 0, 0, 0));
    CUmemGenericAllocationHandle h[4];
    for (auto& x : h) {
      CK(cuMemCreate(&x, G, &p, 0));
      l.own += G;
    }
    l.Line("reuse handles", "4 created, 2 reservations");
    for (int i = 0; i < 4; ++i) CK(cuMemMap(a + i * G, G, 0, h[i], 0));
    Access(a, 4 * G, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    l.Line("reuse handles", "mapped in the first");
    CK(cuMemUnmap(a, 4 * G));
    l.Line("reuse handles", "unmapped");
    for (int i = 0; i < 4; ++i) CK(cuMemMap(b + i * G, G, 0, h[i], 0));
    Access(b, 4 * G, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    l.Line("reuse handles", "mapped in the second");
    CK(cuMemUnmap(b, 4 * G));
    for (auto x : h) CK(cuMemRelease(x));
    l.own = 0;
    l.Line("reuse handles", "unmapped + released");
    CK(cuMemAddressFree(a, 64 * MiB));
    CK(cuMemAddressFree(b, 64 * MiB));
    l.Line("reuse handles", "freed");
  }
  // One big handle.
  {
    Ledger l;
    CUdeviceptr va = 0;
    CUmemGenericAllocationHandle h;
    CK(cuMemAddressReserve(&va, 1024 * MiB, 0, 0, 0));
    CK(cuMemCreate(&h, 1024 * MiB, &p, 0));
    l.own = 1024 * MiB;
    l.Line("one 1 GiB handle", "created");
    CK(cuMemMap(va, 1024 * MiB, 0, h, 0));
    l.Line("one 1 GiB handle", "mapped");
    Access(va, 1024 * MiB, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    l.Line("one 1 GiB handle", "access");
    CK(cuMemUnmap(va, 1024 * MiB));
    CK(cuMemRelease(h));
    l.own = 0;
    l.Line("one 1 GiB handle", "unmapped + released");
    CK(cuMemAddressFree(va, 1024 * MiB));
    l.Line("one 1 GiB handle", "freed");
  }
}

// A page of 2 MiB at `va` with access `flags` (0: mapped with no access set; 1: reserved only).
void Page(CUdeviceptr va, int state, CUmemGenericAllocationHandle* h) {
  CUmemAllocationProp p = Prop();
  if (state == 1) return;
  cuMemCreate(h, G, &p, 0);
  cuMemMap(va, G, 0, *h, 0);
  if (state == 2) Access(va, G, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  if (state == 3) Access(va, G, CU_MEM_ACCESS_FLAGS_PROT_READ);
  if (state == 4) Access(va, G, CU_MEM_ACCESS_FLAGS_PROT_NONE);
}
const char* kStates[] = {"mapped, access never set", "reserved, not mapped", "read_write", "read",
                         "access none"};

// Captures one memset (kind 0) or memcpy (1: into `dst`, 2: out of `dst`) node over `dst`.
cudaError_t CaptureNode(int kind, CUdeviceptr dst, CUdeviceptr other, cudaStream_t s,
                        cudaGraph_t* g) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed);
  cudaError_t call = cudaSuccess;
  if (kind == 0) call = cudaMemsetAsync(reinterpret_cast<void*>(dst), 0, 4096, s);
  if (kind == 1)
    call = cudaMemcpyAsync(reinterpret_cast<void*>(dst), reinterpret_cast<void*>(other), 4096,
                           cudaMemcpyDeviceToDevice, s);
  if (kind == 2)
    call = cudaMemcpyAsync(reinterpret_cast<void*>(other), reinterpret_cast<void*>(dst), 4096,
                           cudaMemcpyDeviceToDevice, s);
  cudaError_t end = cudaStreamEndCapture(s, g);
  (void)cudaGetLastError();
  return call != cudaSuccess ? call : end;
}

void Nodes() {
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  CUdeviceptr good = 0;
  CUmemGenericAllocationHandle gh;
  cuMemAddressReserve(&good, G, 0, 0, 0);
  Page(good, 2, &gh);
  const char* kinds[] = {"memset into", "memcpy into", "memcpy out of"};
  for (int kind = 0; kind < 3; ++kind) {
    for (int state = 0; state < 5; ++state) {
      CUdeviceptr va = 0;
      CUmemGenericAllocationHandle h = 0;
      cuMemAddressReserve(&va, G, 0, 0, 0);
      Page(va, state, &h);
      cudaGraph_t g = nullptr;
      cudaError_t captured = CaptureNode(kind, va, good, s, &g);
      cudaGraphExec_t e = nullptr;
      cudaError_t inst = g ? cudaGraphInstantiate(&e, g, 0) : cudaErrorInvalidValue;
      (void)cudaGetLastError();
      std::printf("nodes %-14s %-26s capture %-24s instantiate %s\n", kinds[kind], kStates[state],
                  R(captured), R(inst));
      if (e) cudaGraphExecDestroy(e);
      if (g) cudaGraphDestroy(g);
      if (state != 1) cuMemUnmap(va, G), cuMemRelease(h);
      cuMemAddressFree(va, G);
    }
  }
  // An exec made over read_write memory, whose memset is then pointed at read-only memory.
  {
    CUdeviceptr ro = 0;
    CUmemGenericAllocationHandle h;
    cuMemAddressReserve(&ro, G, 0, 0, 0);
    Page(ro, 3, &h);
    cudaGraph_t g;
    CaptureNode(0, good, 0, s, &g);
    cudaGraphExec_t e;
    cudaGraphInstantiate(&e, g, 0);
    size_t n = 1;
    cudaGraphNode_t node;
    cudaGraphGetNodes(g, &node, &n);
    cudaMemsetParams mp = {};
    mp.dst = reinterpret_cast<void*>(ro);
    mp.value = 1;
    mp.elementSize = 4;
    mp.width = 1024;
    mp.height = 1;
    std::printf("nodes set_node memset -> read   cudaGraphExecMemsetNodeSetParams %s\n",
                R(cudaGraphExecMemsetNodeSetParams(e, node, &mp)));
    (void)cudaGetLastError();
    cudaGraph_t g2;
    CaptureNode(0, ro, 0, s, &g2);
    cudaGraphExecUpdateResultInfo info = {};
    cudaError_t u = cudaGraphExecUpdate(e, g2, &info);
    (void)cudaGetLastError();
    std::printf("nodes update memset -> read     cudaGraphExecUpdate %s result %d\n", R(u),
                (int)info.result);
    cudaGraphExecDestroy(e);
    cudaGraphDestroy(g);
    cudaGraphDestroy(g2);
    cuMemUnmap(ro, G);
    cuMemRelease(h);
    cuMemAddressFree(ro, G);
  }
  cudaStreamDestroy(s);
}

// child: an exec over read_write memory launched after its access became read.
int Child() {
  cudaSetDevice(0);
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  CUdeviceptr va = 0;
  CUmemGenericAllocationHandle h;
  cuMemAddressReserve(&va, G, 0, 0, 0);
  Page(va, 2, &h);
  cudaGraph_t g;
  CaptureNode(0, va, 0, s, &g);
  cudaGraphExec_t e;
  cudaError_t inst = cudaGraphInstantiate(&e, g, 0);
  Access(va, G, CU_MEM_ACCESS_FLAGS_PROT_READ);
  cudaError_t launch = cudaGraphLaunch(e, s);
  cudaError_t sync = cudaStreamSynchronize(s);
  std::printf("nodes launch after access became read: instantiate %s launch %s sync %s\n", R(inst),
              R(launch), R(sync));
  return 0;
}

// A graph with one conditional node (default value 1: no kernel sets it) whose body holds
// `body_nodes` memsets of `value` into `dst`.
cudaGraph_t Conditional(cudaGraphConditionalNodeType type, int body_nodes, int value,
                        CUdeviceptr dst) {
  cudaGraph_t g;
  cudaGraphCreate(&g, 0);
  cudaGraphConditionalHandle handle;
  cudaGraphConditionalHandleCreate(&handle, g, 1, cudaGraphCondAssignDefault);
  cudaGraphNodeParams params = {};
  params.type = cudaGraphNodeTypeConditional;
  params.conditional.handle = handle;
  params.conditional.type = type;
  params.conditional.size = 1;
  cudaGraphNode_t node;
  cudaGraphAddNode(&node, g, nullptr, nullptr, 0, &params);
  cudaGraph_t body = params.conditional.phGraph_out[0];
  cudaGraphNode_t prev = nullptr;
  for (int i = 0; i < body_nodes; ++i) {
    cudaMemsetParams mp = {};
    mp.dst = reinterpret_cast<void*>(dst + i * 4096);
    mp.value = value;
    mp.elementSize = 4;
    mp.width = 1024;
    mp.height = 1;
    cudaGraphNode_t m;
    cudaGraphAddMemsetNode(&m, body, prev ? &prev : nullptr, prev ? 1 : 0, &mp);
    prev = m;
  }
  return g;
}

void Update() {
  CUdeviceptr va = 0;
  CUmemGenericAllocationHandle h;
  cuMemAddressReserve(&va, G, 0, 0, 0);
  Page(va, 2, &h);
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  struct Case {
    const char* what;
    cudaGraphConditionalNodeType type;
    int nodes, value;
  } cases[] = {{"if, same shape, new value", cudaGraphCondTypeIf, 1, 8},
               {"if -> while", cudaGraphCondTypeWhile, 1, 8},
               {"if, body of two nodes", cudaGraphCondTypeIf, 2, 8}};
  for (const Case& c : cases) {
    cudaGraph_t g1 = Conditional(cudaGraphCondTypeIf, 1, 7, va);
    cudaGraphExec_t e;
    cudaError_t inst = cudaGraphInstantiate(&e, g1, 0);
    cudaGraph_t g2 = Conditional(c.type, c.nodes, c.value, va);
    cudaGraphExecUpdateResultInfo info = {};
    cudaError_t u = cudaGraphExecUpdate(e, g2, &info);
    (void)cudaGetLastError();
    unsigned word = 0;
    if (c.type == cudaGraphCondTypeIf) {  // a while with default 1 would never end
      cudaGraphLaunch(e, s);
      cudaStreamSynchronize(s);
      cudaMemcpy(&word, reinterpret_cast<void*>(va), 4, cudaMemcpyDeviceToHost);
    }
    std::printf("update %-28s instantiate %s update %s result %d, word after launch %u\n", c.what,
                R(inst), R(u), (int)info.result, word);
    cudaGraphExecDestroy(e);
    cudaGraphDestroy(g1);
    cudaGraphDestroy(g2);
  }
  cudaStreamDestroy(s);
}

// cuMemGetAddressRange over a mapping, before and after access, of a created and a retained
// handle; cuMemCreate of host memory with a POSIX fd handle type; a second cuMemAddressFree of a
// range reserved again in between.
void Queries() {
  CUmemAllocationProp p = Prop();
  CUdeviceptr va = 0, vb = 0;
  CUmemGenericAllocationHandle h, r;
  cuMemAddressReserve(&va, 2 * G, 0, 0, 0);
  cuMemCreate(&h, G, &p, 0);
  cuMemMap(va, G, 0, h, 0);
  CUdeviceptr base = 0;
  size_t size = 0;
  std::printf("queries range: mapped, no access          %s size %zu\n",
              N(cuMemGetAddressRange(&base, &size, va + 4096)), size);
  Access(va, G, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  std::printf("queries range: mapped, read_write         %s size %zu\n",
              N(cuMemGetAddressRange(&base, &size, va + 4096)), size);
  cuMemRetainAllocationHandle(&r, reinterpret_cast<void*>(va));
  cuMemMap(va + G, G, 0, r, 0);
  size = 0;
  std::printf("queries range: retained handle, no access %s size %zu\n",
              N(cuMemGetAddressRange(&base, &size, va + G + 4096)), size);
  Access(va + G, G, CU_MEM_ACCESS_FLAGS_PROT_READ);
  size = 0;
  std::printf("queries range: retained handle, read      %s size %zu\n",
              N(cuMemGetAddressRange(&base, &size, va + G + 4096)), size);
  cuMemUnmap(va, 2 * G);
  cuMemRelease(r);
  cuMemRelease(h);
  cuMemAddressFree(va, 2 * G);
  for (int loc = 0; loc < 3; ++loc) {
    CUmemAllocationProp q = Prop();
    q.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    if (loc == 1) q.location.type = CU_MEM_LOCATION_TYPE_HOST, q.location.id = 0;
    if (loc == 2) q.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA, q.location.id = 0;
    CUmemGenericAllocationHandle x = 0;
    const CUresult c = cuMemCreate(&x, G, &q, 0);
    const char* where[] = {"device", "host", "host_numa"};
    std::printf("queries create %-9s with posix_fd: %s\n", where[loc], N(c));
    if (c == CUDA_SUCCESS) cuMemRelease(x);
  }
  cuMemAddressReserve(&va, G, 0, 0, 0);
  cuMemAddressFree(va, G);
  cuMemAddressReserve(&vb, G, 0, 0, 0);
  const CUresult again = cuMemAddressFree(va, G);
  std::printf("queries free twice, reserved again between: %s (the second range %s the first)\n",
              N(again), vb == va ? "is at" : "is not at");
  if (again != CUDA_SUCCESS || vb != va) cuMemAddressFree(vb, G);
  std::printf("queries free twice, nothing between: %s\n", N(cuMemAddressFree(va, G)));
}

}  // namespace

int main(int argc, char** argv) {
  cudaSetDevice(0);
  cudaFree(nullptr);
  if (argc > 1 && std::strcmp(argv[1], "child") == 0) return Child();
  int driver = 0;
  cuDriverGetVersion(&driver);
  std::printf("driver API %d\n", driver);
  if (argc > 1 && std::strcmp(argv[1], "queries") == 0) {
    Queries();
    return 0;
  }
  Memory();
  Nodes();
  Queries();
  pid_t pid;
  char* child_argv[] = {argv[0], const_cast<char*>("child"), nullptr};
  std::fflush(stdout);
  if (posix_spawn(&pid, argv[0], nullptr, nullptr, child_argv, environ) == 0) {
    int status = 0;
    waitpid(pid, &status, 0);
    std::printf("nodes child exit status %d\n", status);
  }
  Update();
  return 0;
}
