// GPU tests of the data plane (binary vmm_gpu_tests, ctest label "gpu"): the device check kernels
// against the host backend's plain C++ (runner/engine/host/cpu_checks.h) and the host matmul
// oracle (runner/engine/matmul_verify.h) on correct and on deliberately corrupted data, and the
// snapshot storage and copies in every direction. Every verdict, count, index, want, got and hash
// must be identical on both sides.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "kernels/datagen.h"
#include "runner/engine/cuda/cuda_test_util.h"
#include "runner/engine/engine.h"
#include "runner/engine/host/cpu_checks.h"
#include "runner/engine/host/cpu_kernels.h"
#include "runner/engine/kernel_params.h"
#include "runner/engine/matmul_verify.h"

namespace vmm::testing_cuda {
namespace {

void Poke(DevicePtr va, uint64_t index, uint32_t word) {
  ASSERT_EQ(cudaMemcpy(reinterpret_cast<void*>(va + index * 4), &word, 4, cudaMemcpyHostToDevice),
            cudaSuccess);
  // From pageable memory cudaMemcpy may return before the DMA lands; the engine's own stream does
  // not wait for the legacy stream, so wait here.
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

uint32_t Peek(DevicePtr va, uint64_t index) {
  uint32_t word = 0;
  EXPECT_EQ(
      cudaMemcpy(&word, reinterpret_cast<const void*>(va + index * 4), 4, cudaMemcpyDeviceToHost),
      cudaSuccess);
  return word;
}

std::vector<uint32_t> Words(const std::vector<float>& v) {
  std::vector<uint32_t> w(v.size());
  std::memcpy(w.data(), v.data(), v.size() * 4);
  return w;
}

void ExpectSameComparison(const DataCompareResult& device, const DataCompareResult& host,
                          const std::string& what) {
  EXPECT_EQ(device.mismatches, host.mismatches) << what;
  EXPECT_EQ(device.first, host.first) << what;
  EXPECT_EQ(device.hash, host.hash) << what;
  EXPECT_EQ(device.other_hash, host.other_hash) << what;
}

class CudaDataTest : public CudaEngineTest {};

// Planted mismatches (first and last word, chunk borders, a dense run, the unaligned tail) are
// found in order with the words on both sides, at every report size, aligned or not.
TEST_F(CudaDataTest, CompareMatchesTheHostReference) {
  const uint64_t count = 3000005;  // not a multiple of the 4096-word chunk
  DevicePtr a = 0, b = 0;
  ASSERT_NO_FATAL_FAILURE(NewBuffer(count * 4 + 16, &a));
  ASSERT_NO_FATAL_FAILURE(NewBuffer(count * 4 + 16, &b));
  ASSERT_OK(engine_->Fill(a, count + 4, 5, nullptr));
  ASSERT_OK(engine_->Fill(b, count + 4, 5, nullptr));
  std::vector<uint64_t> planted = {0, count - 1, 5, 4095, 4096, 100000, 2999999};
  for (uint64_t i = 200000; i < 200100; ++i) planted.push_back(i);  // a dense run in one chunk
  ASSERT_OK(engine_->Synchronize());
  for (uint64_t i : planted) ASSERT_NO_FATAL_FAILURE(Poke(b, i, Peek(b, i) ^ 0x80000000u));
  for (uint64_t offset : {uint64_t{0}, uint64_t{1}}) {  // 1: 4-byte aligned only (scalar path)
    const DevicePtr pa = a + offset * 4, pb = b + offset * 4;
    const std::vector<uint32_t> ha = Words(Read(pa, count)), hb = Words(Read(pb, count));
    for (uint32_t max_report : {0u, 4u, 64u, 1000u}) {
      for (bool known : {false, true}) {
        CompareOptions options;
        options.max_report = max_report;
        options.other_hash_known = known;
        options.other_hash =
            known ? host::CompareWordsRef(hb.data(), hb.data(), count, {}).hash : 0;
        DataCompareResult device;
        ASSERT_OK(engine_->CompareData(pa, DataRef::Device(pb), count, options, &device));
        const DataCompareResult host = host::CompareWordsRef(ha.data(), hb.data(), count, options);
        ExpectSameComparison(device, host,
                             "offset " + std::to_string(offset) + ", max_report " +
                                 std::to_string(max_report) + (known ? ", hash known" : ""));
      }
    }
  }
}

// cuStreamWriteValue32 through the engine (a late-bound driver call): exactly its word changes,
// as on the host twin (HostDataTest.WriteValueWritesOneWord).
TEST_F(CudaDataTest, WriteValueWritesOneWord) {
  const uint64_t count = 4096;
  DevicePtr a = 0;
  ASSERT_NO_FATAL_FAILURE(NewBuffer(count * 4, &a));
  ASSERT_OK(engine_->Memset(a, count, 0, nullptr));
  OpTiming t;
  ASSERT_OK(engine_->WriteValue(a + 40, 0xC0FFEEu, &t));
  EXPECT_GE(t.gpu_us, 0);
  const std::vector<uint32_t> words = Words(Read(a, count));
  for (uint64_t i = 0; i < count; ++i) ASSERT_EQ(words[i], i == 10 ? 0xC0FFEEu : 0u) << i;
  ASSERT_OK(engine_->WriteValue(a + 4 * (count - 1), 5, nullptr));
  ASSERT_OK(engine_->Synchronize());
  EXPECT_EQ(Peek(a, count - 1), 5u);
  // Not a graph node: refused during a capture, as on the host twin; the capture still ends.
  ASSERT_OK(engine_->BeginCapture());
  Status captured = engine_->WriteValue(a, 9, nullptr);
  GraphHandle g;
  ASSERT_OK(engine_->EndCapture(&g));
  ASSERT_NE(captured.cuda_error(), nullptr);
  EXPECT_STREQ(captured.cuda_error(), "CUDA_ERROR_NOT_SUPPORTED");
  ASSERT_OK(engine_->DestroyGraph(g));
  EXPECT_EQ(Peek(a, 10), 0xC0FFEEu);
  // A misaligned address is refused at the call (the host twin says the same; the plan never
  // sends one). Last: were it accepted and faulted, the context would be lost.
  Status misaligned = engine_->WriteValue(a + 2, 1, nullptr);
  std::printf("misaligned WriteValue: %s\n", misaligned.message().c_str());
  ASSERT_NE(misaligned.cuda_error(), nullptr);
  EXPECT_STREQ(misaligned.cuda_error(), "CUDA_ERROR_INVALID_VALUE");
}

// add / scale / axpy: the device kernel writes the bits the host twin's CPU kernel writes (one
// rounding per element, fused for axpy), over random words including zeros of both signs,
// denormals, infinities and an odd count; in place too; and captured as a kernel node.
TEST_F(CudaDataTest, ElementwiseKernelsMatchTheHostBitForBit) {
  const uint64_t count = (uint64_t{1} << 20) + 3;
  std::vector<float> a(count), b(count);
  uint64_t x = 0x9E3779B97F4A7C15ull;
  auto next = [&] {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return static_cast<uint32_t>(x);
  };
  const float specials[] = {0.0f, -0.0f, 1e-40f, -1e-40f, INFINITY, -INFINITY, 1.0f, -3.5f};
  for (uint64_t i = 0; i < count; ++i) {
    a[i] = i < 8 ? specials[i] : std::bit_cast<float>((next() & 0x3FFFFFFFu) | 0x00800000u);
    b[i] = i < 8 ? specials[7 - i] : std::bit_cast<float>(next() & 0xBFFFFFFFu);
  }
  DevicePtr da = 0, db = 0, dc = 0;
  ASSERT_NO_FATAL_FAILURE(NewBuffer(count * 4, &da));
  ASSERT_NO_FATAL_FAILURE(NewBuffer(count * 4, &db));
  ASSERT_NO_FATAL_FAILURE(NewBuffer(count * 4, &dc));
  ASSERT_EQ(cudaMemcpy(reinterpret_cast<void*>(da), a.data(), count * 4, cudaMemcpyHostToDevice),
            cudaSuccess);
  ASSERT_EQ(cudaMemcpy(reinterpret_cast<void*>(db), b.data(), count * 4, cudaMemcpyHostToDevice),
            cudaSuccess);
  std::vector<float> want(count);
  for (const auto& [with_b, alpha] :
       {std::pair{true, 1.0f}, std::pair{false, -0.75f}, std::pair{true, 3.1415927f}}) {
    AxpyArgs args{da, with_b ? db : 0, dc, count, alpha};
    OpTiming t;
    ASSERT_OK(engine_->LaunchKernel(AxpyKernelParams(args), &t));
    host::AxpyF32(a.data(), with_b ? b.data() : nullptr, want.data(), count, alpha);
    const std::vector<uint32_t> got = Words(Read(dc, count)), expected = Words(want);
    uint64_t differ = 0;
    for (uint64_t i = 0; i < count; ++i) differ += got[i] != expected[i];
    EXPECT_EQ(differ, 0u) << "b " << with_b << ", alpha " << alpha;
  }
  // In place: b = 2·a + b.
  ASSERT_OK(engine_->LaunchKernel(AxpyKernelParams(AxpyArgs{da, db, db, count, 2.0f}), nullptr));
  ASSERT_OK(engine_->Synchronize());
  host::AxpyF32(a.data(), b.data(), b.data(), count, 2.0f);
  EXPECT_EQ(Words(Read(db, count)), Words(b));
  // Captured: one kernel node whose arguments the driver lays out as the host twin packs them.
  ASSERT_OK(engine_->BeginCapture());
  ASSERT_OK(engine_->LaunchKernel(AxpyKernelParams(AxpyArgs{da, 0, dc, count, 0.25f}), nullptr));
  GraphHandle g;
  ASSERT_OK(engine_->EndCapture(&g));
  std::vector<KernelNodeParams> nodes;
  ASSERT_OK(engine_->KernelNodes(g, &nodes));
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0], AxpyKernelParams(AxpyArgs{da, 0, dc, count, 0.25f}));
  ExecHandle exec;
  ASSERT_OK(engine_->Instantiate(g, &exec));
  ASSERT_OK(engine_->Replay(exec, nullptr));
  ASSERT_OK(engine_->Synchronize());
  host::AxpyF32(a.data(), nullptr, want.data(), count, 0.25f);
  EXPECT_EQ(Words(Read(dc, count)), Words(want));
  ASSERT_OK(engine_->DestroyExec(exec));
  ASSERT_OK(engine_->DestroyGraph(g));
}

// The generic launch: the declared layout is the device's (the registry checked it at engine
// creation), a kernel launched from packed arguments writes what the named call writes, a captured
// one reads back as the same KernelNodeParams, and a launch without a row is refused.
TEST_F(CudaDataTest, LaunchKernelRunsPackedArgumentsAsTheNamedCallDoes) {
  const uint64_t count = (uint64_t{1} << 20) + 5;
  DevicePtr a = 0, b = 0;
  ASSERT_NO_FATAL_FAILURE(NewBuffer(count * 4, &a));
  ASSERT_NO_FATAL_FAILURE(NewBuffer(count * 4, &b));
  OpTiming t;
  ASSERT_OK(engine_->LaunchKernel(FillKernelParams(a, count, 31), &t));
  EXPECT_GE(t.gpu_us, 0);
  ASSERT_OK(engine_->Fill(b, count, 31, nullptr));
  ASSERT_OK(engine_->Synchronize());
  std::vector<float> want(count);
  host::FillF32(want.data(), count, 31);
  EXPECT_EQ(Words(Read(a, count)), Words(want));
  EXPECT_EQ(Words(Read(b, count)), Words(want));
  ASSERT_OK(engine_->LaunchKernel(AxpyKernelParams({a, a, b, count, -2.0f}), nullptr));
  ASSERT_OK(engine_->Synchronize());
  host::AxpyF32(want.data(), want.data(), want.data(), count, -2.0f);
  EXPECT_EQ(Words(Read(b, count)), Words(want));

  ASSERT_OK(engine_->BeginCapture());
  ASSERT_OK(engine_->LaunchKernel(FillKernelParams(b, count, 5), nullptr));
  GraphHandle g;
  ASSERT_OK(engine_->EndCapture(&g));
  std::vector<KernelNodeParams> nodes;
  ASSERT_OK(engine_->KernelNodes(g, &nodes));
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0], FillKernelParams(b, count, 5));
  ASSERT_OK(engine_->DestroyGraph(g));

  KernelNodeParams unknown = FillKernelParams(a, 10, 1);
  unknown.function = "vmm_busy_u32";
  const Status refused = engine_->LaunchKernel(unknown, nullptr);
  EXPECT_NE(refused.message().find("cudaErrorInvalidValue"), std::string::npos)
      << refused.message();
  KernelNodeParams short_args = FillKernelParams(a, 10, 1);
  short_args.arg_bytes.pop_back();
  EXPECT_FALSE(engine_->LaunchKernel(short_args, nullptr).ok());
  ASSERT_OK(engine_->Synchronize());  // nothing was enqueued: the context is healthy
}

