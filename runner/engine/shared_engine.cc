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

}  // namespace vmm
