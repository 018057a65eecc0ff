// CudaEngine's data plane: snapshot storage, copies with a host side, and the data checks judged on
// the device (kernels/check_kernels.h). A check enqueues its passes back to back and reads back
// one CheckState of a few hundred bytes: nothing proportional to the data crosses PCIe, except
// the words of a host snapshot a check compares against (staged to the device in pieces).
#include <algorithm>
#include <bit>
#include <cstddef>
#include <string>
#include <utility>

#include "kernels/check_kernels.h"
#include "kernels/matmul_bound.h"
#include "runner/base/format.h"
#include "runner/engine/cuda/cuda_call.h"
#include "runner/engine/cuda/cuda_engine_impl.h"

namespace vmm::cuda {
namespace {

using kernels::CheckState;
constexpr size_t kZeroedBytes = kernels::kCheckZeroedBytes;  // totals and bad_rows

// A compare against a host snapshot stages this many words per piece (64 MiB of device memory).
constexpr uint64_t kStagingWords = 16ull << 20;

}  // namespace

struct CudaEngine::WordCheck {
  DevicePtr a = 0;
  const uint32_t* b = nullptr;  // null: compare with `pattern`
  uint32_t pattern = 0;
  uint64_t count = 0;
  uint64_t index_base = 0;  // index of a's first word in the whole check
  bool hash_a = false;
  uint32_t max_report = 0;  // mismatches this pass may still name
};

// --- Snapshots ---

Status CudaEngine::AllocSnapshot(uint64_t bytes, DataPlace place, SnapshotHandle* out) {
  auto what = [&] {
    return "AllocSnapshot(bytes=" + FormatBytes(bytes) + ", place=" + DataPlaceName(place) + ")";
  };
  VMM_RETURN_IF_ERROR(Bind());
  if (bytes == 0) return RuntimeError(what() + ": a snapshot of 0 bytes");
  SnapshotStorage storage;
  void* addr = nullptr;
  switch (place) {
    case DataPlace::kDevice: {
      StatusOr<DeviceMemory> memory = AllocDeviceMemory(bytes);
      if (!memory.ok()) return Annotate(memory.status(), what);
      storage.device = std::move(memory).value();
      addr = storage.device.get();
      break;
    }
    case DataPlace::kHostPinned: {
      StatusOr<PinnedHost> memory = AllocPinnedHost(bytes);
      if (!memory.ok()) return Annotate(memory.status(), what);
      storage.pinned = std::move(memory).value();
      addr = storage.pinned.get();
      break;
    }
    case DataPlace::kHostPageable: {
      StatusOr<HostPages> memory = MapHostPages(bytes);
      if (!memory.ok()) return Annotate(memory.status(), what);
      storage.pageable = std::move(memory).value();
      addr = storage.pageable.get().addr;
      break;
    }
  }
  storage.handle = SnapshotHandle{NextId(), reinterpret_cast<DevicePtr>(addr), bytes, place};
  *out = storage.handle;
  snapshots_.emplace(out->value, std::move(storage));
  return Status::Ok();
}

Status CudaEngine::FreeSnapshot(const SnapshotHandle& snapshot) {
  VMM_RETURN_IF_ERROR(Bind());
  auto it = snapshots_.find(snapshot.value);
  if (it == snapshots_.end()) {
    return RuntimeError("FreeSnapshot(" + std::to_string(snapshot.value) +
                        "): unknown snapshot (never allocated by this engine, or freed)");
  }
  // Copies and graphs in flight on any device may still read it (a freeing call during a capture
  // is refused by the runtime, which invalidates the capture, as on the host twin).
  VMM_RETURN_IF_ERROR(Annotate(SyncIfCapturing(), "FreeSnapshot"));
  VMM_RETURN_IF_ERROR(
      Annotate(WaitForStream(nullptr), "FreeSnapshot: waiting for copies in flight"));
  VMM_RETURN_IF_ERROR(Bind());
  snapshots_.erase(it);
  return Status::Ok();
}

// --- Copies ---

Status CudaEngine::Copy(DataRef dst, DataRef src, uint64_t bytes, OpTiming* timing) {
  const bool from_host = IsHostPlace(src.place), to_host = IsHostPlace(dst.place);
  // Device memory and device snapshots alike: a device-to-device copy (a memcpy node in a capture).
  if (!from_host && !to_host) return CopyDevice(dst.addr, src.addr, bytes, timing);
  // Pinned host snapshots become memcpy nodes in a capture, reading and writing the snapshot's own
  // memory when the graph runs (nothing is staged or allocated during the capture). Pageable
  // memory cannot be captured: the runtime would refuse and invalidate the capture, so it is
  // refused first, in the host twin's words.
  if (capturing_ &&
      (src.place == DataPlace::kHostPageable || dst.place == DataPlace::kHostPageable)) {
    if (timing != nullptr) timing->gpu_us = -1;
    return RuntimeError(
        "Copy: cudaMemcpyAsync: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: a captured copy cannot use "
        "pageable host memory; keep the snapshot pinned or on the device");
  }
  const cudaMemcpyKind kind = from_host && to_host ? cudaMemcpyHostToHost
                              : from_host          ? cudaMemcpyHostToDevice
                                                   : cudaMemcpyDeviceToHost;
  return CopyMemory(DevicePointer<void>(dst.addr), DevicePointer<const void>(src.addr), bytes, kind,
                    timing);
}

// --- Checks ---

Status CudaEngine::ReserveCheckScratch(Lane& lane, uint64_t chunks) {
  VMM_RETURN_IF_ERROR(
      lane.counts_scratch.Reserve(std::max<uint64_t>(chunks, 1) * sizeof(uint32_t)));
  VMM_RETURN_IF_ERROR(lane.check_scratch.Reserve(sizeof(CheckState)));
  if (!lane.check_readback) {
    StatusOr<PinnedHost> host = AllocPinnedHost(sizeof(CheckState));
    if (!host.ok()) return host.status();
    lane.check_readback = std::move(host).value();
  }
  return Status::Ok();
}

Status CudaEngine::RunWordCheck(const WordCheck& c, DataCompareResult* out, uint64_t* delta) {
  const uint64_t chunks = kernels::WordChunkCount(c.count);
  VMM_RETURN_IF_ERROR(ReserveCheckScratch(chunks));
  auto* state = static_cast<CheckState*>(lane_->check_scratch.data());
  auto* counts = static_cast<uint32_t*>(lane_->counts_scratch.data());
  const uint32_t* a = DevicePointer<const uint32_t>(c.a);
  Enqueuing enqueuing(*lane_);
  VMM_RETURN_IF_ERROR(CUDA_CALL(cudaMemsetAsync(state, 0, kZeroedBytes, stream())));
  if (c.b != nullptr) {
    VMM_RETURN_IF_ERROR(
        CUDA_CALL(kernels::LaunchCompareCount(a, c.b, c.count, c.index_base, c.hash_a, counts,
                                              &state->totals, StreamBlocks(), stream())));
  } else {
    VMM_RETURN_IF_ERROR(CUDA_CALL(kernels::LaunchValueCount(
        a, c.pattern, c.count, c.index_base, counts, &state->totals, StreamBlocks(), stream())));
  }
  VMM_RETURN_IF_ERROR(CUDA_CALL(kernels::LaunchPickChunks(counts, chunks, &state->totals,
                                                          c.max_report, &state->picked, stream())));
  if (c.b != nullptr) {
    VMM_RETURN_IF_ERROR(
        CUDA_CALL(kernels::LaunchCompareCollect(a, c.b, c.count, c.index_base, &state->picked,
                                                c.max_report, &state->report.words, stream())));
  } else {
    VMM_RETURN_IF_ERROR(
        CUDA_CALL(kernels::LaunchValueCollect(a, c.pattern, c.count, c.index_base, &state->picked,
                                              c.max_report, &state->report.words, stream())));
  }
  auto* back = static_cast<CheckState*>(lane_->check_readback.get());
  VMM_RETURN_IF_ERROR(CUDA_CALL(
      cudaMemcpyAsync(back, state, sizeof(CheckState), cudaMemcpyDeviceToHost, stream())));
  enqueuing.Done();
  VMM_RETURN_IF_ERROR(SyncStream());
  out->mismatches += back->totals.mismatches;
  out->hash += back->totals.hash;
  *delta += back->totals.delta;
  const uint64_t named = std::min<uint64_t>(back->totals.mismatches, c.max_report);
  for (uint64_t i = 0; i < named; ++i) {
    const kernels::WordReport& r = back->report.words;
    out->first.push_back({r.index[i], r.want[i], r.got[i]});
  }
  return Status::Ok();
}

Status CudaEngine::CompareData(DevicePtr a, DataRef b, uint64_t count,
                               const CompareOptions& options, DataCompareResult* out) {
  auto what = [&] {
    return "CompareData(a=" + Hex(a) + ", b=" + Hex(b.addr) + " " + DataPlaceName(b.place) +
           ", count=" + std::to_string(count) + ")";
  };
  VMM_RETURN_IF_ERROR(Bind());
  VMM_RETURN_IF_ERROR(Annotate(SyncIfCapturing(), what));
  *out = DataCompareResult{};
  const uint32_t max_report = std::min(options.max_report, kMaxCompareReport);
  const bool hash_a = !options.other_hash_known;
  uint64_t delta = 0;  // sum over mismatches of HashWord(b) - HashWord(a)
  if (!IsHostPlace(b.place)) {
    const WordCheck check{a,         DevicePointer<const uint32_t>(b.addr), 0, count, 0, hash_a,
                          max_report};
    VMM_RETURN_IF_ERROR(Annotate(RunWordCheck(check, out, &delta), what));
  } else {
    // The host words come to the device a piece at a time; the piece's check names indices and
    // hashes words by their place in the whole buffer (index_base).
    const uint64_t piece = std::min(count, kStagingWords);
    VMM_RETURN_IF_ERROR(
        Annotate(lane_->staging_scratch.Reserve(std::max<uint64_t>(piece, 1) * 4), what));
    auto* staged = static_cast<uint32_t*>(lane_->staging_scratch.data());
    for (uint64_t at = 0; at < count; at += piece) {
      const uint64_t n = std::min(piece, count - at);
      Enqueuing enqueuing(*lane_);
      VMM_RETURN_IF_ERROR(
          Annotate(CUDA_CALL(cudaMemcpyAsync(staged, DevicePointer<const uint32_t>(b.addr) + at,
                                             n * 4, cudaMemcpyHostToDevice, stream())),
                   what));
      const WordCheck check{a + at * 4,
                            staged,
                            0,
                            n,
                            at,
                            hash_a,
                            max_report - static_cast<uint32_t>(out->first.size())};
      enqueuing.Done();  // RunWordCheck marks its own work and waits for the stream
      VMM_RETURN_IF_ERROR(Annotate(RunWordCheck(check, out, &delta), what));
    }
  }
  // datagen.h: the hash is a wrapping sum over words, so the two sides differ exactly by delta.
  if (options.other_hash_known) {
    out->other_hash = options.other_hash;
    out->hash = options.other_hash - delta;
  } else {
    out->other_hash = out->hash + delta;
  }
  return Status::Ok();
}

Status CudaEngine::CompareValue(DevicePtr a, uint32_t pattern, uint64_t count, uint32_t max_report,
                                DataCompareResult* out) {
  auto what = [&] {
    return "CompareValue(a=" + Hex(a) + ", pattern=" + Hex(pattern) +
           ", count=" + std::to_string(count) + ")";
  };
  VMM_RETURN_IF_ERROR(Bind());
  VMM_RETURN_IF_ERROR(Annotate(SyncIfCapturing(), what));
  *out = DataCompareResult{};
  uint64_t delta = 0;
  const WordCheck check{
      a, nullptr, pattern, count, 0, true, std::min(max_report, kMaxCompareReport)};
  return Annotate(RunWordCheck(check, out, &delta), what);
}

Status CudaEngine::CheckMatmul(const MatmulArgs& args, uint32_t max_report,
                               MatmulCheckResult* out) {
  auto what = [&] {
    return "CheckMatmul(a=" + Hex(args.a) + ", b=" + Hex(args.b) + ", c=" + Hex(args.c) +
           ", m=" + std::to_string(args.m) + ", n=" + std::to_string(args.n) +
           ", k=" + std::to_string(args.k) + ")";
  };
  VMM_RETURN_IF_ERROR(Bind());
  VMM_RETURN_IF_ERROR(Annotate(SyncIfCapturing(), what));
  *out = MatmulCheckResult{};
  const uint32_t m = args.m, n = args.n, k = args.k;
  out->elements = uint64_t{m} * n;
  max_report = std::min(max_report, kMaxCompareReport);
  const double factor = matmul_bound::BoundFactor(k);
  const uint64_t chunks = kernels::MatmulChunkCount(m, n);
  VMM_RETURN_IF_ERROR(Annotate(ReserveCheckScratch(chunks), what));
  auto* state = static_cast<CheckState*>(lane_->check_scratch.data());
  auto* counts = static_cast<uint32_t*>(lane_->counts_scratch.data());
  const float* a = DevicePointer<const float>(args.a);
  const float* b = DevicePointer<const float>(args.b);
  const float* c = DevicePointer<const float>(args.c);
  out->freivalds = uint64_t{m} * n * k > matmul_bound::kFullReferenceLimit;
  Enqueuing enqueuing(*lane_);
  VMM_RETURN_IF_ERROR(Annotate(CUDA_CALL(cudaMemsetAsync(state, 0, kZeroedBytes, stream())), what));
  uint8_t* row_bad = nullptr;
  if (out->freivalds) {
    // r: 2 n doubles, br: 2 k, babs: k, then the m row flags.
    const uint64_t doubles = 2ull * n + 3ull * k;
    VMM_RETURN_IF_ERROR(
        Annotate(lane_->freivalds_scratch.Reserve(doubles * sizeof(double) + m), what));
    auto* r = static_cast<double*>(lane_->freivalds_scratch.data());
    double* br = r + 2ull * n;
    double* babs = br + 2ull * k;
    row_bad = reinterpret_cast<uint8_t*>(babs + k);
    VMM_RETURN_IF_ERROR(
        Annotate(CUDA_CALL(kernels::LaunchFreivalds(a, b, c, m, n, k, factor, r, br, babs, row_bad,
                                                    &state->bad_rows, StreamBlocks(), stream())),
                 what));
  }
  VMM_RETURN_IF_ERROR(Annotate(
      CUDA_CALL(kernels::LaunchMatmulRefCount(a, b, c, m, n, k, factor, row_bad, counts,
                                              &state->totals, lane_->sm_count * 8, stream())),
      what));
  VMM_RETURN_IF_ERROR(
      Annotate(CUDA_CALL(kernels::LaunchPickChunks(counts, chunks, &state->totals, max_report,
                                                   &state->picked, stream())),
               what));
  VMM_RETURN_IF_ERROR(
      Annotate(CUDA_CALL(kernels::LaunchMatmulCollect(a, b, c, n, k, factor, &state->picked,
                                                      max_report, &state->report.matmul, stream())),
               what));
  auto* back = static_cast<CheckState*>(lane_->check_readback.get());
  VMM_RETURN_IF_ERROR(Annotate(
      CUDA_CALL(cudaMemcpyAsync(back, state, sizeof(CheckState), cudaMemcpyDeviceToHost, stream())),
      what));
  enqueuing.Done();
  VMM_RETURN_IF_ERROR(Annotate(SyncStream(), what));
  out->mismatches = back->totals.mismatches;
  out->rows_recomputed = out->freivalds ? back->bad_rows : 0;
  out->max_error_ratio = std::bit_cast<double>(back->totals.max_ratio_bits);
  const uint64_t named = std::min<uint64_t>(out->mismatches, max_report);
  for (uint64_t i = 0; i < named; ++i) {
    const kernels::MatmulReport& r = back->report.matmul;
    out->first.push_back({r.index[i], r.want[i], r.got[i]});
  }
  return Status::Ok();
}

}  // namespace vmm::cuda
