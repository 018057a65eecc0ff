// CUDA backend overhead: each VMM operation on 2 MiB pages and each graph operation (capture,
// instantiate, whole-graph update, replay, and the per-node updates: kernel and memset node
// parameters, enable/disable), made through raw driver/runtime calls (the same entry points the
// engine uses) and through the Engine, in alternating iterations so drift hits both; figures are
// medians. Also the device time of the
// matmul kernel at 256^2 and 8192^2. Prints figures; asserts nothing. Without a usable CUDA device
// it prints "skipped: ..." and exits 0.
//
//   cuda_overhead_bench [--iters N]   (N >= 1, default 500)
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kernels/graph_kernels.h"
#include "kernels/kernels.h"
#include "kernels/launch_config.h"
#include "runner/engine/cuda/cuda_call.h"
#include "runner/engine/cuda/cuda_engine.h"
#include "runner/engine/cuda/driver_api.h"
#include "runner/engine/cuda/vmm_handles.h"

namespace {

using Clock = std::chrono::steady_clock;

double Micros(Clock::time_point since) {
  return std::chrono::duration<double, std::micro>(Clock::now() - since).count();
}

double Median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 == 1 ? v[h] : (v[h - 1] + v[h]) / 2;
}

// Times `fn` (returning true on success) into `out`; false stops the benchmark.
template <typename Fn>
bool Time(std::vector<double>& out, Fn fn) {
  const Clock::time_point start = Clock::now();
  const bool ok = fn();
  out.push_back(Micros(start));
  return ok;
}

bool Check(const vmm::Status& s) {
  if (!s.ok()) std::fprintf(stderr, "error: %s\n", s.message().c_str());
  return s.ok();
}

struct Series {
  std::vector<double> raw, engine;
};

void PrintRatio(const char* name, const Series& s) {
  const double raw = Median(s.raw);
  const double eng = Median(s.engine);
  std::printf("  %-26s %10.2f %10.2f %8.2f\n", name, raw, eng, raw > 0 ? eng / raw : 0.0);
}

void PrintDiff(const char* name, const Series& s) {
  const double raw = Median(s.raw);
  const double eng = Median(s.engine);
  std::printf("  %-26s %10.2f %10.2f %+9.2f\n", name, raw, eng, eng - raw);
}

// create / map / set_access / unmap / release of one page, raw then engine, `iters` times.
bool BenchVmm(const vmm::cuda::DriverApi& api, vmm::Engine& engine, uint64_t page, int iters) {
  const CUmemAllocationProp prop = vmm::cuda::DeviceAllocationProp(engine.info().ordinal);
  CUmemAccessDesc access = {};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CUdeviceptr raw_va = 0;
  vmm::DevicePtr eng_va = 0;
  if (!Check(CU_CALL(api, cuMemAddressReserve(&raw_va, page, page, 0, 0)))) return false;
  if (!Check(engine.Reserve(page, 0, &eng_va))) return false;
  Series create, map, set_access, unmap, release;
  for (int i = 0; i < iters; ++i) {
    CUmemGenericAllocationHandle h = 0;
    const bool raw_ok =
        Time(create.raw, [&] { return api.cuMemCreate(&h, page, &prop, 0) == CUDA_SUCCESS; }) &&
        Time(map.raw, [&] { return api.cuMemMap(raw_va, page, 0, h, 0) == CUDA_SUCCESS; }) &&
        Time(set_access.raw,
             [&] { return api.cuMemSetAccess(raw_va, page, &access, 1) == CUDA_SUCCESS; }) &&
        Time(unmap.raw, [&] { return api.cuMemUnmap(raw_va, page) == CUDA_SUCCESS; }) &&
        Time(release.raw, [&] { return api.cuMemRelease(h) == CUDA_SUCCESS; });
    if (!raw_ok) {
      std::fprintf(stderr, "error: a raw VMM call failed in iteration %d\n", i);
      return false;
    }
    vmm::AllocHandle a;
    vmm::SyncNote note;
    const bool eng_ok =
        Time(create.engine, [&] { return Check(engine.Create(page, &a)); }) &&
        Time(map.engine, [&] { return Check(engine.Map(eng_va, page, 0, a)); }) &&
        Time(set_access.engine,
             [&] { return Check(engine.SetAccess(eng_va, page, vmm::Access::kReadWrite)); }) &&
        Time(unmap.engine, [&] { return Check(engine.Unmap(eng_va, page, &note)); }) &&
        Time(release.engine, [&] { return Check(engine.Release(a, &note)); });
    if (!eng_ok) return false;
  }
  std::printf("VMM, one %llu KiB page (us)   %10s %10s %8s\n",
              static_cast<unsigned long long>(page >> 10), "raw", "engine", "ratio");
  PrintRatio("create", create);
  PrintRatio("map", map);
  PrintRatio("set_access", set_access);
  PrintRatio("unmap (engine: + sync)", unmap);
  PrintRatio("release (engine: + sync)", release);
  return Check(CU_CALL(api, cuMemAddressFree(raw_va, page))) && Check(engine.Free(eng_va, page));
}

