// The data plane at the speed of HBM (issue 12): the CUDA engine's checks, snapshots, copies and
// matmul against the raw runtime calls (and cuBLAS sgemm, when the toolkit has it) measured in the
// same run, medians of N runs. Torch peers (torch.equal, copies, matmul) come from
// bench/peer_torch.py, run separately on the same machine: this prints ms and GB/s so the two can
// be put side by side. Prints figures; asserts nothing. Without a usable CUDA device it prints
// "skipped: ..." and exits 0.
//
//   data_plane_bench [--runs N] [--gib G]   (N >= 1, default 10; G: the check size, default 4)
//
// Targets (issue 12): check_equal G GiB vs G GiB at >= 70% of torch.equal's read bandwidth
// (4 GiB in <= 4 ms on the H200); copies >= 90% of raw cudaMemcpy; check_matmul at 4096^2 no more
// than the product; matmul >= 0.8x cuBLAS sgemm at 4096^2 and 8192^2.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runner/base/status.h"
#include "runner/engine/cuda/cuda_engine.h"
#include "runner/engine/engine.h"

#if defined(VMM_HAVE_CUBLAS)
#include <cublas_v2.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;
constexpr uint64_t kGiB = 1ull << 30;

double Median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 == 1 ? v[h] : (v[h - 1] + v[h]) / 2;
}

bool Ok(const vmm::Status& s) {
  if (!s.ok()) std::fprintf(stderr, "error: %s\n", s.message().c_str());
  return s.ok();
}

bool Ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) std::fprintf(stderr, "error: %s: %s\n", what, cudaGetErrorString(e));
  return e == cudaSuccess;
}

// Median wall milliseconds of `runs` calls of `fn` (each must finish its work before returning),
// after one warm-up call; -1 when a call fails.
double WallMs(int runs, const std::function<bool()>& fn) {
  if (!fn()) return -1;
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    const Clock::time_point start = Clock::now();
    if (!fn()) return -1;
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  return Median(ms);
}

double GBps(uint64_t bytes, double ms) { return ms > 0 ? bytes / (ms * 1e6) : 0; }

void Row(const char* what, double ms, double gbps, const char* ref, double ref_ms) {
  std::printf("  %-44s %9.3f ms %8.1f GB/s", what, ms, gbps);
  if (ref != nullptr && ref_ms > 0) {
    std::printf("   | %-26s %9.3f ms  ratio %.2f", ref, ref_ms, ref_ms / ms);
  }
  std::printf("\n");
}

// A buffer of `bytes` in one VMM allocation with read_write access.
bool NewBuffer(vmm::Engine& e, uint64_t bytes, vmm::DevicePtr* va) {
  const uint64_t g = e.info().granularity_recommended;
  const uint64_t size = (bytes + g - 1) / g * g;
  vmm::AllocHandle h;
  return Ok(e.Reserve(size, 0, va)) && Ok(e.Create(size, &h)) && Ok(e.Map(*va, size, 0, h)) &&
         Ok(e.SetAccess(*va, size, vmm::Access::kReadWrite));
}

struct Options {
  int runs = 10;
  uint64_t gib = 4;
};

