// Call traces (`vmm-run record`'s format): every line is checked, and a bad one is refused with its
// line number, what is wrong and what was expected; the table of calls drives the keys.
#include "runner/trace/call_trace.h"

#include <gtest/gtest.h>

#include <string>

#include "runner/base/limits.h"

namespace vmm::trace {
namespace {

constexpr const char* kHeader = "# vmm-trace 1\n";

std::string Error(const std::string& body) {
  StatusOr<CallTrace> t = ReadCallTrace(kHeader + body, "t.trace");
  return t.ok() ? "ok" : t.status().message();
}

TEST(CallTrace, ReadsRecordsWithTheirKeysInTheTablesOrder) {
  StatusOr<CallTrace> t = ReadCallTrace(
      std::string(kHeader) +
          "# process 7: python3 x.py\n"
          "\n"
          "3 cuMemMap result=0 t_ns=5 pid=7 tid=8 ptr=0x7f0000000000 size=2097152 offset=0 "
          "handle=0x55\n"
          "4 cuMemSetAccess result=0 t_ns=6 pid=7 tid=8 ptr=0x7f0000000000 size=2097152 "
          "access=0:3,1:1\n"
          "5 cuLaunchKernel result=0 t_ns=7 pid=7 tid=9 kernel=_Z1kPf stream=0x0 "
          "ptrs=0x7f0000000100,0x7f0000000200\r\n"
          "6 cuStreamSynchronize result=700 t_ns=8 pid=7 tid=8 stream=0x0\n",
      "t.trace");
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->records.size(), 4u);
  EXPECT_EQ(t->comments, std::vector<std::string>{"process 7: python3 x.py"});
  const TraceRecord& map = t->records[0];
  EXPECT_EQ(map.call, TraceCall::k_cuMemMap);
  EXPECT_EQ(map.line, 4);
  EXPECT_EQ(map.seq, 3u);
  EXPECT_EQ(map.Number("ptr"), 0x7f0000000000u);
  EXPECT_EQ(map.Number("size"), 2097152u);
  EXPECT_EQ(map.Number("handle"), 0x55u);
  EXPECT_EQ(map.tid, 8u);
  EXPECT_EQ(t->records[1].access, (std::vector<std::pair<int, unsigned>>{{0, 3}, {1, 1}}));
  EXPECT_EQ(t->records[2].kernel, "_Z1kPf");
  EXPECT_EQ(t->records[2].ptrs, (std::vector<uint64_t>{0x7f0000000100, 0x7f0000000200}));
  EXPECT_EQ(t->records[3].result, 700);
  EXPECT_EQ(InfoOf(TraceCall::k_cuLaunchKernel).family, CallFamily::kLaunch);
  EXPECT_EQ(TraceCallNamed("cuMemUnmap"), TraceCall::k_cuMemUnmap);
  EXPECT_FALSE(TraceCallNamed("cuMemUnmapAsync").has_value());
}

TEST(CallTrace, EachBadLineIsRefusedWithItsLineAndWhatWasExpected) {
  EXPECT_EQ(ReadCallTrace("trace 1\n", "t.trace").status().message(),
            "t.trace:1: not a call trace: the first line must be '# vmm-trace 1' (`vmm-run "
            "record` writes it)");
  EXPECT_EQ(ReadCallTrace("", "t.trace").status().message(),
            "t.trace: empty: not a call trace (`vmm-run record` writes one)");
  EXPECT_EQ(Error("x cuMemMap\n"),
            "t.trace:2: expected a record: SEQ CALL key=value ... (for example '1 cuMemCreate "
            "result=0 ...'), got 'x cuMemMap'");
  EXPECT_EQ(
      Error("1 cuMemMapp result=0\n"),
      "t.trace:2: unknown call 'cuMemMapp' (docs/recording.md lists the calls a trace holds)");
  EXPECT_EQ(Error("1 cuMemUnmap result=0 t_ns=1 pid=1 tid=1 ptr=0x0\n"),
            "t.trace:2: cuMemUnmap: key 'size' missing (its record has result t_ns pid tid ptr "
            "size)");
  EXPECT_EQ(Error("1 cuMemUnmap result=0 t_ns=1 pid=1 tid=1 ptr=0x0 size=1 size=2\n"),
            "t.trace:2: cuMemUnmap: key 'size' twice");
  EXPECT_EQ(Error("1 cuMemUnmap result=0 t_ns=1 pid=1 tid=1 ptr=0x0 size=1 colour=red\n"),
            "t.trace:2: cuMemUnmap: unknown key 'colour' (its record has result t_ns pid tid ptr "
            "size)");
  EXPECT_EQ(Error("1 cuMemUnmap result=0 t_ns=1 pid=1 tid=1 ptr=0xZZ size=1\n"),
            "t.trace:2: cuMemUnmap: ptr=0xZZ: expected a number (decimal or 0x hex)");
  EXPECT_EQ(Error("1 cuMemUnmap result=0 t_ns=1 pid=1 tid=1 ptr size=1\n"),
            "t.trace:2: cuMemUnmap: expected key=value, got 'ptr'");
  EXPECT_EQ(Error("1 cuMemSetAccess result=0 t_ns=1 pid=1 tid=1 ptr=0 size=1 access=0:2\n"),
            "t.trace:2: cuMemSetAccess: access=0:2: expected DEVICE:FLAGS items separated by "
            "commas (FLAGS 0, 1 or 3)");
  EXPECT_EQ(Error("1 cuLaunchKernel result=0 t_ns=1 pid=1 tid=1 kernel=k stream=0 ptrs=0x1,y\n"),
            "t.trace:2: cuLaunchKernel: ptrs=0x1,y: expected addresses separated by commas");
  EXPECT_EQ(Error("1 cuCtxSynchronize result=0 t_ns=1 pid=1 tid=1 \x01\n"),
            "t.trace:2: byte 0x1 at column 48: a trace is printable ASCII (was the file made by "
            "`vmm-run record`?)");
}

TEST(CallTrace, RecordsAreBoundedByTheTraceRecordsLimit) {
  ASSERT_TRUE(SetLimit("trace_records=2").ok());
  const std::string record = "1 cuCtxSynchronize result=0 t_ns=1 pid=1 tid=1\n";
  EXPECT_EQ(Error(record + record), "ok");
  EXPECT_EQ(Error(record + record + record),
            "t.trace:4: more than 2 records and comments (raise it with --limit "
            "trace_records=N)");
  EXPECT_EQ(Error("# a\n# b\n# c\n"),
            "t.trace:4: more than 2 records and comments (raise it with --limit "
            "trace_records=N)");
  ResetLimits();
}

}  // namespace
}  // namespace vmm::trace
