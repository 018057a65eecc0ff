// GPU tests of the CUDA engine's graphs (capture, instantiate, replay, update, kernel nodes), of
// the waits in Unmap/Release, and of engine destruction with everything alive.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kernels/launch_config.h"
#include "runner/engine/cuda/cuda_engine.h"
#include "runner/engine/cuda/cuda_test_util.h"
#include "runner/engine/engine.h"

namespace vmm::testing_cuda {
namespace {

// Three n x n buffers with A and B filled (seeds 1 and 2).
class CudaGraphTest : public CudaEngineTest {
 protected:
  static constexpr uint32_t kN = 256;
  static constexpr uint64_t kElems = uint64_t{kN} * kN;

  void SetUp() override {
    CudaEngineTest::SetUp();
    if (IsSkipped()) return;
    ASSERT_NO_FATAL_FAILURE(NewBuffer(kElems * 4, &a_, &ha_));
    ASSERT_NO_FATAL_FAILURE(NewBuffer(kElems * 4, &b_, &hb_));
    ASSERT_NO_FATAL_FAILURE(NewBuffer(kElems * 4, &c_));
    ASSERT_OK(engine_->Fill(a_, kElems, 1, nullptr));
    ASSERT_OK(engine_->Fill(b_, kElems, 2, nullptr));
  }

  MatmulArgs Args() const { return {a_, b_, c_, kN, kN, kN}; }

  // Captures `matmuls` launches of C = A * B into a new graph.
  void CaptureMatmuls(int matmuls, GraphHandle* graph) {
    ASSERT_OK(engine_->BeginCapture());
    for (int i = 0; i < matmuls; ++i) ASSERT_OK(engine_->Matmul(Args(), nullptr));
    ASSERT_OK(engine_->EndCapture(graph));
  }

  std::vector<float> HostResult() {
    return HostMatmul(Read(a_, kElems), Read(b_, kElems), kN, kN, kN);
  }

