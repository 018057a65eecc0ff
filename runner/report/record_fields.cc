#include "runner/report/record_fields.h"

#include <limits>
#include <optional>
#include <vector>

#include "runner/report/report_io.h"
#include "runner/report/scalar_json.h"

namespace vmm::report::fields {
namespace {

constexpr Stability kStable = Stability::kStable;
constexpr Stability kNoisy = Stability::kNoisy;
constexpr Stability kVolatile = Stability::kVolatile;
constexpr Stability kInformational = Stability::kInformational;
constexpr Stability kMixed = Stability::kMixed;

template <typename M>
struct MemberOf;
template <typename R, typename T>
struct MemberOf<T R::*> {
  using Record = R;
  using Type = T;
};
template <auto M>
using RecordOf = typename MemberOf<decltype(M)>::Record;
template <auto M>
using TypeOf = typename MemberOf<decltype(M)>::Type;

// The codecs: one factory per kind of value. A row is written always unless the factory says
// when (an optional or a Boxed: when it holds a value) or If / With below do.

template <auto M>
Field<RecordOf<M>> Integer(const char* key, Stability stability, int64_t min = INT64_MIN,
                           int64_t max = INT64_MAX) {
  using R = RecordOf<M>;
  using T = TypeOf<M>;
  Field<R> f{key, stability};
  f.min = min;
  f.max = max;
  f.write = [](const R& r, const char* k, Json& j) { j[k] = r.*M; };
  f.read = [](FieldReader& rd, const Json& o, const std::string& p, const Field<R>& f, R& out) {
    const T lo = f.min == INT64_MIN ? std::numeric_limits<T>::min() : static_cast<T>(f.min);
    const T hi = f.max == INT64_MAX ? std::numeric_limits<T>::max() : static_cast<T>(f.max);
    rd.Integer(o, p, f.key, &(out.*M), lo, hi);
  };
  return f;
}

// A 64-bit count written as a decimal string ("2097152"); set when not 0.
template <auto M>
Field<RecordOf<M>> Decimal(const char* key, Stability stability) {
  using R = RecordOf<M>;
  Field<R> f{key, stability};
  f.write = [](const R& r, const char* k, Json& j) { j[k] = std::to_string(r.*M); };
  f.read = [](FieldReader& rd, const Json& o, const std::string& p, const Field<R>& f, R& out) {
    rd.DecimalString(o, p, f.key, &(out.*M));
  };
  return f;
}

template <auto M>
Field<RecordOf<M>> String(const char* key, Stability stability) {
  using R = RecordOf<M>;
  Field<R> f{key, stability};
  f.write = [](const R& r, const char* k, Json& j) { j[k] = r.*M; };
  f.read = [](FieldReader& rd, const Json& o, const std::string& p, const Field<R>& f, R& out) {
    rd.String(o, p, f.key, &(out.*M));
  };
  return f;
}

template <auto M>
Field<RecordOf<M>> Bool(const char* key, Stability stability) {
  using R = RecordOf<M>;
  Field<R> f{key, stability};
  f.write = [](const R& r, const char* k, Json& j) { j[k] = r.*M; };
  f.read = [](FieldReader& rd, const Json& o, const std::string& p, const Field<R>& f, R& out) {
    rd.Bool(o, p, f.key, &(out.*M));
  };
  return f;
}

template <auto M>
Field<RecordOf<M>> Double(const char* key, Stability stability) {
  using R = RecordOf<M>;
  Field<R> f{key, stability};
  f.write = [](const R& r, const char* k, Json& j) { j[k] = r.*M; };
  f.read = [](FieldReader& rd, const Json& o, const std::string& p, const Field<R>& f, R& out) {
    rd.Double(o, p, f.key, &(out.*M));
  };
  return f;
}

// An std::optional<double> written when it has a value. `null_is_unset`: a null reads back as no
// value (else as NaN, as a non-finite number is written).
template <auto M, bool null_is_unset>
Field<RecordOf<M>> OptionalDouble(const char* key, Stability stability) {
  using R = RecordOf<M>;
  Field<R> f{key, stability};
  f.written = [](const R& r) { return (r.*M).has_value(); };
  f.write = [](const R& r, const char* k, Json& j) { j[k] = *(r.*M); };
  f.read = [](FieldReader& rd, const Json& o, const std::string& p, const Field<R>& f, R& out) {
    if (null_is_unset && o.at(f.key).is_null()) return;
    rd.Double(o, p, f.key, &(out.*M).emplace());
  };
  return f;
}

// An enum written by its name; `choices` lists the names for the reader's message.
template <auto M, auto kName, auto kParse>
Field<RecordOf<M>> Enum(const char* key, Stability stability, const char* choices) {
  using R = RecordOf<M>;
  Field<R> f{key, stability};
  f.choices = choices;
  f.write = [](const R& r, const char* k, Json& j) { j[k] = kName(r.*M); };
  f.read = [](FieldReader& rd, const Json& o, const std::string& p, const Field<R>& f, R& out) {
    rd.Enum(o, p, f.key, &(out.*M), kParse, f.choices);
  };
  return f;
}

// Details: an object of scalars in the executor's order.
template <auto M>
Field<RecordOf<M>> DetailMap(const char* key, Stability stability) {
  using R = RecordOf<M>;
  Field<R> f{key, stability};
  f.write = [](const R& r, const char* k, Json& j) {
    Json d = Json::object();
    for (const auto& [name, value] : r.*M) d[name] = ScalarToJson(value);
    j[k] = std::move(d);
  };
  f.read = [](FieldReader& rd, const Json& o, const std::string& p, const Field<R>& f, R& out) {
    const Json* d = rd.Object(o, p, f.key, true);
    if (d == nullptr) return;
    for (auto it = d->begin(); it != d->end(); ++it) {
      Scalar value;
      if (!JsonToScalar(it.value(), &value)) {
        rd.Error(FieldReader::Child(FieldReader::Child(p, f.key), it.key()),
                 "expected a boolean, number or string, got " + TypeText(it.value()));
        continue;
      }
      (out.*M).emplace_back(it.key(), std::move(value));
    }
  };
  return f;
}

// A nested record (a Boxed<T>, set when it holds one), written by T's table `kTable`.
template <auto M, auto kTable>
Field<RecordOf<M>> Object(const char* key, Stability stability) {
  using R = RecordOf<M>;
  Field<R> f{key, stability};
  f.written = [](const R& r) { return (r.*M).has_value(); };
  f.write = [](const R& r, const char* k, Json& j) { j[k] = Write(kTable(), *(r.*M)); };
  f.read = [](FieldReader& rd, const Json& o, const std::string& p, const Field<R>& f, R& out) {
    if (const Json* n = rd.Object(o, p, f.key, true))
      Read(kTable(), rd, *n, FieldReader::Child(p, f.key), (out.*M).emplace());
  };
  return f;
}

// A list of nested records, each written by the element's table `kTable`.
template <auto M, auto kTable>
Field<RecordOf<M>> ObjectList(const char* key, Stability stability) {
  using R = RecordOf<M>;
  using T = typename TypeOf<M>::value_type;
  Field<R> f{key, stability};
  f.write = [](const R& r, const char* k, Json& j) {
    Json list = Json::array();
    for (const T& e : r.*M) list.push_back(Write(kTable(), e));
    j[k] = std::move(list);
  };
  f.read = [](FieldReader& rd, const Json& o, const std::string& p, const Field<R>& f, R& out) {
    const Json* list = rd.Array(o, p, f.key, true);
    if (list == nullptr) return;
    for (size_t i = 0; i < list->size(); ++i) {
      const std::string ep = FieldReader::Child(p, f.key) + "/" + std::to_string(i);
      if (!(*list)[i].is_object()) {
        rd.Error(ep, "expected an object, got " + TypeText((*list)[i]));
        continue;
      }
      T e;
      Read(kTable(), rd, (*list)[i], ep, e);
      (out.*M).push_back(std::move(e));
    }
  };
  return f;
}

template <auto M>
Field<RecordOf<M>> StringList(const char* key, Stability stability) {
  using R = RecordOf<M>;
  Field<R> f{key, stability};
  f.write = [](const R& r, const char* k, Json& j) { j[k] = r.*M; };
  f.read = [](FieldReader& rd, const Json& o, const std::string& p, const Field<R>& f, R& out) {
    const Json* list = rd.Array(o, p, f.key, true);
    if (list == nullptr) return;
    for (size_t i = 0; i < list->size(); ++i) {
      if (!(*list)[i].is_string()) {
        rd.Error(FieldReader::Child(p, f.key) + "/" + std::to_string(i),
                 "expected a string, got " + TypeText((*list)[i]));
        continue;
      }
      (out.*M).push_back((*list)[i].get<std::string>());
    }
  };
  return f;
}

// A string that is null when empty (std::string) or absent (std::optional<std::string>).
template <auto M>
Field<RecordOf<M>> NullableString(const char* key, Stability stability) {
  using R = RecordOf<M>;
  using T = TypeOf<M>;
  Field<R> f{key, stability};
  f.write = [](const R& r, const char* k, Json& j) {
    if constexpr (std::is_same_v<T, std::string>) {
      j[k] = (r.*M).empty() ? Json(nullptr) : Json(r.*M);
    } else {
      j[k] = (r.*M) ? Json(*(r.*M)) : Json(nullptr);
    }
  };
  f.read = [](FieldReader& rd, const Json& o, const std::string& p, const Field<R>& f, R& out) {
    std::optional<std::string> text;
    rd.NullableString(o, p, f.key, &text);
    if constexpr (std::is_same_v<T, std::string>) {
      out.*M = text.value_or("");
    } else {
      out.*M = std::move(text);
    }
  };
  return f;
}

// An std::optional<int> that is null when absent.
template <auto M>
Field<RecordOf<M>> NullableInteger(const char* key, Stability stability, int64_t min, int64_t max) {
  using R = RecordOf<M>;
  Field<R> f{key, stability};
  f.min = min;
  f.max = max;
  f.write = [](const R& r, const char* k, Json& j) {
    j[k] = (r.*M) ? Json(*(r.*M)) : Json(nullptr);
  };
  f.read = [](FieldReader& rd, const Json& o, const std::string& p, const Field<R>& f, R& out) {
    const Json* j = rd.Member(o, p, f.key, true);
    if (j == nullptr || j->is_null()) return;
    rd.Integer(o, p, f.key, &(out.*M).emplace(), static_cast<int>(f.min), static_cast<int>(f.max));
  };
  return f;
}

// Row modifiers: written only when `pred` holds (and read when present); `With`: also required
// by the reader whenever the key `other` is present.
template <typename R>
Field<R> If(Field<R> f, bool (*pred)(const R&)) {
  f.written = pred;
  return f;
}
template <typename R>
Field<R> With(Field<R> f, bool (*pred)(const R&), const char* other) {
  f.written = pred;
  f.with = other;
  return f;
}

bool HasExpectedError(const StepRecord& s) { return !s.expected_error.empty(); }
bool Interrupted(const Summary& s) { return s.interrupted; }

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

}  // namespace vmm::report::fields
