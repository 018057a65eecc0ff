// GPU tests of the graph nodes beyond kernels and copies in the CUDA engine, each against the host
// twin: graph memory nodes (auto-free, upload, trim), child graphs and device-launch
// instantiation, conditional nodes (if / while). Every test skips without a CUDA device.
#include <gtest/gtest.h>

#include "runner/engine/cuda/cuda_graph_v2_test_util.h"

namespace vmm::testing_cuda {
namespace {

TEST_F(CudaGraphV2Test, GraphMemoryNodesAutoFreeUploadAndTrim) {
  GraphHandle g;
  DevicePtr t = 0;
  ASSERT_OK(engine_->BeginCapture());
  ASSERT_OK(engine_->GraphAlloc(kBytes, &t));
  ASSERT_OK(engine_->NameCapturedNode("allocate T"));
  ASSERT_OK(engine_->Fill(t, kElems, 1, nullptr));
  ASSERT_OK(engine_->NameCapturedNode("fill T"));
  ASSERT_OK(engine_->EndCapture(&g));
  EXPECT_NE(t, 0u);

  InstantiateOptions upload;
  upload.upload = true;
  InstantiateInfo info;
  ExecHandle e1, e2;
  ASSERT_OK(engine_->InstantiateWith(g, upload, &e1, &info));
  std::printf("instantiate %.1f us, upload %.1f us\n", info.instantiate_us, info.upload_us);
  EXPECT_GE(info.upload_us, 0.0);
  EXPECT_FALSE(engine_->Instantiate(g, &e2).ok()) << "one exec of a graph with memory nodes";
  ASSERT_OK(engine_->Replay(e1, nullptr));
  uint64_t mismatches = 0;
  std::string diff = DescribeMismatches(Expected(1, kElems), ReadBack(*engine_, t), &mismatches);
  EXPECT_EQ(mismatches, 0u) << "the allocation lives after the replay:" << diff;
  GraphMemoryUsage live;
  ASSERT_OK(engine_->GraphMemory(&live));
  EXPECT_GE(live.used_current, kBytes);
  EXPECT_FALSE(engine_->Replay(e1, nullptr).ok()) << "relaunch while the allocation lives";
  ASSERT_OK(engine_->GraphFree(t));
  ASSERT_OK(engine_->Replay(e1, nullptr));
  ASSERT_OK(engine_->GraphFree(t));

  ASSERT_OK(engine_->DestroyExec(e1));
  InstantiateOptions auto_free;
  auto_free.auto_free_on_launch = true;
  ASSERT_OK(engine_->InstantiateWith(g, auto_free, &e2, &info));
  EXPECT_EQ(info.flags, static_cast<unsigned long long>(cudaGraphInstantiateFlagAutoFreeOnLaunch));
  ASSERT_OK(engine_->Replay(e2, nullptr));
  ASSERT_OK(engine_->Replay(e2, nullptr));  // auto-free frees the earlier allocation
  ASSERT_OK(engine_->GraphFree(t));
  ASSERT_OK(engine_->DestroyExec(e2));
  ASSERT_OK(engine_->DestroyGraph(g));

  GraphMemoryUsage before, after;
  ASSERT_OK(engine_->GraphMemory(&before));
  ASSERT_OK(engine_->TrimGraphMemory());
  ASSERT_OK(engine_->GraphMemory(&after));
  std::printf("graph pool: used %llu -> %llu, reserved %llu -> %llu (high %llu)\n",
              static_cast<unsigned long long>(before.used_current),
              static_cast<unsigned long long>(after.used_current),
              static_cast<unsigned long long>(before.reserved_current),
              static_cast<unsigned long long>(after.reserved_current),
              static_cast<unsigned long long>(after.reserved_high));
  EXPECT_LE(after.reserved_current, before.reserved_current);
  EXPECT_EQ(after.used_current, 0u);
}

TEST_F(CudaGraphV2Test, ChildGraphKeepsItsNodesNamesAndDeviceLaunchRuns) {
  GraphHandle child, parent, hchild, hparent;
  auto capture = [](Engine& e, const Buffers& b, GraphHandle* child, GraphHandle* parent) {
    VMM_RETURN_IF_ERROR(e.BeginCapture());
    CAPTURED(e, Memset(b.a, kElems, 0, nullptr), "clear A");
    CAPTURED(e, Fill(b.a, kElems, 3, nullptr), "refill A");
    VMM_RETURN_IF_ERROR(e.EndCapture(child));
    VMM_RETURN_IF_ERROR(e.BeginCapture());
    CAPTURED(e, CaptureChildGraph(*child), "the epilogue");
    CAPTURED(e, Matmul({b.a, b.b, b.c, kN, kN, kN}, nullptr), "C = A'·B");
    return e.EndCapture(parent);
  };
  ASSERT_OK(capture(*engine_, cuda_, &child, &parent));
  ASSERT_OK(capture(*host_, twin_, &hchild, &hparent));
  GraphStructure cs, hs;
  ASSERT_OK(engine_->DescribeGraph(parent, &cs));
  ASSERT_OK(host_->DescribeGraph(hparent, &hs));
  EXPECT_EQ(Shape(cs.nodes), Shape(hs.nodes));

  InstantiateOptions device;
  device.device_launch = true;
  device.upload = true;
  InstantiateInfo info;
  ExecHandle e_child, e_parent;
  ASSERT_OK(engine_->InstantiateWith(child, device, &e_child, &info));
  EXPECT_EQ(info.flags, static_cast<unsigned long long>(cudaGraphInstantiateFlagDeviceLaunch));
  ASSERT_OK(engine_->Replay(e_child, nullptr));
  ASSERT_OK(engine_->Instantiate(parent, &e_parent));
  ASSERT_OK(engine_->Replay(e_parent, nullptr));
  uint64_t mismatches = 0;
  const std::vector<float> a = Expected(3, kElems);
  std::string diff = DescribeMismatches(a, ReadBack(*engine_, cuda_.a), &mismatches);
  EXPECT_EQ(mismatches, 0u) << diff;
  diff = DescribeMismatches(HostMatmul(a, ReadBack(*engine_, cuda_.b), kN, kN, kN),
                            ReadBack(*engine_, cuda_.c), &mismatches);
  EXPECT_EQ(mismatches, 0u) << diff;
}

// Conditional nodes (scenarios/graph_conditional.yaml's graph): an if node whose body fills A
// (seed 3) when the word at D is not zero, then a while loop that copies A to B while the counter
// at D + 256 is not zero, counting its passes at D + 512. The same exec is replayed with flag 0 /
// counter 0 and flag 1 / counter 3; the structure and every word agree with the host twin's.
Status CaptureConditionals(Engine& e, const Buffers& b, GraphHandle* out) {
  VMM_RETURN_IF_ERROR(e.Memset(b.d, kElems, 0, nullptr));
  VMM_RETURN_IF_ERROR(e.BeginCapture());
  VMM_RETURN_IF_ERROR(e.BeginConditional(ConditionKind::kIf, b.d, 0, "when flagged"));
  CAPTURED(e, Fill(b.a, kElems, 3, nullptr), "fill A");
  VMM_RETURN_IF_ERROR(e.EndConditional());
  VMM_RETURN_IF_ERROR(e.NameCapturedNode("when flagged"));
  VMM_RETURN_IF_ERROR(e.BeginConditional(ConditionKind::kWhile, b.d + 256, b.d + 512, "drain"));
  CAPTURED(e, CopyDevice(b.b, b.a, kBytes, nullptr), "copy A to B");
  VMM_RETURN_IF_ERROR(e.EndConditional());
  VMM_RETURN_IF_ERROR(e.NameCapturedNode("drain"));
  return e.EndCapture(out);
}

TEST_F(CudaGraphV2Test, ConditionalNodesRunTheirBodiesAsTheHostTwinDoes) {
  GraphHandle g, hg;
  ASSERT_OK(CaptureConditionals(*engine_, cuda_, &g));
  ASSERT_OK(CaptureConditionals(*host_, twin_, &hg));
  GraphStructure cs, hs;
  ASSERT_OK(engine_->DescribeGraph(g, &cs));
  ASSERT_OK(host_->DescribeGraph(hg, &hs));
  EXPECT_EQ(Shape(cs.nodes), Shape(hs.nodes)) << "CUDA's structure vs the host twin's";
  ASSERT_EQ(cs.nodes.size(), 4u);
  EXPECT_EQ(cs.nodes[1].type, NodeType::kConditional);
  EXPECT_EQ(cs.nodes[3].children.size(), 2u) << "copy A to B, drain (next pass)";
  for (Engine* e : {engine_.get(), host_.get()}) {
    SCOPED_TRACE(e->info().backend);
    const Buffers& b = e == engine_.get() ? cuda_ : twin_;
    auto word = [&](uint64_t offset) {
      uint32_t w = 0;
      const Status s = e->CopyToHost(b.d + offset, 4, &w);
      EXPECT_TRUE(s.ok()) << s.message();
      return w;
    };
    ExecHandle exec;
    ASSERT_OK(e->Instantiate(e == engine_.get() ? g : hg, &exec));
    ASSERT_OK(e->Memset(b.a, kElems, 0, nullptr));
    ASSERT_OK(e->Memset(b.b, kElems, 0, nullptr));
    ASSERT_OK(e->Replay(exec, nullptr));  // flag 0, counter 0: no body runs
    const std::vector<float> zeros(kElems, 0.0f);
    uint64_t mismatches = 0;
    std::string diff = DescribeMismatches(zeros, ReadBack(*e, b.a), &mismatches);
    EXPECT_EQ(mismatches, 0u) << "if body skipped:" << diff;
    EXPECT_EQ(word(512), 0u) << "no pass";
    ASSERT_OK(e->Memset(b.d, 1, 1, nullptr));
    ASSERT_OK(e->Memset(b.d + 256, 1, 3, nullptr));
    ASSERT_OK(e->Replay(exec, nullptr));  // flag 1, counter 3
    const std::vector<float> filled = Expected(3, kElems);
    diff = DescribeMismatches(filled, ReadBack(*e, b.a), &mismatches);
    EXPECT_EQ(mismatches, 0u) << "if body ran:" << diff;
    diff = DescribeMismatches(filled, ReadBack(*e, b.b), &mismatches);
    EXPECT_EQ(mismatches, 0u) << "while body ran:" << diff;
    EXPECT_EQ(word(512), 3u) << "three passes";
    EXPECT_EQ(word(256), 0u) << "counter drained";
    EXPECT_EQ(word(0), 1u) << "flag only read";
    ASSERT_OK(e->DestroyExec(exec));
  }
}

}  // namespace
}  // namespace vmm::testing_cuda
