#include "runner/engine/host/host_data.h"

#include <cstring>
#include <iterator>
#include <tuple>
#include <utility>

#include "runner/base/format.h"
#include "runner/base/stopwatch.h"
#include "runner/engine/host/cpu_checks.h"
#include "runner/engine/matmul_verify.h"

namespace vmm::host {
namespace {

// The device kernels these checks stand for (kernels/compare.cu, kernels/matmul_check.cu).
constexpr const char* kCompareKernel = "vmm_compare_count";
constexpr const char* kValueKernel = "vmm_value_count";
constexpr const char* kMatmulCheckKernel = "vmm_matmul_check";

uint64_t Bytes4(uint64_t count) { return count > UINT64_MAX / 4 ? UINT64_MAX : count * 4; }

template <typename T>
T* Ptr(DevicePtr va) {
  return reinterpret_cast<T*>(va);
}

// The driver function a copy between these places is.
const char* CopyFunction(DataRef dst, DataRef src) {
  const bool from_host = IsHostPlace(src.place), to_host = IsHostPlace(dst.place);
  if (from_host && to_host) return "cuMemcpyAsync";
  if (from_host) return "cuMemcpyHtoDAsync";
  if (to_host) return "cuMemcpyDtoHAsync";
  return "cuMemcpyDtoDAsync";
}

}  // namespace

Status HostDataPlane::AllocSnapshot(uint64_t bytes, DataPlace place, SnapshotHandle* out) {
  if (bytes == 0) {
    return CudaError(IsHostPlace(place) ? "cuMemHostAlloc" : "cuMemAlloc", kInvalidValue,
                     "a snapshot of 0 bytes");
  }
  StatusOr<HostPages> pages = MapHostPages(bytes);
  if (!pages.ok()) {
    return CudaError(IsHostPlace(place) ? "cuMemHostAlloc" : "cuMemAlloc",
                     "CUDA_ERROR_OUT_OF_MEMORY", pages.status().message());
  }
  Region region;
  region.id = ids_->Next();
  region.place = place;
  region.bytes = bytes;
  region.pages = std::move(pages).value();
  const auto addr = reinterpret_cast<DevicePtr>(region.pages.get().addr);
  *out = SnapshotHandle{region.id, addr, bytes, place};
  regions_.emplace(addr, std::move(region));
  return Status::Ok();
}

Status HostDataPlane::FreeSnapshot(const SnapshotHandle& snapshot) {
  auto it = regions_.find(snapshot.addr);
  if (it == regions_.end() || it->second.id != snapshot.value) {
    return CudaError(IsHostPlace(snapshot.place) ? "cuMemFreeHost" : "cuMemFree", kInvalidValue,
                     "unknown or freed snapshot " + Hex(snapshot.value));
  }
  regions_.erase(it);
  return Status::Ok();
}

Status HostDataPlane::CheckRef(const std::string& function, const char* error, const char* operand,
                               DataRef ref, uint64_t bytes, Access need, int device) const {
  // The snapshot whose storage starts at or below ref.addr, if it holds the whole range.
  auto it = regions_.upper_bound(ref.addr);
  if (it != regions_.begin()) {
    const Region& region = std::prev(it)->second;
    const uint64_t start = std::prev(it)->first;
    if (ref.addr - start <= region.bytes && bytes <= region.bytes - (ref.addr - start)) {
      if (IsHostPlace(region.place) == IsHostPlace(ref.place)) return Status::Ok();
    }
  }
  if (!IsHostPlace(ref.place)) {
    return space_->CheckAccess(function, error, operand, ref.addr, bytes, need, device);
  }
  return CudaError(function, error,
                   std::string(operand) + " " + Hex(ref.addr) + " + " + FormatBytes(bytes) +
                       " is not inside one host snapshot");
}

Status HostDataPlane::Copy(DataRef dst, DataRef src, uint64_t bytes, OpTiming* timing,
                           int device) const {
  if (timing != nullptr) timing->gpu_us = -1;
  const char* fn = CopyFunction(dst, src);
  VMM_RETURN_IF_ERROR(CheckRef(fn, kInvalidValue, "src", src, bytes, Access::kRead, device));
  VMM_RETURN_IF_ERROR(CheckRef(fn, kInvalidValue, "dst", dst, bytes, Access::kReadWrite, device));
  Stopwatch watch;
  if (bytes != 0) std::memmove(Ptr<void>(dst.addr), Ptr<const void>(src.addr), bytes);
  if (timing != nullptr) timing->gpu_us = watch.ElapsedUs();
  return Status::Ok();
}

Status HostDataPlane::CompareData(DevicePtr a, DataRef b, uint64_t count,
                                  const CompareOptions& options, int device,
                                  DataCompareResult* out) const {
  VMM_RETURN_IF_ERROR(CheckRef(kCompareKernel, kIllegalAddress, "a", DataRef::Device(a),
                               Bytes4(count), Access::kRead, device));
  VMM_RETURN_IF_ERROR(
      CheckRef(kCompareKernel, kIllegalAddress, "b", b, Bytes4(count), Access::kRead, device));
  *out = CompareWordsRef(Ptr<const void>(a), Ptr<const void>(b.addr), count, options);
  return Status::Ok();
}

Status HostDataPlane::CompareValue(DevicePtr a, uint32_t pattern, uint64_t count,
                                   uint32_t max_report, int device, DataCompareResult* out) const {
  VMM_RETURN_IF_ERROR(CheckRef(kValueKernel, kIllegalAddress, "a", DataRef::Device(a),
                               Bytes4(count), Access::kRead, device));
  *out = CompareValueRef(Ptr<const void>(a), pattern, count, max_report);
  return Status::Ok();
}

Status HostDataPlane::CheckMatmul(const MatmulArgs& m, uint32_t max_report, int device,
                                  MatmulCheckResult* out) const {
  const uint64_t mk = uint64_t{m.m} * m.k, kn = uint64_t{m.k} * m.n, mn = uint64_t{m.m} * m.n;
  for (auto [operand, va, count] :
       {std::tuple{"a", m.a, mk}, std::tuple{"b", m.b, kn}, std::tuple{"c", m.c, mn}}) {
    VMM_RETURN_IF_ERROR(CheckRef(kMatmulCheckKernel, kIllegalAddress, operand, DataRef::Device(va),
                                 Bytes4(count), Access::kRead, device));
  }
  *out = VerifyMatmul(Ptr<const float>(m.a), Ptr<const float>(m.b), Ptr<const float>(m.c), m.m, m.n,
                      m.k, max_report < kMaxCompareReport ? max_report : kMaxCompareReport);
  return Status::Ok();
}

}  // namespace vmm::host
