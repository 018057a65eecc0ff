#include "runner/base/status.h"

namespace vmm {

const char* CodeName(Code code) {
  switch (code) {
    case Code::kOk:
      return "ok";
    case Code::kInvalidInput:
      return "invalid input";
    case Code::kUnavailable:
      return "unavailable";
    case Code::kRuntime:
      return "runtime error";
    case Code::kInternal:
      return "internal error";
  }
  return "unknown";
}

}  // namespace vmm