// A 256^2 matmul graph: capture+instantiate, exec update, replay+sync; raw runtime vs Engine.
bool BenchGraphs(vmm::Engine& engine, vmm::DevicePtr a, vmm::DevicePtr b, vmm::DevicePtr c,
                 uint32_t n, int iters) {
  cudaStream_t stream = nullptr;
  if (!Check(CUDA_CALL(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)))) return false;
  auto* fa = reinterpret_cast<const float*>(a);
  auto* fb = reinterpret_cast<const float*>(b);
  auto* fc = reinterpret_cast<float*>(c);
  auto raw_capture = [&](cudaGraph_t* g) {
    return cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess &&
           vmm::kernels::LaunchMatmul(fa, fb, fc, n, n, n, stream) == 0 &&
           cudaStreamEndCapture(stream, g) == cudaSuccess;
  };
  // As the executor captures: every node is named after its step (one cudaStreamGetCaptureInfo).
  auto eng_capture = [&](vmm::GraphHandle* g) {
    return Check(engine.BeginCapture()) && Check(engine.Matmul({a, b, c, n, n, n}, nullptr)) &&
           Check(engine.NameCapturedNode("matmul")) && Check(engine.EndCapture(g));
  };
  Series instantiate, update, replay, replay_timed;
  bool ok = true;
  for (int i = 0; i < iters && ok; ++i) {
    cudaGraph_t g1 = nullptr, g2 = nullptr;
    cudaGraphExec_t exec = nullptr;
    ok = Time(instantiate.raw, [&] {
      return raw_capture(&g1) && cudaGraphInstantiate(&exec, g1, 0) == cudaSuccess;
    });
    ok = ok && raw_capture(&g2);
    cudaGraphExecUpdateResultInfo info = {};
    ok =
        ok && Time(update.raw, [&] { return cudaGraphExecUpdate(exec, g2, &info) == cudaSuccess; });
    ok = ok && Time(replay.raw, [&] {
           return cudaGraphLaunch(exec, stream) == cudaSuccess &&
                  cudaStreamSynchronize(stream) == cudaSuccess;
         });
    if (exec != nullptr) cudaGraphExecDestroy(exec);
    if (g1 != nullptr) cudaGraphDestroy(g1);
    if (g2 != nullptr) cudaGraphDestroy(g2);
    if (!ok) {
      std::fprintf(stderr, "error: a raw graph call failed in iteration %d\n", i);
      break;
    }
    vmm::GraphHandle h1, h2;
    vmm::ExecHandle e;
    vmm::UpdateResult result;
    vmm::OpTiming timing;
    ok = Time(instantiate.engine,
              [&] { return eng_capture(&h1) && Check(engine.Instantiate(h1, &e)); }) &&
         eng_capture(&h2) &&
         Time(update.engine, [&] { return Check(engine.Update(e, h2, &result)); }) &&
         Time(replay.engine, [&] { return Check(engine.Replay(e, nullptr)); }) &&
         Time(replay_timed.engine, [&] { return Check(engine.Replay(e, &timing)); }) &&
         Check(engine.DestroyExec(e)) && Check(engine.DestroyGraph(h1)) &&
         Check(engine.DestroyGraph(h2));
  }
  cudaStreamDestroy(stream);
  if (!ok) return false;
  replay_timed.raw = replay.raw;  // the timed row shows what the two events add
  std::printf("graph, %u^2 matmul (us)         %10s %10s %9s\n", n, "raw", "engine", "diff");
  PrintDiff("capture + instantiate", instantiate);
  PrintDiff("exec update", update);
  PrintDiff("replay + sync", replay);
  PrintDiff("replay + sync (timed)", replay_timed);
  return true;
}

