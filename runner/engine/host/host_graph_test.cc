// Graph recording and the cudaGraphExecUpdate rules, on their own and through the host engine.
#include "runner/engine/host/host_graph.h"

#include <gtest/gtest.h>

#include <vector>

#include "kernels/datagen.h"
#include "runner/base/format.h"
#include "runner/engine/host/host_engine.h"
#include "runner/engine/kernel_params.h"

namespace vmm {
namespace {

using host::GraphNode;
using host::HostGraph;

GraphNode MakeFillNode(DevicePtr dst, uint64_t count, uint64_t seed) {
  return host::MakeKernelNode(FillKernelParams(dst, count, seed));
}
GraphNode MakeMatmulNode(const MatmulArgs& args) {
  return host::MakeKernelNode(MatmulKernelParams(args));
}
GraphNode MakeAxpyNode(const AxpyArgs& args) {
  return host::MakeKernelNode(AxpyKernelParams(args));
}

TEST(HostGraph, KernelArgumentsArePackedLikeTheCudaAbi) {
  GraphNode mm = MakeMatmulNode({0x1122334455667788, 0x10, 0x20, 0x01020304, 5, 6});
  EXPECT_EQ(mm.params.function, "vmm_matmul_f32");
  EXPECT_EQ(mm.params.grid, (std::array<uint32_t, 3>{1, (0x01020304 + 127) / 128, 1}));
  EXPECT_EQ(mm.params.block, (std::array<uint32_t, 3>{256, 1, 1}));
  EXPECT_EQ(
      mm.params.arg_bytes,
      (std::vector<uint8_t>{0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,                 // a
                            0x10, 0,    0,    0,    0,    0,    0,    0,                    // b
                            0x20, 0,    0,    0,    0,    0,    0,    0,                    // c
                            0x04, 0x03, 0x02, 0x01, 5,    0,    0,    0,    6, 0, 0, 0}));  // m n k
  GraphNode fill = MakeFillNode(0x30, 70000, 0xabcdef);
  EXPECT_EQ(fill.params.function, "vmm_fill_f32");
  EXPECT_EQ(fill.params.grid, (std::array<uint32_t, 3>{274, 1, 1}));  // ceil(70000 / 256)
  EXPECT_EQ(fill.params.arg_bytes,
            (std::vector<uint8_t>{0x30, 0, 0, 0, 0,    0,    0,    0, 0x70, 0x11, 0x01, 0,
                                  0,    0, 0, 0, 0xef, 0xcd, 0xab, 0, 0,    0,    0,    0}));
}

TEST(HostGraph, AxpyArgumentsAndOperandsComeFromOneLayout) {
  // vmm_axpy_f32(a, b, c, count, alpha): three pointers, a uint64 and a float = 36 bytes.
  GraphNode axpy = MakeAxpyNode({0x100, 0x200, 0x300, 10, 2.0f});
  EXPECT_EQ(axpy.params.function, "vmm_axpy_f32");
  EXPECT_EQ(axpy.params.arg_bytes,
            (std::vector<uint8_t>{
                0, 1, 0, 0, 0, 0,  0, 0, 0, 2, 0, 0, 0, 0, 0, 0,    0,   3, 0,
                0, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x40}));  // 2.0f = 0x40000000
  HostGraph g;
  g.nodes = {axpy, MakeAxpyNode({0x100, 0, 0x300, 10, 0.5f})};  // the second: scale
  const GraphStructure s = g.Describe();
  ASSERT_EQ(s.nodes.size(), 2u);
  EXPECT_EQ(s.nodes[0].operands, (std::vector<NodeOperand>{{0x100, 40, Access::kRead},
                                                           {0x200, 40, Access::kRead},
                                                           {0x300, 40, Access::kReadWrite}}));
  EXPECT_EQ(s.nodes[1].operands, (std::vector<NodeOperand>{{0x100, 40, Access::kRead},
                                                           {0x300, 40, Access::kReadWrite}}));
  EXPECT_TRUE(KernelOperands("no_such_kernel", axpy.params.arg_bytes).empty());
}

// The nodes captured on one lane, named n0, n1, ...
HostGraph Chain(std::vector<GraphNode> nodes) {
  host::CaptureBuilder capture;
  for (size_t i = 0; i < nodes.size(); ++i) {
    EXPECT_TRUE(capture.Add(std::move(nodes[i])).ok());
    EXPECT_TRUE(capture.NameLast("n" + std::to_string(i)).ok());
  }
  HostGraph g;
  EXPECT_TRUE(capture.Finish(&g).ok());
  return g;
}

TEST(HostGraph, CaptureOrderIsAChain) {
  HostGraph g = Chain({MakeFillNode(0, 1, 1), MakeFillNode(0, 1, 2), MakeFillNode(0, 1, 3)});
  EXPECT_TRUE(g.nodes[0].dependencies.empty());
  EXPECT_EQ(g.nodes[1].dependencies, std::vector<uint32_t>{0});
  EXPECT_EQ(g.nodes[2].dependencies, std::vector<uint32_t>{1});
}

TEST(HostGraph, UpdateWithTheSameTopologyTakesTheNewParametersAndFunction) {
  HostGraph exec = Chain({MakeMatmulNode({1, 2, 3, 64, 64, 64}), MakeFillNode(4, 8, 1)});
  HostGraph next = Chain({MakeFillNode(5, 16, 2), MakeMatmulNode({6, 7, 8, 32, 32, 32})});
  UpdateResult r = host::UpdateExec(&exec, next);
  EXPECT_EQ(r.code, UpdateCode::kSuccess);
  EXPECT_EQ(r.error_node, "");
  EXPECT_EQ(r.api_error, "");
  EXPECT_EQ(exec.KernelNodes(), next.KernelNodes());
}

TEST(HostGraph, UpdateRefusesATopologyChangeAndKeepsTheExec) {
  HostGraph exec = Chain({MakeFillNode(1, 8, 1)});
  const std::vector<KernelNodeParams> before = exec.KernelNodes();
  HostGraph longer = Chain({MakeFillNode(2, 8, 1), MakeFillNode(3, 8, 1)});
  UpdateResult r = host::UpdateExec(&exec, longer);
  EXPECT_EQ(r.code, UpdateCode::kErrorTopologyChanged);
  EXPECT_EQ(r.error_node, "");  // the driver names no node when the node count changes
  EXPECT_EQ(r.api_error, "cudaErrorGraphExecUpdateFailure");
  EXPECT_EQ(exec.KernelNodes(), before);
  // Same count, different edges: n2 no longer depends on n1, so the graph has two sinks (n1,
  // n2) where the exec has one: refused at the first sink the exec cannot pair.
  HostGraph three = Chain({MakeFillNode(1, 8, 1), MakeFillNode(2, 8, 1), MakeFillNode(3, 8, 1)});
  HostGraph forked = three;
  forked.nodes[2].dependencies = {0};
  r = host::UpdateExec(&three, forked);
  EXPECT_EQ(r.code, UpdateCode::kErrorTopologyChanged);
  EXPECT_EQ(r.error_node, "n2");
}

// --- Through the engine ---

class HostGraphEngineTest : public ::testing::Test {
 protected:
  static constexpr uint64_t kG = 64 * 1024;
  void SetUp() override {
    engine_ = std::move(CreateHostEngine({kG})).value();
    for (DevicePtr* va : {&a_, &b_, &c_, &d_}) {
      AllocHandle h;
      ASSERT_TRUE(engine_->Reserve(kG, 0, va).ok());
      ASSERT_TRUE(engine_->Create(kG, &h).ok());
      ASSERT_TRUE(engine_->Map(*va, kG, 0, h).ok());
      ASSERT_TRUE(engine_->SetAccess(*va, kG, Access::kReadWrite).ok());
    }
    ASSERT_TRUE(engine_->Fill(a_, kN * kN, 1, nullptr).ok());
    ASSERT_TRUE(engine_->Fill(b_, kN * kN, 2, nullptr).ok());
  }
  uint64_t Hash(DevicePtr va) {
    uint64_t h = 0;
    EXPECT_TRUE(engine_->Checksum(va, kN * kN, &h).ok());
    return h;
  }
  GraphHandle CaptureMatmul(DevicePtr c, int count = 1) {
    GraphHandle g;
    EXPECT_TRUE(engine_->BeginCapture().ok());
    for (int i = 0; i < count; ++i) {
      EXPECT_TRUE(engine_->Matmul({a_, b_, c, kN, kN, kN}, nullptr).ok());
      EXPECT_TRUE(engine_->NameCapturedNode("matmul " + std::to_string(i)).ok());
    }
    EXPECT_TRUE(engine_->EndCapture(&g).ok());
    return g;
  }

