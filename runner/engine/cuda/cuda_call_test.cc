// GPU-free tests of the CUDA backend's plumbing: error text, RAII ownership (against a fake driver
// table), update-code mapping, kernel-argument packing, and CreateCudaEngine's no-device answer.
#include "runner/engine/cuda/cuda_call.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "runner/engine/cuda/cuda_engine.h"
#include "runner/engine/cuda/graph_ops.h"
#include "runner/engine/cuda/kernel_registry.h"
#include "runner/engine/cuda/runtime_handles.h"
#include "runner/engine/cuda/vmm_handles.h"
#include "runner/engine/kernel_params.h"

namespace vmm::cuda {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A fake driver: records calls in these counters (reset by FakeDriver's constructor).
struct FakeState {
  int frees = 0;
  CUdeviceptr freed_va = 0;
  size_t freed_size = 0;
  CUresult free_result = CUDA_SUCCESS;
  int releases = 0;
  CUresult map_result = CUDA_ERROR_INVALID_VALUE;
  int unmaps = 0;
  CUdeviceptr unmapped_va = 0;
};
FakeState g_fake;

DriverApi FakeDriver() {
  g_fake = FakeState{};
  DriverApi api;
  api.cuGetErrorName = [](CUresult r, const char** s) -> CUresult {
    if (r != CUDA_ERROR_INVALID_VALUE) return CUDA_ERROR_INVALID_VALUE;
    *s = "CUDA_ERROR_INVALID_VALUE";
    return CUDA_SUCCESS;
  };
  api.cuGetErrorString = [](CUresult r, const char** s) -> CUresult {
    if (r != CUDA_ERROR_INVALID_VALUE) return CUDA_ERROR_INVALID_VALUE;
    *s = "invalid argument";
    return CUDA_SUCCESS;
  };
  api.cuMemAddressReserve = [](CUdeviceptr* p, size_t, size_t, CUdeviceptr,
                               unsigned long long) -> CUresult {
    *p = 0x7f0000000000ull;
    return CUDA_SUCCESS;
  };
  api.cuMemAddressFree = [](CUdeviceptr va, size_t size) -> CUresult {
    ++g_fake.frees;
    g_fake.freed_va = va;
    g_fake.freed_size = size;
    return g_fake.free_result;
  };
  api.cuMemCreate = [](CUmemGenericAllocationHandle* h, size_t, const CUmemAllocationProp*,
                       unsigned long long) -> CUresult {
    *h = 0;  // 0 is a possible opaque handle value: ownership must not depend on it
    return CUDA_SUCCESS;
  };
  api.cuMemRelease = [](CUmemGenericAllocationHandle) -> CUresult {
    ++g_fake.releases;
    return CUDA_SUCCESS;
  };
  api.cuMemMap = [](CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
                    unsigned long long) -> CUresult { return g_fake.map_result; };
  api.cuMemUnmap = [](CUdeviceptr va, size_t) -> CUresult {
    ++g_fake.unmaps;
    g_fake.unmapped_va = va;
    return CUDA_SUCCESS;
  };
  return api;
}

TEST(CuCallTest, MessageNamesCallErrorAndLocation) {
  const DriverApi api = FakeDriver();
  CUdeviceptr va = 0x1000;
  size_t size = 4096;
  CUmemGenericAllocationHandle handle = 1;
  const int line = __LINE__ + 1;
  Status s = CU_CALL(api, cuMemMap(va, size, 0, handle, 0));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kRuntime);
  EXPECT_EQ(s.message().rfind(
                "cuMemMap(va, size, 0, handle, 0) failed: CUDA_ERROR_INVALID_VALUE (invalid "
                "argument) at ",
                0),
            0u)
      << s.message();
  EXPECT_TRUE(EndsWith(s.message(), "cuda_call_test.cc:" + std::to_string(line))) << s.message();
  ASSERT_NE(s.cuda_error(), nullptr);
  EXPECT_STREQ(s.cuda_error(), "CUDA_ERROR_INVALID_VALUE");
  // The name survives added context (the engine annotates every call).
  EXPECT_STREQ(s.WithContext("Map(...)").cuda_error(), "CUDA_ERROR_INVALID_VALUE");
}

TEST(CuCallTest, UnknownResultIsNamedByNumber) {
  const DriverApi api = FakeDriver();
  Status s = CuStatus(api, static_cast<CUresult>(12345), "cuFoo()", "f.cc", 7);
  EXPECT_EQ(s.message(), "cuFoo() failed: CUresult 12345 (unknown error) at f.cc:7");
  EXPECT_EQ(s.cuda_error(), nullptr);
  // A value the driver cannot name is still named by the table.
  EXPECT_STREQ(CuStatus(api, CUDA_ERROR_NOT_SUPPORTED, "cuFoo()", "f.cc", 7).cuda_error(),
               "CUDA_ERROR_NOT_SUPPORTED");
  EXPECT_TRUE(CuStatus(api, CUDA_SUCCESS, "cuFoo()", "f.cc", 7).ok());
}

// CU_LATE_CALL: a missing entry point is a clear error naming the function and the call; a found
// one is called with the arguments as written and judged like CU_CALL.
TEST(CuCallTest, LateCallNamesAMissingEntryPointOrMakesTheCall) {
  const DriverApi api = FakeDriver();
  using Pfn = CUresult (*)(int, int*);
  Status missing = CuLateResult(api, Pfn{nullptr}, "cuNone", "cuNone(1, &out)", "f.cc", 3,
                                [](Pfn) { return CUDA_SUCCESS; });
  EXPECT_EQ(missing.message(),
            "CUDA driver too old: it has no entry point 'cuNone' (needed by cuNone(1, &out))");
  Pfn refuses = [](int a, int* out) {
    *out = a + 1;
    return CUDA_ERROR_INVALID_VALUE;
  };
  int out = 0;
  Status s = CuLateResult(api, refuses, "cuRefuses", "cuRefuses(41, &out)", "f.cc", 9,
                          [&](Pfn fn) { return fn(41, &out); });
  EXPECT_EQ(out, 42);
  EXPECT_EQ(s.message(),
            "cuRefuses(41, &out) failed: CUDA_ERROR_INVALID_VALUE (invalid argument) at f.cc:9");
  // No driver here, or a name it lacks: null, never a crash.
  EXPECT_EQ(LookUpDriverFunction("cuNoSuchFunction", kDriverAbiVersion), nullptr);
}

TEST(CudaCallTest, RuntimeMessageUsesRuntimeNames) {
  auto fails = [] { return cudaErrorInvalidValue; };
  Status s = CUDA_CALL(fails());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kRuntime);
  EXPECT_EQ(s.message().rfind("fails() failed: cudaErrorInvalidValue (invalid argument) at ", 0),
            0u)
      << s.message();
  ASSERT_NE(s.cuda_error(), nullptr);
  EXPECT_STREQ(s.cuda_error(), "CUDA_ERROR_INVALID_VALUE");  // the driver's name for it
  auto oom = [] { return cudaErrorMemoryAllocation; };
  EXPECT_STREQ(CUDA_CALL(oom()).cuda_error(), "CUDA_ERROR_OUT_OF_MEMORY");
  // The int-returning kernel launchers go through the same macro.
  auto launcher = [] { return static_cast<int>(cudaErrorInvalidConfiguration); };
  EXPECT_NE(CUDA_CALL(launcher()).message().find("cudaErrorInvalidConfiguration"),
            std::string::npos);
}

