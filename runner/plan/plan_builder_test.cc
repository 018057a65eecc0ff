#include <gtest/gtest.h>

#include "runner/plan/plan.h"
#include "runner/scenario/parse.h"

namespace vmm {
namespace {

constexpr char kHeader[] =
    "name: t\n"
    "buffers:\n"
    "  A: {shape: [256, 256]}\n"
    "  B: {shape: [256, 256]}\n"
    "  C: {shape: [256, 256]}\n"
    "steps:\n";

// Parses kHeader + `steps` and plans it; returns the plan diagnostics (parse must succeed).
std::string PlanErrors(const std::string& steps, Plan* plan = nullptr) {
  std::vector<Diagnostic> d;
  std::optional<Scenario> s = ParseScenario(kHeader + steps, "t.yaml", &d);
  EXPECT_TRUE(s.has_value()) << FormatDiagnostics(d);
  if (!s) return "parse failed";
  Plan p = BuildPlan(*s, &d);
  if (plan != nullptr) *plan = std::move(p);
  return FormatDiagnostics(d);
}

TEST(BuildPlanTest, ScenarioIsReady) {
  EXPECT_EQ(PlanErrors("  - {op: reserve, buffer: A}\n"
                       "  - {op: create, alloc: p, size: 2MiB}\n"
                       "  - {op: map, buffer: A, alloc: p}\n"
                       "  - {op: set_access, buffer: A}\n"
                       "  - {op: fill, buffer: A, seed: 1}\n"
                       "  - {op: unmap, buffer: A}\n"
                       "  - {op: release, alloc: p}\n"
                       "  - {op: free, buffer: A}\n"),
            "");
}

// Validation drops each planned step (PlannedSteps::kDrop) and still finds every problem, at the
// same positions, as a plan that keeps them; an isolate block's own plan is kept either way.
TEST(BuildPlanTest, DroppingThePlannedStepsFindsTheSameProblems) {
  const std::string steps =
      "  - {op: reserve, buffer: A}\n"
      "  - {op: create, alloc: p, size: 2MiB}\n"
      "  - {op: fill, buffer: A, seed: 1}\n"
      "  - isolate: {expect: ok}\n"
      "    steps: [{op: reserve, buffer: B}, {op: free, buffer: B}]\n"
      "  - {op: release, alloc: q}\n";
  std::vector<Diagnostic> kept, dropped;
  std::optional<Scenario> s = ParseScenario(kHeader + steps, "t.yaml", &kept);
  ASSERT_TRUE(s.has_value()) << FormatDiagnostics(kept);
  const Plan with = BuildPlan(*s, &kept, PlannedSteps::kKeep);
  const Plan without = BuildPlan(*s, &dropped, PlannedSteps::kDrop);
  EXPECT_NE(FormatDiagnostics(kept), "");
  EXPECT_EQ(FormatDiagnostics(dropped), FormatDiagnostics(kept));
  EXPECT_EQ(with.steps.size(), 5u);
  EXPECT_TRUE(without.steps.empty());
}

TEST(BuildPlanTest, NewMappingHasNoAccess) {
  EXPECT_EQ(PlanErrors("  - {op: reserve, buffer: A}\n"
                       "  - {op: create, alloc: p, size: 2MiB}\n"
                       "  - {op: map, buffer: A, alloc: p}\n"
                       "  - {op: fill, buffer: A, seed: 1}\n"),
            "t.yaml:10:24: error: fill writes buffer 'A', which has no access yet (a new mapping "
            "has none until set_access)\n");
}

TEST(BuildPlanTest, FillsEveryPlanStepField) {
  Plan plan;
  ASSERT_EQ(
      PlanErrors("  - {op: reserve, buffer: A, name: rA}\n"  // 0
                 "  - {op: reserve, buffer: B, size: 4MiB, alignment: 4MiB}\n"
                 "  - {op: reserve, buffer: C}\n"
                 "  - {op: create, alloc: p, size: 2MiB}\n"  // 3
                 "  - {op: create, alloc: q, size: 2MiB}\n"
                 "  - {op: create, alloc: r, size: 2MiB}\n"
                 "  - {op: map, name: mA, buffer: A, alloc: p, size: 2MiB}\n"  // 6
                 "  - {op: map, buffer: B, alloc: p, offset: 2MiB}\n"  // one handle at two VAs
                 "  - {op: map, buffer: B, alloc: q}\n"
                 "  - {op: map, buffer: C, alloc: r}\n"
                 "  - {op: set_access, buffer: A}\n"  // 10
                 "  - {op: set_access, buffer: B, access: read}\n"
                 "  - {op: set_access, buffer: C}\n"
                 "  - {op: fill, buffer: A, seed: 9, repeat: 4}\n"  // 13
                 "  - {op: matmul, a: A, b: B, c: C}\n"
                 "  - op: capture\n"  // 15
                 "    graph: g\n"
                 "    steps:\n"
                 "      - {op: fill, buffer: C, seed: 3}\n"
                 "      - {op: matmul, a: A, b: B, c: C}\n"
                 "  - {op: instantiate, graph: g, exec: e}\n"  // 16
                 "  - {op: replay, exec: e}\n"
                 "  - {op: update, exec: e, graph: g, expect: error_topology_changed}\n"
                 "  - {op: snapshot, buffer: C, snapshot: s}\n"  // 19
                 "  - {op: check_equal, buffer: C, snapshot: s}\n"
                 "  - {op: check_equal, buffer: A, other: C, expect: different, fatal: true}\n"
                 "  - {op: check_address, of: [rA, mA], expect: different}\n"  // 22
                 "  - {op: check_kernel_params, graphs: [g, g]}\n"
                 "  - {op: check_matmul, a: A, b: B, c: C}\n"
                 "  - {op: unmap, buffer: B, offset: 2MiB}\n"  // 25
                 "  - {op: release, alloc: q}\n"
                 "  - {op: create, alloc: q, size: 6MiB}\n",
                 &plan),
      "");
  EXPECT_EQ(plan.scenario_name, "t");
  EXPECT_EQ(plan.granularity, kDefaultGranularity);
  ASSERT_EQ(plan.buffers.size(), 3u);
  EXPECT_EQ(plan.buffers[0].elements, 65536u);
  EXPECT_EQ(plan.buffers[0].bytes, 262144u);
  EXPECT_EQ(plan.buffers[0].reservation_size, 2u << 20);
  EXPECT_EQ(plan.buffers[1].reservation_size, 4u << 20);
  ASSERT_EQ(plan.steps.size(), 28u);
  const std::vector<PlanStep>& s = plan.steps;
  EXPECT_EQ(s[0].label, "rA");
  EXPECT_EQ(s[1].label, "reserve B");
  EXPECT_EQ(s[1].alignment, 4u << 20);
  EXPECT_EQ(s[2].size, 2u << 20);  // default: bytes rounded up to the granularity
  EXPECT_EQ(s[7].offset, 2u << 20);
  EXPECT_EQ(s[7].alloc_offset, 0u);
  EXPECT_EQ(s[7].size, 2u << 20);  // default: the whole allocation
  EXPECT_EQ(s[7].size, 2u << 20);  // default: alloc size - alloc_offset
  EXPECT_EQ(s[8].size, 2u << 20);
  EXPECT_EQ(s[8].offset, 0u);
  EXPECT_EQ(s[10].size, 2u << 20);  // default: the whole reservation
  EXPECT_EQ(s[11].access, Access::kRead);
  EXPECT_EQ(s[12].access, Access::kReadWrite);
  EXPECT_EQ(s[13].seed, 9u);
  EXPECT_EQ(s[13].repeat, 4u);
  EXPECT_EQ(s[14].m, 256u);
  EXPECT_EQ(s[14].n, 256u);
  EXPECT_EQ(s[14].k, 256u);
  EXPECT_EQ(s[14].a, 0);
  EXPECT_EQ(s[14].c, 2);
  ASSERT_EQ(s[15].body.size(), 2u);
  EXPECT_EQ(s[15].body[1].index, 1);
  EXPECT_EQ(s[15].body[1].label, "matmul C");
  EXPECT_EQ(s[15].body[1].m, 256u);
  EXPECT_EQ(s[15].graph, 0);
  EXPECT_EQ(s[16].exec, 0);
  EXPECT_EQ(s[18].expect, Expectation::kUpdateCode);
  EXPECT_EQ(s[18].expect_update, UpdateCode::kErrorTopologyChanged);
  EXPECT_EQ(s[19].snapshot, 0);
  EXPECT_EQ(s[20].expect, Expectation::kEqual);
  EXPECT_EQ(s[20].repeat, 1u);
  EXPECT_EQ(s[21].other, 2);
  EXPECT_EQ(s[21].expect, Expectation::kDifferent);
  EXPECT_TRUE(s[21].fatal);
  EXPECT_EQ(s[22].of_steps, (std::vector<int>{0, 6}));
  EXPECT_EQ(s[22].expect, Expectation::kDifferent);
  EXPECT_EQ(s[23].graphs, (std::vector<int>{0, 0}));
  EXPECT_EQ(s[23].expect, Expectation::kIdentical);
  EXPECT_EQ(s[24].expect, Expectation::kPass);
  EXPECT_EQ(s[25].size, 2u << 20);
  // Each create is a new slot with its own size; the name is reused after release.
  EXPECT_EQ(plan.allocs, (std::vector<std::string>{"p", "q", "r", "q"}));
  EXPECT_EQ(plan.alloc_sizes, (std::vector<uint64_t>{2u << 20, 2u << 20, 2u << 20, 6u << 20}));
  EXPECT_EQ(s[27].alloc, 3);
  EXPECT_EQ(plan.graphs, std::vector<std::string>{"g"});
  EXPECT_EQ(plan.execs, std::vector<std::string>{"e"});
  EXPECT_EQ(plan.snapshots, std::vector<std::string>{"s"});
}

TEST(BuildPlanTest, ReleaseWhileMappedIsLegal) {
  EXPECT_EQ(PlanErrors("  - {op: reserve, buffer: A}\n"
                       "  - {op: create, alloc: p, size: 2MiB}\n"
                       "  - {op: map, buffer: A, alloc: p}\n"
                       "  - {op: release, alloc: p}\n"
                       "  - {op: set_access, buffer: A}\n"
                       "  - {op: fill, buffer: A, seed: 1}\n"
                       "  - {op: unmap, buffer: A}\n"),
            "");
}

TEST(BuildPlanTest, DestroyingAGraphKeepsItsExecAndUpdateSwitchesBuffers) {
  // e1 was made from a graph over A; after update from g2 (over B) replays need B, not A.
  EXPECT_EQ(PlanErrors("  - {op: reserve, buffer: A}\n"
                       "  - {op: reserve, buffer: B}\n"
                       "  - {op: create, alloc: pA, size: 2MiB}\n"
                       "  - {op: create, alloc: pB, size: 2MiB}\n"
                       "  - {op: map, buffer: A, alloc: pA}\n"
                       "  - {op: map, buffer: B, alloc: pB}\n"
                       "  - {op: set_access, buffer: A}\n"
                       "  - {op: set_access, buffer: B}\n"
                       "  - {op: capture, graph: g1, steps: [{op: fill, buffer: A, seed: 1}]}\n"
                       "  - {op: instantiate, graph: g1, exec: e1}\n"
                       "  - {op: destroy_graph, graph: g1}\n"
                       "  - {op: replay, exec: e1}\n"
                       "  - {op: capture, graph: g2, steps: [{op: fill, buffer: B, seed: 1}]}\n"
                       "  - {op: update, exec: e1, graph: g2, expect: success}\n"
                       "  - {op: unmap, buffer: A}\n"
                       "  - {op: replay, exec: e1}\n"
                       "  - {op: unmap, buffer: B}\n"
                       "  - {op: replay, name: too late, exec: e1}\n"),
            "t.yaml:24:40: error: replay of 'e1' would touch buffer 'B', which is not mapped at "
            "this step\n");
}

TEST(BuildPlanTest, CaptureChecksBuffersAtReplayNotAtCapture) {
  // Reserved, so the nodes hold their addresses; mapped and accessible only by the replay.
  EXPECT_EQ(PlanErrors("  - {op: reserve, buffer: A}\n"
                       "  - {op: reserve, buffer: B}\n"
                       "  - {op: reserve, buffer: C}\n"
                       "  - {op: capture, graph: g, steps: [{op: matmul, a: A, b: B, c: C}]}\n"
                       "  - {op: instantiate, graph: g, exec: e}\n"),
            "");
}

TEST(BuildPlanTest, ACapturedNodeNeedsTheAddressesOfReservedBuffers) {
  EXPECT_EQ(PlanErrors("  - {op: reserve, buffer: A}\n"
                       "  - {op: capture, graph: g, steps: [{op: fill, buffer: B, seed: 1}]}\n"
                       "  - {op: capture, graph: h, steps: [{op: fill, buffer: A, seed: 1}]}\n"
                       "  - {op: free, buffer: A}\n"
                       "  - {op: reserve, buffer: A}\n"
                       "  - {op: capture, graph: k, steps: [{op: child_graph, graph: h}]}\n"),
            "t.yaml:8:37: error: 'fill B' records the address of 'B', but 'B' is not reserved at "
            "this step: a graph node keeps the address a buffer has when it is captured; reserve "
            "'B' first\n"
            "t.yaml:12:37: error: 'child_graph h' records the address of 'A', but 'A' was freed "
            "since graph 'h' was captured: a graph node keeps the address a buffer has when it is "
            "captured; capture that graph again\n");
}

TEST(BuildPlanTest, ProgrammaticScenarioChecksWhatTheSchemaWouldHave) {
  Scenario s;
  s.name = "p";
  s.granularity.value = 0;
  BufferDecl a;
  a.name = "A";
  a.loc = SourceLoc{"p.yaml", 2, 3};
  a.shape = {0, 4};
  s.buffers.push_back(a);
  Step capture;
  capture.op = Op::kCapture;
  capture.mutable_graph().value = "g";
  capture.loc = {"p.yaml", 3, 5};
  Step inner;
  inner.op = Op::kReserve;
  inner.mutable_buffer().value = "A";
  inner.loc = {"p.yaml", 4, 7};
  capture.steps.push_back(inner);
  Step equal;
  equal.op = Op::kCheckEqual;
  equal.mutable_buffer().value = "A";
  equal.loc = {"p.yaml", 5, 5};
  Step address;
  address.op = Op::kCheckAddress;
  address.loc = {"p.yaml", 6, 5};
  s.steps = {capture, equal, address};
  std::vector<Diagnostic> d;
  Plan plan = BuildPlan(s, &d);
  EXPECT_EQ(plan.granularity, kDefaultGranularity);  // 0 means "not set"
  EXPECT_EQ(
      FormatDiagnostics(d),
      "p.yaml:2:3: error: buffer 'A' needs a shape of positive dimensions, got [0, 4]\n"
      "p.yaml:4:7: error: 'reserve' cannot be recorded in a capture; only fill, matmul, add, "
      "scale, axpy, kernel_copy, memset, "
      "host_func, record_event, wait_event, parallel, mem_alloc, mem_free, child_graph, if, while "
      "and copy "
      "can\n"
      "p.yaml:5:5: error: check_equal reads buffer 'A', which is not reserved at this step\n"
      "p.yaml:5:5: error: check_equal needs exactly one of 'snapshot' or 'other'\n"
      "p.yaml:6:5: error: check_address needs at least 2 steps in 'of', got 0\n");
}

TEST(BuildPlanTest, UpdateExpectationsCoverEveryUpdateCode) {
  for (int c = 0; c <= static_cast<int>(UpdateCode::kErrorAttributesChanged); ++c) {
    const std::string name = UpdateCodeName(static_cast<UpdateCode>(c));
    Plan plan;
    EXPECT_EQ(PlanErrors("  - {op: reserve, buffer: A}\n"
                         "  - {op: capture, graph: g, steps: [{op: fill, buffer: A, seed: 1}]}\n"
                         "  - {op: instantiate, graph: g, exec: e}\n"
                         "  - {op: update, exec: e, graph: g, expect: " +
                             name + "}\n",
                         &plan),
              "")
        << name;
    EXPECT_EQ(plan.steps[3].expect_update, static_cast<UpdateCode>(c));
  }
}

// Parses a two-device scenario (requires: devices 2, buffers A and B of 1 MiB each) with
// `steps` and plans it.
std::string PlanTwoDevices(const std::string& steps, Plan* plan) {
  std::vector<Diagnostic> d;
  std::optional<Scenario> s = ParseScenario(
      "name: t\nrequires: {devices: 2}\nbuffers:\n  A: {shape: [262144]}\n  B: {shape: "
      "[262144]}\nsteps:\n" +
          steps,
      "t.yaml", &d);
  EXPECT_TRUE(s.has_value()) << FormatDiagnostics(d);
  if (!s) return "parse failed";
  *plan = BuildPlan(*s, &d);
  return FormatDiagnostics(d);
}

TEST(BuildPlanTest, DevicesAccessListsAndPeers) {
  Plan plan;
  ASSERT_EQ(PlanTwoDevices("  - {op: reserve, buffer: A}\n"
                           "  - {op: create, alloc: p, size: 2MiB, device: 1}\n"  // 1
                           "  - {op: map, buffer: A, alloc: p}\n"
                           "  - {op: set_access, buffer: A, access: {0: read, 1: read_write}}\n"
                           "  - {op: reserve, buffer: B}\n"
                           "  - {op: create, alloc: q, size: 2MiB}\n"  // 5
                           "  - {op: map, buffer: B, alloc: q}\n"
                           "  - {op: set_access, buffer: B, access: {0: read_write, 1: none}}\n"
                           "  - {op: copy, from: A, to: B}\n"  // 8: device 0 copies 1's memory
                           "  - {op: fill, buffer: A, seed: 1, device: 1}\n"
                           "  - {op: set_access, buffer: B}\n",  // 10: the one-word form
                           &plan),
            "");
  EXPECT_EQ(plan.devices, 2);
  EXPECT_EQ(plan.used_devices, (std::vector<int>{0, 1}));
  EXPECT_EQ(plan.alloc_devices, (std::vector<int>{1, 0}));
  EXPECT_EQ(plan.steps[1].device, 1);
  EXPECT_EQ(plan.steps[3].device_access,
            PackAccess(PackAccess(0, 0, Access::kRead), 1, Access::kReadWrite));
  EXPECT_EQ(plan.steps[10].device_access, PackAccess(0, 0, Access::kReadWrite));
  EXPECT_TRUE(plan.steps[3].access_per_device);  // the report spells the list
  EXPECT_FALSE(plan.steps[10].access_per_device);
  // Device 0 reads device 1's memory (A); device 1 was given none on B: no pair for it.
  EXPECT_EQ(plan.peer_access, (std::vector<std::pair<int, int>>{{0, 1}}));
  EXPECT_EQ(plan.steps[8].memory_devices, (uint64_t{1} << 32) | 2u);  // from device 1, to device 0
  EXPECT_EQ(plan.steps[9].device, 1);
  std::vector<std::pair<int, Access>> listed;
  ForEachPackedAccess(plan.steps[3].device_access,
                      [&](int d, Access a) { listed.emplace_back(d, a); });
  EXPECT_EQ(listed,
            (std::vector<std::pair<int, Access>>{{0, Access::kRead}, {1, Access::kReadWrite}}));
}

TEST(BuildPlanTest, GraphsBelongToTheDeviceTheirKernelsWereCapturedOn) {
  Plan plan;
  ASSERT_EQ(PlanTwoDevices("  - {op: reserve, buffer: A}\n"
                           "  - {op: create, alloc: p, size: 2MiB}\n"
                           "  - {op: map, buffer: A, alloc: p}\n"
                           "  - {op: set_access, buffer: A, access: {1: read_write}}\n"
                           "  - {op: capture, graph: g, steps: [{op: fill, buffer: A, seed: 1, "
                           "device: 1}]}\n"  // 4
                           "  - {op: instantiate, graph: g, exec: e}\n"
                           "  - {op: replay, exec: e}\n",
                           &plan),
            "");
  EXPECT_EQ(plan.steps[4].device, 1);
  EXPECT_EQ(plan.steps[5].device, 1);
  EXPECT_EQ(plan.steps[6].device, 1);
}

TEST(BuildPlanTest, CreatePropertiesAndQueriesResolveIntoThePlan) {
  Plan plan;
  ASSERT_EQ(
      PlanErrors("  - {op: reserve, buffer: A, size: 4MiB}\n"
                 "  - {op: create, alloc: p, size: 2MiB}\n"
                 "  - {op: create, alloc: h, size: 2MiB, location: host_numa, numa_node: 3,"
                 " compression: true, granularity: recommended}\n"
                 "  - {op: map, buffer: A, alloc: p}\n"
                 "  - {op: map, buffer: A, alloc: h, offset: 2MiB}\n"
                 "  - {op: mark, name: m}\n"
                 "  - {op: retain, alloc: r, buffer: A, offset: 3MiB, expect: {same_as: h}}\n"
                 "  - {op: check_memory, since: m, used: {about: 4MiB, tolerance: 1MiB}}\n"
                 "  - {op: reserve, buffer: B, address: {after: A}, expect_address: moved}\n"
                 "  - {op: check_granularity, location: host, expect: {minimum_at_most: 2MiB}}\n",
                 &plan),
      "");
  ASSERT_EQ(plan.alloc_specs.size(), 3u);
  EXPECT_TRUE(plan.alloc_specs[0].props.IsPlain());
  EXPECT_FALSE(plan.alloc_specs[0].read_back) << "a plain create stays one driver call";
  const AllocSpec& h = plan.alloc_specs[1];
  EXPECT_EQ(h.props.location, MemLocation::kHostNuma);
  EXPECT_EQ(h.props.location_id, 3);
  EXPECT_TRUE(h.props.compression);
  EXPECT_EQ(h.props.size, 2u << 20);
  EXPECT_EQ(h.granularity, GranularityKind::kRecommended);
  EXPECT_TRUE(h.read_back);
  // The retained handle is the allocation mapped at A + 3 MiB: h, 2 MiB.
  EXPECT_EQ(plan.alloc_sizes[2], 2u << 20);
  const PlanStep& retain = plan.steps[6];
  EXPECT_EQ(retain.alloc, 2);
  EXPECT_EQ(retain.query->same_as, 1);
  EXPECT_EQ(plan.marks, std::vector<std::string>{"m"});
  const Bound& used = plan.steps[7].query->bounds.at(0);
  EXPECT_EQ(used.Text(), "used about 4 MiB ± 1 MiB");
  EXPECT_TRUE(used.Holds(5 << 20));
  EXPECT_FALSE(used.Holds((5 << 20) + 1));
  const PlanStep& reserve = plan.steps[8];
  EXPECT_EQ(reserve.other, 0) << "the hint is relative to A";
  EXPECT_EQ(reserve.offset, 4u << 20) << "after A's 4 MiB";
  EXPECT_EQ(reserve.expect, Expectation::kMoved);
  EXPECT_EQ(plan.steps[9].query->props.location, MemLocation::kHost);
  EXPECT_EQ(plan.steps[9].query->bounds.at(0).Text(), "minimum at most 2 MiB");
}

TEST(BuildPlanTest, ARetainedHandleIsReleasedAndMappedLikeAnyOther) {
  EXPECT_EQ(PlanErrors("  - {op: reserve, buffer: A}\n"
                       "  - {op: reserve, buffer: B}\n"
                       "  - {op: create, alloc: p, size: 2MiB}\n"
                       "  - {op: map, buffer: A, alloc: p}\n"
                       "  - {op: retain, alloc: r, buffer: A}\n"
                       "  - {op: release, alloc: p}\n"
                       "  - {op: map, buffer: B, alloc: r}\n"
                       "  - {op: release, alloc: r}\n"
                       "  - {op: release, alloc: r}\n"),
            "t.yaml:15:26: error: alloc 'r' is not live: it was released at line 14\n");
}

}  // namespace
}  // namespace vmm

