#include "runner/report/record_fields.h"

#include <limits>
#include <optional>
#include <vector>

#include "runner/report/record_codecs.h"
#include "runner/report/report_io.h"

namespace vmm::report::fields {
namespace {

using namespace codecs;  // NOLINT: the tables below are written in the codecs' words

constexpr Stability kStable = Stability::kStable;
constexpr Stability kNoisy = Stability::kNoisy;
constexpr Stability kVolatile = Stability::kVolatile;
constexpr Stability kInformational = Stability::kInformational;
constexpr Stability kMixed = Stability::kMixed;

bool HasExpectedError(const StepRecord& s) { return !s.expected_error.empty(); }
bool Interrupted(const Summary& s) { return s.interrupted; }
bool IsView(const BufferRecord& b) { return !b.view_of.empty(); }
bool IsNotView(const BufferRecord& b) { return b.view_of.empty(); }

// [from, to] pairs: a graph's dependency edges, from its nodes.
Json Edges(const GraphRecord& g) {
  Json edges = Json::array();
  for (const GraphNodeRecord& n : g.nodes)
    for (int d : n.dependencies) edges.push_back({d, n.index});
  return edges;
}

constexpr char kToolName[] = "vmm-run";
constexpr char kName[] = "name";
constexpr char kAccess[] = "access";

std::span<const Field<Report>> ToolFields() {
  static const Field<Report> kRows[] = {
      Constant<Report, kToolName>("name", kVolatile),
      String<&Report::tool_version>("version", kVolatile),
      String<&Report::git_sha>("git_sha", kVolatile),
  };
  return kRows;
}

std::span<const Field<Report>> ScenarioFields() {
  static const Field<Report> kRows[] = {
      String<&Report::scenario_path>("path", kVolatile),
      String<&Report::scenario_sha256>("sha256", kStable),
      String<&Report::scenario_name>("name", kStable),
  };
  return kRows;
}

std::span<const Field<Report>> BackendFields() {
  static const Field<Report> kRows[] = {
      String<&Report::backend>("name", kStable),
      String<&Report::backend_reason>("reason", kVolatile),
  };
  return kRows;
}

}  // namespace

const char* StabilityWord(Stability s) {
  switch (s) {
    case Stability::kStable:
      return "STABLE";
    case Stability::kNoisy:
      return "NOISY";
    case Stability::kVolatile:
      return "VOLATILE";
    case Stability::kInformational:
      return "INFORMATIONAL";
    case Stability::kMixed:
      return "MIXED";
  }
  return "?";
}

std::span<const Field<TimingStats>> StatsFields() {
  static const Field<TimingStats> kRows[] = {
      Integer<&TimingStats::count>("count", kStable),
      Double<&TimingStats::min_us>("min_us", kNoisy),
      Double<&TimingStats::median_us>("median_us", kNoisy),
      Double<&TimingStats::p99_us>("p99_us", kNoisy),
      Double<&TimingStats::max_us>("max_us", kNoisy),
  };
  return kRows;
}

std::span<const Field<FoldRecord>> FoldFields() {
  static const Field<FoldRecord> kRows[] = {
      Decimal<&FoldRecord::count>("count", kStable),
      Integer<&FoldRecord::last_index>("last_index", kStable, 0),
      String<&FoldRecord::last_name>("last_name", kStable),
      StringList<&FoldRecord::varying>("varying", kInformational),
  };
  return kRows;
}

std::span<const Field<Mismatch>> MismatchFields() {
  static const Field<Mismatch> kRows[] = {
      Integer<&Mismatch::index>("index", kStable),
      String<&Mismatch::want>("want", kStable),
      String<&Mismatch::got>("got", kStable),
  };
  return kRows;
}

std::span<const Field<CheckRecord>> CheckFields() {
  static const Field<CheckRecord> kRows[] = {
      String<&CheckRecord::expected>("expected", kStable),
      String<&CheckRecord::actual>("actual", kStable),
      Enum<&CheckRecord::verdict, VerdictName, ParseVerdict>("verdict", kStable, "pass, fail"),
      Integer<&CheckRecord::mismatch_count>("mismatch_count", kStable),
      ObjectList<&CheckRecord::mismatches, MismatchFields>("mismatches", kStable),
      If(
          Bool<&CheckRecord::device_fact>("device_fact", kStable),
          +[](const CheckRecord& c) { return c.device_fact; }),
  };
  return kRows;
}

std::span<const Field<ChildRecord>> ChildFields() {
  static const Field<ChildRecord> kRows[] = {
      Integer<&ChildRecord::pid>("pid", kVolatile),
      NullableInteger<&ChildRecord::exit_status>("exit_status", kStable, 0, 255),
      NullableString<&ChildRecord::signal>("signal", kStable),
      Bool<&ChildRecord::timed_out>("timed_out", kStable),
      NullableString<&ChildRecord::stopped_by>("stopped_by", kInformational),
      NullableString<&ChildRecord::error>("error", kStable),
      NullableString<&ChildRecord::failed_step>("failed_step", kInformational),
      NullableString<&ChildRecord::fault_line>("fault_line", kVolatile),
      String<&ChildRecord::fault_line_note>("fault_line_note", kInformational),
      StringList<&ChildRecord::fds>("fds", kInformational),
      String<&ChildRecord::stderr_text>("stderr", kVolatile),
      OptionalDouble<&ChildRecord::started_ms, true>("started_ms", kVolatile),
      OptionalDouble<&ChildRecord::ready_ms, true>("ready_ms", kVolatile),
      OptionalDouble<&ChildRecord::ended_ms, true>("ended_ms", kVolatile),
  };
  return kRows;
}

std::span<const Field<StepRecord>> StepFields() {
  using S = StepRecord;
  static const Field<StepRecord> kRows[] = {
      Integer<&S::index>("index", kStable),
      String<&S::name>("name", kStable),
      Bool<&S::named>("named", kStable),
      String<&S::op>("op", kStable),
      Integer<&S::line>("line", kVolatile),
      Enum<&S::status, StepStatusName, ParseStepStatus>("status", kStable,
                                                        "ok, failed, skipped, unchecked"),
      Double<&S::wall_us>("wall_us", kNoisy),
      OptionalDouble<&S::gpu_us, false>("gpu_us", kNoisy),
      Object<&S::wall_stats, StatsFields>("wall_stats", kNoisy),
      Object<&S::gpu_stats, StatsFields>("gpu_stats", kNoisy),
      DetailMap<&S::addresses>("addresses", kVolatile),
      DetailMap<&S::details>("details", kMixed),
      If(
          DetailMap<&S::targets>("targets", kInformational),
          +[](const S& s) { return !s.targets.empty(); }),
      Object<&S::check, CheckFields>("check", kMixed),
      If(String<&S::expected_error>("expected_error", kStable), HasExpectedError),
      With(String<&S::actual_error>("actual_error", kStable), HasExpectedError, "expected_error"),
      If(
          String<&S::error>("error", kVolatile), +[](const S& s) { return !s.error.empty(); }),
      Object<&S::folded, FoldFields>("folded", kMixed),
      If(
          ObjectList<&S::body, StepFields>("body", kMixed),
          +[](const S& s) { return !s.body.empty(); }),
      Object<&S::child, ChildFields>("child", kMixed),
  };
  return kRows;
}

std::span<const Field<Summary>> SummaryFields() {
  using S = Summary;
  static const Field<Summary> kRows[] = {
      Integer<&S::steps>("steps", kStable),
      Integer<&S::ok>("ok", kStable),
      Integer<&S::failed>("failed", kStable),
      Integer<&S::skipped>("skipped", kStable),
      Integer<&S::unchecked>("unchecked", kStable),
      Integer<&S::checks_passed>("checks_passed", kStable),
      Integer<&S::checks_failed>("checks_failed", kStable),
      Integer<&S::exit_code>("exit_code", kStable),
      Integer<&S::failed_step>("failed_step", kStable),
      String<&S::result>("result", kStable),
      If(
          String<&S::skip_reason>("skip_reason", kStable),
          +[](const S& s) { return !s.skip_reason.empty(); }),
      Double<&S::duration_ms>("duration_ms", kNoisy),
      If(
          Decimal<&S::peak_rss_bytes>("peak_rss_bytes", kNoisy),
          +[](const S& s) { return s.peak_rss_bytes != 0; }),
      If(Bool<&S::interrupted>("interrupted", kStable), Interrupted),
      With(Integer<&S::signal>("signal", kStable, 1, 255), Interrupted, "interrupted"),
      With(Integer<&S::stopped_at_step>("stopped_at_step", kStable, 0), Interrupted, "interrupted"),
  };
  return kRows;
}

std::span<const Field<DeviceRecord>> DeviceFields() {
  using D = DeviceRecord;
  static const Field<DeviceRecord> kRows[] = {
      String<&D::name>("name", kStable),
      Integer<&D::ordinal>("ordinal", kVolatile),
      String<&D::compute_capability>("compute_capability", kStable),
      String<&D::driver_version>("driver_version", kVolatile),
      String<&D::runtime_version>("runtime_version", kVolatile),
      Bool<&D::vmm_supported>("vmm_supported", kStable),
      Decimal<&D::granularity_min>("granularity_min_bytes", kStable),
      Decimal<&D::granularity_recommended>("granularity_recommended_bytes", kStable),
      Decimal<&D::total_memory>("total_memory_bytes", kVolatile),
  };
  return kRows;
}

std::span<const Field<DeviceRecord>> ScenarioDeviceFields() {
  static const std::vector<Field<DeviceRecord>> kRows = [] {
    std::vector<Field<DeviceRecord>> rows(DeviceFields().begin(), DeviceFields().end());
    rows.push_back(Integer<&DeviceRecord::scenario_device>("scenario_device", kStable));
    rows.push_back(String<&DeviceRecord::pci_bus_id>("pci_bus_id", kVolatile));
    return rows;
  }();
  return kRows;
}

std::span<const Field<BufferRecord>> BufferFields() {
  using B = BufferRecord;
  static const Field<BufferRecord> kRows[] = {
      String<&B::name>("name", kStable),
      If(String<&B::view_of>("view_of", kStable), IsView),
      With(Decimal<&B::offset>("offset_bytes", kStable), IsView, "view_of"),
      Without(Decimal<&B::reservation_bytes>("reservation_bytes", kStable), IsNotView, "view_of"),
      Decimal<&B::bytes>("bytes", kStable),
  };
  return kRows;
}

std::span<const Field<GraphNodeRecord>> GraphNodeFields() {
  using N = GraphNodeRecord;
  static const Field<GraphNodeRecord> kRows[] = {
      Integer<&N::index>("index", kStable, 0),
      String<&N::name>("name", kStable),
      String<&N::type>("type", kStable),
      String<&N::detail>("detail", kStable),
      PairList<&N::buffers, kName, kAccess>("buffers", kStable),
      IntegerList<&N::dependencies>("dependencies", kStable),
      If(
          ObjectList<&N::children, GraphNodeFields>("children", kStable),
          +[](const N& n) { return !n.children.empty(); }),
  };
  return kRows;
}

std::span<const Field<GraphRecord>> GraphFields() {
  using G = GraphRecord;
  static const Field<GraphRecord> kRows[] = {
      String<&G::graph>("graph", kStable),
      Integer<&G::capture_step>("capture_step", kStable, 0),
      String<&G::capture_name>("capture_name", kStable),
      String<&G::structure_hash>("structure_hash", kStable),
      If(
          String<&G::dot_file>("dot_file", kVolatile),
          +[](const G& g) { return !g.dot_file.empty(); }),
      ObjectList<&G::nodes, GraphNodeFields>("nodes", kStable),
      Derived<G, Edges>("edges", kStable),
  };
  return kRows;
}

std::span<const Field<Report>> ReportFields() {
  using R = Report;
  static const Field<Report> kRows[] = {
      String<&R::schema_version>("schema_version", kStable),
      Group<R, ToolFields>("tool", kVolatile),
      StringList<&R::argv>("argv", kVolatile),
      Group<R, ScenarioFields>("scenario", kMixed),
      Group<R, BackendFields>("backend", kMixed),
      Object<&R::device, DeviceFields>("device", kMixed),
      If(
          ObjectList<&R::devices, ScenarioDeviceFields>("devices", kMixed),
          +[](const R& r) { return !r.devices.empty(); }),
      Decimal<&R::granularity>("granularity_bytes", kStable),
      If(
          Integer<&R::data_hash_scheme>("data_hash_scheme", kInformational, 1, 1000),
          +[](const R& r) { return r.data_hash_scheme != 0; }),
      If(
          StringMap<&R::vars>("vars", kStable), +[](const R& r) { return !r.vars.empty(); }),
      If(
          StringMap<&R::sweep_point>("sweep_point", kStable),
          +[](const R& r) { return !r.sweep_point.empty(); }),
      String<&R::started_at>("started_at", kVolatile),
      If(
          ObjectList<&R::buffers, BufferFields>("buffers", kInformational),
          +[](const R& r) { return !r.buffers.empty(); }),
      ObjectList<&R::steps, StepFields>("steps", kMixed),
      If(
          ObjectList<&R::graphs, GraphFields>("graphs", kMixed),
          +[](const R& r) { return !r.graphs.empty(); }),
      Object<&R::summary, SummaryFields>("summary", kMixed),
  };
  return kRows;
}

}  // namespace vmm::report::fields
