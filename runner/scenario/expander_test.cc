#include "runner/scenario/expander.h"

#include <gtest/gtest.h>

#include <map>

#include "runner/scenario/parse.h"
#include "runner/yaml/yaml_writer.h"

namespace vmm {
namespace {

// Files an expansion may include, by path.
struct Files {
  std::map<std::string, std::string> text;
  IncludeReader Reader() const {
    return [this](const std::string& path, std::string* out, std::string* error) {
      auto it = text.find(path);
      if (it == text.end()) {
        *error = "No such file or directory";
        return false;
      }
      *out = it->second;
      return true;
    };
  }
};

// The expanded form as `vmm-run expand` prints it, or the diagnostics.
std::string Expand(const std::string& text, const Files& files = {},
                   std::vector<VarOverride> set = {}) {
  ExpandOptions options;
  options.read_file = files.Reader();
  options.set = std::move(set);
  std::vector<Diagnostic> d;
  Expansion e;
  std::optional<Scenario> s = ParseScenario(text, "s.yaml", options, &d, &e);
  if (!s) return FormatDiagnostics(d);
  return WriteYaml(e.document);
}

TEST(Expander, VarsAndExpressions) {
  EXPECT_EQ(Expand("name: v\n"
                   "vars: {pages: 4, page: 2MiB, total: '${pages * page}', buf: R}\n"
                   "buffers: {R: {shape: ['${total / 4}']}}\n"
                   "steps:\n"
                   "  - {op: reserve, buffer: '${buf}', size: '${total}'}\n"
                   "  - {op: create, alloc: p, size: '${page}', name: 'create ${buf}${pages}'}\n"),
            "name: v\n"
            "buffers:\n"
            "  R: {shape: [2097152]}\n"
            "steps:\n"
            "  - {op: reserve, buffer: R, size: 8388608}\n"
            "  - {op: create, alloc: p, size: 2097152, name: create R4}\n");
}

// Buffers and views from a loop: one declaration per value, its name and fields substituted; a
// loop whose name does not use the variable, and one without `in`, are refused where written.
TEST(Expander, ViewsAndBuffersFromLoops) {
  EXPECT_EQ(
      Expand("name: v\n"
             "vars: {pages: 3, page: 2MiB}\n"
             "buffers:\n"
             "  KV: {shape: ['${pages * page / 4}']}\n"
             "  'S${j}': {for: j, in: [a, b], shape: [256]}\n"
             "views:\n"
             "  'P${i}': {for: i, in: {range: [0, '${pages}']}, of: KV, offset: '${i * page}',"
             " shape: ['${page / 4}']}\n"
             "  Tail: {of: KV, offset: 4MiB, shape: [16]}\n"
             "steps: [{op: reserve, buffer: KV}]\n"),
      "name: v\n"
      "buffers:\n"
      "  KV: {shape: [1572864]}\n"
      "  Sa: {shape: [256]}\n"
      "  Sb: {shape: [256]}\n"
      "views:\n"
      "  P0: {of: KV, offset: 0, shape: [524288]}\n"
      "  P1: {of: KV, offset: 2097152, shape: [524288]}\n"
      "  P2: {of: KV, offset: 4194304, shape: [524288]}\n"
      "  Tail: {of: KV, offset: 4MiB, shape: [16]}\n"
      "steps:\n"
      "  - {op: reserve, buffer: KV}\n");
  EXPECT_EQ(Expand("name: v\n"
                   "buffers: {KV: {shape: [1024]}}\n"
                   "views:\n"
                   "  P: {for: i, in: [0, 1], of: KV, shape: [4]}\n"
                   "  'Q${i}': {for: i, of: KV, shape: [4]}\n"
                   "steps: [{op: reserve, buffer: KV}]\n"),
            "s.yaml:4:3: error: 'P' is declared in a loop but its name does not use the loop "
            "variable (every iteration would declare the same name); write it as \"P${i}\"\n"
            "s.yaml:5:12: error: the for loop needs key 'in' (a list or {range: [start, end]})\n");
}

TEST(Expander, SetOverridesAndUnknownNames) {
  const std::string text =
      "name: v\nvars: {pages: 4, page: 2MiB}\n"
      "steps: [{op: create, alloc: p, size: '${pages * page}'}]\n";
  EXPECT_EQ(Expand(text, {}, {{"pages", "8"}}),
            "name: v\nsteps:\n  - {op: create, alloc: p, size: 16777216}\n");
  EXPECT_EQ(Expand(text, {}, {{"pagez", "8"}}),
            "s.yaml: error: --set pagez: the scenario has no variable 'pagez', did you mean "
            "'pages'?\n");
  EXPECT_EQ(Expand("name: v\nsteps: []\n", {}, {{"n", "1"}}),
            "s.yaml: error: --set n: the scenario has no variable 'n'; it declares none under "
            "'vars:'\n");
}

TEST(Expander, LoopsNestAndBindTheirVariable) {
  EXPECT_EQ(Expand("name: l\n"
                   "vars: {page: 2MiB}\n"
                   "steps:\n"
                   "  - for: i\n"
                   "    in: {range: [0, 2]}\n"
                   "    steps:\n"
                   "      - {op: create, alloc: 'p${i}', size: '${page}'}\n"
                   "      - for: j\n"
                   "        in: [A, B]\n"
                   "        steps: [{op: map, buffer: '${j}', alloc: 'p${i}', offset: '${i * "
                   "page}'}]\n"
                   "  - for: k\n"
                   "    in: {range: [6, 0, -3]}\n"
                   "    steps: [{op: synchronize, name: 's${k}'}]\n"),
            "name: l\n"
            "steps:\n"
            "  - {op: create, alloc: p0, size: 2097152}\n"
            "  - {op: map, buffer: A, alloc: p0, offset: 0}\n"
            "  - {op: map, buffer: B, alloc: p0, offset: 0}\n"
            "  - {op: create, alloc: p1, size: 2097152}\n"
            "  - {op: map, buffer: A, alloc: p1, offset: 2097152}\n"
            "  - {op: map, buffer: B, alloc: p1, offset: 2097152}\n"
            "  - {op: synchronize, name: s6}\n"
            "  - {op: synchronize, name: s3}\n");
}

TEST(Expander, ErrorsInALoopPointAtTheTemplateAndNameTheIteration) {
  const std::string text =
      "name: l\n"
      "buffers: {A: {shape: [4]}}\n"
      "steps:\n"
      "  - for: i\n"
      "    in: {range: [0, 40]}\n"
      "    steps:\n"
      "      - {op: create, alloc: 'p${i}', size: '${i == 37 ? 1 : 2MiB}'}\n";
  EXPECT_EQ(Expand(text),
            "s.yaml:7:44: error: in '${i == 37 ? 1 : 2MiB}': unexpected '=' at position 3 (in "
            "for i = 0; 39 more like it)\n");
  EXPECT_EQ(Expand("name: l\n"
                   "steps:\n"
                   "  - for: i\n"
                   "    in: {range: [0, 40]}\n"
                   "    steps:\n"
                   "      - {op: create, alloc: 'p${i}', size: '${(i - 37) * 2MiB}'}\n"),
            "s.yaml:6:44: error: 'size' must be a size such as 2MiB or 4096, got '-77594624' "
            "(in for i = 0; 36 more like it)\n");
}

// The locations of a parsed scenario share origins: one for the file, one per loop pass (so a
// 100,000-step loop does not hold a copy of the path per key). Each still says where it is.
TEST(Expander, LocationsShareOneOriginPerFileAndPerLoopPass) {
  ExpandOptions options;
  std::vector<Diagnostic> d;
  Expansion e;
  std::optional<Scenario> s = ParseScenario(
      "name: l\n"
      "buffers: {A: {shape: [4]}}\n"
      "steps:\n"
      "  - {op: reserve, buffer: A}\n"
      "  - for: i\n"
      "    in: {range: [0, 2]}\n"
      "    steps: [{op: create, alloc: 'p${i}', size: 2MiB}]\n"
      "  - {op: free, buffer: A}\n",
      "dir/s.yaml", options, &d, &e);
  ASSERT_TRUE(s) << FormatDiagnostics(d);
  ASSERT_EQ(s->steps.size(), 4u);
  const Step& reserve = s->steps[0];
  const Step& first = s->steps[1];
  const Step& second = s->steps[2];
  const Step& free = s->steps[3];
  EXPECT_EQ(reserve.buffer().loc.origin, free.buffer().loc.origin);
  EXPECT_EQ(reserve.loc.origin, reserve.buffer().loc.origin);
  EXPECT_EQ(first.alloc().loc.origin, first.size().loc.origin);
  EXPECT_NE(first.alloc().loc.origin, second.alloc().loc.origin);
  EXPECT_NE(first.alloc().loc.origin, reserve.buffer().loc.origin);
  EXPECT_EQ(reserve.buffer().loc.file(), "dir/s.yaml");
  EXPECT_EQ(reserve.buffer().loc.context(), "");
  EXPECT_EQ(second.alloc().loc.file(), "dir/s.yaml");
  EXPECT_EQ(second.alloc().loc.context(), "for i = 1");
  EXPECT_EQ(second.alloc().loc.line, 7);
  EXPECT_EQ(second.size().loc.column, 48);
}

TEST(Expander, LoopMistakes) {
  EXPECT_EQ(Expand("name: l\nvars: {i: 1}\nsteps:\n"
                   "  - {for: i, in: [1], steps: []}\n"
                   "  - {for: j, in: {range: [0]}, steps: []}\n"
                   "  - {for: k, in: 3, steps: [], extra: 1}\n"
                   "  - {for: m, in: {range: [0, 4, 0]}, steps: []}\n"
                   "  - {for: n, steps: []}\n"),
            "s.yaml:4:11: error: loop variable 'i' is already defined here (a variable, "
            "parameter or outer loop); choose another name\n"
            "s.yaml:5:26: error: 'range' must be [start, end] or [start, end, step] (end "
            "excluded), got a list\n"
            "s.yaml:6:32: error: unknown key 'extra' in a for loop; expected 'for', 'in' and "
            "'steps'\n"
            "s.yaml:7:33: error: the step of a range cannot be 0\n"
            "s.yaml:8:5: error: the for loop needs key 'in' (a list or {range: [start, end]})\n");
}

TEST(Expander, ExpansionIsBoundedByCountingFirst) {
  EXPECT_EQ(Expand("name: big\nsteps:\n"
                   "  - {op: synchronize}\n"
                   "  - for: i\n"
                   "    in: {range: [0, 1000000000]}\n"
                   "    steps:\n"
                   "      - for: j\n"
                   "        in: {range: [0, 1000000000]}\n"
                   "        steps: [{op: synchronize}]\n"),
            "s.yaml:4:5: error: the scenario expands to more than 1000000 steps or loop "
            "iterations here (the limit); make the loops smaller (raise it with --limit "
            "expanded_steps=N; docs/limits-and-safety.md)\n");
}

Files PageCycle() {
  Files files;
  files.text["frag/page_cycle.yaml"] =
      "params: {buffer: ~, n: 2, page: 2MiB}\n"
      "include: [inner.yaml]\n"
      "steps:\n"
      "  - for: i\n"
      "    in: {range: [0, '${n}']}\n"
      "    steps:\n"
      "      - {op: create, alloc: '${buffer}${i}', size: '${page}'}\n"
      "      - {use: touch, with: {alloc: '${buffer}${i}'}}\n";
  files.text["frag/inner.yaml"] =
      "fragment: touch\nparams: [alloc]\nsteps: [{op: release, alloc: '${alloc}'}]\n";
  return files;
}

TEST(Expander, FragmentsWithParamsRelativeIncludes) {
  EXPECT_EQ(Expand("name: f\ninclude: [frag/page_cycle.yaml]\nsteps:\n"
                   "  - {use: page_cycle, with: {buffer: A}}\n"
                   "  - {use: page_cycle, with: {buffer: B, n: 1}}\n",
                   PageCycle()),
            "name: f\n"
            "steps:\n"
            "  - {op: create, alloc: A0, size: 2097152}\n"
            "  - {op: release, alloc: A0}\n"
            "  - {op: create, alloc: A1, size: 2097152}\n"
            "  - {op: release, alloc: A1}\n"
            "  - {op: create, alloc: B0, size: 2097152}\n"
            "  - {op: release, alloc: B0}\n");
}

TEST(Expander, FragmentMistakesAreLocated) {
  EXPECT_EQ(Expand("name: f\ninclude: [frag/page_cycle.yaml, nope.yaml]\nsteps:\n"
                   "  - {use: page_cycle, with: {n: 1}}\n"
                   "  - {use: page_cycle, with: {buffer: A, nn: 1}}\n"
                   "  - {use: page_cyle}\n",
                   PageCycle()),
            "s.yaml:2:33: error: cannot read included file 'nope.yaml' (nope.yaml): No such file "
            "or directory\n");
  EXPECT_EQ(Expand("name: f\ninclude: [frag/page_cycle.yaml]\nsteps:\n"
                   "  - {use: page_cycle, with: {n: 1}}\n"
                   "  - {use: page_cycle, with: {buffer: A, nn: 1}}\n"
                   "  - {use: page_cyle}\n",
                   PageCycle()),
            "s.yaml:4:5: error: fragment 'page_cycle' needs parameter 'buffer' (declared at "
            "frag/page_cycle.yaml:1:10)\n"
            "s.yaml:5:41: error: fragment 'page_cycle' has no parameter 'nn', did you mean 'n'?\n"
            "s.yaml:6:11: error: unknown fragment 'page_cyle', did you mean 'page_cycle'?\n");
  Files bad = PageCycle();
  bad.text["frag/inner.yaml"] =
      "fragment: touch\nparams: [alloc]\nsteps: [{op: relase, alloc: '${alloc}'}]\n";
  EXPECT_EQ(Expand("name: f\ninclude: [frag/page_cycle.yaml]\nsteps:\n"
                   "  - {use: page_cycle, with: {buffer: A}}\n",
                   bad),
            "frag/inner.yaml:3:14: error: unknown op 'relase', did you mean 'release'? (in use "
            "'page_cycle' at s.yaml:4:5, for i = 0, use 'touch' at frag/page_cycle.yaml:8:9; 1 "
            "more like it)\n");
}

TEST(Expander, IncludeCyclesAreReported) {
  Files files;
  files.text["a.yaml"] = "include: [b.yaml]\nsteps: []\n";
  files.text["b.yaml"] = "include: [a.yaml]\nsteps: []\n";
  EXPECT_EQ(Expand("name: c\ninclude: [a.yaml]\nsteps: []\n", files),
            "b.yaml:1:11: error: include cycle: a.yaml -> b.yaml -> a.yaml\n");
}

std::string Points(const std::string& text, std::vector<VarOverride> set = {}) {
  std::vector<Diagnostic> d;
  std::optional<std::vector<SweepPoint>> points = ReadSweepPoints(text, "s.yaml", set, &d);
  if (!points) return FormatDiagnostics(d);
  std::string out;
  for (const SweepPoint& p : *points) out += SweepPointText(p) + "\n";
  return out;
}

TEST(Expander, SweepPointsAreTheCartesianProduct) {
  const std::string text =
      "name: s\nvars: {page: 2MiB, pages: 1}\n"
      "sweep: {page: [2MiB, 4 MiB], pages: {range: [1, 7, 3]}}\nsteps: []\n";
  EXPECT_EQ(Points(text),
            "page=2MiB,pages=1\npage=2MiB,pages=4\npage=4_MiB,pages=1\npage=4_MiB,pages=4\n");
  EXPECT_EQ(Points(text, {{"page", "8MiB"}}), "pages=1\npages=4\n");
  EXPECT_EQ(Points(text, {{"page", "8MiB"}, {"pages", "2"}}), "");
  EXPECT_EQ(Points("name: s\nvars: {a: 1}\nsweep: {b: [1], a: []}\nsteps: []\n"),
            "s.yaml:3:9: error: sweep axis 'b' is not a variable; declare it under 'vars:' (its "
            "value there is used by `vmm-run validate` and `expand`)\n"
            "s.yaml:3:20: error: the sweep axis has no values\n");
  EXPECT_EQ(Expand(text), "name: s\nsteps: []\n");
}

TEST(Expander, PlainScenariosNeedNoExpansion) {
  std::vector<Diagnostic> d;
  const std::string text = "name: p\nsteps: [{op: synchronize}]\n";
  YamlValue doc;
  doc.kind = YamlValue::Kind::kMap;
  EXPECT_FALSE(NeedsExpansion(text, doc, {}));
  EXPECT_TRUE(NeedsExpansion("name: '${x}'", doc, {}));
}

}  // namespace
}  // namespace vmm