namespace vmm {
namespace {

// An isolate block is a plan of its own: the file's declarations, its own slots, nothing live
// from outside, its expectation decoded.
TEST(BuildPlanTest, AnIsolateBlockIsAPlanOfItsOwn) {
  Plan plan;
  EXPECT_EQ(PlanErrors("  - {op: reserve, buffer: A}\n"
                       "  - {op: create, alloc: p, size: 2MiB}\n"
                       "  - isolate: {expect: {timeout: 3s}}\n"
                       "    name: blk\n"
                       "    steps:\n"
                       "      - {op: reserve, name: inner reserve, buffer: A}\n"
                       "      - {op: create, alloc: p, size: 2MiB}\n"
                       "      - {op: map, name: inner map, buffer: A, alloc: p}\n"
                       "      - {op: check_address, of: [inner reserve, inner map]}\n"
                       "      - {op: busy, buffer: A, duration: 10s, async: true}\n"
                       "      - {op: unmap, buffer: A, wait: false}\n"
                       "  - {op: release, alloc: p}\n",
                       &plan),
            "");
  ASSERT_EQ(plan.steps.size(), 4u);
  const PlanStep& block = plan.steps[2];
  EXPECT_EQ(block.op, Op::kIsolate);
  EXPECT_EQ(block.label, "blk");
  ASSERT_NE(block.block, nullptr);
  EXPECT_EQ(block.block->expect.kind, BlockExpect::kTimeout);
  EXPECT_EQ(block.block->expect.limit_ns, 3000000000u);
  const Plan& inner = block.block->plan;
  ASSERT_EQ(inner.steps.size(), 6u);
  EXPECT_EQ(inner.buffers.size(), plan.buffers.size());          // the declarations, shared
  EXPECT_EQ(inner.allocs, std::vector<std::string>{"p"});        // its own alloc 'p', its own slot
  EXPECT_EQ(inner.steps[3].of_steps, (std::vector<int>{0, 2}));  // its own step indices
  EXPECT_EQ(inner.steps[4].duration_ns, 10000000000u);
  EXPECT_EQ(inner.steps[4].pattern, 0x3F800000u);
  EXPECT_FALSE(inner.steps[5].wait);
  EXPECT_TRUE(plan.steps[3].wait);
  // The default limit of other expectations, and the error word.
  EXPECT_EQ(PlanErrors("  - isolate: {expect: CUDA_ERROR_ILLEGAL_ADDRESS}\n"
                       "    steps: [{op: synchronize}]\n",
                       &plan),
            "");
  EXPECT_EQ(plan.steps[0].block->expect.kind, BlockExpect::kError);
  EXPECT_EQ(plan.steps[0].block->expect.error, "CUDA_ERROR_ILLEGAL_ADDRESS");
  EXPECT_EQ(plan.steps[0].block->expect.limit_ns, 300000000000u);
  EXPECT_EQ(plan.steps[0].label, "isolate block");
}

TEST(BuildPlanTest, StepNamesAreUniqueAcrossBlocks) {
  EXPECT_EQ(PlanErrors("  - {op: synchronize, name: s}\n"
                       "  - isolate: {}\n"
                       "    steps: [{op: synchronize, name: s}, {op: synchronize, name: t}]\n"
                       "  - isolate: {}\n"
                       "    name: t\n"
                       "    steps: [{op: synchronize}]\n"),
            "t.yaml:9:37: error: duplicate step name 's' (first at line 7)\n"
            "t.yaml:11:11: error: duplicate step name 't' (first at line 9)\n");
}

// Step::keys: a scalar key one op alone reads lands there as written; its planner reads it
// through PlanBuilder::Key, and a key no planner reads is an internal error, not ignored.
TEST(BuildPlanTest, KeysOfOneOpAreReadFromStepKeys) {
  std::vector<Diagnostic> d;
  std::optional<Scenario> s =
      ParseScenario(std::string(kHeader) +
                        "  - {op: reserve, buffer: A, address: 0x7f0000000000, "
                        "expect_address: moved}\n",
                    "t.yaml", &d);
  ASSERT_TRUE(s.has_value()) << FormatDiagnostics(d);
  ASSERT_EQ(s->steps[0].keys().entries.size(), 1u);
  EXPECT_EQ(s->steps[0].keys().entries[0].key, "expect_address");
  EXPECT_EQ(s->steps[0].keys().entries[0].value.value, "moved");
  EXPECT_EQ(s->steps[0].keys().entries[0].value.loc.column, 71);  // the value
  Plan plan = BuildPlan(*s, &d);
  EXPECT_EQ(FormatDiagnostics(d), "");
  EXPECT_EQ(plan.steps[0].expect, Expectation::kMoved);

  s->steps[0].mutable_keys().entries.push_back({"novel", {"1", s->steps[0].loc, true}});
  BuildPlan(*s, &d);
  EXPECT_EQ(FormatDiagnostics(d),
            "t.yaml:7:5: error: internal error: 'novel' of reserve is accepted by the schema but "
            "read by no planner\n");
}

}  // namespace
}  // namespace vmm
