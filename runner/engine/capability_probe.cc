#include "runner/engine/capability_probe.h"

#include "runner/base/format.h"

namespace vmm {

Status ProbeByTrial(Engine& engine, Capability capability, std::string* why_not) {
  why_not->clear();
  AllocProps props = TrialProps(capability);
  const std::string what = std::string("probing '") + CapabilityName(capability) + "'";
  Status status = engine.Granularity(props, GranularityKind::kMinimum, &props.size);
  if (!status.ok()) {
    // A location the device cannot place memory in is refused here already.
    *why_not = "the granularity query was refused: " + status.message();
    return Status::Ok();
  }
  AllocHandle handle;
  status = engine.Create(props, &handle);
  if (!status.ok()) {
    *why_not = "a trial create of " + FormatBytes(props.size) + " was refused: " + status.message();
    return Status::Ok();
  }
  AllocProps granted;
  Status read = engine.AllocProperties(handle, &granted);
  Status released = engine.Release(handle, nullptr);
  VMM_RETURN_IF_ERROR(read.WithContext(what));
  VMM_RETURN_IF_ERROR(released.WithContext(what));
  std::string missing;
  if (!Granted(capability, granted, &missing)) {
    *why_not = "a trial create of " + FormatBytes(props.size) + " succeeded, but " + missing;
  }
  return Status::Ok();
}

}  // namespace vmm