TEST_F(CudaDataTest, ValueCheckMatchesTheHostReference) {
  const uint64_t count = (1u << 20) + 3;
  DevicePtr a = 0;
  ASSERT_NO_FATAL_FAILURE(NewBuffer(count * 4, &a));
  ASSERT_OK(engine_->Memset(a, count, 0xA5A5A5A5u, nullptr));
  DataCompareResult device;
  ASSERT_OK(engine_->CompareValue(a, 0xA5A5A5A5u, count, 8, &device));
  EXPECT_EQ(device.mismatches, 0u);
  ASSERT_OK(engine_->Synchronize());
  for (uint64_t i : {uint64_t{7}, uint64_t{4096 * 3 + 1}, count - 1})
    ASSERT_NO_FATAL_FAILURE(Poke(a, i, 0));
  const std::vector<uint32_t> ha = Words(Read(a, count));
  for (uint32_t pattern : {0xA5A5A5A5u, 0u}) {
    ASSERT_OK(engine_->CompareValue(a, pattern, count, 8, &device));
    ExpectSameComparison(device, host::CompareValueRef(ha.data(), pattern, count, 8),
                         "pattern " + std::to_string(pattern));
  }
}

// Issue 12's independence test: one flipped bit in one element among 2^30 (4 GiB per side) is
// found and named by the device, against another buffer, a device snapshot and a pinned host
// snapshot; the hashes the device derives equal what the checksum kernel computes on its own.
TEST_F(CudaDataTest, OneFlippedBitAmong2To30WordsIsFoundAndNamed) {
  const uint64_t count = 1ull << 30;
  DevicePtr a = 0, b = 0;
  ASSERT_NO_FATAL_FAILURE(NewBuffer(count * 4, &a));
  ASSERT_NO_FATAL_FAILURE(NewBuffer(count * 4, &b));
  ASSERT_OK(engine_->Fill(a, count, 12, nullptr));
  ASSERT_OK(engine_->Fill(b, count, 12, nullptr));
  SnapshotHandle on_device, on_host;
  ASSERT_OK(engine_->AllocSnapshot(count * 4, DataPlace::kDevice, &on_device));
  ASSERT_OK(engine_->AllocSnapshot(count * 4, DataPlace::kHostPinned, &on_host));
  ASSERT_OK(engine_->Copy(DataRef::Of(on_device), DataRef::Device(b), count * 4, nullptr));
  ASSERT_OK(engine_->Copy(DataRef::Of(on_host), DataRef::Device(b), count * 4, nullptr));
  const uint64_t at = count - 4097 - 12345;
  const uint32_t want = std::bit_cast<uint32_t>(datagen::FillValue(12, at));
  const uint32_t got = want ^ (1u << 13);
  ASSERT_OK(engine_->Synchronize());
  ASSERT_NO_FATAL_FAILURE(Poke(a, at, got));
  uint64_t hash_a = 0, hash_b = 0;
  ASSERT_OK(engine_->Checksum(a, count, &hash_a));
  ASSERT_OK(engine_->Checksum(b, count, &hash_b));
  EXPECT_EQ(hash_a, hash_b + datagen::HashWord(got, at) - datagen::HashWord(want, at));
  for (const DataRef other : {DataRef::Device(b), DataRef::Of(on_device), DataRef::Of(on_host)}) {
    for (bool known : {false, true}) {
      CompareOptions options;
      options.other_hash_known = known;
      options.other_hash = known ? hash_b : 0;
      DataCompareResult r;
      ASSERT_OK(engine_->CompareData(a, other, count, options, &r));
      const std::string what = std::string(DataPlaceName(other.place)) + (known ? ", known" : "");
      EXPECT_EQ(r.mismatches, 1u) << what;
      ASSERT_EQ(r.first.size(), 1u) << what;
      EXPECT_EQ(r.first[0], (WordMismatch{at, want, got})) << what;
      EXPECT_EQ(r.hash, hash_a) << what;
      EXPECT_EQ(r.other_hash, hash_b) << what;
    }
  }
  DataCompareResult value;
  ASSERT_OK(engine_->Memset(b, count, 0, nullptr));
  ASSERT_OK(engine_->Synchronize());
  ASSERT_NO_FATAL_FAILURE(Poke(b, at, 1u << 13));
  ASSERT_OK(engine_->CompareValue(b, 0, count, 8, &value));
  EXPECT_EQ(value.mismatches, 1u);
  ASSERT_EQ(value.first.size(), 1u);
  EXPECT_EQ(value.first[0], (WordMismatch{at, 0, 1u << 13}));
  ASSERT_OK(engine_->FreeSnapshot(on_device));
  ASSERT_OK(engine_->FreeSnapshot(on_host));
}

