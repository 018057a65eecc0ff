// ExpandScenario: the source form of a scenario (vars, `${...}`, for loops, included fragments)
// -> the expanded form that schemas/scenario.schema.json describes and that runs.
//
// Runs on the loaded YamlValue tree, before schema validation (docs/scenario-language.md,
// "Variables, loops and includes"):
//   vars:     {name: value}: integers, sizes (`2MiB`, as bytes) or text; later ones may use earlier
//             ones (`bytes: ${pages * page}`); `--set name=value` replaces a declared value.
//   ${expr}   in any scalar or map key (expr.h); a scalar that is one `${...}` takes its value.
//   for:      a step {for: i, in: {range: [start, end, step?]} | [values], steps: [...]}
//             repeats its steps with `i` bound (range: end excluded, step default 1).
//   include:  [paths] of fragment files, relative to the including file. A fragment file holds
//             `fragment` (name; default the file's stem), `params`, `include`, `steps`.
//   use:      a step {use: name, with: {param: value}} inlines a fragment's steps. A fragment sees
//             only its params (and its own loop variables), not the caller's variables.
// Every expanded value keeps its template's line and column, and an origin (yaml_value.h) naming
// the template's file and the loop iterations / fragment uses that made it, so that schema, build
// and plan errors point at the source. Errors here are reported the same way, all in one pass.
//
// Bounded: the steps a document would expand to are counted first, without building anything;
// past ExpandOptions::max_steps (default: the expanded_steps limit, base/limits.h) the expansion
// is an error.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runner/base/diagnostic.h"
#include "runner/scenario/expr.h"
#include "runner/yaml/yaml_value.h"

namespace vmm {

// The keys whose value is a list of steps, where loops and fragment uses expand: a step list (the
// top level, capture bodies, isolate blocks, fragments, a thread's steps), a `together` group's
// blocks and a `threads` group's threads.
inline constexpr const char* kStepListKeys[] = {"steps", "together", "threads"};
inline bool IsStepListKey(std::string_view key) {
  return key == "steps" || key == "together" || key == "threads";
}

// `--set name=value`.
struct VarOverride {
  std::string name;
  std::string value;
};
// Parses "name=value"; false with *error set ("expected NAME=VALUE, got 'x'") otherwise.
bool ParseVarOverride(const std::string& arg, VarOverride* out, std::string* error);
// A diagnostic (at `file`) for each of `set` that `vars` (the scenario's `vars:` map, or null)
// does not declare, with the closest name or the declared ones.
void CheckVarOverrides(const YamlValue* vars, const std::vector<VarOverride>& set,
                       const std::string& file, std::vector<Diagnostic>* out);

// Reads an included file into *text; false with *error (the reason) when it cannot.
using IncludeReader =
    std::function<bool(const std::string& path, std::string* text, std::string* error)>;

struct ExpandOptions {
  std::vector<VarOverride> set;
  // Empty: read from disk, each file as ReadInputFile reads a scenario (a regular file of at most
  // the input_bytes limit, UTF-8), and only inside the scenario's own folder or one of
  // `include_roots` (real paths: a symlink that leads out is refused). Tests give a reader.
  IncludeReader read_file;
  std::vector<std::string> include_roots;  // --include-root: folders includes may also read
  size_t max_steps = 0;                    // 0: the expanded_steps limit (base/limits.h)
  // The device facts (expr.h, DeviceFacts), known to every expression like variables; empty
  // when not read (then naming one is an error that says so).
  std::vector<std::pair<std::string, ExprValue>> facts;
};

// The expanded document and what made it. Move-only; `document` points into `origins`.
struct Expansion {
  YamlValue document;
  std::vector<std::pair<std::string, ExprValue>> vars;  // values used, in declaration order
  std::unique_ptr<std::deque<YamlOrigin>> origins = std::make_unique<std::deque<YamlOrigin>>();
};

// One point of a `sweep:`: the axis values as written (`page=2MiB`), in axis order. Each is applied
// like `--set`.
using SweepPoint = std::vector<VarOverride>;

// Most points one sweep may have.
inline constexpr size_t kMaxSweepPoints = 10000;

// The points of the top-level `sweep:` of `document` (the contents of `file`): the cartesian
// product of its axes, first axis outermost. Each axis names a variable declared under `vars:` and
// lists its values (a list, or {range: [start, end, step?]}, end excluded). An axis that `set`
// fixes is left out. Returns an empty list when there is no sweep, nullopt after appending errors.
std::optional<std::vector<SweepPoint>> SweepPoints(const YamlValue& document,
                                                   const std::string& file,
                                                   const std::vector<VarOverride>& set,
                                                   std::vector<Diagnostic>* diagnostics);

// "page=2MiB,pages=4": a point as text, with every character outside [A-Za-z0-9._=,+-] replaced by
// '_' (safe in a file name).
std::string SweepPointText(const SweepPoint& point);

// True when `document` (loaded from `text`) uses vars, includes, for, use or `${`, or `options`
// sets variables: only then is there anything to expand. Cheap: one scan of the text for "${" and
// of the top-level keys and steps.
bool NeedsExpansion(const std::string& text, const YamlValue& document,
                    const ExpandOptions& options);

// Takes the expanded top-level steps one at a time, in order, instead of the document's `steps`
// list, so that a long loop is never whole in memory as YAML (its consumer validates and builds
// each step and drops it). Expect comes first, with the number of steps the count found.
class ExpandedStepSink {
 public:
  virtual ~ExpandedStepSink() = default;
  virtual void Expect(size_t steps) = 0;
  virtual void Take(YamlValue&& step) = 0;
};

// Expands `document`, the contents of `file`. Returns nullopt after appending every problem to
// *diagnostics. With a `sink`, the first top-level `steps` list's expanded items go to it and the
// document keeps that list empty; the sink may have taken steps when the expansion fails.
std::optional<Expansion> ExpandScenario(const YamlValue& document, const std::string& file,
                                        const ExpandOptions& options,
                                        std::vector<Diagnostic>* diagnostics,
                                        ExpandedStepSink* sink = nullptr);

}  // namespace vmm
