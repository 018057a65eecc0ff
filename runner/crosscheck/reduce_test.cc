// Reduce on the host twin: a failing check buried among steps that have nothing to do with it
// comes out alone with what it needs, failing the same way; a passing or invalid scenario is
// refused.
#include "runner/crosscheck/reduce.h"

#include <gtest/gtest.h>

namespace vmm {
namespace {

const char* kBuried = R"(version: 1
name: buried
buffers:
  A: {shape: [4096]}
  B: {shape: [4096]}
  C: {shape: [4096]}
steps:
  - {op: reserve, buffer: A}
  - {op: reserve, buffer: B}
  - {op: reserve, buffer: C}
  - {op: create, alloc: pa, size: 2MiB}
  - {op: create, alloc: pb, size: 2MiB}
  - {op: create, alloc: pc, size: 2MiB}
  - {op: map, buffer: A, alloc: pa}
  - {op: map, buffer: B, alloc: pb}
  - {op: map, buffer: C, alloc: pc}
  - {op: set_access, buffer: A}
  - {op: set_access, buffer: B}
  - {op: set_access, buffer: C}
  - {op: fill, buffer: B, seed: 3}
  - {op: fill, buffer: C, seed: 4}
  - {op: snapshot, buffer: C, snapshot: SC}
  - {op: check_equal, buffer: C, snapshot: SC}
  - {op: memset, buffer: A, value: 7}
  - {op: write_value, buffer: A, offset: 40, value: 8}
  - {op: check_value, name: all sevens, buffer: A, value: 7}
  - {op: matmul, a: B, b: C, c: C, expect_error: null}
)";

TEST(Reduce, OutcomeSignatureNamesTheFirstFailure) {
  report::Report r;
  r.summary.exit_code = 0;
  EXPECT_EQ(OutcomeSignature(r), "");
  r.summary.exit_code = 4;
  report::StepRecord ok, failed;
  ok.op = "create";
  failed.op = "map";
  failed.status = report::StepStatus::kFailed;
  failed.error = "cuMemMap(va=0x7f00, size=2 MiB): CUDA_ERROR_INVALID_VALUE: offset past the end";
  r.steps = {ok, failed};
  EXPECT_EQ(OutcomeSignature(r), "exit 4 at map: CUDA_ERROR_INVALID_VALUE");
  report::CheckRecord check;
  check.expected = "equal";
  check.actual = "different";
  check.mismatch_count = 17;  // not part of it: a smaller scenario has fewer
  r.steps[1].check = check;
  r.summary.exit_code = 1;
  EXPECT_EQ(OutcomeSignature(r), "exit 1 at map: expected equal, got different");
}

TEST(Reduce, KeepsTheFailingCheckAndWhatItNeeds) {
  std::string text = kBuried;
  text.erase(text.find("  - {op: matmul"));  // (expect_error: null is not a scenario)
  ReduceOptions options;
  options.backend = BackendKind::kHost;
  StatusOr<ReduceResult> r = Reduce(text, "buried.yaml", options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->backend, "host");
  EXPECT_EQ(r->outcome, "exit 1 at check_value: expected equal, got different");
  EXPECT_EQ(r->stats.steps_before, 19);
  // reserve, create, map, set_access and the check of A: nothing of B or C, and not even the
  // memset and write_value (new memory on the twin holds zeros, which are not sevens either).
  EXPECT_EQ(r->stats.steps_after, 5) << r->text;
  EXPECT_EQ(r->text.find("buffer: B"), std::string::npos) << r->text;
  EXPECT_EQ(r->text.find("snapshot"), std::string::npos) << r->text;
  EXPECT_NE(r->text.find("op: check_value"), std::string::npos) << r->text;
  // The reduced scenario fails the same way on its own.
  StatusOr<ReduceResult> again = Reduce(r->text, "reduced.yaml", options);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->outcome, r->outcome);
  EXPECT_EQ(again->stats.steps_after, 5);
}