// Per-node updates of an exec holding a memset of C and C = A·B: cudaGraphExecKernelNodeSetParams
// (the matmul reads A and B in turn), cudaGraphExecMemsetNodeSetParams (a new value) and
// cudaGraphNodeSetEnabled (off and on), raw vs Engine::SetNodeParams / SetNodeEnabled.
bool BenchNodeUpdates(vmm::Engine& engine, vmm::DevicePtr a, vmm::DevicePtr b, vmm::DevicePtr c,
                      uint32_t n, int iters) {
  cudaStream_t stream = nullptr;
  if (!Check(CUDA_CALL(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)))) return false;
  auto* fa = reinterpret_cast<const float*>(a);
  auto* fb = reinterpret_cast<const float*>(b);
  auto* fc = reinterpret_cast<float*>(c);
  const uint64_t count = uint64_t{n} * n;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  bool ok = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess &&
            cudaMemsetAsync(fc, 0, count * 4, stream) == cudaSuccess &&
            vmm::kernels::LaunchMatmul(fa, fb, fc, n, n, n, stream) == 0 &&
            cudaStreamEndCapture(stream, &graph) == cudaSuccess &&
            cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess;
  cudaGraphNode_t nodes[2] = {nullptr, nullptr}, kernel = nullptr, memset = nullptr;
  size_t num = 2;
  ok = ok && cudaGraphGetNodes(graph, nodes, &num) == cudaSuccess && num == 2;
  for (size_t i = 0; ok && i < num; ++i) {
    cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
    ok = cudaGraphNodeGetType(nodes[i], &type) == cudaSuccess;
    (type == cudaGraphNodeTypeKernel ? kernel : memset) = nodes[i];
  }
  cudaMemsetParams memset_params = {};
  ok = ok && kernel != nullptr && memset != nullptr &&
       cudaGraphMemsetNodeGetParams(memset, &memset_params) == cudaSuccess;
  const vmm::kernels::LaunchConfig launch = vmm::kernels::MatmulLaunch(n, n);
  auto raw_kernel = [&](const float* left) {
    const float* ka = left;
    const float* kb = fb;
    float* kc = fc;
    uint32_t m = n, nn = n, k = n;
    void* args[] = {&ka, &kb, &kc, &m, &nn, &k};
    cudaKernelNodeParams p = {};
    p.func = reinterpret_cast<void*>(&vmm_matmul_f32);
    p.gridDim = dim3(launch.grid[0], launch.grid[1], launch.grid[2]);
    p.blockDim = dim3(launch.block[0], launch.block[1], launch.block[2]);
    p.sharedMemBytes = launch.shared_bytes;
    p.kernelParams = args;
    return cudaGraphExecKernelNodeSetParams(exec, kernel, &p) == cudaSuccess;
  };
  vmm::GraphHandle h;
  vmm::ExecHandle e;
  ok = ok && Check(engine.BeginCapture()) && Check(engine.Memset(c, count, 0, nullptr)) &&
       Check(engine.NameCapturedNode("zero C")) &&
       Check(engine.Matmul({a, b, c, n, n, n}, nullptr)) &&
       Check(engine.NameCapturedNode("C = A·B")) && Check(engine.EndCapture(&h)) &&
       Check(engine.Instantiate(h, &e));
  Series kernel_params, memset_params_s, enable;
  for (int i = 0; i < iters && ok; ++i) {
    const float* left = i % 2 == 0 ? fb : fa;               // A·B or B·B: both read valid memory
    memset_params.value = static_cast<unsigned>(i & 0xff);  // a byte memset (cudaMemsetAsync)
    ok =
        Time(kernel_params.raw, [&] { return raw_kernel(left); }) &&
        Time(memset_params_s.raw,
             [&] {
               return cudaGraphExecMemsetNodeSetParams(exec, memset, &memset_params) == cudaSuccess;
             }) &&
        Time(enable.raw, [&] {
          return cudaGraphNodeSetEnabled(exec, memset, 0) == cudaSuccess &&
                 cudaGraphNodeSetEnabled(exec, memset, 1) == cudaSuccess;
        });
    vmm::NodeParams mm;
    mm.kind = vmm::NodeParams::Kind::kMatmul;
    mm.matmul = {i % 2 == 0 ? b : a, b, c, n, n, n};
    vmm::NodeParams ms;
    ms.kind = vmm::NodeParams::Kind::kMemset;
    ms.dst = c;
    ms.count = count;
    ms.pattern = static_cast<uint32_t>(i);
    ok =
        ok &&
        Time(kernel_params.engine, [&] { return Check(engine.SetNodeParams(e, "C = A·B", mm)); }) &&
        Time(memset_params_s.engine,
             [&] { return Check(engine.SetNodeParams(e, "zero C", ms)); }) &&
        Time(enable.engine, [&] {
          return Check(engine.SetNodeEnabled(e, "zero C", false)) &&
                 Check(engine.SetNodeEnabled(e, "zero C", true));
        });
  }
  if (exec != nullptr) cudaGraphExecDestroy(exec);
  if (graph != nullptr) cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
  if (!ok) {
    std::fprintf(stderr, "error: a per-node update failed\n");
    return false;
  }
  ok = Check(engine.DestroyExec(e)) && Check(engine.DestroyGraph(h));
  std::printf("per-node update, %u^2 matmul (us) %10s %10s %9s\n", n, "raw", "engine", "diff");
  PrintDiff("kernel node params", kernel_params);
  PrintDiff("memset node params", memset_params_s);
  PrintDiff("disable + enable node", enable);
  return ok;
}

