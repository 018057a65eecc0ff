// FaultEngine: wraps a real engine and makes one chosen call fail the way the driver would, to
// prove that every step of every scenario fails cleanly (docs/limits-and-safety.md, "Fault
// injection"): the step is reported failed with the error, later steps are skipped, and
// everything the run created is released.
//
// Every call is counted, overall and per kind (kFaultKinds below). With a FaultPlan, the k-th
// call (1-based) overall, or the k-th call of one kind, returns the driver's error for that kind
// ("cuMemCreate: CUDA_ERROR_OUT_OF_MEMORY (injected fault)") WITHOUT reaching the wrapped engine,
// as a refused driver call leaves nothing behind. Every other call is forwarded unchanged.
// Thread-safe: calls may come from several threads (a threads group's VMM calls).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runner/engine/engine.h"
#include "runner/vocab/fault_kinds.h"

namespace vmm {

struct FaultPlan {
  std::optional<FaultKind> kind;  // nullopt: count every call; else only calls of this kind
  uint64_t nth = 1;               // 1-based
};

class FaultEngine final : public Engine {
 public:
  // `inner` must outlive this engine.
  FaultEngine(Engine& inner, std::optional<FaultPlan> plan) : inner_(inner), plan_(plan) {}

  // A scenario's inject_error: the nth call (1-based) of `kind` from now on returns `error` (a
  // runner/vocab/cuda_errors.h literal) with `why` in its message, without reaching the wrapped
  // engine. Several may be armed at once; each fires once.
  void Arm(FaultKind kind, uint64_t nth, const char* error, std::string why);
  // How many armed faults have not fired yet. This and the counts below: read them while no call
  // runs.
  size_t armed() const { return armed_.size(); }

  uint64_t calls() const { return total_; }
  uint64_t calls(FaultKind kind) const { return by_kind_[static_cast<size_t>(kind)]; }
  bool injected() const { return injected_; }

  const DeviceInfo& info() const override { return inner_.info(); }
  // Every call of engine_calls.def: counted under its kind (Enter), then forwarded unless this
  // is the planned fault.
#define VMMRUN_ENGINE_CALL(name, fault_kind, params, args) \
  Status name params override {                            \
    VMM_RETURN_IF_ERROR(Enter(FaultKind::fault_kind));     \
    return inner_.name args;                               \
  }
#include "runner/engine/engine_calls.def"
#undef VMMRUN_ENGINE_CALL
  using Engine::Create;
  using Engine::Reserve;
  using Engine::SetAccess;
  Status SelectDevice(int device) override {
    VMM_RETURN_IF_ERROR(Enter(FaultKind::kDevice));
    return inner_.SelectDevice(device);
  }
  Status DescribeDevice(int ordinal, DeviceInfo* out) override {
    VMM_RETURN_IF_ERROR(Enter(FaultKind::kDevice));
    return inner_.DescribeDevice(ordinal, out);
  }

  uint64_t host_calls() const override { return inner_.host_calls(); }  // not a driver call
  // What the wrapped engine says of itself and does for threads, unchanged: a run that injects
  // errors runs its threads groups as one that does not (SharedEngine asks these).
  std::string FaultNote() const override { return inner_.FaultNote(); }
  bool ConcurrentVmm() const override { return inner_.ConcurrentVmm(); }
  bool WaitForWork() override { return inner_.WaitForWork(); }
  void PrepareThread(bool with_context) override { inner_.PrepareThread(with_context); }
  void HoldContext(bool hold) override { inner_.HoldContext(hold); }
  bool Checkpointed() const override { return inner_.Checkpointed(); }
  void EndHelpers() override { inner_.EndHelpers(); }

 private:
  // Counts the call; returns the injected error when this is the planned one, else ok.
  Status Enter(FaultKind kind);

  Engine& inner_;
  std::optional<FaultPlan> plan_;
  // Guards the counts and the armed faults: with a concurrent engine (ConcurrentVmm) the VMM calls
  // of several threads reach Enter at once.
  std::mutex mu_;
  uint64_t total_ = 0;
  std::array<uint64_t, kFaultKindCount> by_kind_{};
  bool injected_ = false;
  struct Armed {
    FaultKind kind;
    uint64_t at;  // the by_kind_ count of the call that fails
    const char* error;
    std::string why;
  };
  std::vector<Armed> armed_;
};

}  // namespace vmm