// Pre-screening decides where a candidate runs first, never what the reduction keeps: with the
// twin as the screen (here `auto`, which is the twin on a machine without a GPU, so the screen
// is taken) the result is the one without it, and every candidate was decided on the screen
// first.
TEST(Reduce, APrescreenOnTheTwinKeepsTheSameReduction) {
  std::string text = kBuried;
  text.erase(text.find("  - {op: matmul"));
  ReduceOptions plain;
  plain.backend = BackendKind::kHost;
  plain.prescreen = false;
  StatusOr<ReduceResult> without = Reduce(text, "buried.yaml", plain);
  ASSERT_TRUE(without.ok()) << without.status().message();
  EXPECT_EQ(without->prescreen, "");
  ReduceOptions screened = plain;
  screened.prescreen = true;
  screened.prescreen_backend = BackendKind::kAuto;
  StatusOr<ReduceResult> with = Reduce(text, "buried.yaml", screened);
  ASSERT_TRUE(with.ok()) << with.status().message();
  if (with->prescreen.find("ends it the same way") == std::string::npos)
    GTEST_SKIP() << "auto is not the twin here: " << with->prescreen;
  EXPECT_EQ(with->text, without->text);
  EXPECT_EQ(with->screened_out + with->confirmed, with->stats.candidates);
  // The screen and the backend agree here, so what the screen passed on is what was kept.
  EXPECT_EQ(with->confirmed, without->stats.kept);
  EXPECT_GT(with->screened_out, 0);
}

// A reproducer as a user writes it: 8 MiB of 4 MiB pages, two threads doing their own work, the
// failing check in one of them. Reduce drops the thread that does not matter and the steps of the
// other that do not, and halves the scale (every size, offset and shape at once) down to pages of
// 2 MiB, the granularity, failing the same way.
const char* kThreaded = R"(version: 1
name: threaded
granularity: 2MiB
buffers:
  K: {shape: [2097152]}
  O: {shape: [524288]}
steps:
  - {op: reserve, buffer: K}
  - {op: create, alloc: p0, size: 4MiB}
  - {op: map, buffer: K, alloc: p0}
  - {op: create, alloc: p1, size: 4MiB}
  - {op: map, buffer: K, alloc: p1, offset: 4MiB}
  - {op: set_access, buffer: K}
  - {op: reserve, buffer: O}
  - {op: create, alloc: o, size: 2MiB}
  - {op: map, buffer: O, alloc: o}
  - {op: set_access, buffer: O}
  - threads:
      - thread: writer
        steps:
          - {op: memset, buffer: K, value: 7}
          - {op: fill, buffer: K, seed: 9}
          - {op: check_value, name: sevens, buffer: K, value: 7}
      - thread: other
        steps:
          - {op: memset, buffer: O, value: 1}
          - {op: check_value, buffer: O, value: 1}
    name: group
)";

TEST(Reduce, DropsAThreadAndHalvesTheScaleWhileTheFailureHolds) {
  ReduceOptions options;
  options.backend = BackendKind::kHost;
  StatusOr<ReduceResult> r = Reduce(kThreaded, "threaded.yaml", options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->outcome, "exit 1 at check_value: expected equal, got different") << r->text;
  EXPECT_EQ(r->text.find("thread: other"), std::string::npos) << r->text;
  EXPECT_EQ(r->text.find("op: fill"), std::string::npos) << r->text;
  EXPECT_EQ(r->text.find("4MiB"), std::string::npos) << r->text;
  EXPECT_EQ(r->text.find("4194304"), std::string::npos) << r->text;
  EXPECT_NE(r->text.find("size: 2097152"), std::string::npos) << r->text;  // 2 MiB pages
  StatusOr<ReduceResult> again = Reduce(r->text, "reduced.yaml", options);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->outcome, r->outcome);
}

TEST(Reduce, RefusesAScenarioThatPassesOrDoesNotValidate) {
  std::string text = kBuried;
  text.erase(text.find("  - {op: write_value"));
  ReduceOptions options;
  options.backend = BackendKind::kHost;
  StatusOr<ReduceResult> passes = Reduce(text, "passes.yaml", options);
  ASSERT_FALSE(passes.ok());
  EXPECT_EQ(passes.status().code(), Code::kInvalidInput);
  EXPECT_EQ(passes.status().message(),
            "passes.yaml passes (or is skipped) on host with no fault in an isolate block: reduce "
            "keeps a failure or such a fault, and there is none to keep");
  StatusOr<ReduceResult> invalid = Reduce(kBuried, "bad.yaml", options);
  ASSERT_FALSE(invalid.ok());
  EXPECT_EQ(invalid.status().code(), Code::kInvalidInput);
  EXPECT_NE(
      invalid.status().message().find("bad.yaml:27:36: error: 'expect_error' must be a string"),
      std::string::npos)
      << invalid.status().message();
}

}  // namespace
}  // namespace vmm
