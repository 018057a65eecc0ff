// Op: the kinds of scenario step, and what each one is, derived from ops.def (the op table).
//
// Every property an op has (its name, family, whether it can be captured, which common keys it
// takes, whether its record carries a verdict, how a diff names its actual) is read from
// Describe(op); nothing else in vmm-run keeps a list of ops. Switches over Op have no `default:`,
// so the compiler names every place a new op must be handled.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace vmm {

enum class Op : uint8_t {
#define VMM_OP(Enum, name, Family, Flags, label) Enum,
#include "runner/vocab/ops.def"
#undef VMM_OP
};

enum class OpFamily : uint8_t {
  kMemory,  // reserve, free, create, release, map, set_access, unmap, export, import: one driver
            // call each
  kKernel,  // fill, matmul, memset, busy, host_func, record_event, wait_event: work on the stream
  kGraph,   // capture, instantiate, replay, update, set_node, destroy_*, and graph-only nodes
  kData,    // copy, snapshot
  kCheck,   // check_* of data, addresses and graphs
  kQuery,   // retain, mark and the check_* that ask the driver (properties, range, granularity,
            // memory)
  kWait,    // synchronize; signal and wait_for (a threads group's sync points)
  kBlock,   // isolate: steps that run in a child process; together: several such at once;
            // threads / thread: step lists run by host threads at once
};

// Bit flags of an op (see ops.def for their meaning).
enum OpFlag : uint32_t {
  kCapturable = 1u << 0,
  kRepeat = 1u << 1,
  kFatal = 1u << 2,
  kExpect = 1u << 3,
  kAsync = 1u << 4,
  kVerdict = 1u << 5,
  kDriver = 1u << 6,
  kOnDevice = 1u << 7,
  kCaptureOnly = 1u << 8,
  kWholeProcess = 1u << 9,
  kWhileCheckpointed = 1u << 10,
};

struct OpInfo {
  Op op;
  const char* name;  // "reserve", "set_access", ...: the spelling in files and reports
  OpFamily family;
  uint32_t flags;
  const char* actual_label;  // diff's name for an exactly compared `actual`; nullptr: verdict only

  constexpr bool has(OpFlag flag) const { return (flags & flag) != 0; }
};

// The op table itself, indexed by Op (ops.def, in its order: the schema's op order).
inline constexpr OpInfo kOpTable[] = {
#define VMM_OP(Enum, name, Family, Flags, label) \
  {Op::Enum, name, OpFamily::Family, static_cast<uint32_t>(Flags), label},
#include "runner/vocab/ops.def"
#undef VMM_OP
};

// The row of `op` in the op table. Always valid for a value of Op; usable in constant
// expressions (e.g. static_assert(Describe(op).family == OpFamily::kMemory)).
constexpr const OpInfo& Describe(Op op) { return kOpTable[static_cast<size_t>(op)]; }
// Every row, in table order.
inline std::span<const OpInfo> AllOps() { return kOpTable; }

// "reserve", "set_access", ... (the spelling used in files and reports).
const char* OpName(Op op);
// The op spelled `name`; false when there is none.
bool ParseOpName(std::string_view name, Op* out);
// The row of the op spelled `name` (as written in a report), or nullptr.
const OpInfo* FindOp(std::string_view name);

constexpr bool IsMemoryOp(Op op) { return Describe(op).family == OpFamily::kMemory; }

}  // namespace vmm