  static constexpr uint32_t kN = 64;
  std::unique_ptr<Engine> engine_;
  DevicePtr a_ = 0, b_ = 0, c_ = 0, d_ = 0;
};

TEST_F(HostGraphEngineTest, CaptureRecordsInsteadOfRunning) {
  const uint64_t empty = Hash(c_);
  OpTiming timing{5};
  ASSERT_TRUE(engine_->BeginCapture().ok());
  ASSERT_TRUE(engine_->Matmul({a_, b_, c_, kN, kN, kN}, &timing).ok());
  EXPECT_EQ(timing.gpu_us, -1);
  GraphHandle g;
  ASSERT_TRUE(engine_->EndCapture(&g).ok());
  EXPECT_EQ(Hash(c_), empty);  // nothing ran
  std::vector<KernelNodeParams> nodes;
  ASSERT_TRUE(engine_->KernelNodes(g, &nodes).ok());
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0], MakeMatmulNode({a_, b_, c_, kN, kN, kN}).params);
  ExecHandle exec;
  ASSERT_TRUE(engine_->Instantiate(g, &exec).ok());
  ASSERT_TRUE(engine_->Replay(exec, &timing).ok());
  EXPECT_GE(timing.gpu_us, 0);
  const uint64_t replayed = Hash(c_);
  ASSERT_TRUE(engine_->Matmul({a_, b_, d_, kN, kN, kN}, nullptr).ok());
  EXPECT_EQ(Hash(d_), replayed);  // a replay computes what a direct launch computes
  EXPECT_NE(replayed, empty);
}