// The snapshot's one-pass copy and hash (CopyHashed) against the slow oracle: the CPU's hash of the
// words read back, and a byte-for-byte comparison of the copy, on corrupted data (a flipped word
// at the vector tail), with source and destination aligned and not (the scalar path), to device
// memory, a device snapshot and a pinned host snapshot.
TEST_F(CudaDataTest, CopyHashedCopiesAndHashesAsTheCpuDoes) {
  const uint64_t count = (1u << 20) + 7;
  DevicePtr a = 0, b = 0;
  ASSERT_NO_FATAL_FAILURE(NewBuffer((count + 1) * 4, &a));
  ASSERT_NO_FATAL_FAILURE(NewBuffer((count + 1) * 4, &b));
  ASSERT_OK(engine_->Fill(a, count + 1, 31, nullptr));
  ASSERT_OK(engine_->Synchronize());
  ASSERT_NO_FATAL_FAILURE(Poke(a, count - 3, 0xdeadbeefu));
  SnapshotHandle on_device, on_host;
  ASSERT_OK(engine_->AllocSnapshot(count * 4, DataPlace::kDevice, &on_device));
  ASSERT_OK(engine_->AllocSnapshot(count * 4, DataPlace::kHostPinned, &on_host));
  for (const uint64_t src_skew : {0u, 1u}) {
    const DevicePtr src = a + src_skew * 4;
    std::vector<uint32_t> want(count);
    ASSERT_OK(engine_->CopyToHost(src, count * 4, want.data()));
    const uint64_t cpu_hash = host::ChecksumWords(want.data(), count);
    for (const DataRef dst : {DataRef::Device(b), DataRef::Device(b + 4), DataRef::Of(on_device),
                              DataRef::Of(on_host)}) {
      const std::string what = std::string(DataPlaceName(dst.place)) + " dst +" +
                               std::to_string(dst.addr % 16) + ", src +" +
                               std::to_string(src_skew * 4);
      uint64_t hash = 0;
      OpTiming timing;
      SCOPED_TRACE(what);
      ASSERT_OK(engine_->CopyHashed(dst, src, count, &timing, &hash));
      EXPECT_EQ(hash, cpu_hash) << what;
      EXPECT_GE(timing.gpu_us, 0) << what;
      std::vector<uint32_t> got(count);
      if (IsHostPlace(dst.place)) {
        std::memcpy(got.data(), reinterpret_cast<const void*>(dst.addr), count * 4);
      } else {
        ASSERT_OK(engine_->CopyToHost(dst.addr, count * 4, got.data()));
      }
      EXPECT_TRUE(got == want) << what;
    }
  }
  ASSERT_OK(engine_->FreeSnapshot(on_device));
  ASSERT_OK(engine_->FreeSnapshot(on_host));
}

