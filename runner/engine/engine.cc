#include "runner/engine/engine.h"

namespace vmm {

Status Engine::Refuse(const char* method) const {
  return RuntimeError("the " + info().backend + " backend does not implement " + method);
}

Status Engine::Reserve(uint64_t, uint64_t, DevicePtr*) { return Refuse("Reserve"); }
Status Engine::Free(DevicePtr, uint64_t) { return Refuse("Free"); }
Status Engine::Create(uint64_t, AllocHandle*) { return Refuse("Create"); }
Status Engine::Release(AllocHandle, SyncNote*) { return Refuse("Release"); }
Status Engine::Map(DevicePtr, uint64_t, uint64_t, AllocHandle) { return Refuse("Map"); }
Status Engine::SetAccess(DevicePtr, uint64_t, Access) { return Refuse("SetAccess"); }
Status Engine::Unmap(DevicePtr, uint64_t, SyncNote*) { return Refuse("Unmap"); }
Status Engine::Fill(DevicePtr, uint64_t, uint64_t, OpTiming*) { return Refuse("Fill"); }
Status Engine::Matmul(const MatmulArgs&, OpTiming*) { return Refuse("Matmul"); }
Status Engine::BeginCapture() { return Refuse("BeginCapture"); }
Status Engine::EndCapture(GraphHandle*) { return Refuse("EndCapture"); }
Status Engine::Instantiate(GraphHandle, ExecHandle*) { return Refuse("Instantiate"); }
Status Engine::Replay(ExecHandle, OpTiming*) { return Refuse("Replay"); }
Status Engine::Update(ExecHandle, GraphHandle, UpdateResult*) { return Refuse("Update"); }
Status Engine::KernelNodes(GraphHandle, std::vector<KernelNodeParams>*) {
  return Refuse("KernelNodes");
}
Status Engine::DestroyGraph(GraphHandle) { return Refuse("DestroyGraph"); }
Status Engine::DestroyExec(ExecHandle) { return Refuse("DestroyExec"); }
Status Engine::CopyToHost(DevicePtr, uint64_t, void*) { return Refuse("CopyToHost"); }
Status Engine::Checksum(DevicePtr, uint64_t, uint64_t*) { return Refuse("Checksum"); }
Status Engine::Compare(DevicePtr, DevicePtr, uint64_t, uint32_t, CompareResult*) {
  return Refuse("Compare");
}
Status Engine::Synchronize() { return Refuse("Synchronize"); }

}  // namespace vmm