bool Checks(vmm::Engine& e, const Options& o) {
  const uint64_t bytes = o.gib * kGiB, count = bytes / 4;
  vmm::DevicePtr a = 0, b = 0;
  if (!NewBuffer(e, bytes, &a) || !NewBuffer(e, bytes, &b)) return false;
  if (!Ok(e.Fill(a, count, 1, nullptr)) || !Ok(e.Fill(b, count, 1, nullptr))) return false;
  if (!Ok(e.Synchronize())) return false;
  std::printf("checks over %llu GiB (reads: both operands)\n",
              static_cast<unsigned long long>(o.gib));
  const double raw_copy = WallMs(o.runs, [&] {
    // A device-to-device cudaMemcpy does not wait for the copy on the host: wait for it here, or
    // the row times the enqueue only (it printed 0.010 ms for 4 GiB on the H200).
    return Ok(cudaMemcpy(reinterpret_cast<void*>(b), reinterpret_cast<void*>(a), bytes,
                         cudaMemcpyDeviceToDevice),
              "cudaMemcpy D2D") &&
           Ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  });
  Row("raw cudaMemcpy D2D (reads + writes)", raw_copy, GBps(2 * bytes, raw_copy), nullptr, 0);
  vmm::DataCompareResult r;
  const double eq = WallMs(o.runs, [&] {
    return Ok(e.CompareData(a, vmm::DataRef::Device(b), count, {}, &r)) && r.mismatches == 0;
  });
  Row("check_equal buffer vs buffer (+ both hashes)", eq, GBps(2 * bytes, eq), nullptr, 0);
  vmm::SnapshotHandle snap;
  if (!Ok(e.AllocSnapshot(bytes, vmm::DataPlace::kDevice, &snap))) return false;
  vmm::OpTiming copy_timing;
  uint64_t hash = 0;
  // The snapshot step as the executor runs it (storage allocated once, outside the timing): one
  // pass that copies and hashes; beside it, the copy and then the hash as two calls (before).
  const double two_calls = WallMs(o.runs, [&] {
    return Ok(e.Copy(vmm::DataRef::Of(snap), vmm::DataRef::Device(a), bytes, &copy_timing)) &&
           Ok(e.Checksum(a, count, &hash));
  });
  const uint64_t two_call_hash = hash;
  const double snap_ms = WallMs(o.runs, [&] {
    return Ok(e.CopyHashed(vmm::DataRef::Of(snap), a, count, &copy_timing, &hash)) &&
           hash == two_call_hash;
  });
  Row("snapshot to device, copy then hash (2 calls)", two_calls, GBps(2 * bytes, two_calls),
      "raw cudaMemcpy D2D", raw_copy);
  Row("snapshot to device (copy + hash, one pass)", snap_ms, GBps(2 * bytes, snap_ms),
      "raw cudaMemcpy D2D", raw_copy);
  vmm::CompareOptions known;
  known.other_hash_known = true;
  known.other_hash = hash;
  const double eq_snap = WallMs(o.runs, [&] {
    return Ok(e.CompareData(a, vmm::DataRef::Of(snap), count, known, &r)) && r.mismatches == 0;
  });
  Row("check_equal vs device snapshot (hash known)", eq_snap, GBps(2 * bytes, eq_snap), nullptr, 0);
  // One flipped word: the pick and collect passes run too.
  const uint32_t flipped = 0x7f800001u;
  if (!Ok(cudaMemcpy(reinterpret_cast<void*>(b + bytes - 4096), &flipped, 4,
                     cudaMemcpyHostToDevice),
          "poke")) {
    return false;
  }
  const double eq_bad = WallMs(o.runs, [&] {
    return Ok(e.CompareData(a, vmm::DataRef::Device(b), count, {}, &r)) && r.mismatches == 1;
  });
  Row("check_equal, one mismatch near the end", eq_bad, GBps(2 * bytes, eq_bad), nullptr, 0);
  if (!Ok(e.Memset(b, count, 0xA5A5A5A5u, nullptr))) return false;
  const double value = WallMs(o.runs, [&] {
    return Ok(e.CompareValue(b, 0xA5A5A5A5u, count, 8, &r)) && r.mismatches == 0;
  });
  Row("check_value (+ hash)", value, GBps(bytes, value), nullptr, 0);
  std::printf("  peer: python3 bench/peer_torch.py (torch.equal over the same sizes)\n");
  return Ok(e.FreeSnapshot(snap));
}

bool Copies(vmm::Engine& e, const Options& o) {
  const uint64_t bytes = kGiB;
  vmm::DevicePtr d = 0;
  if (!NewBuffer(e, bytes, &d) || !Ok(e.Fill(d, bytes / 4, 3, nullptr))) return false;
  std::printf("copies of 1 GiB (engine Copy vs raw cudaMemcpy of the same bytes, same run)\n");
  for (vmm::DataPlace place : {vmm::DataPlace::kHostPinned, vmm::DataPlace::kHostPageable}) {
    const bool pinned = place == vmm::DataPlace::kHostPinned;
    vmm::SnapshotHandle snap;
    if (!Ok(e.AllocSnapshot(bytes, place, &snap))) return false;
    void* raw = nullptr;
    if (pinned) {
      if (!Ok(cudaHostAlloc(&raw, bytes, cudaHostAllocPortable), "cudaHostAlloc")) return false;
    } else {
      raw = std::malloc(bytes);
      if (raw == nullptr) return false;
    }
    std::memset(raw, 0, bytes);  // both host sides touched before timing
    std::memset(reinterpret_cast<void*>(snap.addr), 0, bytes);
    vmm::OpTiming t;
    void* dev = reinterpret_cast<void*>(d);
    const double raw_d2h = WallMs(o.runs, [&] {
      return Ok(cudaMemcpy(raw, dev, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
    });
    const double eng_d2h = WallMs(o.runs, [&] {
      return Ok(e.Copy(vmm::DataRef::Of(snap), vmm::DataRef::Device(d), bytes, &t));
    });
    const double raw_h2d = WallMs(o.runs, [&] {
      return Ok(cudaMemcpy(dev, raw, bytes, cudaMemcpyHostToDevice), "cudaMemcpy H2D");
    });
    const double eng_h2d = WallMs(o.runs, [&] {
      return Ok(e.Copy(vmm::DataRef::Device(d), vmm::DataRef::Of(snap), bytes, &t));
    });
    Row(pinned ? "device to host, pinned" : "device to host, pageable", eng_d2h,
        GBps(bytes, eng_d2h), "raw cudaMemcpy", raw_d2h);
    Row(pinned ? "host to device, pinned" : "host to device, pageable", eng_h2d,
        GBps(bytes, eng_h2d), "raw cudaMemcpy", raw_h2d);
    uint64_t hash = 0;
    const double snap_host = WallMs(
        o.runs, [&] { return Ok(e.CopyHashed(vmm::DataRef::Of(snap), d, bytes / 4, &t, &hash)); });
    Row(pinned ? "snapshot to host, pinned (copy + hash)" : "snapshot to host, pageable", snap_host,
        GBps(bytes, snap_host), "raw cudaMemcpy D2H", raw_d2h);
    if (pinned) {
      cudaFreeHost(raw);
    } else {
      std::free(raw);
    }
    if (!Ok(e.FreeSnapshot(snap))) return false;
  }
  return true;
}

#if defined(VMM_HAVE_CUBLAS)
// Row-major C = A B as cuBLAS (column-major) computes C^T = B^T A^T; fp32, TF32 off (the default
// math mode), median device time of `runs` launches.
double CublasMs(int runs, const float* a, const float* b, float* c, int m, int n, int k) {
  cublasHandle_t handle = nullptr;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) return -1;
  cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH);
  const float one = 1, zero = 0;
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::vector<double> ms;
  for (int i = 0; i <= runs; ++i) {
    cudaEventRecord(start);
    cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, n, a, k, &zero, c, n);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float t = 0;
    cudaEventElapsedTime(&t, start, stop);
    if (i > 0) ms.push_back(t);  // the first launch warms up
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cublasDestroy(handle);
  return Median(ms);
}
#endif