TEST_F(HostGraphEngineTest, CaptureStateErrors) {
  GraphHandle g;
  EXPECT_EQ(engine_->EndCapture(&g).message(),
            "cuStreamEndCapture: CUDA_ERROR_ILLEGAL_STATE: the stream is not capturing");
  ASSERT_TRUE(engine_->BeginCapture().ok());
  EXPECT_EQ(engine_->BeginCapture().message(),
            "cuStreamBeginCapture: CUDA_ERROR_ILLEGAL_STATE: the stream is already capturing");
  EXPECT_EQ(engine_->Synchronize().message(),
            "cuStreamSynchronize: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: not allowed while the "
            "stream is capturing (the capture is now invalidated)");
  float x;
  EXPECT_FALSE(engine_->CopyToHost(a_, 4, &x).ok());
  EXPECT_EQ(engine_->EndCapture(&g).message(),
            "cuStreamEndCapture: CUDA_ERROR_STREAM_CAPTURE_INVALIDATED: the capture was "
            "invalidated by cuStreamSynchronize");
  EXPECT_TRUE(engine_->Synchronize().ok());  // the capture ended
  EXPECT_EQ(engine_->Matmul({a_, b_, c_, 0, kN, kN}, nullptr).message(),
            "cudaLaunchKernel: CUDA_ERROR_INVALID_VALUE: vmm_matmul_f32(a=" + Hex(a_) +
                ", b=" + Hex(b_) + ", c=" + Hex(c_) +
                ", m=0, n=64, k=64) has a launch dimension of 0 (grid 1x0x1, block 256x1x1)");
}

