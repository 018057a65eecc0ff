// What driver 580 does when a process holding VMM memory is checkpointed and restored through
// cuCheckpointProcess* (#29 item 10), straight from the driver API, no vmm-run code. Each case
// runs in a process of its own: a controller that forks the target before either touches CUDA,
// then drives the target's lock / checkpoint / restore / unlock and reports what the target sees
// afterwards. A case that hangs is killed after 60 s and reported as such. Not built by CMake; on
// a GPU machine:
//   g++ -O1 tools/checkpoint_probe.cc -I/usr/local/cuda/include -L/usr/local/cuda/lib64/stubs \
//       -lcuda -lpthread -o checkpoint_probe && ./checkpoint_probe   (any argument: the
//   host-located cases only)
#include <cuda.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <vector>

typedef unsigned long long U;
const U MiB = 1ull << 20;
const char* N(CUresult r) {
  const char* s = 0;
  cuGetErrorName(r, &s);
  return s ? s : "?";
}
double Now() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
#define P(who, n, x)                                                     \
  do {                                                                   \
    double t0_ = Now();                                                  \
    CUresult r_ = (x);                                                   \
    printf("  [%s] %-44s %-32s %9.2f ms\n", who, n, N(r_), Now() - t0_); \
    fflush(stdout);                                                      \
  } while (0)

CUmemAllocationProp Prop(bool exportable = false) {
  CUmemAllocationProp p = {};
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = 0;
  if (exportable) p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return p;
}
CUcontext Init() {
  cuInit(0);
  CUdevice d;
  cuDeviceGet(&d, 0);
  CUcontext c;
  cuDevicePrimaryCtxRetain(&c, d);
  cuCtxSetCurrent(c);
  return c;
}
U FreeBytes() {
  size_t f = 0, t = 0;
  cuMemGetInfo(&f, &t);
  return f;
}
const char* StateName(CUprocessState s) {
  switch (s) {
    case CU_PROCESS_STATE_RUNNING:
      return "RUNNING";
    case CU_PROCESS_STATE_LOCKED:
      return "LOCKED";
    case CU_PROCESS_STATE_CHECKPOINTED:
      return "CHECKPOINTED";
    case CU_PROCESS_STATE_FAILED:
      return "FAILED";
  }
  return "?";
}
void State(pid_t pid) {
  CUprocessState s = CU_PROCESS_STATE_RUNNING;
  CUresult r = cuCheckpointProcessGetState(pid, &s);
  printf("  [ctl] state: %s (%s)\n", r == CUDA_SUCCESS ? StateName(s) : "-", N(r));
  fflush(stdout);
}

// The two ends of a case talk over two pipes: the target says "ready" once its memory is set
// up, and waits for "go" before it looks again.
struct Line {
  int to_ctl[2], to_target[2];
  void Open() {
    if (pipe(to_ctl) || pipe(to_target)) _exit(9);
  }
  void Say(int fd, char c) {
    if (write(fd, &c, 1) != 1) _exit(9);
  }
  char Hear(int fd) {
    char c = 0;
    if (read(fd, &c, 1) != 1) return 0;
    return c;
  }
};

