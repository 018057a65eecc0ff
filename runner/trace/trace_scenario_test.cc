// Call traces as scenarios: the same VMM calls with offsets into their reservations, stand-ins for
// the kernels, graphs captured and replayed, a fault as an isolate block; what cannot be replayed
// is counted in the header; every import validates; and two traces compare by their VMM calls.
#include "runner/trace/trace_scenario.h"

#include <gtest/gtest.h>

#include <string>

#include "runner/base/input_file.h"
#include "runner/base/limits.h"
#include "runner/plan/plan.h"
#include "runner/scenario/parse.h"
#include "runner/trace/trace_compare.h"

namespace vmm::trace {
namespace {

CallTrace Trace(const std::string& body) {
  StatusOr<CallTrace> t = ReadCallTrace("# vmm-trace 1\n" + body, "t.trace");
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? *t : CallTrace{};
}

std::string Import(const std::string& body, int64_t pid = -1) {
  TraceImportOptions options;
  options.name = "t";
  options.source = "t.trace";
  options.pid = pid;
  StatusOr<std::string> text = TraceScenario(Trace(body), options);
  return text.ok() ? *text : "error: " + text.status().message();
}

std::string Validate(const std::string& text) {
  std::vector<Diagnostic> d;
  std::optional<Scenario> s = ParseScenario(text, "imported.yaml", &d);
  if (s) BuildPlan(*s, &d);
  return FormatDiagnostics(d);
}

// One record of process 9 (a line of `vmm-run record`'s format, t_ns and tid left at 1).
std::string R(const std::string& call, const std::string& keys, int result = 0) {
  return "1 " + call + " result=" + std::to_string(result) + " t_ns=1 pid=9 tid=1 " + keys + "\n";
}

const std::string kMapped =  // one 4 MiB reservation at 0x7f00_0000_0000, two 2 MiB pages open
    R("cuMemAddressReserve", "ptr=0x7f0000000000 size=4194304 alignment=0 addr=0") +
    R("cuMemCreate", "handle=0x55 size=2097152 location=1 device=0 handle_types=0") +
    R("cuMemMap", "ptr=0x7f0000000000 size=2097152 offset=0 handle=0x55") +
    R("cuMemCreate", "handle=0x56 size=2097152 location=1 device=0 handle_types=1") +
    R("cuMemMap", "ptr=0x7f0000200000 size=2097152 offset=0 handle=0x56") +
    R("cuMemSetAccess", "ptr=0x7f0000000000 size=4194304 access=0:3");

TEST(TraceScenario, VmmCallsBecomeStepsWithOffsetsIntoTheirReservation) {
  const std::string text =
      Import(kMapped + R("cuLaunchKernel", "kernel=_Z1kPf stream=0x0 ptrs=0x7f0000200010") +
             R("cuLaunchKernel", "kernel=_Z1kPf stream=0x0 ptrs=0x7f0000200020") +
             R("cuStreamSynchronize", "stream=0x0") + R("cuCtxSynchronize", "") +
             R("cuMemUnmap", "ptr=0x7f0000200000 size=2097152") + R("cuMemRelease", "handle=0x56") +
             R("cuMemGetInfo", "free=1 total=2"));
  EXPECT_EQ(Validate(text), "");
  const std::string steps = text.substr(text.find("steps:\n"));
  EXPECT_EQ(steps,
            "steps:\n"
            "  - {op: reserve, buffer: R0, size: 4MiB}  # at 0x7f0000000000 in the trace\n"
            "  - {op: create, alloc: h0, size: 2MiB}\n"
            "  - {op: map, buffer: R0, alloc: h0, offset: 0}\n"
            "  - {op: create, alloc: h1, size: 2MiB, handle_types: [posix_fd]}\n"
            "  - {op: map, buffer: R0, alloc: h1, offset: 2MiB}\n"
            "  - {op: set_access, buffer: R0, offset: 0, size: 4MiB, access: read_write}\n"
            "  - {op: memset, buffer: V0, value: 0x5eed0001}  # stand-in: _Z1kPf was given "
            "0x7f0000200010 (line 8)\n"
            "  - {op: synchronize}  # the program's cuStreamSynchronize\n"
            "  - {op: check_value, buffer: V0, value: 0x5eed0001}  # stand-in: the mapping still "
            "holds what was written, before its memory is unmapped\n"
            "  - {op: unmap, buffer: R0, offset: 2MiB, size: 2MiB}\n"
            "  - {op: release, alloc: h1}\n"
            "  # The end of the trace: what is still mapped, allocated or reserved is given back.\n"
            "  - {op: unmap, buffer: R0, offset: 0, size: 2MiB}\n"
            "  - {op: release, alloc: h0}\n"
            "  - {op: free, buffer: R0}\n");
  EXPECT_NE(text.find("  V0: {of: R0, offset: 2097152, shape: [524288]}\n"), std::string::npos);
  EXPECT_NE(text.find("# 1 launches touched a mapping already written since it was last "
                      "checked: stood in once.\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# Not replayed: 1 x cuMemGetInfo.\n"), std::string::npos) << text;
}

TEST(TraceScenario, AFaultBecomesAnIsolateBlockWithTheRaceAsTheProgramRanIt) {
  const std::string text =
      Import(kMapped + R("cuLaunchKernel", "kernel=_Z4readPf stream=0x0 ptrs=0x7f0000000000") +
             R("cuMemUnmap", "ptr=0x7f0000000000 size=2097152") + R("cuMemRelease", "handle=0x55") +
             R("cuStreamSynchronize", "stream=0x0", 700) +
             R("cuMemAddressFree", "ptr=0x7f0000000000 size=4194304", 700));
  EXPECT_EQ(Validate(text), "");
  EXPECT_NE(text.find("  - isolate: {expect: CUDA_ERROR_ILLEGAL_ADDRESS, at: the fault surfaces}\n"
                      "    name: the program's run up to its fault\n    steps:\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("      - {op: busy, buffer: V0, duration: 300ms, touch: read, async: true}"
                      "  # stand-in: _Z4readPf (line 8) was still running when the program "
                      "unmapped its memory\n"
                      "      - {op: unmap, buffer: R0, offset: 0, size: 2MiB, wait: false}"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("      - {op: release, alloc: h0, wait: false}"), std::string::npos);
  EXPECT_NE(text.find("      - {op: synchronize, name: the fault surfaces}  # the program's "
                      "cuStreamSynchronize returned CUDA_ERROR_ILLEGAL_ADDRESS (line 11)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("the 1 calls after it"), std::string::npos) << text;
  EXPECT_EQ(text.find("- {op: free"), std::string::npos) << "no teardown after a fault";
}

TEST(TraceScenario, CapturedLaunchesBecomeGraphNodesReplayedWhereTheProgramLaunched) {
  const std::string text =
      Import(kMapped + R("cuStreamBeginCapture", "stream=0xabc mode=0") +
             R("cuLaunchKernel", "kernel=_Z1kPf stream=0xabc ptrs=0x7f0000000000") +
             R("cuStreamEndCapture", "stream=0xabc graph=0x10") +
             R("cuGraphInstantiate", "graph=0x10 exec=0x20") +
             R("cuGraphLaunch", "exec=0x20 stream=0x0") + R("cuGraphExecDestroy", "exec=0x20") +
             R("cuGraphDestroy", "graph=0x10") + R("cuStreamBeginCapture", "stream=0xabc mode=0") +
             R("cuStreamEndCapture", "stream=0xabc graph=0x11") +
             R("cuGraphInstantiate", "graph=0x11 exec=0x21") +
             R("cuMemCreate", "handle=0x0 size=2097152 location=1 device=0 handle_types=8", 800));
  EXPECT_EQ(Validate(text), "");
  EXPECT_NE(text.find("  - {op: capture, graph: g0, steps: [{op: memset, buffer: V0, value: "
                      "0x5eed0001}]}  # the program's cuStreamEndCapture (line 10)\n"
                      "  - {op: instantiate, graph: g0, exec: e0}"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  - {op: replay, exec: e0}"), std::string::npos);
  EXPECT_NE(text.find("  - {op: check_value, buffer: V0, value: 0x5eed0001}  # stand-in: the "
                      "mapping still holds what was written, at the end\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# Not replayed: 2 x capture of kernels given no reserved memory (and what "
                      "was made from it).\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  - {op: create, alloc: h2, size: 2MiB, handle_types: [fabric], "
                      "expect_error: CUDA_ERROR_NOT_PERMITTED}"),
            std::string::npos)
      << text;
}

TEST(TraceScenario, WhatADriverCallLeavesIsKeptValidAcrossOddButPossibleTraces) {
  // Access taken away after a stand-in wrote the page: the check comes first, while it can read.
  // Two descriptors for one device: the last one counts. A capture that failed to end: its
  // stream's later launches are stood in for at once.
  const std::string text =
      Import(kMapped + R("cuLaunchKernel", "kernel=k stream=0x0 ptrs=0x7f0000000000") +
             R("cuMemSetAccess", "ptr=0x7f0000000000 size=2097152 access=0:3,0:0") +
             R("cuStreamBeginCapture", "stream=0xabc mode=0") +
             R("cuStreamEndCapture", "stream=0xabc graph=0x0", 901) +
             R("cuLaunchKernel", "kernel=k2 stream=0xabc ptrs=0x7f0000200000"));
  EXPECT_EQ(Validate(text), "");
  const size_t check = text.find("{op: check_value, buffer: V0");
  const size_t revoke =
      text.find("{op: set_access, buffer: R0, offset: 0, size: 2MiB, access: none}");
  ASSERT_NE(check, std::string::npos) << text;
  ASSERT_NE(revoke, std::string::npos) << text;
  EXPECT_LT(check, revoke) << text;
  EXPECT_NE(text.find("  - {op: memset, buffer: V1"), std::string::npos) << text;
  EXPECT_NE(text.find("# Not replayed: 1 x capture that failed to end.\n"), std::string::npos)
      << text;
}

TEST(TraceScenario, WhatCannotBeImportedIsRefusedWithTheChoiceToMake) {
  EXPECT_EQ(Import(R("cuCtxSynchronize", "")),
            "error: the trace holds no VMM calls (was the program's memory made with cuMemCreate "
            "and cuMemMap, e.g. PyTorch with expandable_segments:True?)");
  const std::string two = kMapped + "1 cuMemUnmap result=0 t_ns=1 pid=10 tid=1 ptr=0x1 size=1\n";
  EXPECT_EQ(Import(two), "error: processes 9 and 10 both made VMM calls; choose one with --pid");
  EXPECT_EQ(Import(two, 11), "error: process 11 made no VMM calls in the trace (one that did: 9)");
  EXPECT_EQ(Validate(Import(two, 9)), "");
  EXPECT_EQ(Import(R("cuMemAddressReserve", "ptr=0x7f0000000000 size=4096 alignment=0 addr=0")),
            "error: line 2: cuMemAddressReserve size of 4096 bytes, not a multiple of the "
            "scenario's 2 MiB granularity");
}

TEST(TraceCompare, VmmCallsMatchByReservationOffsetsAndHandleOrder) {
  const CallTrace a = Trace(kMapped + R("cuMemUnmap", "ptr=0x7f0000000000 size=2097152"));
  // The same calls at other addresses and handle values, one call fewer, two more.
  std::string moved = kMapped;
  for (const auto& [from, to] : {std::pair{"0x7f00", "0x5500"},
                                 {"handle=0x55", "handle=0x99"},
                                 {"handle=0x56", "handle=0x98"}})
    for (size_t at = moved.find(from); at != std::string::npos; at = moved.find(from, at))
      moved.replace(at, std::string(from).size(), to);
  moved.erase(moved.find("1 cuMemSetAccess"));
  const CallTrace b = Trace(moved + R("cuMemUnmap", "ptr=0x550000000000 size=2097152") +
                            R("cuMemRelease", "handle=0x99") +
                            R("cuMemAddressFree", "ptr=0x550000000000 size=4194304"));
  const TraceComparison c = CompareVmmCalls(a, 9, b, 9);
  EXPECT_EQ(c.a_calls, 7u);
  EXPECT_EQ(c.b_calls, 8u);
  EXPECT_EQ(c.matched, 6u);
  EXPECT_EQ(c.only_a, std::vector<std::string>{"line 7: set_access R0+0 size=4194304 access=0:3;"});
  EXPECT_EQ(c.only_b, (std::vector<std::string>{"line 8: release h0", "line 9: free R0+0"}));
  EXPECT_EQ(CompareVmmCalls(a, 9, a, 9).matched, 7u);
}

// The traces recorded on the H200 (tools/h200_record.sh; reports/h200/session14/README.md).
CallTrace Fixture(const std::string& name) {
  StatusOr<std::string> text = ReadInputFile(
      std::string(VMMRUN_SOURCE_DIR) + "/tests/fixtures/traces/" + name, Limit::kTraceBytes);
  EXPECT_TRUE(text.ok()) << text.status().message();
  StatusOr<CallTrace> t = ReadCallTrace(text.ok() ? *text : "", name);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? *t : CallTrace{};
}

std::string FixtureText(const std::string& name) {
  StatusOr<std::string> text = ReadInputFile(
      std::string(VMMRUN_SOURCE_DIR) + "/tests/fixtures/traces/" + name, Limit::kTraceBytes);
  return text.ok() ? *text : "";
}

TEST(TraceScenario, TheCommittedImportsAreWhatTheImporterWritesAndTheyValidate) {
  for (const char* stem : {"torch_expandable", "unmap_before_sync"}) {
    TraceImportOptions options;
    options.name = stem;
    options.source = std::string(stem) + ".trace";
    StatusOr<std::string> text = TraceScenario(Fixture(options.source), options);
    ASSERT_TRUE(text.ok()) << text.status().message();
    EXPECT_EQ(*text, FixtureText(std::string(stem) + ".yaml"))
        << "regenerate: cd tests/fixtures/traces && vmm-run import-trace " << stem << ".trace -o "
        << stem << ".yaml";
    EXPECT_EQ(Validate(*text), "") << stem;
  }
  EXPECT_EQ(Validate(FixtureText("unmap_before_sync.reduced.yaml")), "");
}

TEST(TraceCompare, TheH200ReplayOfTheTorchProgramGaveBackEveryVmmCallInOrder) {
  const CallTrace program = Fixture("torch_expandable.trace");
  const CallTrace replay = Fixture("torch_expandable.replay.trace");
  ASSERT_FALSE(program.records.empty());
  ASSERT_FALSE(replay.records.empty());
  const TraceComparison c =
      CompareVmmCalls(program, program.records[0].pid, replay, replay.records[0].pid);
  EXPECT_EQ(c.a_calls, 108u);
  EXPECT_EQ(c.matched, c.a_calls);
  EXPECT_TRUE(c.only_a.empty());
  // What the scenario adds: the teardown of what the program left mapped at its exit.
  ASSERT_EQ(c.only_b.size(), 48u);
  for (const std::string& call : c.only_b) {
    const std::string what = call.substr(call.find(": ") + 2);
    EXPECT_TRUE(what.rfind("unmap ", 0) == 0 || what.rfind("release ", 0) == 0 ||
                what.rfind("free ", 0) == 0)
        << call;
  }
}

}  // namespace
}  // namespace vmm::trace
