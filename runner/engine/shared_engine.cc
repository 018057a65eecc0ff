#include "runner/engine/shared_engine.h"

namespace vmm {

bool SharedEngine::IsVmm(FaultKind kind) {
  switch (kind) {
    case FaultKind::kReserve:
    case FaultKind::kFree:
    case FaultKind::kCreate:
    case FaultKind::kRelease:
    case FaultKind::kMap:
    case FaultKind::kSetAccess:
    case FaultKind::kUnmap:
      return true;
    default:
      return false;
  }
}

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
