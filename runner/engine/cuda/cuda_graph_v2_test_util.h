// The fixture and helpers the CUDA graph v2 tests share (cuda_graph_v2_test.cc,
// cuda_graph_nodes_test.cc): one set of buffers on the CUDA engine and one on a host twin, the
// decode-step DAG of scenarios/graph_dag.yaml, and the cross-backend shape of a graph.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/launch_config.h"
#include "runner/engine/cuda/cuda_engine.h"
#include "runner/engine/cuda/cuda_test_util.h"
#include "runner/engine/engine.h"
#include "runner/engine/host/host_engine.h"

namespace vmm::testing_cuda {

inline constexpr uint32_t kN = 128;
inline constexpr uint64_t kElems = uint64_t{kN} * kN;
inline constexpr uint64_t kBytes = kElems * 4;

// Buffers of one engine: A, A2, B, C, D, X (kBytes each, read_write), and two pinned host
// snapshots (made before any capture: allocating during one is refused) holding the data of
// Expected(3) (host_x) and Expected(1) (host_a).
struct Buffers {
  DevicePtr a = 0, a2 = 0, b = 0, c = 0, d = 0, x = 0;
  SnapshotHandle host_x, host_a;
};

// A pinned host snapshot holding `data` (its address is a host pointer in this process).
inline Status HostSnapshot(Engine& e, const std::vector<float>& data, SnapshotHandle* out) {
  VMM_RETURN_IF_ERROR(e.AllocSnapshot(data.size() * 4, DataPlace::kHostPinned, out));
  std::memcpy(reinterpret_cast<void*>(static_cast<uintptr_t>(out->addr)), data.data(),
              data.size() * 4);
  return Status::Ok();
}

inline Status NewBuffer(Engine& e, DevicePtr* va) {
  const uint64_t size = RoundUp(kBytes, e.info().granularity_recommended);
  AllocHandle h;
  VMM_RETURN_IF_ERROR(e.Reserve(size, 0, va));
  VMM_RETURN_IF_ERROR(e.Create(size, &h));
  VMM_RETURN_IF_ERROR(e.Map(*va, size, 0, h));
  return e.SetAccess(*va, size, Access::kReadWrite);
}

inline Status MakeBuffers(Engine& e, Buffers* b) {
  for (DevicePtr* va : {&b->a, &b->a2, &b->b, &b->c, &b->d, &b->x})
    VMM_RETURN_IF_ERROR(NewBuffer(e, va));
  VMM_RETURN_IF_ERROR(e.Fill(b->a, kElems, 1, nullptr));
  VMM_RETURN_IF_ERROR(e.Fill(b->a2, kElems, 11, nullptr));
  VMM_RETURN_IF_ERROR(e.Fill(b->b, kElems, 2, nullptr));
  VMM_RETURN_IF_ERROR(HostSnapshot(e, Expected(3, kElems), &b->host_x));
  VMM_RETURN_IF_ERROR(HostSnapshot(e, Expected(1, kElems), &b->host_a));
  return e.Fill(b->x, kElems, 3, nullptr);
}

inline std::vector<float> ReadBack(Engine& e, DevicePtr va) {
  std::vector<float> out(kElems);
  const Status s = e.CopyToHost(va, kBytes, out.data());
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

// One captured call, then the name of the node it made.
#define CAPTURED(engine, call, name)                      \
  do {                                                    \
    VMM_RETURN_IF_ERROR((engine).call);                   \
    VMM_RETURN_IF_ERROR((engine).NameCapturedNode(name)); \
  } while (0)

// The decode-step DAG of scenarios/graph_dag.yaml, on lanes 0 and 1 (X restored from b.host_x).
inline Status CaptureDag(Engine& e, const Buffers& b, GraphHandle* g) {
  VMM_RETURN_IF_ERROR(e.BeginCapture());
  CAPTURED(e, Copy(DataRef::Device(b.x), DataRef::Of(b.host_x), kBytes, nullptr), "restore X");
  CAPTURED(e, Memset(b.c, kElems, 0, nullptr), "zero C");
  CAPTURED(e, RecordEvent(0), "mark start");
  VMM_RETURN_IF_ERROR(e.ForkLane(0, 1));
  CAPTURED(e, CopyDevice(b.a, b.x, kBytes, nullptr), "stage input");
  VMM_RETURN_IF_ERROR(e.CaptureLane(1));
  CAPTURED(e, Fill(b.b, kElems, 2, nullptr), "refresh B");
  CAPTURED(e, HostFunction(nullptr), "B ready");
  VMM_RETURN_IF_ERROR(e.JoinLane(1, 0));
  VMM_RETURN_IF_ERROR(e.CaptureLane(0));
  CAPTURED(e, Matmul({b.a, b.b, b.c, kN, kN, kN}, nullptr), "C = A·B");
  CAPTURED(e, WaitEvent(0), "wait for start");
  CAPTURED(e, HostFunction(nullptr), "step done");
  return e.EndCapture(g);
}

// What must be equal across backends: names, types, details and (sorted) dependencies.
inline std::string Shape(const std::vector<GraphNodeInfo>& nodes) {
  std::string out;
  for (const GraphNodeInfo& n : nodes) {
    std::vector<uint32_t> deps = n.dependencies;
    std::sort(deps.begin(), deps.end());
    out += n.name + " | " + NodeTypeName(n.type) + " | " + n.detail + " | deps";
    for (uint32_t d : deps) out += " " + std::to_string(d);
    out += "\n";
    if (!n.children.empty()) out += "{\n" + Shape(n.children) + "}\n";
  }
  return out;
}

class CudaGraphV2Test : public CudaEngineTest {
 protected:
  void SetUp() override {
    CudaEngineTest::SetUp();
    if (IsSkipped()) return;
    StatusOr<std::unique_ptr<Engine>> host = CreateHostEngine({gran_});
    ASSERT_TRUE(host.ok()) << host.status().message();
    host_ = std::move(host).value();
    ASSERT_OK(MakeBuffers(*engine_, &cuda_));
    ASSERT_OK(MakeBuffers(*host_, &twin_));
  }

  std::unique_ptr<Engine> host_;
  Buffers cuda_, twin_;
};

}  // namespace vmm::testing_cuda
