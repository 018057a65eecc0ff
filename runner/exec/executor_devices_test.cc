// The executor on a scenario with two devices: which engine calls it makes (device selection only
// where a step's device changes, one SetAccess per step whatever its device list, memory placed by
// ordinal) and what it records.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "runner/engine/fake_engine.h"
#include "runner/engine/host/host_engine.h"
#include "runner/exec/executor.h"
#include "runner/plan/planned_test_util.h"

namespace vmm {
namespace {

constexpr char kTwoDevices[] = R"(
name: two
requires: {devices: 2}
buffers:
  A: {shape: [1024]}
steps:
  - {op: reserve, buffer: A}
  - {op: create, alloc: p, size: 2MiB, device: 1}
  - {op: map, buffer: A, alloc: p}
  - {op: set_access, buffer: A, access: {0: read, 1: read_write}}
  - {op: fill, buffer: A, seed: 1, device: 1}
  - {op: fill, buffer: A, seed: 2, device: 1}
  - {op: check_access, buffer: A, device: 1, expect: read_write}
  - {op: snapshot, buffer: A, snapshot: s}
  - {op: unmap, buffer: A}
  - {op: release, alloc: p}
  - {op: free, buffer: A}
)";

std::vector<std::string> Without(std::vector<std::string> calls, const std::string& prefix) {
  std::erase_if(calls, [&](const std::string& c) { return c.rfind(prefix, 0) == 0; });
  return calls;
}

TEST(ExecutorDevices, SelectsADeviceOnlyWhereTheStepsDeviceChanges) {
  Planned p(kTwoDevices);
  ASSERT_EQ(p.errors, "");
  FakeEngine engine;
  engine.SetDeviceCount(2);
  RunOutcome out = RunPlan(p.plan, engine, nullptr);
  EXPECT_EQ(out.summary.exit_code, 0) << (out.steps.empty() ? "" : out.steps.back().error);
  const std::vector<std::string> expected = {
      "Reserve(size=0x200000, align=0x200000) -> 0x100000000",
      "Create(size=0x200000, device=1) -> 0x1",
      "Map(va=0x100000000, size=0x200000, offset=0x0, handle=0x1)",
      "SetAccess(va=0x100000000, size=0x200000, access={-1: read, 1: read_write})",
      "SelectDevice(1)",
      "vmm_fill_f32(dst=0x100000000, count=1024, seed=1)",
      "vmm_fill_f32(dst=0x100000000, count=1024, seed=2)",
      "GetAccess(va=0x100000000, device=1) -> read_write",
      "SelectDevice(-1)",
      "AllocSnapshot(bytes=0x1000, place=device) -> 0x700000000000",
      "Copy(dst=0x700000000000 device, src=0x100000000 device, bytes=0x1000)",
      "Unmap(va=0x100000000, size=0x200000)",
      "Release(handle=0x1)",
      "Free(va=0x100000000, size=0x200000)",
  };
  EXPECT_EQ(Without(Without(engine.calls(), "CopyToHost"), "Checksum"), expected);
  ASSERT_EQ(out.steps.size(), 11u);
  // A create on device 1 of a two-device scenario records its device.
  ASSERT_EQ(out.steps[1].details.size(), 2u);
  EXPECT_EQ(out.steps[1].details[1].first, "device");
  EXPECT_EQ(std::get<int64_t>(out.steps[1].details[1].second), 1);
  // The record spells the access as the scenario's per-device list.
  EXPECT_EQ(std::get<std::string>(out.steps[3].details[0].second), "0: read, 1: read_write");
  EXPECT_TRUE(out.steps[6].check.has_value());
  EXPECT_EQ(out.steps[6].check->actual, "read_write");
}

// check_properties `device`: which scenario device an allocation's memory is on, by the scenario's
// numbering whichever ordinal the run started on (#29 item 4); host memory is on none.
TEST(ExecutorDevices, CheckPropertiesNamesTheScenarioDeviceOfTheMemory) {
  Planned p(R"(
name: where
requires: {devices: 2}
steps:
  - {op: create, alloc: p, size: 2MiB, device: 1}
  - {op: create, alloc: h, size: 2MiB, location: host}
  - {op: check_properties, name: on 1, alloc: p, expect: {device: 1}}
  - {op: check_properties, name: not on 0, alloc: p, expect: {device: 0}}
  - {op: check_properties, name: host memory, alloc: h, expect: {device: 0}}
)");
  ASSERT_EQ(p.errors, "");
  for (int own : {0, 1}) {
    SCOPED_TRACE("engine ordinal " + std::to_string(own));
    HostEngineOptions options;
    options.granularity = 2u << 20;
    options.device_count = 2;
    options.device = own;
    StatusOr<std::unique_ptr<Engine>> engine = CreateHostEngine(options);
    ASSERT_TRUE(engine.ok()) << engine.status().message();
    RunOutcome out = RunPlan(p.plan, **engine, nullptr);
    ASSERT_EQ(out.steps.size(), 5u);
    ASSERT_TRUE(out.steps[2].check && out.steps[3].check && out.steps[4].check);
    EXPECT_EQ(out.steps[2].check->verdict, report::Verdict::kPass) << out.steps[2].check->actual;
    EXPECT_EQ(out.steps[3].check->expected, "device 0");
    EXPECT_EQ(out.steps[3].check->actual, "device 1");
    EXPECT_EQ(out.steps[3].check->verdict, report::Verdict::kFail);
    EXPECT_EQ(out.steps[4].check->actual, "device none");
  }
  Planned beyond(R"(
name: beyond
steps:
  - {op: create, alloc: p, size: 2MiB}
  - {op: check_properties, alloc: p, expect: {device: 1}}
)");
  EXPECT_EQ(beyond.errors,
            "test.yaml:5:55: error: device 1 is not one of the scenario's 1 devices; raise "
            "'requires: {devices: N}' or check another device\n");
}

TEST(ExecutorDevices, ScenarioDeviceZeroFollowsTheEnginesOrdinal) {
  // The run's device (--device) is the scenario's device 0: an engine whose own ordinal is 1 places
  // device 1's memory on ordinal 0 (wrapping around two devices).
  Planned p(kTwoDevices);
  ASSERT_EQ(p.errors, "");
  DeviceInfo info;
  info.ordinal = 1;
  info.device_count = 2;
  EXPECT_EQ(ScenarioDeviceOrdinal(info, 0), 1);
  EXPECT_EQ(ScenarioDeviceOrdinal(info, 1), 0);
  info.device_count = 1;
  EXPECT_EQ(ScenarioDeviceOrdinal(info, 1), 2);  // beyond the machine: an ordinal it refuses
}

TEST(ExecutorDevices, AOneDeviceScenarioNeverSelectsAndSetsAccessForTheEnginesDevice) {
  Planned p(R"(
name: one
buffers:
  A: {shape: [1024]}
steps:
  - {op: reserve, buffer: A}
  - {op: create, alloc: p, size: 2MiB}
  - {op: map, buffer: A, alloc: p}
  - {op: set_access, buffer: A, access: read}
  - {op: check_access, buffer: A, expect: read}
)");
  ASSERT_EQ(p.errors, "");
  FakeEngine engine;
  engine.SetGetAccess(Access::kRead);
  RunOutcome out = RunPlan(p.plan, engine, nullptr);
  EXPECT_EQ(out.summary.exit_code, 0);
  for (const std::string& call : engine.calls())
    EXPECT_EQ(call.find("SelectDevice"), std::string::npos) << call;
  EXPECT_NE(std::find(engine.calls().begin(), engine.calls().end(),
                      "SetAccess(va=0x100000000, size=0x200000, access=read)"),
            engine.calls().end());
  // The record keeps the one-word spelling.
  ASSERT_EQ(out.steps.size(), 5u);
  EXPECT_EQ(std::get<std::string>(out.steps[3].details[0].second), "read");
}

TEST(ExecutorDevices, CheckAccessFailsOnADifferentAnswer) {
  Planned p(R"(
name: one
buffers:
  A: {shape: [1048576]}
steps:
  - {op: reserve, buffer: A}
  - {op: create, alloc: p, size: 4MiB}
  - {op: map, buffer: A, alloc: p}
  - {op: check_access, buffer: A, expect: read_write}
)");
  ASSERT_EQ(p.errors, "");
  FakeEngine engine;
  engine.SetGetAccess(Access::kNone);
  RunOutcome out = RunPlan(p.plan, engine, nullptr);
  EXPECT_EQ(out.summary.exit_code, 1);
  ASSERT_EQ(out.steps.size(), 4u);
  EXPECT_EQ(out.steps[3].check->expected, "read_write");
  EXPECT_EQ(out.steps[3].check->actual, "none");
  EXPECT_EQ(std::count_if(engine.calls().begin(), engine.calls().end(),
                          [](const std::string& c) { return c.rfind("GetAccess", 0) == 0; }),
            2);  // one per 2 MiB granule
}

TEST(ExecutorDevices, AFailedSelectionFailsTheStep) {
  Planned p(kTwoDevices);
  ASSERT_EQ(p.errors, "");
  FakeEngine engine;
  engine.SetDeviceCount(2);
  engine.FailAt("SelectDevice", 1, RuntimeError("no such device"));
  RunOutcome out = RunPlan(p.plan, engine, nullptr);
  EXPECT_EQ(out.summary.exit_code, 4);
  EXPECT_EQ(out.summary.failed_step, 4);
  EXPECT_EQ(out.steps[4].error, "selecting device 1 (ordinal 1): no such device");
}

}  // namespace
}  // namespace vmm