TEST(CudaCallTest, NothrowVariantsLogAndReportFailure) {
  const DriverApi api = FakeDriver();
  testing::internal::CaptureStderr();
  const bool ok = CU_CALL_NOTHROW(api, cuMemMap(1, 2, 0, 3, 0));
  const bool rt_ok = CUDA_CALL_NOTHROW(cudaErrorInvalidValue);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(ok);
  EXPECT_FALSE(rt_ok);
  EXPECT_NE(err.find("vmm-run: warning: cuMemMap(1, 2, 0, 3, 0) failed: CUDA_ERROR_INVALID_VALUE"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("vmm-run: warning: cudaErrorInvalidValue failed: cudaErrorInvalidValue"),
            std::string::npos)
      << err;
}

TEST(VmmHandlesTest, ReservationFreesExactlyOnceAfterMoves) {
  const DriverApi api = FakeDriver();
  {
    StatusOr<Reservation> r = CreateReservation(api, 2 << 20, 0);
    ASSERT_TRUE(r.ok());
    Reservation a = std::move(r).value();
    Reservation b = std::move(a);
    EXPECT_FALSE(a);  // moved-from owns nothing
    EXPECT_EQ(a->va, 0u);
    EXPECT_EQ(b->va, 0x7f0000000000ull);
    Reservation c;
    c = std::move(b);
    EXPECT_EQ(g_fake.frees, 0);
  }
  EXPECT_EQ(g_fake.frees, 1);
  EXPECT_EQ(g_fake.freed_va, 0x7f0000000000ull);
  EXPECT_EQ(g_fake.freed_size, size_t{2} << 20);
}

TEST(VmmHandlesTest, FailedFreeKeepsOwnershipSuccessfulFreeDisarms) {
  const DriverApi api = FakeDriver();
  StatusOr<Reservation> r = CreateReservation(api, 4096, 0);
  ASSERT_TRUE(r.ok());
  Reservation res = std::move(r).value();
  g_fake.free_result = CUDA_ERROR_INVALID_VALUE;
  EXPECT_FALSE(FreeReservation(&res).ok());
  EXPECT_EQ(res->va, 0x7f0000000000ull);
  g_fake.free_result = CUDA_SUCCESS;
  EXPECT_TRUE(FreeReservation(&res).ok());
  EXPECT_EQ(res->va, 0u);
  EXPECT_TRUE(FreeReservation(&res).ok());  // empty: no call
  EXPECT_EQ(g_fake.frees, 2);
  const int frees = g_fake.frees;
  res = Reservation();  // destroying an empty reservation makes no call
  EXPECT_EQ(g_fake.frees, frees);
}

TEST(VmmHandlesTest, PhysicalAllocWithHandleZeroIsStillReleased) {
  const DriverApi api = FakeDriver();
  {
    StatusOr<PhysicalAlloc> a = CreatePhysicalAlloc(api, DeviceAllocationProp(0), 2 << 20);
    ASSERT_TRUE(a.ok());
    PhysicalAlloc moved = std::move(a).value();
    EXPECT_TRUE(moved);
    EXPECT_EQ(moved->handle, 0u);
    EXPECT_EQ(moved->size, size_t{2} << 20);
  }
  EXPECT_EQ(g_fake.releases, 1);
}

TEST(VmmHandlesTest, FailedMapIsAnErrorAndOwnsNothing) {
  const DriverApi api = FakeDriver();
  StatusOr<Mapping> m = CreateMapping(api, 0x1000, 4096, 0, 1);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("cuMemMap(va, size, offset, handle, 0) failed"),
            std::string::npos)
      << m.status().message();
  EXPECT_EQ(g_fake.unmaps, 0);
}