bool Matmuls(vmm::Engine& e, const Options& o) {
  std::printf("matmul fp32 (device time) and check_matmul on the device\n");
  for (uint32_t n : {4096u, 8192u}) {
    const uint64_t bytes = uint64_t{n} * n * 4;
    vmm::DevicePtr a = 0, b = 0, c = 0, c2 = 0;
    if (!NewBuffer(e, bytes, &a) || !NewBuffer(e, bytes, &b) || !NewBuffer(e, bytes, &c) ||
        !NewBuffer(e, bytes, &c2)) {
      return false;
    }
    if (!Ok(e.Fill(a, bytes / 4, 1, nullptr)) || !Ok(e.Fill(b, bytes / 4, 2, nullptr)))
      return false;
    std::vector<double> ms;
    for (int i = 0; i <= o.runs; ++i) {
      vmm::OpTiming t;
      if (!Ok(e.Matmul({a, b, c, n, n, n}, &t))) return false;
      if (i > 0) ms.push_back(t.gpu_us / 1000);
    }
    const double mm = Median(ms);
    const double tflops = 2.0 * n * n * n / (mm * 1e9);
    double ref = -1;
#if defined(VMM_HAVE_CUBLAS)
    ref = CublasMs(o.runs, reinterpret_cast<const float*>(a), reinterpret_cast<const float*>(b),
                   reinterpret_cast<float*>(c2), n, n, n);
#endif
    char what[64];
    std::snprintf(what, sizeof what, "matmul %u^2 (%.1f TFLOP/s)", n, tflops);
    Row(what, mm, 0, ref > 0 ? "cuBLAS sgemm, TF32 off" : nullptr, ref);
    vmm::MatmulCheckResult check;
    const double chk = WallMs(o.runs, [&] {
      return Ok(e.CheckMatmul({a, b, c, n, n, n}, 8, &check)) && check.mismatches == 0;
    });
    std::snprintf(what, sizeof what, "check_matmul %u^2 on the device (%s)", n, check.method());
    Row(what, chk, 0, "the product itself", mm);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--runs") == 0) o.runs = std::max(1, std::atoi(argv[i + 1]));
    if (std::strcmp(argv[i], "--gib") == 0) o.gib = std::max(1, std::atoi(argv[i + 1]));
  }
  vmm::StatusOr<std::unique_ptr<vmm::Engine>> engine = vmm::CreateCudaEngine(0);
  if (!engine.ok()) {
    std::printf("skipped: %s\n", engine.status().message().c_str());
    return 0;
  }
  vmm::Engine& e = **engine;
  std::printf("data_plane_bench on %s (driver %s), median of %d runs\n", e.info().name.c_str(),
              e.info().driver_version.c_str(), o.runs);
  const bool ok = Checks(e, o) && Copies(e, o) && Matmuls(e, o);
  return ok ? 0 : 1;
}