TEST_F(CudaDataTest, SnapshotsHoldCopiesInEveryPlaceAndRestoreThem) {
  const uint64_t count = (3u << 20) + 5;
  DevicePtr a = 0, b = 0;
  ASSERT_NO_FATAL_FAILURE(NewBuffer(count * 4, &a));
  ASSERT_NO_FATAL_FAILURE(NewBuffer(count * 4, &b));
  ASSERT_OK(engine_->Fill(a, count, 31, nullptr));
  for (DataPlace place : {DataPlace::kDevice, DataPlace::kHostPinned, DataPlace::kHostPageable}) {
    SCOPED_TRACE(DataPlaceName(place));
    SnapshotHandle s;
    ASSERT_OK(engine_->AllocSnapshot(count * 4, place, &s));
    EXPECT_EQ(s.place, place);
    EXPECT_EQ(s.bytes, count * 4);
    OpTiming timing;
    ASSERT_OK(engine_->Copy(DataRef::Of(s), DataRef::Device(a), count * 4, &timing));
    EXPECT_GT(timing.gpu_us, 0);
    ASSERT_OK(engine_->Memset(b, count, 0, nullptr));
    ASSERT_OK(engine_->Copy(DataRef::Device(b), DataRef::Of(s), count * 4, nullptr));  // async
    DataCompareResult r;
    ASSERT_OK(engine_->CompareData(b, DataRef::Device(a), count, {}, &r));
    EXPECT_EQ(r.mismatches, 0u);
    ASSERT_OK(engine_->CompareData(a, DataRef::Of(s), count, {}, &r));
    EXPECT_EQ(r.mismatches, 0u);
    EXPECT_EQ(r.hash, r.other_hash);
    if (IsHostPlace(place)) {
      const auto* words = reinterpret_cast<const uint32_t*>(s.addr);
      EXPECT_EQ(words[count - 1], std::bit_cast<uint32_t>(datagen::FillValue(31, count - 1)));
    }
    ASSERT_OK(engine_->FreeSnapshot(s));
    EXPECT_FALSE(engine_->FreeSnapshot(s).ok()) << "freed twice";
  }
}