TEST(VmmHandlesTest, MappingUnmapsOnceAndAForgottenOneNever) {
  const DriverApi api = FakeDriver();
  g_fake.map_result = CUDA_SUCCESS;
  {
    StatusOr<Mapping> m = CreateMapping(api, 0x200000, 0x200000, 0, 1);
    ASSERT_TRUE(m.ok());
    std::vector<Mapping> live;
    live.push_back(std::move(m).value());
    live.push_back(std::move(CreateMapping(api, 0x400000, 0x200000, 0, 2)).value());
    EXPECT_TRUE(live[0]->Overlaps(0x3ff000, 0x1000));
    EXPECT_FALSE(live[0]->Overlaps(0x400000, 0x1000));
    EXPECT_FALSE(Mapping()->Overlaps(0, ~0ull));  // an empty mapping overlaps nothing
    live[1].release();  // as after a cuMemUnmap over a wider range: forgotten, not unmapped
    EXPECT_EQ(g_fake.unmaps, 0);
  }
  EXPECT_EQ(g_fake.unmaps, 1);
  EXPECT_EQ(g_fake.unmapped_va, 0x200000u);
}

TEST(VmmHandlesTest, DeviceAllocationPropIsPinnedDeviceMemory) {
  const CUmemAllocationProp p = DeviceAllocationProp(3);
  EXPECT_EQ(p.type, CU_MEM_ALLOCATION_TYPE_PINNED);
  EXPECT_EQ(p.location.type, CU_MEM_LOCATION_TYPE_DEVICE);
  EXPECT_EQ(p.location.id, 3);
  EXPECT_EQ(p.requestedHandleTypes, CU_MEM_HANDLE_TYPE_NONE);
}