  DevicePtr a_ = 0, b_ = 0, c_ = 0;
  AllocHandle ha_, hb_;
};

TEST_F(CudaGraphTest, CaptureInstantiateReplay) {
  ASSERT_OK(engine_->Matmul(Args(), nullptr));
  const std::vector<float> direct = Read(c_, kElems);
  ASSERT_OK(engine_->Fill(c_, kElems, 3, nullptr));

  GraphHandle graph;
  ExecHandle exec;
  OpTiming captured;
  ASSERT_OK(engine_->BeginCapture());
  ASSERT_OK(engine_->Matmul(Args(), &captured));
  ASSERT_OK(engine_->EndCapture(&graph));
  EXPECT_LT(captured.gpu_us, 0.0) << "a captured launch has no timing";
  uint64_t mismatches = 0;
  DescribeMismatches(Expected(3, kElems), Read(c_, kElems), &mismatches);
  EXPECT_EQ(mismatches, 0u) << "capturing must not run the kernel";

  ASSERT_OK(engine_->Instantiate(graph, &exec));
  OpTiming replay;
  ASSERT_OK(engine_->Replay(exec, &replay));
  EXPECT_GT(replay.gpu_us, 0.0);
  const std::string diff = DescribeMismatches(direct, Read(c_, kElems), &mismatches);
  EXPECT_EQ(mismatches, 0u) << "replay differs from the direct launch:" << diff;
  ASSERT_OK(engine_->DestroyExec(exec));
  ASSERT_OK(engine_->DestroyGraph(graph));
  EXPECT_EQ(engine_->DestroyGraph(graph).code(), Code::kRuntime);  // stale handles
  EXPECT_EQ(engine_->Replay(exec, nullptr).code(), Code::kRuntime);
  std::vector<KernelNodeParams> nodes;
  EXPECT_EQ(engine_->KernelNodes(graph, &nodes).code(), Code::kRuntime);
}

TEST_F(CudaGraphTest, SameLaunchRecapturedUpdatesAndKernelNodesAreEqual) {
  GraphHandle first, second;
  ExecHandle exec;
  ASSERT_NO_FATAL_FAILURE(CaptureMatmuls(1, &first));
  ASSERT_NO_FATAL_FAILURE(CaptureMatmuls(1, &second));
  ASSERT_OK(engine_->Instantiate(first, &exec));

  std::vector<KernelNodeParams> n1, n2;
  ASSERT_OK(engine_->KernelNodes(first, &n1));
  ASSERT_OK(engine_->KernelNodes(second, &n2));
  ASSERT_EQ(n1.size(), 1u);
  EXPECT_TRUE(n1 == n2) << "two captures of the same launch must have identical kernel nodes";
  const KernelNodeParams& p = n1[0];
  EXPECT_EQ(p.function, "vmm_matmul_f32");
  const kernels::LaunchConfig launch = kernels::MatmulLaunch(kN, kN);
  EXPECT_EQ(p.grid, launch.grid);
  EXPECT_EQ(p.block, launch.block);
  EXPECT_EQ(p.shared_bytes, launch.shared_bytes);
  ASSERT_EQ(p.arg_bytes.size(), 36u) << "matmul args: 3 pointers + 3 uint32";
  uint64_t pa = 0, pc = 0;
  uint32_t m = 0, k = 0;
  std::memcpy(&pa, p.arg_bytes.data(), 8);
  std::memcpy(&pc, p.arg_bytes.data() + 16, 8);
  std::memcpy(&m, p.arg_bytes.data() + 24, 4);
  std::memcpy(&k, p.arg_bytes.data() + 32, 4);
  EXPECT_EQ(pa, a_);
  EXPECT_EQ(pc, c_);
  EXPECT_EQ(m, kN);
  EXPECT_EQ(k, kN);

  UpdateResult result;
  ASSERT_OK(engine_->Update(exec, second, &result));
  EXPECT_EQ(result.code, UpdateCode::kSuccess) << UpdateCodeName(result.code);
  EXPECT_EQ(result.error_node, "");
  EXPECT_EQ(result.api_error, "");
}

// The graph_update demo: remap A and B to new memory with new data at the same VAs, recapture,
// update the old exec, replay it, and get the product of the new data.
TEST_F(CudaGraphTest, RemapThenUpdateComputesWithTheNewData) {
  GraphHandle before, after;
  ExecHandle exec;
  ASSERT_NO_FATAL_FAILURE(CaptureMatmuls(1, &before));
  ASSERT_OK(engine_->Instantiate(before, &exec));
  ASSERT_OK(engine_->Replay(exec, nullptr));
  const std::vector<float> old_result = Read(c_, kElems);

  const uint64_t size = RoundUp(kElems * 4, gran_);
  const DevicePtr old_a = a_, old_b = b_;
  for (auto [va, handle, seed] : {std::tuple{a_, ha_, 21u}, std::tuple{b_, hb_, 22u}}) {
    SyncNote note;
    AllocHandle fresh;
    ASSERT_OK(engine_->Unmap(va, size, &note));
    ASSERT_OK(engine_->Release(handle, &note));
    ASSERT_OK(engine_->Create(size, &fresh));
    ASSERT_OK(engine_->Map(va, size, 0, fresh));
    ASSERT_OK(engine_->SetAccess(va, size, Access::kReadWrite));
    ASSERT_OK(engine_->Fill(va, kElems, seed, nullptr));
  }
  EXPECT_EQ(a_, old_a);
  EXPECT_EQ(b_, old_b);
  ASSERT_NO_FATAL_FAILURE(CaptureMatmuls(1, &after));
  std::vector<KernelNodeParams> n1, n2;
  ASSERT_OK(engine_->KernelNodes(before, &n1));
  ASSERT_OK(engine_->KernelNodes(after, &n2));
  EXPECT_TRUE(n1 == n2) << "same VAs: the kernel nodes are byte-identical";
  UpdateResult result;
  ASSERT_OK(engine_->Update(exec, after, &result));
  EXPECT_EQ(result.code, UpdateCode::kSuccess) << UpdateCodeName(result.code);
  ASSERT_OK(engine_->Replay(exec, nullptr));
  const std::vector<float> got = Read(c_, kElems);
  uint64_t mismatches = 0;
  const std::string diff = DescribeMismatches(HostResult(), got, &mismatches);
  EXPECT_EQ(mismatches, 0u) << diff;
  DescribeMismatches(old_result, got, &mismatches);
  EXPECT_GT(mismatches, 0u) << "the new result must differ from the old one";
}

TEST_F(CudaGraphTest, TopologyChangeIsRefusedAndTheOldExecStillRuns) {
  GraphHandle one, two;
  ExecHandle exec;
  ASSERT_NO_FATAL_FAILURE(CaptureMatmuls(1, &one));
  ASSERT_NO_FATAL_FAILURE(CaptureMatmuls(2, &two));
  ASSERT_OK(engine_->Instantiate(one, &exec));
  std::vector<KernelNodeParams> nodes;
  ASSERT_OK(engine_->KernelNodes(two, &nodes));
  EXPECT_EQ(nodes.size(), 2u);
  UpdateResult result;
  ASSERT_OK(engine_->Update(exec, two, &result));  // a refusal is a result, not an error
  EXPECT_EQ(result.code, UpdateCode::kErrorTopologyChanged) << UpdateCodeName(result.code);
  EXPECT_EQ(result.api_error, "cudaErrorGraphExecUpdateFailure");
  EXPECT_EQ(result.error_node, "") << "a changed node count names no node";
  std::printf("topology change: %s, error_node '%s'\n", UpdateCodeName(result.code),
              result.error_node.c_str());
  ASSERT_OK(engine_->Fill(c_, kElems, 3, nullptr));
  ASSERT_OK(engine_->Replay(exec, nullptr));
  uint64_t mismatches = 0;
  const std::string diff = DescribeMismatches(HostResult(), Read(c_, kElems), &mismatches);
  EXPECT_EQ(mismatches, 0u) << diff;
}

TEST_F(CudaGraphTest, FillNodeArgumentsAre24Bytes) {
  GraphHandle graph;
  ASSERT_OK(engine_->BeginCapture());
  ASSERT_OK(engine_->Fill(c_, kElems, 77, nullptr));
  ASSERT_OK(engine_->EndCapture(&graph));
  std::vector<KernelNodeParams> nodes;
  ASSERT_OK(engine_->KernelNodes(graph, &nodes));
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].function, "vmm_fill_f32");
  EXPECT_EQ(nodes[0].grid, kernels::FillLaunch(kElems).grid);
  ASSERT_EQ(nodes[0].arg_bytes.size(), 24u) << "fill args: pointer + 2 uint64";
  uint64_t dst = 0, count = 0, seed = 0;
  std::memcpy(&dst, nodes[0].arg_bytes.data(), 8);
  std::memcpy(&count, nodes[0].arg_bytes.data() + 8, 8);
  std::memcpy(&seed, nodes[0].arg_bytes.data() + 16, 8);
  EXPECT_EQ(dst, c_);
  EXPECT_EQ(count, kElems);
  EXPECT_EQ(seed, 77u);
}