TEST_F(HostGraphEngineTest, AnExecOutlivesItsGraphAndReadsRemappedMemory) {
  GraphHandle g = CaptureMatmul(c_);
  ExecHandle exec;
  ASSERT_TRUE(engine_->Instantiate(g, &exec).ok());
  ASSERT_TRUE(engine_->DestroyGraph(g).ok());
  EXPECT_EQ(engine_->DestroyGraph(g).message(),
            "cuGraphDestroy: CUDA_ERROR_INVALID_VALUE: unknown or destroyed graph " + Hex(g.value));
  ASSERT_TRUE(engine_->Replay(exec, nullptr).ok());
  const uint64_t first = Hash(c_);
  ASSERT_TRUE(engine_->Fill(a_, kN * kN, 3, nullptr).ok());  // new data at the same VA
  ASSERT_TRUE(engine_->Replay(exec, nullptr).ok());
  EXPECT_NE(Hash(c_), first);
  ASSERT_TRUE(engine_->Matmul({a_, b_, d_, kN, kN, kN}, nullptr).ok());
  EXPECT_EQ(Hash(d_), Hash(c_));
  ASSERT_TRUE(engine_->DestroyExec(exec).ok());
  EXPECT_EQ(
      engine_->Replay(exec, nullptr).message(),
      "cuGraphLaunch: CUDA_ERROR_INVALID_VALUE: unknown or destroyed exec " + Hex(exec.value));
}

TEST_F(HostGraphEngineTest, UpdateAppliesTheRulesAndTheNewParameters) {
  ExecHandle exec;
  ASSERT_TRUE(engine_->Instantiate(CaptureMatmul(c_), &exec).ok());
  UpdateResult r;
  ASSERT_TRUE(engine_->Update(exec, CaptureMatmul(c_, 2), &r).ok());  // refusal is not an error
  EXPECT_EQ(r.code, UpdateCode::kErrorTopologyChanged);
  EXPECT_EQ(r.error_node, "");
  EXPECT_EQ(r.api_error, "cudaErrorGraphExecUpdateFailure");
  ASSERT_TRUE(engine_->Update(exec, CaptureMatmul(d_), &r).ok());
  EXPECT_EQ(r.code, UpdateCode::kSuccess);
  const uint64_t c_before = Hash(c_);
  ASSERT_TRUE(engine_->Replay(exec, nullptr).ok());
  EXPECT_EQ(Hash(c_), c_before);  // the exec now writes D
  ASSERT_TRUE(engine_->Matmul({a_, b_, c_, kN, kN, kN}, nullptr).ok());
  EXPECT_EQ(Hash(d_), Hash(c_));
  EXPECT_EQ(engine_->Update(exec, GraphHandle{4242}, &r).message(),
            "cuGraphExecUpdate: CUDA_ERROR_INVALID_VALUE: unknown or destroyed graph 0x1092");
}

TEST_F(HostGraphEngineTest, ReplayChecksAccessPerNode) {
  ExecHandle exec;
  ASSERT_TRUE(engine_->Instantiate(CaptureMatmul(c_), &exec).ok());
  ASSERT_TRUE(engine_->SetAccess(c_, kG, Access::kRead).ok());
  EXPECT_EQ(engine_->Replay(exec, nullptr).message(),
            "cuGraphLaunch: node 0: vmm_matmul_f32: CUDA_ERROR_ILLEGAL_ADDRESS: write of 'c' [" +
                Hex(c_) + ", +0x4000) touches " + Hex(c_) +
                " with access 'read' (needs 'read_write')");
  SyncNote note;
  ASSERT_TRUE(engine_->Unmap(b_, kG, &note).ok());
  EXPECT_EQ(engine_->Replay(exec, nullptr).message(),
            "cuGraphLaunch: node 0: vmm_matmul_f32: CUDA_ERROR_ILLEGAL_ADDRESS: read of 'b' [" +
                Hex(b_) + ", +0x4000) touches the unmapped address " + Hex(b_));
}

}  // namespace
}  // namespace vmm