TEST(GraphOpsTest, EveryUpdateResultMapsToItsCode) {
  EXPECT_EQ(ToUpdateCode(cudaGraphExecUpdateSuccess), UpdateCode::kSuccess);
  EXPECT_EQ(ToUpdateCode(cudaGraphExecUpdateError), UpdateCode::kError);
  EXPECT_EQ(ToUpdateCode(cudaGraphExecUpdateErrorTopologyChanged),
            UpdateCode::kErrorTopologyChanged);
  EXPECT_EQ(ToUpdateCode(cudaGraphExecUpdateErrorNodeTypeChanged),
            UpdateCode::kErrorNodeTypeChanged);
  EXPECT_EQ(ToUpdateCode(cudaGraphExecUpdateErrorFunctionChanged),
            UpdateCode::kErrorFunctionChanged);
  EXPECT_EQ(ToUpdateCode(cudaGraphExecUpdateErrorParametersChanged),
            UpdateCode::kErrorParametersChanged);
  EXPECT_EQ(ToUpdateCode(cudaGraphExecUpdateErrorNotSupported), UpdateCode::kErrorNotSupported);
  EXPECT_EQ(ToUpdateCode(cudaGraphExecUpdateErrorUnsupportedFunctionChange),
            UpdateCode::kErrorUnsupportedFunctionChange);
  EXPECT_EQ(ToUpdateCode(cudaGraphExecUpdateErrorAttributesChanged),
            UpdateCode::kErrorAttributesChanged);
  EXPECT_EQ(ToUpdateCode(static_cast<cudaGraphExecUpdateResult>(99)), UpdateCode::kError);
}

TEST(KernelRegistryTest, PacksMatmulLayoutInto36Bytes) {
  KernelEntry e;
  e.name = "vmm_matmul_f32";
  e.row = FindGraphKernel(e.name);
  ASSERT_NE(e.row, nullptr);
  uint64_t a = 0x1111222233334444ull, b = 0x5555666677778888ull, c = 0x99990000aaaabbbbull;
  uint32_t m = 37, n = 53, k = 29;
  void* params[] = {&a, &b, &c, &m, &n, &k};
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(KernelRegistry::PackArgs(e, params, &bytes).ok());
  ASSERT_EQ(bytes.size(), 36u);
  uint64_t got_c = 0;
  uint32_t got_k = 0;
  std::memcpy(&got_c, bytes.data() + 16, 8);
  std::memcpy(&got_k, bytes.data() + 32, 4);
  EXPECT_EQ(got_c, c);
  EXPECT_EQ(got_k, 29u);
}

TEST(KernelRegistryTest, PaddingIsZeroAndMissingParamsAreAnError) {
  // A kernel k(uint32_t, uint64_t): 4 bytes of padding after the first argument.
  const kernels::GraphKernel row{
      "k", kernels::Signature<void(uint32_t, uint64_t)>::Layout(), {}, {}, {}};
  KernelEntry e;
  e.name = "k";
  e.row = &row;
  uint32_t x = 0xffffffffu;
  uint64_t y = ~0ull;
  void* params[] = {&x, &y};
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(KernelRegistry::PackArgs(e, params, &bytes).ok());
  EXPECT_EQ(bytes, std::vector<uint8_t>({0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,
                                         0xff, 0xff, 0xff, 0xff}));
  EXPECT_FALSE(KernelRegistry::PackArgs(e, nullptr, &bytes).ok());
  void* with_null[] = {&x, nullptr};
  EXPECT_FALSE(KernelRegistry::PackArgs(e, with_null, &bytes).ok());
}

TEST(CreateCudaEngineTest, EitherAWorkingEngineOrAClearReason) {
  StatusOr<std::unique_ptr<Engine>> engine = CreateCudaEngine(0);
  if (engine.ok()) {
    EXPECT_EQ((*engine)->info().backend, "cuda");
    EXPECT_TRUE((*engine)->info().vmm_supported);
    return;
  }
  EXPECT_EQ(engine.status().code(), Code::kUnavailable);
  const std::string& m = engine.status().message();
  const bool known = m.rfind("no CUDA device", 0) == 0 || m.rfind("no CUDA driver", 0) == 0 ||
                     m.rfind("CUDA unavailable", 0) == 0 ||
                     m.rfind("device 0 does not support virtual memory management", 0) == 0;
  EXPECT_TRUE(known) << m;
  // An ordinal that cannot exist is refused the same way, never a crash.
  StatusOr<std::unique_ptr<Engine>> bad = CreateCudaEngine(-1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::kUnavailable);
}

}  // namespace
}  // namespace vmm::cuda