struct CheckCase {
  uint32_t m, n, k;
};

// The device check agrees with the host oracle on the method, the count, the rows recomputed, the
// first mismatches (index, the fp64 reference bit for bit, the value) and the largest ratio.
void ExpectSameMatmulCheck(const MatmulCheckResult& device, const MatmulCheckResult& host,
                           const std::string& what) {
  EXPECT_EQ(device.freivalds, host.freivalds) << what;
  EXPECT_EQ(device.elements, host.elements) << what;
  EXPECT_EQ(device.mismatches, host.mismatches) << what;
  EXPECT_EQ(device.rows_recomputed, host.rows_recomputed) << what;
  ASSERT_EQ(device.first.size(), host.first.size()) << what;
  for (size_t i = 0; i < host.first.size(); ++i) {
    EXPECT_EQ(device.first[i].index, host.first[i].index) << what;
    EXPECT_EQ(std::bit_cast<uint64_t>(device.first[i].want),
              std::bit_cast<uint64_t>(host.first[i].want))
        << what << " at " << host.first[i].index;
    EXPECT_EQ(std::bit_cast<uint32_t>(device.first[i].got),
              std::bit_cast<uint32_t>(host.first[i].got))
        << what;
  }
  EXPECT_EQ(device.max_error_ratio, host.max_error_ratio) << what;
}

