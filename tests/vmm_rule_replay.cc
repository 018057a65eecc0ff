#include "tests/vmm_rule_replay.h"

#include <map>
#include <string>

#include "runner/vocab/op.h"

namespace vmm::testing_rules {
namespace {

struct Buffer {
  DevicePtr va = 0;
  uint64_t size = 0;      // of the reservation
  uint64_t elements = 0;  // fp32 elements of the buffer
};
struct Alloc {
  AllocHandle handle;
  uint64_t size = 0;
};

class Replay {
 public:
  Replay(const Scenario& scenario, Engine* engine) : scenario_(scenario), engine_(engine) {
    for (const BufferDecl& b : scenario.buffers) buffers_[b.name].elements = b.elements();
  }

  Status Step(const Step& step) {
    const uint64_t g = scenario_.granularity.value;
    Buffer& buffer = buffers_[step.buffer().value];
    const DevicePtr at = buffer.va + step.offset().value;
    const uint64_t rest = buffer.size > step.offset().value ? buffer.size - step.offset().value : 0;
    const uint64_t range = step.size().set ? step.size().value : rest;
    SyncNote note;
    // Not a switch: most ops are not VMM calls, and a new op needs nothing here.
    if (step.op == Op::kReserve) {
      buffer.size = step.size().set ? step.size().value : (buffer.elements * 4 + g - 1) / g * g;
      return engine_->Reserve(buffer.size, step.alignment().value, &buffer.va);
    }
    if (step.op == Op::kFree) return engine_->Free(buffer.va, buffer.size);
    if (step.op == Op::kCreate) {
      Alloc& alloc = allocs_[step.alloc().value];
      alloc.size = step.size().value;
      return engine_->Create(alloc.size, &alloc.handle);
    }
    if (step.op == Op::kRelease) return engine_->Release(allocs_[step.alloc().value].handle, &note);
    if (step.op == Op::kMap) {
      const Alloc& alloc = allocs_[step.alloc().value];
      const uint64_t size =
          step.size().set ? step.size().value : alloc.size - step.alloc_offset().value;
      return engine_->Map(at, size, step.alloc_offset().value, alloc.handle);
    }
    if (step.op == Op::kSetAccess) {
      Access access = Access::kReadWrite;
      if (step.access().set && !ParseAccess(step.access().value, &access))
        return InternalError("unknown access '" + step.access().value + "'");
      return engine_->SetAccess(at, range, access);
    }
    if (step.op == Op::kUnmap) return engine_->Unmap(at, range, &note);
    if (step.op == Op::kFill)
      return engine_->Fill(buffer.va, buffer.elements, step.seed().value, nullptr);
    if (step.op == Op::kMemset)  // recorded as a node inside a capture
      return engine_->Memset(buffer.va, buffer.elements, static_cast<uint32_t>(step.value().value),
                             nullptr);
    if (step.op == Op::kCapture) {
      VMM_RETURN_IF_ERROR(engine_->BeginCapture());
      for (const vmm::Step& inner : step.steps) {
        Status s = Step(inner);
        if (s.ok()) s = engine_->NameCapturedNode(inner.op == Op::kMemset ? "memset" : "node");
        if (!s.ok()) {
          GraphHandle dropped;
          (void)engine_->EndCapture(&dropped);
          return s;
        }
      }
      return engine_->EndCapture(&graphs_[step.graph().value]);
    }
    if (step.op == Op::kCheckRange) {
      DevicePtr base = 0;
      uint64_t size = 0;
      return engine_->AddressRange(at, &base, &size);
    }
    if (step.op == Op::kInstantiate) {
      ExecHandle exec;
      return engine_->Instantiate(graphs_[step.graph().value], &exec);
    }
    return InternalError(std::string("the rule replay does not run '") + OpName(step.op) +
                         "' steps");
  }

 private:
  const Scenario& scenario_;
  Engine* engine_;
  std::map<std::string, Buffer> buffers_;
  std::map<std::string, Alloc> allocs_;
  std::map<std::string, GraphHandle> graphs_;
};

}  // namespace

Status ReplayOnEngine(const Scenario& scenario, Engine* engine, Status* last) {
  if (scenario.steps.empty()) return InternalError("the scenario has no steps");
  Replay replay(scenario, engine);
  for (size_t i = 0; i + 1 < scenario.steps.size(); ++i) {
    const Step& step = scenario.steps[i];
    Status s = replay.Step(step);
    if (!s.ok()) {
      return s.WithContext(std::string("step ") + std::to_string(i + 1) + " ('" + OpName(step.op) +
                           "' at line " + std::to_string(step.loc.line) + ")");
    }
  }
  *last = replay.Step(scenario.steps.back());
  return Status::Ok();
}

}  // namespace vmm::testing_rules