TEST_F(CudaGraphTest, SynchronizingDuringCaptureFailsAndInvalidatesIt) {
  ASSERT_OK(engine_->BeginCapture());
  ASSERT_OK(engine_->Matmul(Args(), nullptr));
  std::vector<float> out(16);
  const Status copy = engine_->CopyToHost(c_, 64, out.data());
  EXPECT_EQ(copy.code(), Code::kRuntime);
  std::printf("copy during capture: %s\n", copy.message().c_str());
  GraphHandle graph;
  EXPECT_EQ(engine_->EndCapture(&graph).code(), Code::kRuntime) << "the capture was invalidated";
  // The engine recovers: a fresh capture works.
  ASSERT_NO_FATAL_FAILURE(CaptureMatmuls(1, &graph));
  ExecHandle exec;
  ASSERT_OK(engine_->Instantiate(graph, &exec));
  ASSERT_OK(engine_->Replay(exec, nullptr));
}

TEST_F(CudaEngineTest, UnmapRightAfterALongMatmulWaitsForIt) {
  const uint32_t n = 4096;
  const uint64_t elems = uint64_t{n} * n;
  DevicePtr a = 0, b = 0, c = 0;
  ASSERT_NO_FATAL_FAILURE(NewBuffer(elems * 4, &a));
  ASSERT_NO_FATAL_FAILURE(NewBuffer(elems * 4, &b));
  ASSERT_NO_FATAL_FAILURE(NewBuffer(elems * 4, &c));
  ASSERT_OK(engine_->Fill(a, elems, 1, nullptr));
  ASSERT_OK(engine_->Fill(b, elems, 2, nullptr));
  ASSERT_OK(engine_->Synchronize());
  ASSERT_OK(engine_->Matmul({a, b, c, n, n, n}, nullptr));  // no timing: returns while it runs
  SyncNote note;
  ASSERT_OK(engine_->Unmap(c, RoundUp(elems * 4, gran_), &note));
  EXPECT_TRUE(note.waited) << "the matmul was still running";
  EXPECT_GT(note.wait_us, 0.0);
  std::printf("unmap waited %.1f us for the 4096^3 matmul\n", note.wait_us);
  ASSERT_OK(engine_->Synchronize());  // no fault was left behind
}

