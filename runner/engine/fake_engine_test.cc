#include "runner/engine/fake_engine.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/datagen.h"

namespace vmm {
namespace {

constexpr uint64_t kMiB = 1 << 20;

TEST(FakeEngine, HandsOutAlignedAddressesAndRecordsCalls) {
  FakeEngine engine;  // 2 MiB granularity
  DevicePtr a = 0, b = 0, c = 0;
  ASSERT_TRUE(engine.Reserve(2 * kMiB, 0, &a).ok());
  ASSERT_TRUE(engine.Reserve(3 * kMiB, 0, &b).ok());  // rounded up to 4 MiB
  ASSERT_TRUE(engine.Reserve(2 * kMiB, 8 * kMiB, &c).ok());
  EXPECT_EQ(a, 0x100000000u);
  EXPECT_EQ(b, 0x100200000u);
  EXPECT_EQ(c, 0x100800000u);
  AllocHandle h;
  ASSERT_TRUE(engine.Create(2 * kMiB, &h).ok());
  EXPECT_EQ(h.value, 1u);
  ASSERT_TRUE(engine.Map(a, 2 * kMiB, 0, h).ok());
  ASSERT_TRUE(engine.SetAccess(a, 2 * kMiB, Access::kRead).ok());
  SyncNote note{true, 5};
  ASSERT_TRUE(engine.Unmap(a, 2 * kMiB, &note).ok());
  EXPECT_FALSE(note.waited);
  ASSERT_TRUE(engine.Release(h, &note).ok());
  ASSERT_TRUE(engine.Free(a, 2 * kMiB).ok());
  ASSERT_TRUE(engine.Synchronize().ok());
  const std::vector<std::string> want = {
      "Reserve(size=0x200000, align=0x0) -> 0x100000000",
      "Reserve(size=0x300000, align=0x0) -> 0x100200000",
      "Reserve(size=0x200000, align=0x800000) -> 0x100800000",
      "Create(size=0x200000) -> 0x1",
      "Map(va=0x100000000, size=0x200000, offset=0x0, handle=0x1)",
      "SetAccess(va=0x100000000, size=0x200000, access=read)",
      "Unmap(va=0x100000000, size=0x200000)",
      "Release(handle=0x1)",
      "Free(va=0x100000000, size=0x200000)",
      "Synchronize()",
  };
  EXPECT_EQ(engine.calls(), want);
  EXPECT_EQ(engine.info().backend, "fake");
  EXPECT_EQ(engine.info().granularity_recommended, 2 * kMiB);
}

TEST(FakeEngine, FailAtFailsOnlyTheNthCallAndHasNoEffect) {
  FakeEngine engine;
  engine.FailAt("Create", 2, RuntimeError("cuMemCreate: CUDA_ERROR_OUT_OF_MEMORY: injected"));
  AllocHandle first, second, third;
  ASSERT_TRUE(engine.Create(2 * kMiB, &first).ok());
  Status s = engine.Create(4 * kMiB, &second);
  EXPECT_EQ(s.code(), Code::kRuntime);
  EXPECT_EQ(s.message(), "cuMemCreate: CUDA_ERROR_OUT_OF_MEMORY: injected");
  ASSERT_TRUE(engine.Create(2 * kMiB, &third).ok());
  EXPECT_EQ(first.value, 1u);
  EXPECT_EQ(third.value, 2u);  // the failed call handed out nothing
  EXPECT_EQ(engine.calls()[1],
            "Create(size=0x400000) -> error: cuMemCreate: CUDA_ERROR_OUT_OF_MEMORY: injected");
}

TEST(FakeEngine, CaptureRecordsKernelNodesWithTheCudaArgumentLayout) {
  FakeEngine engine;
  OpTiming timing;
  ASSERT_TRUE(engine.BeginCapture().ok());
  ASSERT_TRUE(engine.Fill(0x100000000, 1000, 7, &timing).ok());
  EXPECT_EQ(timing.gpu_us, -1);
  ASSERT_TRUE(engine.Matmul({0x100000000, 0x100200000, 0x100400000, 100, 200, 3}, &timing).ok());
  GraphHandle graph;
  ASSERT_TRUE(engine.EndCapture(&graph).ok());
  std::vector<KernelNodeParams> nodes;
  ASSERT_TRUE(engine.KernelNodes(graph, &nodes).ok());
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].function, "vmm_fill_f32");
  EXPECT_EQ(nodes[0].grid, (std::array<uint32_t, 3>{4, 1, 1}));  // ceil(1000 / 256)
  EXPECT_EQ(nodes[0].arg_bytes, (std::vector<uint8_t>{0, 0, 0, 0, 1, 0, 0, 0, 0xe8, 3, 0, 0,
                                                      0, 0, 0, 0, 7, 0, 0, 0, 0,    0, 0, 0}));
  EXPECT_EQ(nodes[1].function, "vmm_matmul_f32");
  EXPECT_EQ(nodes[1].grid, (std::array<uint32_t, 3>{2, 1, 1}));  // (ceil(200/128), ceil(100/128))
  EXPECT_EQ(nodes[1].block, (std::array<uint32_t, 3>{256, 1, 1}));
  ASSERT_EQ(nodes[1].arg_bytes.size(), 36u);
  EXPECT_EQ(nodes[1].arg_bytes[10], 0x20);  // b = 0x100200000, byte 2 of the second pointer
  EXPECT_EQ(nodes[1].arg_bytes[24], 100);   // m
  EXPECT_EQ(nodes[1].arg_bytes[28], 200);   // n
  EXPECT_EQ(nodes[1].arg_bytes[32], 3);     // k
  EXPECT_EQ(engine.calls()[1], "vmm_fill_f32(dst=0x100000000, count=1000, seed=7) [captured]");
  EXPECT_EQ(engine.calls()[3], "EndCapture() -> 0x1");
  EXPECT_EQ(engine.calls()[4], "KernelNodes(graph=0x1) -> 2 nodes");
}

