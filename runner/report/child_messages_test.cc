// The isolate protocol's messages: every field survives the round trip, a streamed step record
// reads exactly like the report's, and malformed messages are refused with a reason.
#include "runner/report/child_messages.h"

#include <gtest/gtest.h>

#include "runner/report/report_io.h"

namespace vmm::report {
namespace {

TEST(ChildMessagesTest, RequestRoundTrips) {
  BlockRequest r;
  r.scenario_path = "scenarios/readonly_fault.yaml";
  r.scenario_text = "name: x\nsteps: [{op: synchronize}]\n# é, \"quotes\"\n";
  r.set = {{"pages", "4"}, {"page", "2097152"}};
  r.facts = {{"device_memory", "150109880320"}, {"device_free", "149557477376"}};
  r.block = 7;
  r.member = 2;
  r.backend = "host";
  r.device = 1;
  r.fds = {"kv", "weights"};
  StatusOr<BlockRequest> back = DecodeBlockRequest(EncodeBlockRequest(r));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->scenario_path, r.scenario_path);
  EXPECT_EQ(back->scenario_text, r.scenario_text);
  EXPECT_EQ(back->set, r.set);
  EXPECT_EQ(back->facts, r.facts);
  EXPECT_EQ(back->block, 7);
  EXPECT_EQ(back->member, 2);
  EXPECT_EQ(back->backend, "host");
  EXPECT_EQ(back->device, 1);
  EXPECT_EQ(back->fds, r.fds);
}

TEST(ChildMessagesTest, RequestsOfAnotherProtocolOrShapeAreRefused) {
  EXPECT_FALSE(DecodeBlockRequest("").ok());
  EXPECT_FALSE(DecodeBlockRequest("[]").ok());
  EXPECT_EQ(DecodeBlockRequest(R"({"type": "run_block", "protocol": 1})").status().message(),
            "block request: not a run_block message of protocol 2");
  const std::string missing = R"({"type": "run_block", "protocol": 2, "scenario_path": "a"})";
  EXPECT_EQ(DecodeBlockRequest(missing).status().message(),
            "block request: missing or mistyped 'scenario_text'");
}

TEST(ChildMessagesTest, StepRecordsStreamAsTheReportWritesThem) {
  StepRecord s;
  s.index = 3;
  s.name = "write through read-only";
  s.named = true;
  s.op = "fill";
  s.line = 12;
  s.status = StepStatus::kFailed;
  s.wall_us = 12.5;
  s.details = {{"elements", int64_t{65536}}, {"async", true}};
  s.addresses = {{"va", std::string("0x7f0000000000")}};
  s.error = "vmm_fill_f32: CUDA_ERROR_ILLEGAL_ADDRESS: the kernel faulted";
  ChildEvent e;
  e.kind = ChildEvent::Kind::kStep;
  e.step = s;
  StatusOr<ChildEvent> back = DecodeChildEvent(EncodeChildEvent(e));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->kind, ChildEvent::Kind::kStep);
  Report a, b;
  a.steps = {s};
  b.steps = {back->step};
  EXPECT_EQ(ReportToJson(a), ReportToJson(b));
}

TEST(ChildMessagesTest, HelloAndDoneRoundTrip) {
  ChildEvent hello;
  hello.kind = ChildEvent::Kind::kHello;
  hello.pid = 4242;
  hello.fds = {"kv"};
  StatusOr<ChildEvent> h = DecodeChildEvent(EncodeChildEvent(hello));
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->kind, ChildEvent::Kind::kHello);
  EXPECT_EQ(h->pid, 4242);
  EXPECT_EQ(h->fds, std::vector<std::string>{"kv"});

  ChildEvent done;
  done.kind = ChildEvent::Kind::kDone;
  done.summary.steps = 5;
  done.summary.failed = 1;
  done.summary.skipped = 2;
  done.summary.exit_code = 4;
  done.summary.failed_step = 2;
  done.summary.result = "error";
  done.fault = "SIGSEGV (SEGV_ACCERR) writing 0x7f0000000000";
  done.end_error = "";
  StatusOr<ChildEvent> d = DecodeChildEvent(EncodeChildEvent(done));
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->kind, ChildEvent::Kind::kDone);
  EXPECT_EQ(d->summary.exit_code, 4);
  EXPECT_EQ(d->summary.failed_step, 2);
  EXPECT_EQ(d->summary.result, "error");
  EXPECT_EQ(d->fault, done.fault);
  EXPECT_EQ(d->setup_error, "");
}

TEST(ChildMessagesTest, MalformedEventsAreRefused) {
  EXPECT_EQ(DecodeChildEvent(R"({"type": "bye"})").status().message(),
            "child message: unknown type 'bye'");
  EXPECT_FALSE(DecodeChildEvent(R"({"type": "step"})").ok());
  EXPECT_FALSE(DecodeChildEvent(R"({"type": "step", "record": {"index": "x"}})").ok());
  EXPECT_FALSE(DecodeChildEvent("{").ok());
}

}  // namespace
}  // namespace vmm::report