// Builds a busy engine: buffers, a graph, an exec, and a matmul still running.
void MakeEverythingLive(Engine& engine, bool leave_capture_open) {
  const uint64_t gran = engine.info().granularity_min;
  const uint32_t n = 2048;
  const uint64_t size = RoundUp(uint64_t{n} * n * 4, gran);
  DevicePtr va[3];
  for (DevicePtr& v : va) {
    AllocHandle h;
    ASSERT_OK(engine.Reserve(size, 0, &v));
    ASSERT_OK(engine.Create(size, &h));
    ASSERT_OK(engine.Map(v, size, 0, h));
    ASSERT_OK(engine.SetAccess(v, size, Access::kReadWrite));
  }
  AllocHandle spare;  // created, never mapped
  ASSERT_OK(engine.Create(gran, &spare));
  ASSERT_OK(engine.Fill(va[0], uint64_t{n} * n, 1, nullptr));
  ASSERT_OK(engine.Fill(va[1], uint64_t{n} * n, 2, nullptr));
  GraphHandle graph;
  ExecHandle exec;
  ASSERT_OK(engine.BeginCapture());
  ASSERT_OK(engine.Matmul({va[0], va[1], va[2], n, n, n}, nullptr));
  ASSERT_OK(engine.EndCapture(&graph));
  ASSERT_OK(engine.Instantiate(graph, &exec));
  ASSERT_OK(engine.Matmul({va[0], va[1], va[2], n, n, n}, nullptr));  // in flight
  if (leave_capture_open) {
    ASSERT_OK(engine.BeginCapture());
    ASSERT_OK(engine.Matmul({va[0], va[1], va[2], n, n, n}, nullptr));
  }
}

void ExpectCleanDestructionAndHealthyDevice(bool leave_capture_open) {
  StatusOr<std::unique_ptr<Engine>> e = CreateCudaEngine(0);
  if (!e.ok()) GTEST_SKIP() << SkipReason(e.status());
  std::unique_ptr<Engine> engine = std::move(e).value();
  ASSERT_NO_FATAL_FAILURE(MakeEverythingLive(*engine, leave_capture_open));
  ::testing::internal::CaptureStderr();
  engine.reset();
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(log, "") << "destruction logged failures";
  // The device is healthy afterwards: a new engine computes.
  StatusOr<std::unique_ptr<Engine>> again = CreateCudaEngine(0);
  ASSERT_TRUE(again.ok()) << again.status().message();
  DevicePtr va = 0;
  AllocHandle h;
  const uint64_t gran = (*again)->info().granularity_min;
  ASSERT_OK((*again)->Reserve(gran, 0, &va));
  ASSERT_OK((*again)->Create(gran, &h));
  ASSERT_OK((*again)->Map(va, gran, 0, h));
  ASSERT_OK((*again)->SetAccess(va, gran, Access::kReadWrite));
  ASSERT_OK((*again)->Fill(va, 1024, 5, nullptr));
  uint64_t hash = 0;
  ASSERT_OK((*again)->Checksum(va, 1024, &hash));
}

TEST(CudaEngineLifetimeTest, DestroyedWithEverythingLiveIsClean) {
  ExpectCleanDestructionAndHealthyDevice(false);
}

TEST(CudaEngineLifetimeTest, DestroyedDuringACaptureIsClean) {
  ExpectCleanDestructionAndHealthyDevice(true);
}

}  // namespace
}  // namespace vmm::testing_cuda
