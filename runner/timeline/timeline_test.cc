#include "runner/timeline/timeline.h"

#include <gtest/gtest.h>

#include "runner/timeline/timeline_render.h"

namespace vmm::timeline {
namespace {

using report::StepRecord;

constexpr int64_t kMiB = 1 << 20;

StepRecord Step(const std::string& op, report::Targets targets) {
  StepRecord s;
  s.op = op;
  s.name = op;
  s.targets = std::move(targets);
  return s;
}

// A: a 4 MiB reservation with two 2 MiB mappings; V: a view on its second half.
report::Report SampleReport() {
  report::Report r;
  r.scenario_name = "sample";
  r.backend = "host";
  r.buffers = {{"A", "", 0, 4 * kMiB, 4 * kMiB}, {"V", "A", 2 * kMiB, 2 * kMiB, 0}};
  auto range = [](int64_t off, int64_t size) {
    return report::Targets{
        {"buffer", std::string("A")}, {"offset_bytes", off}, {"size_bytes", size}};
  };
  r.steps.push_back(Step("reserve", range(0, 4 * kMiB)));             // 0
  r.steps.push_back(Step("create", {{"alloc", std::string("p0")}}));  // 1
  r.steps.push_back(Step("create", {{"alloc", std::string("p1")}}));  // 2
  report::Targets m0 = range(0, 2 * kMiB);
  m0.emplace_back("alloc", std::string("p0"));
  r.steps.push_back(Step("map", m0));  // 3
  report::Targets m1 = range(2 * kMiB, 2 * kMiB);
  m1.emplace_back("alloc", std::string("p1"));
  r.steps.push_back(Step("map", m1));  // 4
  report::Targets read = range(0, 4 * kMiB);
  read.emplace_back("access", std::string("read"));
  r.steps.push_back(Step("set_access", read));  // 5
  report::Targets rw = range(2 * kMiB, 2 * kMiB);
  rw.emplace_back("access", std::string("read_write"));
  r.steps.push_back(Step("set_access", rw));                               // 6
  r.steps.push_back(Step("fill", {{"buffer", std::string("V")}}));         // 7
  StepRecord check = Step("check_value", {{"buffer", std::string("V")}});  // 8
  check.check = report::CheckRecord{};
  check.check->expected = "equal";
  check.check->actual = "different";
  check.check->verdict = report::Verdict::kFail;
  check.status = report::StepStatus::kOk;
  r.steps.push_back(check);
  StepRecord capture = Step("capture", {{"graph", std::string("g")}});  // 9
  capture.body.push_back(Step("fill", {{"buffer", std::string("A")}}));
  r.steps.push_back(capture);
  r.steps.push_back(
      Step("instantiate", {{"graph", std::string("g")}, {"exec", std::string("e")}}));  // 10
  r.steps.push_back(Step("replay", {{"exec", std::string("e")}}));                      // 11
  r.steps.push_back(Step("release", {{"alloc", std::string("p0")}}));                   // 12
  r.steps.push_back(Step("unmap", range(0, 2 * kMiB)));                                 // 13
  StepRecord failed = Step("fill", {{"buffer", std::string("A")}});                     // 14
  failed.status = report::StepStatus::kFailed;
  r.steps.push_back(failed);
  return r;
}

TEST(TimelineTest, LanesBlocksAndAccessFollowTheSteps) {
  StatusOr<Timeline> t = BuildTimeline(SampleReport());
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->columns.size(), 15u);
  ASSERT_EQ(t->lanes.size(), 1u);  // the view shares A's lane
  EXPECT_EQ(t->lanes[0].buffer, "A");
  EXPECT_EQ(t->lanes[0].reserved, 0);
  ASSERT_EQ(t->blocks.size(), 2u);
  const Block& first = t->blocks[0];
  EXPECT_EQ(first.alloc, "p0");
  EXPECT_EQ(first.start, 3);
  EXPECT_EQ(first.end, 13);       // unmapped at step 13
  EXPECT_EQ(first.released, 12);  // released while still mapped
  ASSERT_EQ(first.access.size(), 2u);
  EXPECT_EQ(first.access[0].access, "none");
  EXPECT_EQ(first.access[1].from, 5);
  EXPECT_EQ(first.access[1].access, "read");
  const Block& second = t->blocks[1];
  EXPECT_EQ(second.end, 15);  // never unmapped: runs to the end
  ASSERT_EQ(second.access.size(), 3u);
  EXPECT_EQ(second.access[2].from, 6);
  EXPECT_EQ(second.access[2].access, "read_write");
}

TEST(TimelineTest, MarksForKernelsChecksAndReplays) {
  StatusOr<Timeline> t = BuildTimeline(SampleReport());
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->marks.size(), 3u);  // the failed fill at 14 touched nothing
  EXPECT_EQ(t->marks[0].kind, MarkKind::kWrite);
  EXPECT_EQ(t->marks[0].column, 7);
  EXPECT_EQ(t->marks[0].offset, static_cast<uint64_t>(2 * kMiB));  // the view's bytes
  EXPECT_EQ(t->marks[1].kind, MarkKind::kCheckFail);
  EXPECT_EQ(t->marks[2].column, 11);  // the replay wrote A through the captured fill
  EXPECT_EQ(t->marks[2].via, "e");
  EXPECT_EQ(t->marks[2].size, static_cast<uint64_t>(4 * kMiB));
}