TEST(FakeEngine, GraphsReplayAndUpdateWithTheConfiguredResult) {
  FakeEngine engine;
  GraphHandle g1, g2;
  ExecHandle exec;
  OpTiming timing;
  ASSERT_TRUE(engine.BeginCapture().ok());
  ASSERT_TRUE(engine.Fill(0x100000000, 16, 1, nullptr).ok());
  ASSERT_TRUE(engine.EndCapture(&g1).ok());
  ASSERT_TRUE(engine.Instantiate(g1, &exec).ok());
  ASSERT_TRUE(engine.Replay(exec, &timing).ok());
  EXPECT_EQ(timing.gpu_us, 1);  // one node
  ASSERT_TRUE(engine.BeginCapture().ok());
  ASSERT_TRUE(engine.EndCapture(&g2).ok());
  UpdateResult result;
  ASSERT_TRUE(engine.Update(exec, g2, &result).ok());
  EXPECT_EQ(result.code, UpdateCode::kSuccess);
  engine.SetUpdateResult(
      {UpdateCode::kErrorTopologyChanged, "n0", "", "cudaErrorGraphExecUpdateFailure"});
  ASSERT_TRUE(engine.Update(exec, g1, &result).ok());
  EXPECT_EQ(result.code, UpdateCode::kErrorTopologyChanged);
  EXPECT_EQ(result.error_node, "n0");
  EXPECT_EQ(engine.calls().back(), "Update(exec=0x1, graph=0x1) -> error_topology_changed");
  ASSERT_TRUE(engine.DestroyGraph(g1).ok());
  Status s = engine.Instantiate(g1, &exec);
  EXPECT_EQ(s.message(), "fake engine: unknown graph 0x1");
  EXPECT_EQ(engine.calls().back(),
            "Instantiate(graph=0x1) -> error: fake engine: unknown graph 0x1");
  EXPECT_EQ(engine.EndCapture(&g1).message(), "fake engine: not capturing");
}

TEST(FakeEngine, DataCallsReturnConfiguredValues) {
  FakeEngine engine;
  std::vector<uint8_t> out(8, 0xff);
  ASSERT_TRUE(engine.CopyToHost(0x100000000, out.size(), out.data()).ok());
  EXPECT_EQ(out, std::vector<uint8_t>(8, 0));
  uint64_t hash = 0;
  ASSERT_TRUE(engine.Checksum(0x100000000, 2, &hash).ok());
  EXPECT_EQ(hash, datagen::HashWord(0, 0) + datagen::HashWord(0, 1));  // zeros, like CopyToHost
  engine.SetChecksum(0xabc);
  ASSERT_TRUE(engine.Checksum(0x100000000, 4, &hash).ok());
  EXPECT_EQ(hash, 0xabcu);
  DataCompareResult cmp;
  ASSERT_TRUE(engine.CompareData(0x100000000, DataRef::Device(0x100200000), 2, {}, &cmp).ok());
  EXPECT_EQ(cmp.mismatches, 0u);  // zeros against zeros
  EXPECT_EQ(cmp.hash, datagen::HashWord(0, 0) + datagen::HashWord(0, 1));
  EXPECT_EQ(cmp.other_hash, cmp.hash);
  ASSERT_TRUE(engine.CompareValue(0x100000000, 7, 3, 2, &cmp).ok());
  EXPECT_EQ(cmp.mismatches, 3u);  // zeros are not 7
  EXPECT_EQ(cmp.first, (std::vector<WordMismatch>{{0, 7, 0}, {1, 7, 0}}));
  engine.SetCompareResult({3, {{1, 2, 3}, {5, 6, 7}, {9, 1, 0}}, 0x11, 0x22});
  CompareOptions options;
  options.max_report = 2;
  ASSERT_TRUE(
      engine.CompareData(0x100000000, DataRef::Device(0x100200000), 16, options, &cmp).ok());
  EXPECT_EQ(cmp.mismatches, 3u);
  EXPECT_EQ(cmp.first, (std::vector<WordMismatch>{{1, 2, 3}, {5, 6, 7}}));  // capped at max_report
  EXPECT_EQ(engine.calls().back(),
            "CompareData(a=0x100000000, b=0x100200000 device, count=16, max_report=2) -> 3 "
            "mismatches");
  SnapshotHandle snap;
  ASSERT_TRUE(engine.AllocSnapshot(100, DataPlace::kHostPinned, &snap).ok());
  EXPECT_EQ(snap.addr, 0x700000000000u);
  EXPECT_EQ(engine.calls().back(),
            "AllocSnapshot(bytes=0x64, place=host_pinned) -> 0x700000000000");
  OpTiming timing;
  ASSERT_TRUE(engine.Copy(DataRef::Of(snap), DataRef::Device(0x100000000), 100, &timing).ok());
  EXPECT_EQ(engine.calls().back(),
            "Copy(dst=0x700000000000 host_pinned, src=0x100000000 device, bytes=0x64)");
  MatmulCheckResult check;
  ASSERT_TRUE(engine.CheckMatmul({0x1, 0x2, 0x3, 2048, 2048, 2048}, 8, &check).ok());
  EXPECT_TRUE(check.freivalds);
  EXPECT_EQ(check.elements, 2048u * 2048u);
  EXPECT_EQ(check.mismatches, 0u);
}

}  // namespace
}  // namespace vmm
