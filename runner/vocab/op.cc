#include "runner/vocab/op.h"

namespace vmm {
namespace {

// Row i describes Op(i): Describe indexes the table by the enum.
constexpr bool RowsInEnumOrder() {
  for (size_t i = 0; i < std::size(kOpTable); ++i)
    if (static_cast<size_t>(kOpTable[i].op) != i) return false;
  return true;
}
static_assert(RowsInEnumOrder(), "ops.def rows and the Op enum disagree");

}  // namespace

const char* OpName(Op op) { return Describe(op).name; }

const OpInfo* FindOp(std::string_view name) {
  for (const OpInfo& info : kOpTable)
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
