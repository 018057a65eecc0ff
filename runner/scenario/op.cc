#include <array>
#include <utility>

#include "runner/scenario/scenario.h"

namespace vmm {
namespace {
constexpr std::array<std::pair<Op, const char*>, 21> kOpNames = {{
    {Op::kReserve, "reserve"},
    {Op::kFree, "free"},
    {Op::kCreate, "create"},
    {Op::kRelease, "release"},
    {Op::kMap, "map"},
    {Op::kSetAccess, "set_access"},
    {Op::kUnmap, "unmap"},
    {Op::kFill, "fill"},
    {Op::kMatmul, "matmul"},
    {Op::kCapture, "capture"},
    {Op::kInstantiate, "instantiate"},
    {Op::kReplay, "replay"},
    {Op::kUpdate, "update"},
    {Op::kDestroyGraph, "destroy_graph"},
    {Op::kDestroyExec, "destroy_exec"},
    {Op::kSnapshot, "snapshot"},
    {Op::kCheckMatmul, "check_matmul"},
    {Op::kCheckEqual, "check_equal"},
    {Op::kCheckAddress, "check_address"},
    {Op::kCheckKernelParams, "check_kernel_params"},
    {Op::kSynchronize, "synchronize"},
}};
}  // namespace

const char* OpName(Op op) {
  for (const auto& [o, name] : kOpNames)
    if (o == op) return name;
  return "unknown";
}

bool ParseOpName(const std::string& name, Op* out) {
  for (const auto& [o, n] : kOpNames) {
    if (name == n) {
      *out = o;
      return true;
    }
  }
  return false;
}

bool IsCheckOp(Op op) {
  return op == Op::kCheckMatmul || op == Op::kCheckEqual || op == Op::kCheckAddress ||
         op == Op::kCheckKernelParams || op == Op::kUpdate;
}

uint64_t BufferDecl::elements() const {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  return n;
}

}  // namespace vmm
