#include "runner/base/limits.h"

#include <array>
#include <atomic>
#include <charconv>

#include "runner/base/diagnostic.h"
#include "runner/base/format.h"

namespace vmm {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

// The table. Ceilings: the recursion bounds keep the stack far from its end; the block time keeps
// steady_clock arithmetic far from overflow; together groups stay under the descriptor limit.
const std::vector<LimitInfo>& Table() {
  static const std::vector<LimitInfo> table = {
      {Limit::kInputBytes, "input_bytes", 16 * kMiB, 1024 * kMiB, true,
       "size of a scenario, fragment or diff-config file"},
      {Limit::kReportBytes, "report_bytes", 1024 * kMiB, 16384 * kMiB, true,
       "size of a report read or written"},
      {Limit::kYamlValues, "yaml_values", 500000, 100000000, false,
       "YAML values of one document after alias expansion"},
      {Limit::kYamlDepth, "yaml_depth", 128, 1024, false, "nesting of YAML maps and lists"},
      {Limit::kExpandedSteps, "expanded_steps", 1000000, 100000000, false,
       "steps and loop iterations one scenario expands to"},
      {Limit::kIncludeFiles, "include_files", 256, 100000, false,
       "fragment files one scenario reads"},
      {Limit::kIncludeDepth, "include_depth", 32, 1000, false, "how deep includes nest"},
      {Limit::kExpressionDepth, "expression_depth", 64, 1000, false,
       "parentheses and unary signs nested in one ${...}"},
      {Limit::kSweepValidateSteps, "sweep_validate_steps", 10000000, 1000000000000, false,
       "points x steps that validate checks in one sweep"},
      {Limit::kTogetherBlocks, "together_blocks", 64, 512, false,
       "children one together group starts at once"},
      {Limit::kBlockMinutes, "block_minutes", 1440, 525600, false,
       "an isolate block's timeout or kill_after, in minutes"},
      {Limit::kSnapshotBytes, "snapshot_bytes", 256 * kMiB, 4096 * kMiB, true,
       "size of an allocator snapshot read"},
      {Limit::kSnapshotValues, "snapshot_values", 20000000, 400000000, false,
       "values one snapshot's pickle builds"},
      {Limit::kTraceBytes, "trace_bytes", 1024 * kMiB, 16384 * kMiB, true,
       "size of a call trace read"},
      {Limit::kTraceRecords, "trace_records", 2000000, 100000000, false,
       "records and comment lines one call trace holds"},
  };
  return table;
}

// The values in force, set from the table's defaults once.
std::array<std::atomic<uint64_t>, kLimitCount>& Values() {
  static std::array<std::atomic<uint64_t>, kLimitCount> values;
  static const bool set = [] {
    for (const LimitInfo& info : Table())
      values[static_cast<size_t>(info.limit)].store(info.default_value);
    return true;
  }();
  (void)set;
  return values;
}

bool ParseCount(std::string_view text, uint64_t* out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end;
}

// "64MiB", "64 MiB", "2GiB", or a plain byte count.
bool ParseBytes(std::string_view text, uint64_t* out) {
  static constexpr std::pair<const char*, int> kUnits[] = {
      {"KiB", 10}, {"MiB", 20}, {"GiB", 30}, {"TiB", 40}, {"B", 0}};
  for (const auto& [unit, shift] : kUnits) {
    const std::string_view u(unit);
    if (text.size() > u.size() && text.substr(text.size() - u.size()) == u) {
      std::string_view number = text.substr(0, text.size() - u.size());
      if (!number.empty() && number.back() == ' ') number.remove_suffix(1);
      uint64_t n = 0;
      if (!ParseCount(number, &n) || n > (~uint64_t{0} >> shift)) return false;
      *out = n << shift;
      return true;
    }
  }
  return ParseCount(text, out);
}

std::string Shown(const LimitInfo& info, uint64_t value) {
  return info.bytes ? FormatBytes(value) : std::to_string(value);
}

}  // namespace

const std::vector<LimitInfo>& AllLimits() { return Table(); }

const LimitInfo& InfoOf(Limit limit) { return Table()[static_cast<size_t>(limit)]; }

uint64_t LimitValue(Limit limit) {
  return Values()[static_cast<size_t>(limit)].load(std::memory_order_relaxed);
}

Status SetLimit(std::string_view assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string_view::npos)
    return InvalidInput("--limit expects NAME=VALUE, got '" + Excerpt(assignment) + "'");
  const std::string name(assignment.substr(0, eq));
  const std::string_view text = assignment.substr(eq + 1);
  const LimitInfo* info = nullptr;
  std::vector<std::string> names;
  for (const LimitInfo& l : Table()) {
    names.push_back(l.name);
    if (name == l.name) info = &l;
  }
  if (info == nullptr) {
    const std::string close = ClosestMatch(name, names);
    std::string all;
    for (const std::string& n : names) all += (all.empty() ? "" : ", ") + n;
    return InvalidInput("--limit: there is no limit '" + Excerpt(name) + "'" +
                        (close.empty() ? "" : ", did you mean '" + close + "'?") +
                        " (limits: " + all + ")");
  }
  uint64_t value = 0;
  if (!(info->bytes ? ParseBytes(text, &value) : ParseCount(text, &value)) || value == 0)
    return InvalidInput("--limit " + name + ": expected " +
                        (info->bytes ? "a size such as 64MiB" : "a whole number") +
                        " greater than 0, got '" + Excerpt(text) + "'");
  if (value > info->ceiling)
    return InvalidInput("--limit " + name + ": " + Shown(*info, value) +
                        " is past the most vmm-run allows, " + Shown(*info, info->ceiling) +
                        " (docs/limits-and-safety.md says why)");
  Values()[static_cast<size_t>(info->limit)].store(value, std::memory_order_relaxed);
  return Status::Ok();
}

std::vector<std::string> ChangedLimits() {
  std::vector<std::string> out;
  for (const LimitInfo& info : Table())
    if (LimitValue(info.limit) != info.default_value)
      out.push_back(std::string(info.name) + "=" + std::to_string(LimitValue(info.limit)));
  return out;
}

void ResetLimits() {
  for (const LimitInfo& info : Table())
    Values()[static_cast<size_t>(info.limit)].store(info.default_value);
}

std::string RaiseHint(Limit limit) {
  return std::string(" (raise it with --limit ") + InfoOf(limit).name +
         "=N; docs/limits-and-safety.md)";
}

}  // namespace vmm
