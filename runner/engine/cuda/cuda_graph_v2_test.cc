// GPU tests of the graph language v2 in the CUDA engine: DAG capture with memcpy, memset, event,
// host and kernel nodes on two lanes; the structure read back from the driver against the host
// twin's; each reachable cudaGraphExecUpdate result and its error node against the host twin's;
// per-node updates and enable/disable. Graph memory nodes, child graphs and conditional nodes are
// in cuda_graph_nodes_test.cc. Every test skips without a CUDA device.
#include <gtest/gtest.h>

#include "runner/engine/cuda/cuda_engine.h"
#include "runner/engine/cuda/cuda_graph_v2_test_util.h"
#include "runner/engine/graph_structure.h"

namespace vmm::testing_cuda {
namespace {

TEST_F(CudaGraphV2Test, CapturedDagRunsAndMatchesTheHostTwin) {
  const std::vector<float> host_x = Expected(3, kElems);
  GraphHandle g, hg;
  ASSERT_OK(CaptureDag(*engine_, cuda_, &g));
  ASSERT_OK(CaptureDag(*host_, twin_, &hg));
  GraphStructure cs, hs;
  ASSERT_OK(engine_->DescribeGraph(g, &cs));
  ASSERT_OK(host_->DescribeGraph(hg, &hs));
  EXPECT_EQ(Shape(cs.nodes), Shape(hs.nodes)) << "CUDA's structure vs the host twin's";
  ASSERT_EQ(cs.nodes.size(), 9u);
  // The DOT text is drawn from the structure, as the host twin's (cudaGraphDebugDotPrint only
  // when asked for: TheDriversDotIsWrittenOnlyWhenAskedFor).
  EXPECT_EQ(cs.dot, StructureDot(cs));

  ExecHandle exec;
  ASSERT_OK(engine_->Instantiate(g, &exec));
  for (DevicePtr va : {cuda_.x, cuda_.a, cuda_.c})
    ASSERT_OK(engine_->Fill(va, kElems, 99, nullptr));
  const uint64_t calls = engine_->host_calls();
  OpTiming timing;
  ASSERT_OK(engine_->Replay(exec, &timing));
  EXPECT_EQ(engine_->host_calls() - calls, 2u) << "both host nodes ran";
  uint64_t mismatches = 0;
  std::string diff = DescribeMismatches(host_x, ReadBack(*engine_, cuda_.x), &mismatches);
  EXPECT_EQ(mismatches, 0u) << "restore X from host memory:" << diff;
  diff = DescribeMismatches(host_x, ReadBack(*engine_, cuda_.a), &mismatches);
  EXPECT_EQ(mismatches, 0u) << "stage input:" << diff;
  const std::vector<float> want = HostMatmul(host_x, ReadBack(*engine_, cuda_.b), kN, kN, kN);
  diff = DescribeMismatches(want, ReadBack(*engine_, cuda_.c), &mismatches);
  EXPECT_EQ(mismatches, 0u) << "C = A·B after the join:" << diff;
}

// Captured copies from snapshots read the snapshot's own memory when the graph runs: a pinned
// host snapshot and a device snapshot, with nothing allocated during the capture (on the H200 a
// cudaMallocHost there returned error 900 and invalidated the capture). The capture ends, the
// memcpy nodes read back as host_to_device and device_to_device as on the host twin, every replay
// writes what the snapshots hold at that replay, and a pageable host side is refused without
// invalidating the capture, on both backends.
TEST_F(CudaGraphV2Test, CapturedCopiesFromHostAndDeviceSnapshotsReplayTheirData) {
  for (Engine* e : {engine_.get(), host_.get()}) {
    SCOPED_TRACE(e->info().backend);
    const Buffers& b = e == engine_.get() ? cuda_ : twin_;
    SnapshotHandle on_device, pageable;
    ASSERT_OK(e->AllocSnapshot(kBytes, DataPlace::kDevice, &on_device));
    ASSERT_OK(e->Copy(DataRef::Of(on_device), DataRef::Device(b.b), kBytes, nullptr));
    ASSERT_OK(e->AllocSnapshot(kBytes, DataPlace::kHostPageable, &pageable));
    GraphHandle g;
    ASSERT_OK(e->BeginCapture());
    ASSERT_OK(e->Copy(DataRef::Device(b.d), DataRef::Of(b.host_a), kBytes, nullptr));
    ASSERT_OK(e->NameCapturedNode("restore D"));
    ASSERT_OK(e->Copy(DataRef::Device(b.c), DataRef::Of(on_device), kBytes, nullptr));
    ASSERT_OK(e->NameCapturedNode("restore C"));
    const Status refused = e->Copy(DataRef::Device(b.c), DataRef::Of(pageable), kBytes, nullptr);
    EXPECT_NE(refused.message().find("CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"), std::string::npos)
        << refused.message();
    ASSERT_OK(e->EndCapture(&g));
    GraphStructure structure;
    ASSERT_OK(e->DescribeGraph(g, &structure));
    ASSERT_EQ(structure.nodes.size(), 2u);
    EXPECT_EQ(structure.nodes[0].type, NodeType::kMemcpy);
    EXPECT_EQ(structure.nodes[0].detail, "host_to_device");
    EXPECT_EQ(structure.nodes[1].detail, "device_to_device");
    ExecHandle exec;
    ASSERT_OK(e->Instantiate(g, &exec));
    const std::vector<float> want_b = ReadBack(*e, b.b);
    for (int replay = 0; replay < 2; ++replay) {
      // The second replay finds new data in the host snapshot and restores that.
      const std::vector<float> want_d = Expected(replay == 0 ? 1 : 9, kElems);
      std::memcpy(reinterpret_cast<void*>(static_cast<uintptr_t>(b.host_a.addr)), want_d.data(),
                  kBytes);
      ASSERT_OK(e->Fill(b.d, kElems, 77, nullptr));
      ASSERT_OK(e->Fill(b.c, kElems, 78, nullptr));
      ASSERT_OK(e->Replay(exec, nullptr));
      uint64_t mismatches = 0;
      std::string diff = DescribeMismatches(want_d, ReadBack(*e, b.d), &mismatches);
      EXPECT_EQ(mismatches, 0u) << "replay " << replay << ", D from the host snapshot:" << diff;
      diff = DescribeMismatches(want_b, ReadBack(*e, b.c), &mismatches);
      EXPECT_EQ(mismatches, 0u) << "replay " << replay << ", C from the device snapshot:" << diff;
    }
    const std::vector<float> restore = Expected(1, kElems);  // host_a as the other tests expect
    std::memcpy(reinterpret_cast<void*>(static_cast<uintptr_t>(b.host_a.addr)), restore.data(),
                kBytes);
    ASSERT_OK(e->DestroyExec(exec));
    ASSERT_OK(e->DestroyGraph(g));
    ASSERT_OK(e->FreeSnapshot(on_device));
    ASSERT_OK(e->FreeSnapshot(pageable));
  }
}

// One update case on one engine: capture `before`, instantiate, capture `after`, update.
using Capture = std::function<Status(Engine&, const Buffers&)>;
Status UpdateCase(Engine& e, const Buffers& b, const Capture& before, const Capture& after,
                  UpdateResult* result) {
  GraphHandle g1, g2;
  ExecHandle exec;
  VMM_RETURN_IF_ERROR(e.BeginCapture());
  VMM_RETURN_IF_ERROR(before(e, b));
  VMM_RETURN_IF_ERROR(e.EndCapture(&g1));
  VMM_RETURN_IF_ERROR(e.Instantiate(g1, &exec));
  VMM_RETURN_IF_ERROR(e.BeginCapture());
  VMM_RETURN_IF_ERROR(after(e, b));
  VMM_RETURN_IF_ERROR(e.EndCapture(&g2));
  VMM_RETURN_IF_ERROR(e.Update(exec, g2, result));
  VMM_RETURN_IF_ERROR(e.Replay(exec, nullptr));  // refused or not, the exec still runs
  VMM_RETURN_IF_ERROR(e.DestroyExec(exec));
  VMM_RETURN_IF_ERROR(e.DestroyGraph(g1));
  return e.DestroyGraph(g2);
}

TEST_F(CudaGraphV2Test, EveryReachableUpdateResultMatchesTheHostTwin) {
  struct Case {
    const char* what;
    Capture before, after;
    UpdateCode want;
    const char* error_node;
  };
  auto fill_c = [](Engine& e, const Buffers& b) {
    CAPTURED(e, Fill(b.c, kElems, 3, nullptr), "fill C");
    return Status::Ok();
  };
  auto matmul_c = [](Engine& e, const Buffers& b) {
    CAPTURED(e, Matmul({b.a, b.b, b.c, kN, kN, kN}, nullptr), "C = A·B");
    return Status::Ok();
  };
  auto clear_c = [](Engine& e, const Buffers& b) {
    CAPTURED(e, Memset(b.c, kElems, 0, nullptr), "clear C");
    return Status::Ok();
  };
  auto set_d = [](Engine& e, const Buffers& b) {
    CAPTURED(e, Memset(b.d, kElems, 7, nullptr), "set D");
    return Status::Ok();
  };
  auto fill_d = [](Engine& e, const Buffers& b) {
    CAPTURED(e, Fill(b.d, kElems, 4, nullptr), "fill D instead");
    return Status::Ok();
  };
  auto copy_device = [](Engine& e, const Buffers& b) {
    CAPTURED(e, CopyDevice(b.d, b.a, kBytes, nullptr), "copy A to D");
    return Status::Ok();
  };
  auto copy_host = [](Engine& e, const Buffers& b) {
    CAPTURED(e, Copy(DataRef::Device(b.d), DataRef::Of(b.host_a), kBytes, nullptr),
             "restore D from the host");
    return Status::Ok();
  };
  auto branches = [](Engine& e, const Buffers& b) {
    VMM_RETURN_IF_ERROR(e.ForkLane(0, 1));
    CAPTURED(e, Fill(b.c, kElems, 6, nullptr), "branch fills C");
    VMM_RETURN_IF_ERROR(e.CaptureLane(1));
    CAPTURED(e, Fill(b.d, kElems, 7, nullptr), "branch fills D");
    VMM_RETURN_IF_ERROR(e.JoinLane(1, 0));
    VMM_RETURN_IF_ERROR(e.CaptureLane(0));
    CAPTURED(e, HostFunction(nullptr), "after both branches");
    return Status::Ok();
  };
  auto chain = [](Engine& e, const Buffers& b) {
    CAPTURED(e, Fill(b.c, kElems, 8, nullptr), "chain fills C");
    CAPTURED(e, Fill(b.d, kElems, 9, nullptr), "chain fills D");
    CAPTURED(e, HostFunction(nullptr), "after the chain");
    return Status::Ok();
  };
  auto scratch = [](const char* alloc, uint64_t seed) {
    return [alloc, seed](Engine& e, const Buffers& b) {
      DevicePtr t = 0;
      VMM_RETURN_IF_ERROR(e.GraphAlloc(kBytes, &t));
      VMM_RETURN_IF_ERROR(e.NameCapturedNode(alloc));
      CAPTURED(e, Fill(t, kElems, seed, nullptr), std::string("fill ") + alloc);
      CAPTURED(e, CopyDevice(b.c, t, kBytes, nullptr), std::string("copy ") + alloc);
      CAPTURED(e, GraphFree(t), std::string("free ") + alloc);
      return Status::Ok();
    };
  };
  const Case cases[] = {
      {"function change", fill_c, matmul_c, UpdateCode::kSuccess, ""},
      {"memset to another allocation", clear_c, set_d, UpdateCode::kSuccess, ""},
      {"memset becomes a kernel", clear_c, fill_d, UpdateCode::kErrorNodeTypeChanged,
       "fill D instead"},
      {"device copy becomes a host copy", copy_device, copy_host,
       UpdateCode::kErrorParametersChanged, "restore D from the host"},
      {"branches become a chain", branches, chain, UpdateCode::kErrorTopologyChanged,
       "after the chain"},
      // Driver 580 (CUDA 13) updates graphs with memory nodes of the same shape.
      {"graph memory nodes", scratch("allocate T", 10), scratch("allocate T2", 11),
       UpdateCode::kSuccess, ""},
  };
  for (const Case& c : cases) {
    UpdateResult cuda, twin;
    ASSERT_OK(UpdateCase(*engine_, cuda_, c.before, c.after, &cuda));
    ASSERT_OK(UpdateCase(*host_, twin_, c.before, c.after, &twin));
    std::printf("%-34s cuda: %s at '%s' (from '%s'); host: %s at '%s'\n", c.what,
                UpdateCodeName(cuda.code), cuda.error_node.c_str(), cuda.error_from_node.c_str(),
                UpdateCodeName(twin.code), twin.error_node.c_str());
    EXPECT_EQ(UpdateCodeName(cuda.code), UpdateCodeName(c.want)) << c.what;
    EXPECT_EQ(cuda.error_node, c.error_node) << c.what;
    EXPECT_EQ(UpdateCodeName(twin.code), UpdateCodeName(cuda.code)) << c.what << ": host twin";
    EXPECT_EQ(twin.error_node, cuda.error_node) << c.what << ": host twin";
  }
}

TEST_F(CudaGraphV2Test, PerNodeUpdatesChangeWhatTheExecComputes) {
  GraphHandle g;
  ExecHandle exec;
  auto capture = [&]() -> Status {
    VMM_RETURN_IF_ERROR(engine_->BeginCapture());
    CAPTURED(*engine_, Memset(cuda_.c, kElems, 0, nullptr), "zero C");
    CAPTURED(*engine_, Matmul({cuda_.a, cuda_.b, cuda_.c, kN, kN, kN}, nullptr), "C = A·B");
    CAPTURED(*engine_, Fill(cuda_.x, kElems, 3, nullptr), "tag X");
    CAPTURED(*engine_, CopyDevice(cuda_.d, cuda_.b, kBytes, nullptr), "stash B");
    return engine_->EndCapture(&g);
  };
  ASSERT_OK(capture());
  ASSERT_OK(engine_->Instantiate(g, &exec));
  const std::vector<float> a = ReadBack(*engine_, cuda_.a), a2 = ReadBack(*engine_, cuda_.a2),
                           b = ReadBack(*engine_, cuda_.b);
  uint64_t mismatches = 0;

  NodeParams matmul;
  matmul.kind = NodeParams::Kind::kMatmul;
  matmul.matmul = {cuda_.a2, cuda_.b, cuda_.c, kN, kN, kN};
  ASSERT_OK(engine_->SetNodeParams(exec, "C = A·B", matmul));
  ASSERT_OK(engine_->Replay(exec, nullptr));
  std::string diff =
      DescribeMismatches(HostMatmul(a2, b, kN, kN, kN), ReadBack(*engine_, cuda_.c), &mismatches);
  EXPECT_EQ(mismatches, 0u) << "the matmul node reads A2:" << diff;

  ASSERT_OK(engine_->SetNodeEnabled(exec, "zero C", false));
  ASSERT_OK(engine_->SetNodeEnabled(exec, "C = A·B", false));
  ASSERT_OK(engine_->Fill(cuda_.c, kElems, 5, nullptr));
  ASSERT_OK(engine_->Replay(exec, nullptr));
  diff = DescribeMismatches(Expected(5, kElems), ReadBack(*engine_, cuda_.c), &mismatches);
  EXPECT_EQ(mismatches, 0u) << "disabled memset and matmul nodes do not run:" << diff;

  NodeParams memset;
  memset.kind = NodeParams::Kind::kMemset;
  memset.dst = cuda_.c;
  memset.count = kElems;
  memset.pattern = 0x3f800000;  // 1.0f
  ASSERT_OK(engine_->SetNodeParams(exec, "zero C", memset));
  ASSERT_OK(engine_->SetNodeEnabled(exec, "zero C", true));
  NodeParams fill;
  fill.kind = NodeParams::Kind::kFill;
  fill.dst = cuda_.x;
  fill.count = kElems;
  fill.seed = 4;
  ASSERT_OK(engine_->SetNodeParams(exec, "tag X", fill));
  NodeParams copy;
  copy.kind = NodeParams::Kind::kCopy;
  copy.dst = cuda_.d;
  copy.src = cuda_.a;
  copy.count = kBytes;
  ASSERT_OK(engine_->SetNodeParams(exec, "stash B", copy));
  ASSERT_OK(engine_->Replay(exec, nullptr));
  diff = DescribeMismatches(std::vector<float>(kElems, 1.0f), ReadBack(*engine_, cuda_.c),
                            &mismatches);
  EXPECT_EQ(mismatches, 0u) << "the memset node writes 1.0:" << diff;
  diff = DescribeMismatches(Expected(4, kElems), ReadBack(*engine_, cuda_.x), &mismatches);
  EXPECT_EQ(mismatches, 0u) << "the fill node has seed 4:" << diff;
  diff = DescribeMismatches(a, ReadBack(*engine_, cuda_.d), &mismatches);
  EXPECT_EQ(mismatches, 0u) << "the copy node reads A:" << diff;

  // An unknown node cannot be named, nor a node of a destroyed graph.
  EXPECT_FALSE(engine_->SetNodeEnabled(exec, "no such node", false).ok());
  ASSERT_OK(engine_->DestroyGraph(g));
  EXPECT_FALSE(engine_->SetNodeEnabled(exec, "zero C", false).ok());
}

TEST_F(CudaGraphV2Test, TheDriversDotIsWrittenOnlyWhenAskedFor) {
  StatusOr<std::unique_ptr<Engine>> driver = CreateCudaEngine(0, /*driver_dot=*/true);
  ASSERT_OK(driver.status());
  GraphHandle mine, theirs;
  ASSERT_OK(CaptureDag(*engine_, cuda_, &mine));
  ASSERT_OK(CaptureDag(**driver, cuda_, &theirs));  // one primary context: the same buffers
  GraphStructure from_structure, from_driver;
  ASSERT_OK(engine_->DescribeGraph(mine, &from_structure));
  ASSERT_OK((*driver)->DescribeGraph(theirs, &from_driver));
  EXPECT_EQ(Shape(from_driver.nodes), Shape(from_structure.nodes));
  EXPECT_EQ(from_structure.dot, StructureDot(from_structure));
  EXPECT_NE(from_driver.dot.find("digraph"), std::string::npos) << from_driver.dot.substr(0, 200);
  EXPECT_NE(from_driver.dot, StructureDot(from_driver)) << "the driver's own text";
  std::printf("cudaGraphDebugDotPrint: %zu bytes\n", from_driver.dot.size());
  ASSERT_OK((*driver)->DestroyGraph(theirs));
  ASSERT_OK(engine_->DestroyGraph(mine));
}

}  // namespace
}  // namespace vmm::testing_cuda