class CudaMatmulCheckTest : public CudaEngineTest,
                            public ::testing::WithParamInterface<CheckCase> {};

TEST_P(CudaMatmulCheckTest, DeviceAndHostVerdictsAgree) {
  const auto [m, n, k] = GetParam();
  DevicePtr a = 0, b = 0, c = 0;
  ASSERT_NO_FATAL_FAILURE(NewBuffer(uint64_t{m} * k * 4, &a));
  ASSERT_NO_FATAL_FAILURE(NewBuffer(uint64_t{k} * n * 4, &b));
  ASSERT_NO_FATAL_FAILURE(NewBuffer(uint64_t{m} * n * 4, &c));
  ASSERT_OK(engine_->Fill(a, uint64_t{m} * k, 1, nullptr));
  ASSERT_OK(engine_->Fill(b, uint64_t{k} * n, 2, nullptr));
  ASSERT_OK(engine_->Matmul({a, b, c, m, n, k}, nullptr));
  const std::vector<float> ha = Read(a, uint64_t{m} * k), hb = Read(b, uint64_t{k} * n);
  const uint64_t elements = uint64_t{m} * n;
  // Correct, then ever worse: one element off, a NaN, a whole row, 100 elements over 70 rows.
  const uint64_t corrupted[3] = {0, elements / 2, elements - 1};
  // Freivalds' check sees an element's error only above its row's bound (about k * eps * the sum
  // of |a||b| over the row: ~15 at 1000x1000x1000), so past the full-reference limit the planted
  // error is large; the full reference finds 0.5.
  const bool freivalds = uint64_t{m} * n * k > kFullReferenceLimit;
  const float off = freivalds ? 4096.0f : 0.5f;
  for (int round = 0; round < 5; ++round) {
    ASSERT_OK(engine_->Synchronize());
    if (round == 1 || round == 2) {
      const uint64_t i = corrupted[round];
      const float v = std::bit_cast<float>(Peek(c, i));
      ASSERT_NO_FATAL_FAILURE(
          Poke(c, i, std::bit_cast<uint32_t>(round == 1 ? v + off : std::nanf(""))));
    } else if (round == 3) {
      for (uint32_t j = 0; j < n; ++j)
        ASSERT_NO_FATAL_FAILURE(Poke(c, uint64_t{m / 3} * n + j, std::bit_cast<uint32_t>(7.0f)));
    } else if (round == 4) {
      std::set<uint64_t> hit;
      for (uint64_t e = 0; e < 100; ++e) hit.insert((e * 7919 + 13) % elements);
      for (uint64_t i : hit)
        ASSERT_NO_FATAL_FAILURE(Poke(c, i, Peek(c, i) ^ 0x00400000u));  // a high mantissa bit
    }
    const std::vector<float> hc = Read(c, elements);
    MatmulCheckResult device;
    ASSERT_OK(engine_->CheckMatmul({a, b, c, m, n, k}, 8, &device));
    const MatmulCheckResult host = VerifyMatmul(ha.data(), hb.data(), hc.data(), m, n, k, 8);
    ExpectSameMatmulCheck(device, host, "round " + std::to_string(round));
    if (round == 0) {
      EXPECT_EQ(device.mismatches, 0u);
    } else {
      EXPECT_GT(device.mismatches, 0u) << "round " << round;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, CudaMatmulCheckTest,
                         ::testing::Values(CheckCase{1, 1, 1}, CheckCase{127, 129, 65},
                                           CheckCase{256, 256, 256}, CheckCase{37, 300, 1},
                                           // above kFullReferenceLimit: Freivalds
                                           CheckCase{1100, 1000, 1000}, CheckCase{2048, 2048, 512}),
                         [](const ::testing::TestParamInfo<CheckCase>& info) {
                           return std::to_string(info.param.m) + "x" +
                                  std::to_string(info.param.n) + "x" + std::to_string(info.param.k);
                         });

}  // namespace
}  // namespace vmm::testing_cuda
