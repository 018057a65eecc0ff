#include "runner/vocab/op.h"

#include <array>

namespace vmm {
namespace {

constexpr OpInfo kOps[] = {
#define VMM_OP(Enum, name, Family, Flags, label) \
  {Op::Enum, name, OpFamily::Family, static_cast<uint32_t>(Flags), label},
#include "runner/vocab/ops.def"
#undef VMM_OP
};

// The table is indexed by the enum: row i describes Op(i).
constexpr bool RowsInEnumOrder() {
  for (size_t i = 0; i < std::size(kOps); ++i)
    if (static_cast<size_t>(kOps[i].op) != i) return false;
  return true;
}
static_assert(RowsInEnumOrder(), "ops.def rows and the Op enum disagree");

}  // namespace

const OpInfo& Describe(Op op) { return kOps[static_cast<size_t>(op)]; }

std::span<const OpInfo> AllOps() { return kOps; }

const char* OpName(Op op) { return Describe(op).name; }

const OpInfo* FindOp(std::string_view name) {
  for (const OpInfo& info : kOps)
    if (name == info.name) return &info;
  return nullptr;
}

bool ParseOpName(std::string_view name, Op* out) {
  const OpInfo* info = FindOp(name);
  if (info == nullptr) return false;
  *out = info->op;
  return true;
}

}  // namespace vmm
