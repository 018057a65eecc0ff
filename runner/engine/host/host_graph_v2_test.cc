// The host twin's graph language v2: capture lanes (fork/join) and the DAG they record, node
// naming, the update rules for every node type with their error nodes, per-node updates and
// enable/disable, graph memory (lifetime, auto-free, pool accounting, trim), child graphs and
// instantiate options.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "runner/engine/host/host_engine.h"
#include "runner/engine/host/host_graph.h"
#include "runner/engine/kernel_params.h"

namespace vmm {
namespace {

constexpr uint64_t kG = 64 * 1024;
constexpr uint64_t kWords = 1024;  // 4 KiB per buffer

#define EXPECT_OK(expr)                                    \
  do {                                                     \
    const Status s_ = (expr);                              \
    EXPECT_TRUE(s_.ok()) << #expr << ": " << s_.message(); \
  } while (0)

class HostGraphV2Test : public ::testing::Test {
 protected:
  void SetUp() override {
    engine_ = std::move(CreateHostEngine({kG})).value();
    for (DevicePtr* va : {&a_, &b_, &c_}) {
      AllocHandle h;
      ASSERT_TRUE(engine_->Reserve(kG, 0, va).ok());
      ASSERT_TRUE(engine_->Create(kG, &h).ok());
      ASSERT_TRUE(engine_->Map(*va, kG, 0, h).ok());
      ASSERT_TRUE(engine_->SetAccess(*va, kG, Access::kReadWrite).ok());
    }
  }
  void Named(const Status& s, const std::string& name) {
    EXPECT_OK(s);
    EXPECT_OK(engine_->NameCapturedNode(name));
  }
  uint32_t Word(DevicePtr va, uint64_t i = 0) {
    uint32_t w = 0;
    EXPECT_OK(engine_->CopyToHost(va + i * 4, 4, &w));
    return w;
  }