// The target of the basic case: 64 MiB reserved, two 32 MiB handles (the second exportable)
// mapped and filled, a graph that memsets the first, and 16 MiB of cuMemAlloc memory.
struct Target {
  CUdeviceptr va = 0, plain = 0;
  CUmemGenericAllocationHandle h[2] = {};
  CUgraphExec exec = 0;
  CUstream stream = 0;
  void Build() {
    P("tgt", "reserve 64 MiB", cuMemAddressReserve(&va, 64 * MiB, 0, 0, 0));
    for (int i = 0; i < 2; ++i) {
      CUmemAllocationProp p = Prop(i == 1);
      P("tgt", i ? "create 32 MiB (exportable)" : "create 32 MiB",
        cuMemCreate(&h[i], 32 * MiB, &p, 0));
      P("tgt", "map", cuMemMap(va + i * 32 * MiB, 32 * MiB, 0, h[i], 0));
    }
    CUmemAccessDesc a = {};
    a.location = Prop().location;
    a.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    P("tgt", "set_access 64 MiB", cuMemSetAccess(va, 64 * MiB, &a, 1));
    P("tgt", "memset first 32 MiB = 0x11111111", cuMemsetD32(va, 0x11111111u, 8 * MiB));
    P("tgt", "memset second 32 MiB = 0x22222222", cuMemsetD32(va + 32 * MiB, 0x22222222u, 8 * MiB));
    P("tgt", "cuMemAlloc 16 MiB", cuMemAlloc(&plain, 16 * MiB));
    P("tgt", "memset plain = 0x33333333", cuMemsetD32(plain, 0x33333333u, 4 * MiB));
    P("tgt", "stream", cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CUgraph g;
    P("tgt", "begin capture", cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
    P("tgt", "capture memset first 32 MiB = 0x44444444",
      cuMemsetD32Async(va, 0x44444444u, 8 * MiB, stream));
    P("tgt", "end capture", cuStreamEndCapture(stream, &g));
    P("tgt", "instantiate", cuGraphInstantiate(&exec, g, 0));
    P("tgt", "synchronize", cuCtxSynchronize());
  }
  bool Holds(CUdeviceptr p, U bytes, unsigned v) {
    std::vector<unsigned> host(bytes / 4);
    if (cuMemcpyDtoH(host.data(), p, bytes) != CUDA_SUCCESS) return false;
    for (unsigned w : host)
      if (w != v) return false;
    return true;
  }
  void Look() {
    CUdeviceptr base = 0;
    size_t size = 0;
    P("tgt", "address range of the reservation", cuMemGetAddressRange(&base, &size, va + MiB));
    printf("  [tgt] base %s, size %zu\n", base == va ? "unchanged" : "MOVED", size);
    printf("  [tgt] first 32 MiB holds 0x11111111: %s\n",
           Holds(va, 32 * MiB, 0x11111111u) ? "yes" : "NO");
    printf("  [tgt] second 32 MiB holds 0x22222222: %s\n",
           Holds(va + 32 * MiB, 32 * MiB, 0x22222222u) ? "yes" : "NO");
    printf("  [tgt] cuMemAlloc memory holds 0x33333333: %s\n",
           Holds(plain, 16 * MiB, 0x33333333u) ? "yes" : "NO");
    P("tgt", "graph launch", cuGraphLaunch(exec, stream));
    P("tgt", "stream synchronize", cuStreamSynchronize(stream));
    printf("  [tgt] graph wrote 0x44444444: %s\n", Holds(va, 32 * MiB, 0x44444444u) ? "yes" : "NO");
    int fd = -1;
    P("tgt", "re-export the exportable handle",
      cuMemExportToShareableHandle(&fd, h[1], CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    if (fd >= 0) {
      CUmemGenericAllocationHandle back;
      P("tgt", "import that fd again",
        cuMemImportFromShareableHandle(&back, (void*)(long)fd,
                                       CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
      close(fd);
    }
    CUmemGenericAllocationHandle kept;
    P("tgt", "retain the first handle by address", cuMemRetainAllocationHandle(&kept, (void*)va));
    printf("  [tgt] retained handle %s the created one\n", kept == h[0] ? "is" : "IS NOT");
    CUmemAllocationProp got = {};
    P("tgt", "properties of the first handle", cuMemGetAllocationPropertiesFromHandle(&got, h[0]));
    printf("  [tgt] free after restore: %llu MiB\n", FreeBytes() / MiB);
    CUmemGenericAllocationHandle fresh;
    CUmemAllocationProp p = Prop();
    P("tgt", "a new create after restore", cuMemCreate(&fresh, 32 * MiB, &p, 0));
    P("tgt", "release it", cuMemRelease(fresh));
    P("tgt", "unmap 64 MiB", cuMemUnmap(va, 64 * MiB));
    P("tgt", "release first", cuMemRelease(h[0]));
    P("tgt", "release second", cuMemRelease(h[1]));
    P("tgt", "free the reservation", cuMemAddressFree(va, 64 * MiB));
  }
};

// Lock, checkpoint, restore, unlock, with the free memory the controller sees after each.
void Cycle(pid_t pid) {
  CUcheckpointLockArgs lock = {};
  lock.timeoutMs = 10000;
  CUcheckpointCheckpointArgs ck = {};
  CUcheckpointRestoreArgs rs = {};
  CUcheckpointUnlockArgs un = {};
  U before = FreeBytes();
  P("ctl", "lock", cuCheckpointProcessLock(pid, &lock));
  State(pid);
  P("ctl", "checkpoint", cuCheckpointProcessCheckpoint(pid, &ck));
  State(pid);
  printf("  [ctl] free rose by %lld MiB at checkpoint\n",
         (long long)(FreeBytes() - before) / (long long)MiB);
  P("ctl", "restore", cuCheckpointProcessRestore(pid, &rs));
  State(pid);
  printf("  [ctl] free after restore vs before: %lld MiB\n",
         ((long long)FreeBytes() - (long long)before) / (long long)MiB);
  P("ctl", "unlock", cuCheckpointProcessUnlock(pid, &un));
  State(pid);
}

// Each case: fork the target, let it build, then the controller initialises CUDA and drives.
template <typename TargetFn, typename CtlFn>
void Case(const char* name, TargetFn target, CtlFn ctl) {
  printf("%s\n", name);
  fflush(stdout);
  pid_t runner = fork();
  if (runner == 0) {
    setpgid(0, 0);
    Line line;
    line.Open();
    pid_t pid = fork();
    if (pid == 0) {
      target(line);
      fflush(stdout);
      _exit(0);
    }
    if (line.Hear(line.to_ctl[0]) != 'r') {
      printf("  target never became ready\n");
      _exit(1);
    }
    Init();
    ctl(pid, line);
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status))
      printf("  => target killed by signal %d (%s)\n", WTERMSIG(status),
             strsignal(WTERMSIG(status)));
    else
      printf("  => target exit %d\n", WEXITSTATUS(status));
    fflush(stdout);
    _exit(0);
  }
  int status = 0;
  for (int i = 0; i < 600; ++i) {
    if (waitpid(runner, &status, WNOHANG) == runner) return;
    usleep(100000);
  }
  printf("  => HUNG for 60 s; killed\n");
  fflush(stdout);
  kill(-runner, SIGKILL);
  kill(runner, SIGKILL);
  waitpid(runner, &status, 0);
}

void Basic() {
  Case(
      "basic: VMM memory, cuMemAlloc memory, a graph; lock, checkpoint, restore, unlock",
      [](Line& l) {
        Init();
        Target t;
        t.Build();
        printf("  [tgt] free before: %llu MiB\n", FreeBytes() / MiB);
        l.Say(l.to_ctl[1], 'r');
        l.Hear(l.to_target[0]);
        t.Look();
      },
      [](pid_t pid, Line& l) {
        State(pid);
        int tid = 0;
        P("ctl", "restore thread id", cuCheckpointProcessGetRestoreThreadId(pid, &tid));
        CUcheckpointCheckpointArgs ck = {};
        CUcheckpointRestoreArgs rs = {};
        CUcheckpointUnlockArgs un = {};
        P("ctl", "checkpoint without a lock", cuCheckpointProcessCheckpoint(pid, &ck));
        P("ctl", "restore while running", cuCheckpointProcessRestore(pid, &rs));
        P("ctl", "unlock while running", cuCheckpointProcessUnlock(pid, &un));
        Cycle(pid);
        P("ctl", "lock a pid without CUDA (this one's parent)",
          cuCheckpointProcessLock(getppid(), nullptr));
        P("ctl", "state of pid 999999", cuCheckpointProcessGetState(999999, nullptr));
        l.Say(l.to_target[1], 'g');
      });
}

// Two cycles in a row, and a lock taken twice.
void Twice() {
  Case(
      "twice: two cycles in a row; lock while locked",
      [](Line& l) {
        Init();
        Target t;
        t.Build();
        l.Say(l.to_ctl[1], 'r');
        l.Hear(l.to_target[0]);
        t.Look();
      },
      [](pid_t pid, Line& l) {
        Cycle(pid);
        CUcheckpointLockArgs lock = {};
        P("ctl", "lock", cuCheckpointProcessLock(pid, &lock));
        P("ctl", "lock again", cuCheckpointProcessLock(pid, &lock));
        P("ctl", "unlock", cuCheckpointProcessUnlock(pid, nullptr));
        Cycle(pid);
        l.Say(l.to_target[1], 'g');
      });
}

// A stream kept busy by a wait on a host word: does a lock wait for it, or time out?
void BusyStream() {
  Case(
      "busy: lock while the target's stream waits on a host word",
      [](Line& l) {
        Init();
        unsigned* flag = nullptr;
        P("tgt", "host alloc flag", cuMemHostAlloc((void**)&flag, 4096, CU_MEMHOSTALLOC_DEVICEMAP));
        *flag = 0;
        CUdeviceptr dflag;
        P("tgt", "device pointer of flag", cuMemHostGetDevicePointer(&dflag, flag, 0));
        CUstream s;
        cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
        P("tgt", "stream waits for flag == 1",
          cuStreamWaitValue32(s, dflag, 1, CU_STREAM_WAIT_VALUE_EQ));
        l.Say(l.to_ctl[1], 'r');
        l.Hear(l.to_target[0]);
        __atomic_store_n(flag, 1u, __ATOMIC_SEQ_CST);
        P("tgt", "stream synchronize after flag set", cuStreamSynchronize(s));
        l.Say(l.to_ctl[1], 'r');
        l.Hear(l.to_target[0]);
      },
      [](pid_t pid, Line& l) {
        CUcheckpointLockArgs lock = {};
        lock.timeoutMs = 2000;
        P("ctl", "lock (2 s timeout) with the stream busy", cuCheckpointProcessLock(pid, &lock));
        State(pid);
        CUprocessState s;
        if (cuCheckpointProcessGetState(pid, &s) == CUDA_SUCCESS && s == CU_PROCESS_STATE_LOCKED) {
          CUcheckpointCheckpointArgs ck = {};
          P("ctl", "checkpoint with the stream busy", cuCheckpointProcessCheckpoint(pid, &ck));
          State(pid);
          CUcheckpointRestoreArgs rs = {};
          P("ctl", "restore", cuCheckpointProcessRestore(pid, &rs));
          P("ctl", "unlock", cuCheckpointProcessUnlock(pid, nullptr));
        }
        l.Say(l.to_target[1], 'g');
        l.Hear(l.to_ctl[0]);
        Cycle(pid);
        l.Say(l.to_target[1], 'g');
      });
}

// cuda-checkpoint#44: a restore refused for lack of memory, then tried again with memory back.
void RestoreOutOfMemory() {
  Case(
      "oom: 4 GiB target; restore with 256 MiB free, then with the memory back",
      [](Line& l) {
        Init();
        CUdeviceptr va;
        CUmemGenericAllocationHandle h;
        CUmemAllocationProp p = Prop();
        P("tgt", "reserve 4 GiB", cuMemAddressReserve(&va, 4096 * MiB, 0, 0, 0));
        P("tgt", "create 4 GiB", cuMemCreate(&h, 4096 * MiB, &p, 0));
        P("tgt", "map", cuMemMap(va, 4096 * MiB, 0, h, 0));
        CUmemAccessDesc a = {};
        a.location = p.location;
        a.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        P("tgt", "set_access", cuMemSetAccess(va, 4096 * MiB, &a, 1));
        P("tgt", "memset", cuMemsetD32(va, 0x55555555u, 1024 * MiB));
        P("tgt", "synchronize", cuCtxSynchronize());
        l.Say(l.to_ctl[1], 'r');
        l.Hear(l.to_target[0]);
        alarm(10);  // a CUDA call that blocks for ever ends the target
        printf("  [tgt] free seen by the target: %llu MiB\n", FreeBytes() / MiB);
        std::vector<unsigned> w(4);
        P("tgt", "read back", cuMemcpyDtoH(w.data(), va, 16));
        printf("  [tgt] first word 0x%08x\n", w[0]);
      },
      [](pid_t pid, Line& l) {
        CUcheckpointLockArgs lock = {};
        CUcheckpointCheckpointArgs ck = {};
        CUcheckpointRestoreArgs rs = {};
        P("ctl", "lock", cuCheckpointProcessLock(pid, &lock));
        P("ctl", "checkpoint", cuCheckpointProcessCheckpoint(pid, &ck));
        std::vector<CUmemGenericAllocationHandle> held;
        CUmemAllocationProp p = Prop();
        U chunk = 4096 * MiB;
        while (FreeBytes() > 256 * MiB + 2 * MiB && chunk >= 2 * MiB) {
          U want = FreeBytes() - 256 * MiB;
          U take = want < chunk ? (want / (2 * MiB)) * (2 * MiB) : chunk;
          if (take == 0) break;
          CUmemGenericAllocationHandle h;
          if (cuMemCreate(&h, take, &p, 0) == CUDA_SUCCESS)
            held.push_back(h);
          else
            chunk /= 2;
        }
        printf("  [ctl] holding %zu chunks; free %llu MiB\n", held.size(), FreeBytes() / MiB);
        P("ctl", "restore with 256 MiB free", cuCheckpointProcessRestore(pid, &rs));
        State(pid);
        for (auto h : held) cuMemRelease(h);
        printf("  [ctl] hold returned; free %llu MiB\n", FreeBytes() / MiB);
        P("ctl", "restore again", cuCheckpointProcessRestore(pid, &rs));
        State(pid);
        P("ctl", "unlock", cuCheckpointProcessUnlock(pid, nullptr));
        State(pid);
        l.Say(l.to_target[1], 'g');
      });
}

// nccl#2350: memory located on the host (cuMem host-NUMA, or plain host), mapped for the device.
// After the restore: a second restore, then the target exits without a CUDA call (does a process
// left checkpointed exit?).
void HostLocated(CUmemLocationType type, const char* name) {
  static CUmemLocationType where;
  where = type;
  Case(
      name,
      [](Line& l) {
        Init();
        CUdeviceptr va;
        CUmemGenericAllocationHandle h;
        CUmemAllocationProp p = {};
        p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        p.location.type = where;
        p.location.id = 0;
        size_t gran = 0;
        P("tgt", "granularity",
          cuMemGetAllocationGranularity(&gran, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
        if (!gran) gran = 2 * MiB;
        P("tgt", "reserve", cuMemAddressReserve(&va, gran, 0, 0, 0));
        P("tgt", "create host-located", cuMemCreate(&h, gran, &p, 0));
        P("tgt", "map", cuMemMap(va, gran, 0, h, 0));
        CUmemAccessDesc a = {};
        a.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        a.location.id = 0;
        a.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        P("tgt", "set_access for the device", cuMemSetAccess(va, gran, &a, 1));
        P("tgt", "memset", cuMemsetD32(va, 0x66666666u, gran / 4));
        P("tgt", "synchronize", cuCtxSynchronize());
        l.Say(l.to_ctl[1], 'r');
        const char go = l.Hear(l.to_target[0]);
        if (go == 'x') {  // left checkpointed: exit without a CUDA call
          printf("  [tgt] exiting with _exit(7), no CUDA call\n");
          fflush(stdout);
          _exit(7);
        }
        alarm(10);
        std::vector<unsigned> w(4);
        P("tgt", "read back", cuMemcpyDtoH(w.data(), va, 16));
        printf("  [tgt] first word 0x%08x\n", w[0]);
      },
      [](pid_t pid, Line& l) {
        Cycle(pid);
        CUprocessState s;
        const bool stuck =
            cuCheckpointProcessGetState(pid, &s) == CUDA_SUCCESS && s != CU_PROCESS_STATE_RUNNING;
        if (stuck) {
          CUcheckpointRestoreArgs rs = {};
          P("ctl", "restore again", cuCheckpointProcessRestore(pid, &rs));
          State(pid);
        }
        l.Say(l.to_target[1], stuck ? 'x' : 'g');
      });
}

// A process released its host-NUMA memory before the checkpoint (NCCL_CUMEM_HOST_ENABLE=0's
// effect): restored?
void HostNumaGivenBack() {
  Case(
      "host_numa_given_back: host-NUMA memory created, used and released before the checkpoint",
      [](Line& l) {
        Init();
        CUdeviceptr va;
        CUmemGenericAllocationHandle h;
        CUmemAllocationProp p = {};
        p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        p.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
        p.location.id = 0;
        const U gran = 2 * MiB;
        P("tgt", "reserve", cuMemAddressReserve(&va, gran, 0, 0, 0));
        P("tgt", "create host-NUMA", cuMemCreate(&h, gran, &p, 0));
        P("tgt", "map", cuMemMap(va, gran, 0, h, 0));
        P("tgt", "unmap", cuMemUnmap(va, gran));
        P("tgt", "release", cuMemRelease(h));
        P("tgt", "free", cuMemAddressFree(va, gran));
        l.Say(l.to_ctl[1], 'r');
        l.Hear(l.to_target[0]);
        alarm(10);
        printf("  [tgt] free after: %llu MiB\n", FreeBytes() / MiB);
      },
      [](pid_t pid, Line& l) {
        Cycle(pid);
        l.Say(l.to_target[1], 'g');
      });
}

int main(int argc, char**) {
  const bool all = argc < 2;
  if (all) {
    Basic();
    Twice();
    BusyStream();
  }
  HostLocated(CU_MEM_LOCATION_TYPE_HOST_NUMA,
              "host_numa: a HOST_NUMA cuMemCreate mapped for the device");
  HostLocated(CU_MEM_LOCATION_TYPE_HOST, "host: a HOST cuMemCreate mapped for the device");
  HostNumaGivenBack();
  if (all) RestoreOutOfMemory();
  int v = 0;
  cuDriverGetVersion(&v);
  printf("driver API %d\n", v);
}
