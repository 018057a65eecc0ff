#include "runner/engine/shared_engine.h"

namespace vmm {

bool SharedEngine::RunsAfterWork(FaultKind kind, std::string_view name) {
  switch (kind) {
    case FaultKind::kLaunch:
      return name != "Busy" && name != "SetFlag";
    case FaultKind::kCopy:
    case FaultKind::kCheck:
      return true;
    default:
      return false;
  }
}

}  // namespace vmm