  std::unique_ptr<Engine> engine_;
  DevicePtr a_ = 0, b_ = 0, c_ = 0;
};

TEST_F(HostGraphV2Test, ForkAndJoinRecordADag) {
  GraphHandle g;
  EXPECT_OK(engine_->BeginCapture());
  Named(engine_->Memset(a_, kWords, 1, nullptr), "first");
  EXPECT_OK(engine_->ForkLane(0, 1));
  Named(engine_->Memset(b_, kWords, 2, nullptr), "on lane 0");
  EXPECT_OK(engine_->CaptureLane(1));
  Named(engine_->Memset(c_, kWords, 3, nullptr), "on lane 1");
  Named(engine_->HostFunction(nullptr), "lane 1 again");
  EXPECT_OK(engine_->JoinLane(1, 0));
  EXPECT_OK(engine_->CaptureLane(0));
  Named(engine_->CopyDevice(a_, b_, kWords * 4, nullptr), "after the join");
  EXPECT_OK(engine_->EndCapture(&g));
  GraphStructure s;
  ASSERT_TRUE(engine_->DescribeGraph(g, &s).ok());
  ASSERT_EQ(s.nodes.size(), 5u);
  EXPECT_EQ(s.nodes[1].dependencies, std::vector<uint32_t>{0});
  EXPECT_EQ(s.nodes[2].dependencies, std::vector<uint32_t>{0});  // forked from lane 0's set
  EXPECT_EQ(s.nodes[3].dependencies, std::vector<uint32_t>{2});
  EXPECT_EQ(s.nodes[4].dependencies, (std::vector<uint32_t>{1, 3}));  // its own, then the join
  EXPECT_EQ(s.nodes[4].name, "after the join");
  EXPECT_EQ(s.nodes[4].detail, "device_to_device");
  EXPECT_EQ(s.nodes[3].type, NodeType::kHost);
  EXPECT_NE(s.dot.find("n1 -> n4;"), std::string::npos) << s.dot;
  // Capture-only calls need a capture.
  EXPECT_FALSE(engine_->RecordEvent(0).ok());
  EXPECT_FALSE(engine_->CaptureLane(0).ok());
}

TEST_F(HostGraphV2Test, AForkNeverJoinedEndsTheCaptureWithUnjoined) {
  GraphHandle g;
  EXPECT_OK(engine_->BeginCapture());
  EXPECT_OK(engine_->ForkLane(0, 1));
  EXPECT_OK(engine_->CaptureLane(1));
  Named(engine_->Memset(c_, kWords, 3, nullptr), "orphan");
  const Status s = engine_->EndCapture(&g);
  EXPECT_EQ(s.message(),
            "cuStreamEndCapture: CUDA_ERROR_STREAM_CAPTURE_UNJOINED: node 'orphan' was captured on "
            "a forked lane that was never joined back");
  EXPECT_OK(engine_->BeginCapture());  // the capture ended
  EXPECT_FALSE(engine_->NameCapturedNode("nothing captured yet").ok());
  EXPECT_OK(engine_->EndCapture(&g));
}

TEST_F(HostGraphV2Test, NodesRunAndPerNodeUpdatesChangeThem) {
  GraphHandle g;
  ExecHandle e;
  EXPECT_OK(engine_->BeginCapture());
  Named(engine_->Memset(a_, kWords, 7, nullptr), "set A");
  Named(engine_->CopyDevice(b_, a_, kWords * 4, nullptr), "copy A to B");
  Named(engine_->HostFunction(nullptr), "callback");
  EXPECT_OK(engine_->EndCapture(&g));
  EXPECT_OK(engine_->Instantiate(g, &e));
  const uint64_t calls = engine_->host_calls();
  EXPECT_OK(engine_->Replay(e, nullptr));
  EXPECT_EQ(engine_->host_calls() - calls, 1u);
  EXPECT_EQ(Word(b_, kWords - 1), 7u);

  NodeParams memset;
  memset.kind = NodeParams::Kind::kMemset;
  memset.dst = c_;
  memset.count = kWords;
  memset.pattern = 9;
  EXPECT_OK(engine_->SetNodeParams(e, "set A", memset));
  EXPECT_OK(engine_->Replay(e, nullptr));
  EXPECT_EQ(Word(c_), 9u) << "the memset node writes C now";
  EXPECT_OK(engine_->SetNodeEnabled(e, "set A", false));
  EXPECT_OK(engine_->Memset(c_, kWords, 1, nullptr));
  EXPECT_OK(engine_->Replay(e, nullptr));
  EXPECT_EQ(Word(c_), 1u) << "a disabled node does not run";

  NodeParams fill;  // a memset node does not become a kernel
  fill.kind = NodeParams::Kind::kFill;
  fill.dst = c_;
  fill.count = kWords;
  EXPECT_EQ(engine_->SetNodeParams(e, "set A", fill).message(),
            "cuGraphExecKernelNodeSetParams: CUDA_ERROR_INVALID_VALUE: node 'set A' is a memset "
            "node");
  EXPECT_EQ(engine_->SetNodeEnabled(e, "callback", false).message(),
            "cuGraphNodeSetEnabled: CUDA_ERROR_INVALID_VALUE: node 'callback' is a host node (only "
            "kernel, memset and memcpy nodes can be disabled)");
  EXPECT_OK(engine_->DestroyGraph(g));
  EXPECT_EQ(engine_->SetNodeEnabled(e, "set A", true).message(),
            "cuGraphNodeSetEnabled: CUDA_ERROR_INVALID_VALUE: the graph the exec was instantiated "
            "from is destroyed: its node 'set A' is gone");
}

TEST_F(HostGraphV2Test, GraphMemoryLivesBetweenAllocAndFree) {
  GraphHandle g;
  DevicePtr t = 0;
  EXPECT_OK(engine_->BeginCapture());
  EXPECT_OK(engine_->GraphAlloc(kWords * 4, &t));
  EXPECT_OK(engine_->NameCapturedNode("alloc T"));
  Named(engine_->Memset(t, kWords, 5, nullptr), "set T");
  EXPECT_OK(engine_->EndCapture(&g));
  uint32_t w = 0;
  EXPECT_FALSE(engine_->CopyToHost(t, 4, &w).ok()) << "no memory before a launch";
  ExecHandle e1, e2;
  EXPECT_OK(engine_->Instantiate(g, &e1));
  EXPECT_EQ(engine_->Instantiate(g, &e2).message(),
            "cuGraphInstantiateWithFlags: CUDA_ERROR_INVALID_VALUE: a graph with memory nodes has "
            "one executable graph at a time");
  EXPECT_OK(engine_->Replay(e1, nullptr));
  EXPECT_EQ(Word(t), 5u);
  GraphMemoryUsage u;
  EXPECT_OK(engine_->GraphMemory(&u));
  EXPECT_EQ(u.used_current, kG);
  EXPECT_NE(engine_->Replay(e1, nullptr).message().find("is still live"), std::string::npos);
  EXPECT_OK(engine_->GraphFree(t));
  EXPECT_FALSE(engine_->CopyToHost(t, 4, &w).ok()) << "no memory after the free";
  EXPECT_FALSE(engine_->GraphFree(t).ok()) << "freed twice";
  EXPECT_OK(engine_->DestroyExec(e1));
  InstantiateOptions auto_free;
  auto_free.auto_free_on_launch = true;
  InstantiateInfo info;
  EXPECT_OK(engine_->InstantiateWith(g, auto_free, &e2, &info));
  EXPECT_EQ(info.flags, 1u);
  EXPECT_OK(engine_->Replay(e2, nullptr));
  EXPECT_OK(engine_->Replay(e2, nullptr));  // frees the earlier launch's allocation first
  EXPECT_OK(engine_->GraphFree(t));
  EXPECT_OK(engine_->DestroyExec(e2));
  EXPECT_OK(engine_->DestroyGraph(g));
  EXPECT_OK(engine_->GraphMemory(&u));
  EXPECT_EQ(u.used_current, 0u);
  EXPECT_EQ(u.reserved_current, kG) << "the freed memory stays in the pool";
  EXPECT_OK(engine_->TrimGraphMemory());
  EXPECT_OK(engine_->GraphMemory(&u));
  EXPECT_EQ(u.reserved_current, 0u);
  EXPECT_EQ(u.reserved_high, kG);
}

TEST_F(HostGraphV2Test, ChildGraphsAndDeviceLaunch) {
  GraphHandle child, parent, memory;
  EXPECT_OK(engine_->BeginCapture());
  Named(engine_->Memset(a_, kWords, 4, nullptr), "inner");
  EXPECT_OK(engine_->EndCapture(&child));
  EXPECT_OK(engine_->BeginCapture());
  Named(engine_->CaptureChildGraph(child), "embedded");
  Named(engine_->HostFunction(nullptr), "after");
  EXPECT_OK(engine_->EndCapture(&parent));
  GraphStructure s;
  EXPECT_OK(engine_->DescribeGraph(parent, &s));
  ASSERT_EQ(s.nodes.size(), 2u);
  EXPECT_EQ(s.nodes[0].type, NodeType::kGraph);
  ASSERT_EQ(s.nodes[0].children.size(), 1u);
  EXPECT_EQ(s.nodes[0].children[0].name, "inner");
  InstantiateOptions device;
  device.device_launch = true;
  ExecHandle e;
  EXPECT_FALSE(engine_->InstantiateWith(parent, device, &e, nullptr).ok()) << "a host node";
  EXPECT_OK(engine_->InstantiateWith(child, device, &e, nullptr));
  EXPECT_OK(engine_->Replay(e, nullptr));
  EXPECT_EQ(Word(a_), 4u);
  DevicePtr t = 0;
  EXPECT_OK(engine_->BeginCapture());
  EXPECT_OK(engine_->GraphAlloc(64, &t));
  EXPECT_OK(engine_->NameCapturedNode("alloc"));
  EXPECT_OK(engine_->EndCapture(&memory));
  EXPECT_OK(engine_->BeginCapture());
  EXPECT_EQ(engine_->CaptureChildGraph(memory).message(),
            "cuGraphAddChildGraphNode: CUDA_ERROR_NOT_SUPPORTED: a graph with memory nodes can be "
            "a child only by moving it");
  EXPECT_OK(engine_->EndCapture(&parent));
}

// The rules on their own: pairing from the sinks, and a changed child graph.
TEST(HostGraphUpdateRules, ChildGraphsAreComparedNodeByNode) {
  host::HostGraph inner_a, inner_b;
  inner_a.nodes.push_back(host::MakeMemsetNode(0x1000, 4, 1));
  inner_a.nodes[0].name = "inner";
  inner_b.nodes.push_back(host::MakeKernelNode(FillKernelParams(0x1000, 4, 1)));
  inner_b.nodes[0].name = "inner kernel";
  host::HostGraph exec, graph;
  exec.nodes.push_back(host::MakeNode(NodeType::kGraph));
  exec.nodes[0].child = std::make_shared<const host::HostGraph>(inner_a);
  graph.nodes.push_back(host::MakeNode(NodeType::kGraph));
  graph.nodes[0].child = std::make_shared<const host::HostGraph>(inner_b);
  graph.nodes[0].name = "child";
  UpdateResult r = host::UpdateExec(&exec, graph);
  EXPECT_EQ(r.code, UpdateCode::kErrorNodeTypeChanged);
  EXPECT_EQ(r.error_node, "inner kernel");
  graph.nodes[0].child = std::make_shared<const host::HostGraph>(host::HostGraph{});
  r = host::UpdateExec(&exec, graph);
  EXPECT_EQ(r.code, UpdateCode::kErrorTopologyChanged);
  EXPECT_EQ(r.error_node, "child");  // the child's node count changed: its node names it
}

// Conditional nodes: an if inside a while (nested bodies), names and structure, the replay's
// reading of the words at that moment, lanes refused inside a body, one exec at a time, no child
// graph, and an update from a capture of the same shape accepted, its body run from then on (as
// the H200 did).
TEST_F(HostGraphV2Test, ConditionalNodesNestAndRunOnTheWordsOfEachReplay) {
  EXPECT_OK(engine_->Memset(c_, kWords, 0, nullptr));
  auto capture = [&](GraphHandle* g, uint32_t a_value) {
    EXPECT_OK(engine_->BeginCapture());
    EXPECT_OK(engine_->BeginConditional(ConditionKind::kWhile, c_, c_ + 4, "loop"));
    Named(engine_->Memset(a_, kWords, a_value, nullptr), "set A");
    EXPECT_OK(engine_->BeginConditional(ConditionKind::kIf, c_ + 8, 0, "maybe"));
    EXPECT_FALSE(engine_->ForkLane(0, 1).ok()) << "a body is one chain";
    Named(engine_->Memset(b_, kWords, 9, nullptr), "set B");
    EXPECT_OK(engine_->EndConditional());
    EXPECT_OK(engine_->NameCapturedNode("maybe"));
    EXPECT_OK(engine_->EndConditional());
    EXPECT_OK(engine_->NameCapturedNode("loop"));
    EXPECT_OK(engine_->EndCapture(g));
  };
  GraphHandle g, g2;
  capture(&g, 7);
  GraphStructure s;
  EXPECT_OK(engine_->DescribeGraph(g, &s));
  ASSERT_EQ(s.nodes.size(), 2u);
  EXPECT_EQ(s.nodes[0].name, "loop (condition)");
  EXPECT_EQ(s.nodes[1].name, "loop");
  EXPECT_EQ(s.nodes[1].detail, "while");
  ASSERT_EQ(s.nodes[1].children.size(), 4u);  // set A, maybe (condition), maybe, next pass
  EXPECT_EQ(s.nodes[1].children[2].type, NodeType::kConditional);
  EXPECT_EQ(s.nodes[1].children[2].children[0].name, "set B");
  EXPECT_EQ(s.nodes[1].children[3].name, "loop (next pass)");
  EXPECT_NE(s.dot.find("cluster_"), std::string::npos);

  ExecHandle e;
  EXPECT_OK(engine_->Instantiate(g, &e));
  ExecHandle second;
  EXPECT_FALSE(engine_->Instantiate(g, &second).ok()) << "one exec at a time";
  EXPECT_OK(engine_->Memset(c_, 1, 2, nullptr));  // counter 2, if-word 0
  EXPECT_OK(engine_->Replay(e, nullptr));
  EXPECT_EQ(Word(a_), 7u);
  EXPECT_EQ(Word(b_), 0u) << "the inner if's word was 0";
  EXPECT_EQ(Word(c_, 1), 2u) << "two passes";
  EXPECT_EQ(Word(c_), 0u);
  EXPECT_OK(engine_->Memset(c_, 1, 1, nullptr));
  EXPECT_OK(engine_->Memset(c_ + 8, 1, 5, nullptr));  // the if's word now set
  EXPECT_OK(engine_->Replay(e, nullptr));
  EXPECT_EQ(Word(b_), 9u);
  EXPECT_EQ(Word(c_, 1), 3u);

  EXPECT_OK(engine_->BeginCapture());
  EXPECT_FALSE(engine_->CaptureChildGraph(g).ok()) << "no child graph with conditional nodes";
  GraphHandle dropped;
  (void)engine_->EndCapture(&dropped);
  capture(&g2, 8);
  UpdateResult r;
  EXPECT_OK(engine_->Update(e, g2, &r));
  EXPECT_EQ(r.code, UpdateCode::kSuccess);
  EXPECT_EQ(r.error_node, "");
  EXPECT_OK(engine_->Memset(c_, 1, 1, nullptr));
  EXPECT_OK(engine_->Replay(e, nullptr));
  EXPECT_EQ(Word(a_), 8u) << "the updated exec runs the new body";
}

// A body left open ends the capture with an error; the engine captures again afterwards.
TEST_F(HostGraphV2Test, AnOpenConditionalBodyFailsTheCapture) {
  EXPECT_OK(engine_->BeginCapture());
  EXPECT_OK(engine_->BeginConditional(ConditionKind::kIf, c_, 0, "open"));
  GraphHandle g;
  EXPECT_FALSE(engine_->EndCapture(&g).ok());
  EXPECT_FALSE(engine_->EndConditional().ok()) << "not capturing any more";
  EXPECT_OK(engine_->BeginCapture());
  Named(engine_->Memset(a_, kWords, 1, nullptr), "fine");
  EXPECT_OK(engine_->EndCapture(&g));
}

}  // namespace
}  // namespace vmm
