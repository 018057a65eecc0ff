// parse_bench: the front end's cost on a 10,000-step scenario, against yaml-cpp's own YAML::Load.
//
// Generates a valid scenario in memory (a realistic mix: remaps, fills, matmuls, checks, captures,
// replays, updates, teardown), then times, median of 9 runs each:
//   YAML::Load           yaml-cpp's own document load (the baseline)
//   LoadYaml             yaml-cpp's parser events -> YamlValue (no YAML::Node), duplicate keys
//   ParseScenario        LoadYaml + schema validation + typed Scenario
//   BuildPlan            resolution + state-machine simulation
// and prints each figure with its ratio to YAML::Load and the 50 ms target for parse + plan.
// Speed is not asserted (the machine may be busy); the numbers are for people.
// Both styles are measured: flow (one step per line, as scenarios/ are written) and block (one
// key per line).
// `parse_bench --print-flow` / `--print-block` writes the generated scenario to stdout instead.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "runner/plan/plan.h"
#include "runner/scenario/parse.h"
#include "runner/scenario/scenario_builder.h"
#include "runner/yaml/schema_validator.h"
#include "runner/yaml/valijson_oracle.h"
#include "runner/yaml/yaml_loader.h"

namespace {

constexpr size_t kSteps = 10000;
constexpr int kRuns = 9;
constexpr double kTargetMs = 50.0;

// One step as key/value pairs; `body` holds a capture's steps.
struct GenStep {
  std::vector<std::pair<std::string, std::string>> fields;
  std::vector<GenStep> body;
};

GenStep S(std::vector<std::pair<std::string, std::string>> fields, std::vector<GenStep> body = {}) {
  return GenStep{std::move(fields), std::move(body)};
}

// One remap cycle over A and B (C stays mapped), 25 steps, all legal in sequence.
void AppendCycle(int i, std::vector<GenStep>* out) {
  const std::string n = std::to_string(i);
  const std::string a = "pA" + n, b = "pB" + n, g = "g" + n, e = "e" + n, c = "C" + n;
  std::vector<GenStep> cycle = {
      S({{"op", "create"}, {"alloc", a}, {"size", "2MiB"}}),
      S({{"op", "create"}, {"alloc", b}, {"size", "2MiB"}}),
      S({{"op", "map"}, {"name", "map A " + n}, {"buffer", "A"}, {"alloc", a}}),
      S({{"op", "map"}, {"name", "map B " + n}, {"buffer", "B"}, {"alloc", b}}),
      S({{"op", "set_access"}, {"buffer", "A"}}),
      S({{"op", "set_access"}, {"buffer", "B"}, {"access", "read_write"}}),
      S({{"op", "fill"}, {"buffer", "A"}, {"seed", std::to_string(2 * i + 1)}}),
      S({{"op", "fill"}, {"buffer", "B"}, {"seed", std::to_string(2 * i + 2)}}),
      S({{"op", "matmul"},
         {"name", "C = A·B " + n},
         {"a", "A"},
         {"b", "B"},
         {"c", "C"},
         {"repeat", "2"}}),
      S({{"op", "check_matmul"}, {"a", "A"}, {"b", "B"}, {"c", "C"}, {"fatal", "true"}}),
      S({{"op", "snapshot"}, {"buffer", "C"}, {"snapshot", c}}),
      S({{"op", "capture"}, {"graph", g}},
        {S({{"op", "matmul"}, {"a", "A"}, {"b", "B"}, {"c", "C"}})}),
      S({{"op", "instantiate"}, {"graph", g}, {"exec", e}}),
      S({{"op", "replay"}, {"exec", e}, {"repeat", "3"}}),
      S({{"op", "check_equal"}, {"buffer", "C"}, {"snapshot", c}, {"expect", "equal"}}),
      S({{"op", "check_address"}, {"of", "[map A 0, map A " + n + "]"}, {"expect", "same"}}),
      S({{"op", "update"}, {"exec", e}, {"graph", g}, {"expect", "success"}}),
      S({{"op", "check_kernel_params"}, {"graphs", "[" + g + ", " + g + "]"}}),
      S({{"op", "destroy_exec"}, {"exec", e}}),
      S({{"op", "destroy_graph"}, {"graph", g}}),
      S({{"op", "unmap"}, {"buffer", "A"}}),
      S({{"op", "unmap"}, {"buffer", "B"}, {"offset", "0"}, {"size", "2MiB"}}),
      S({{"op", "release"}, {"alloc", a}}),
      S({{"op", "release"}, {"alloc", b}}),
      S({{"op", "synchronize"}}),
  };
  for (GenStep& step : cycle) out->push_back(std::move(step));
}

std::vector<GenStep> GenerateSteps() {
  std::vector<GenStep> steps = {
      S({{"op", "reserve"}, {"buffer", "A"}, {"size", "2MiB"}}),
      S({{"op", "reserve"}, {"buffer", "B"}}),
      S({{"op", "reserve"}, {"buffer", "C"}}),
      S({{"op", "create"}, {"alloc", "pC"}, {"size", "2MiB"}}),
      S({{"op", "map"}, {"buffer", "C"}, {"alloc", "pC"}}),
      S({{"op", "set_access"}, {"buffer", "C"}}),
  };
  for (int i = 0; steps.size() + 25 <= kSteps - 4; ++i) AppendCycle(i, &steps);
  steps.push_back(S({{"op", "unmap"}, {"buffer", "C"}}));
  steps.push_back(S({{"op", "release"}, {"alloc", "pC"}}));
  steps.push_back(S({{"op", "free"}, {"buffer", "A"}}));
  steps.push_back(S({{"op", "free"}, {"buffer", "B"}}));
  while (steps.size() < kSteps) steps.push_back(S({{"op", "synchronize"}}));
  return steps;
}

// Flow style, one step per line ("- {op: fill, buffer: A, seed: 1}"), as scenarios/ are written;
// or block style, one key per line.
void Emit(const GenStep& step, bool flow, const std::string& indent, std::string* out) {
  if (flow) {
    *out += indent + "- {";
    for (size_t i = 0; i < step.fields.size(); ++i)
      *out += (i ? ", " : "") + step.fields[i].first + ": " + step.fields[i].second;
    if (!step.body.empty()) {
      *out += ", steps: [";
      for (size_t i = 0; i < step.body.size(); ++i) {
        std::string inner;
        Emit(step.body[i], true, "", &inner);
        *out += (i ? ", " : "") + inner.substr(2, inner.size() - 3);  // "{...}" of "- {...}\n"
      }
      *out += "]";
    }
    *out += "}\n";
    return;
  }
  for (size_t i = 0; i < step.fields.size(); ++i) {
    *out += indent + (i == 0 ? "- " : "  ") + step.fields[i].first + ": " + step.fields[i].second +
            "\n";
  }
  if (!step.body.empty()) {
    *out += indent + "  steps:\n";
    for (const GenStep& inner : step.body) Emit(inner, false, indent + "    ", out);
  }
}

std::string GenerateScenario(bool flow) {
  std::string text =
      "# yaml-language-server: $schema=../schemas/scenario.schema.json\n"
      "version: 1\nname: parse_bench\ndescription: generated\ngranularity: 2MiB\n"
      "buffers:\n  A: {shape: [256, 256]}\n  B: {shape: [256, 256]}\n  C: {shape: [256, 256]}\n"
      "steps:\n";
  for (const GenStep& step : GenerateSteps()) Emit(step, flow, "  ", &text);
  return text;
}

double MedianMs(int runs, const std::function<void()>& fn) {
  std::vector<double> ms;
  for (int r = 0; r < runs; ++r) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

struct Figures {
  double load = 0, tree = 0, validate = 0, build = 0, parse = 0, plan = 0;
};

// Times every stage on `text`; false (after printing why) when the scenario is not valid.
bool Measure(const vmm::ScenarioParser& parser, const std::string& text, Figures* f) {
  const std::string file = "parse_bench.yaml";
  // Sanity: the generated scenario must be valid, or the timings mean nothing.
  std::vector<vmm::Diagnostic> diagnostics;
  std::optional<vmm::Scenario> scenario = parser.Parse(text, file, &diagnostics);
  if (scenario) vmm::BuildPlan(*scenario, &diagnostics);
  if (!scenario || !diagnostics.empty()) {
    std::fprintf(stderr, "parse_bench: generated scenario is invalid:\n%s",
                 vmm::FormatDiagnostics(diagnostics).c_str());
    return false;
  }
  f->load = MedianMs(kRuns, [&] { YAML::Node n = YAML::Load(text); });
  f->tree = MedianMs(kRuns, [&] {
    std::vector<vmm::Diagnostic> d;
    std::optional<vmm::YamlValue> v = vmm::LoadYaml(text, file, &d);
  });
  const std::optional<vmm::YamlValue> document = vmm::LoadYaml(text, file, &diagnostics);
  f->validate = MedianMs(kRuns, [&] {
    std::vector<vmm::Diagnostic> d;
    parser.validator().Validate(*document, file, &d);
  });
  f->build = MedianMs(kRuns, [&] {
    std::vector<vmm::Diagnostic> d;
    std::optional<vmm::Scenario> s =
        vmm::BuildScenario(*document, parser.validator().schema(), file, &d);
  });
  f->parse = MedianMs(kRuns, [&] {
    std::vector<vmm::Diagnostic> d;
    std::optional<vmm::Scenario> s = parser.Parse(text, file, &d);
  });
  f->plan = MedianMs(kRuns, [&] {
    std::vector<vmm::Diagnostic> d;
    vmm::Plan p = vmm::BuildPlan(*scenario, &d);
  });
  return true;
}

void Print(const char* style, size_t bytes, const Figures& f) {
  const double base = f.load;
  std::printf("%s style, %zu bytes:\n", style, bytes);
  std::printf("  %-40s %8.2f ms  %5.2fx  (baseline)\n", "yaml-cpp YAML::Load", f.load, 1.0);
  std::printf("  %-40s %8.2f ms  %5.2fx\n", "LoadYaml (yaml-cpp events -> YamlValue)", f.tree,
              f.tree / base);
  std::printf("  %-40s %8.2f ms  %5.2fx\n", "schema validation alone", f.validate,
              f.validate / base);
  std::printf("  %-40s %8.2f ms  %5.2fx\n", "typed Scenario build alone", f.build, f.build / base);
  std::printf("  %-40s %8.2f ms  %5.2fx\n", "ParseScenario (load + validate + build)", f.parse,
              f.parse / base);
  std::printf("  %-40s %8.2f ms  %5.2fx\n", "BuildPlan", f.plan, f.plan / base);
  const double total = f.parse + f.plan;
  std::printf("  %-40s %8.2f ms  %5.2fx  target %.0f ms: %s\n", "parse + validate + plan", total,
              total / base, kTargetMs, total <= kTargetMs ? "met" : "missed");
  std::printf("  %-40s %8.2f ms  (%.2f us per step)\n", "of which after yaml-cpp's parse",
              total - f.tree, (total - f.tree) * 1000.0 / kSteps);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string flow = GenerateScenario(true);
  const std::string block = GenerateScenario(false);
  if (argc > 1 &&
      (std::string(argv[1]) == "--print-flow" || std::string(argv[1]) == "--print-block")) {
    std::fputs((std::string(argv[1]) == "--print-flow" ? flow : block).c_str(), stdout);
    return 0;
  }
  vmm::StatusOr<vmm::ScenarioParser> parser = vmm::ScenarioParser::Create();
  if (!parser.ok()) {
    std::fprintf(stderr, "parse_bench: %s\n", parser.status().message().c_str());
    return 1;
  }
  std::printf("parse_bench: %zu steps, median of %d runs\n", kSteps, kRuns);
  Figures f;
  if (!Measure(*parser, flow, &f)) return 1;
  Print("flow", flow.size(), f);
  if (!Measure(*parser, block, &f)) return 1;
  Print("block", block.size(), f);

  // For the record: the reference validator, too slow for the parse path (valijson_oracle.h).
  vmm::StatusOr<vmm::ValijsonOracle> oracle =
      vmm::ValijsonOracle::Create(vmm::ScenarioSchemaText());
  if (oracle.ok()) {
    const double valijson = MedianMs(3, [&] { oracle->Validate(block, "parse_bench.yaml"); });
    std::printf("valijson oracle (YAML::Load + validate), block style: %.2f ms (median of 3)\n",
                valijson);
  }
  return 0;
}