// Median device time of `runs` matmuls n x n x n (event timing, as the executor asks for it);
// then, when graph_iters > 0, the graph figures on the same buffers.
bool BenchMatmul(vmm::Engine& engine, uint32_t n, int runs, int graph_iters) {
  const uint64_t gran = engine.info().granularity_min;
  const uint64_t elems = uint64_t{n} * n;
  const uint64_t size = (elems * 4 + gran - 1) / gran * gran;
  vmm::DevicePtr va[3];
  for (vmm::DevicePtr& v : va) {
    vmm::AllocHandle h;
    if (!Check(engine.Reserve(size, 0, &v)) || !Check(engine.Create(size, &h)) ||
        !Check(engine.Map(v, size, 0, h)) ||
        !Check(engine.SetAccess(v, size, vmm::Access::kReadWrite)) ||
        !Check(engine.Fill(v, elems, 1 + (&v - va), nullptr)))
      return false;
  }
  std::vector<double> us;
  for (int i = 0; i < runs; ++i) {
    vmm::OpTiming t;
    if (!Check(engine.Matmul({va[0], va[1], va[2], n, n, n}, &t))) return false;
    us.push_back(t.gpu_us);
  }
  const double median = Median(us);
  std::printf("matmul %u^2 fp32: %.1f us device time (median of %d), %.2f TFLOP/s\n", n, median,
              runs, 2.0 * static_cast<double>(n) * n * n / (median * 1e6));
  if (graph_iters > 0) {
    return BenchGraphs(engine, va[0], va[1], va[2], n, graph_iters) &&
           BenchNodeUpdates(engine, va[0], va[1], va[2], n, graph_iters);
  }
  return true;  // the engine frees the buffers when it goes
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 500;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--iters") == 0 && i + 1 < argc) {
      iters = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--iters N]\n", argv[0]);
      return 2;
    }
  }
  if (iters < 1) {
    std::fprintf(stderr, "error: --iters must be at least 1\n");
    return 2;
  }
  vmm::StatusOr<std::unique_ptr<vmm::Engine>> created = vmm::CreateCudaEngine(0);
  if (!created.ok()) {
    const std::string& why = created.status().message();
    std::printf("skipped: %s%s\n",
                why.rfind("no CUDA", 0) == 0 ? "" : "no CUDA device: ", why.c_str());
    return 0;
  }
  std::unique_ptr<vmm::Engine> engine = std::move(created).value();
  // The engine made device 0's primary context current on this thread: raw calls run in it too.
  vmm::StatusOr<vmm::cuda::DriverApi> api = vmm::cuda::LoadDriverApi();
  if (!api.ok()) return Check(api.status()) ? 0 : 1;
  const vmm::DeviceInfo& info = engine->info();
  std::printf(
      "device: %s (cc %s, driver %s, runtime %s), granularity %llu B, %d iterations, "
      "medians\n",
      info.name.c_str(), info.compute_capability.c_str(), info.driver_version.c_str(),
      info.runtime_version.c_str(), static_cast<unsigned long long>(info.granularity_min), iters);
  {  // What the engine's per-call context check (cuCtxGetCurrent) costs, warm.
    constexpr int kCalls = 100000;
    CUcontext current = nullptr;
    const Clock::time_point start = Clock::now();
    for (int i = 0; i < kCalls; ++i) api->cuCtxGetCurrent(&current);
    std::printf("cuCtxGetCurrent: %.1f ns per call (warm loop)\n", Micros(start) * 1000 / kCalls);
  }
  const uint64_t page = std::max<uint64_t>(2ull << 20, info.granularity_min);
  bool ok = BenchVmm(*api, *engine, page, iters);
  ok = ok && BenchMatmul(*engine, 256, 50, iters);
  ok = ok && BenchMatmul(*engine, 8192, 5, 0);
  return ok ? 0 : 1;
}