// Graph v2 nodes: a replay marks what parallel branches and a child graph's nodes touch, and
// nodes that move no data (events, host functions, graph memory) mark nothing.
TEST(TimelineTest, ReplayMarksBranchesAndChildGraphs) {
  report::Report r = SampleReport();
  r.steps.resize(9);                                                      // up to the failed check
  StepRecord child = Step("capture", {{"graph", std::string("child")}});  // 9
  child.body.push_back(Step("memset", {{"buffer", std::string("V")}}));
  r.steps.push_back(child);
  StepRecord capture = Step("capture", {{"graph", std::string("g")}});  // 10
  StepRecord parallel = Step("parallel", {});
  parallel.body.push_back(
      Step("copy", {{"buffer", std::string("A")}, {"other", std::string("V")}}));
  parallel.body.push_back(Step("record_event", {}));
  capture.body.push_back(parallel);
  capture.body.push_back(Step("host_func", {}));
  capture.body.push_back(Step("child_graph", {{"graph", std::string("child")}}));
  r.steps.push_back(capture);
  r.steps.push_back(
      Step("instantiate", {{"graph", std::string("g")}, {"exec", std::string("e")}}));  // 11
  r.steps.push_back(Step("replay", {{"exec", std::string("e")}}));                      // 12
  StatusOr<Timeline> t = BuildTimeline(r);
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->marks.size(), 5u);  // fill, check, then the replay's copy (A, V) and memset (V)
  EXPECT_EQ(t->marks[2].column, 12);
  EXPECT_EQ(t->marks[2].kind, MarkKind::kWrite);
  EXPECT_EQ(t->marks[2].what, "A");
  EXPECT_EQ(t->marks[3].kind, MarkKind::kRead);
  EXPECT_EQ(t->marks[3].what, "V");
  EXPECT_EQ(t->marks[4].kind, MarkKind::kWrite);
  EXPECT_EQ(t->marks[4].what, "V");
  EXPECT_EQ(t->marks[4].via, "e");
}

TEST(TimelineTest, RefusesAReportWithoutTheBufferTable) {
  report::Report r = SampleReport();
  r.buffers.clear();
  StatusOr<Timeline> t = BuildTimeline(r);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("older than report format 1.1"), std::string::npos);
}

TEST(TimelineRenderTest, OneElementPerLaneBlockSpanAndMark) {
  StatusOr<Timeline> t = BuildTimeline(SampleReport());
  ASSERT_TRUE(t.ok());
  const std::string svg = RenderSvg(*t);
  auto count = [&](const std::string& needle) {
    size_t n = 0;
    for (size_t at = svg.find(needle); at != std::string::npos; at = svg.find(needle, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("class=\"lane\""), 1u);
  EXPECT_EQ(count("class=\"mapping\""), 2u);
  EXPECT_EQ(count("class=\"block\""), 5u);  // p0: none, read; p1: none, read, read_write
  EXPECT_EQ(count("class=\"mark\""), 3u);
  EXPECT_EQ(count("class=\"column\""), 15u);
}

TEST(TimelineRenderTest, NamesFromTheFileAreEscaped) {
  report::Report r = SampleReport();
  r.scenario_name = "<script>alert(1)</script>";
  r.steps[1].targets = {{"alloc", std::string("p\"0&")}};
  StatusOr<Timeline> t = BuildTimeline(r);
  ASSERT_TRUE(t.ok());
  const std::string html = RenderHtml(*t);
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
}

}  // namespace
}  // namespace vmm::timeline
