// The generator's contract (generator.h): deterministic, and every scenario it writes validates.
#include "runner/generate/generator.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <set>
#include <string>
#include <utility>

#include "runner/base/diagnostic.h"
#include "runner/generate/rng.h"
#include "runner/plan/plan.h"
#include "runner/scenario/parse.h"

namespace vmm::gen {
namespace {

std::string Problems(const GeneratedScenario& s) {
  std::vector<Diagnostic> diagnostics;
  std::optional<Scenario> scenario = ParseScenario(s.text, s.name + ".yaml", &diagnostics);
  if (scenario) BuildPlan(*scenario, &diagnostics);
  return FormatDiagnostics(diagnostics);
}

TEST(Generator, TheSameSeedWritesTheSameText) {
  GenOptions options;
  options.seed = 42;
  EXPECT_EQ(Generate(options).text, Generate(options).text);
  options.seed = 43;
  EXPECT_NE(Generate(GenOptions{.seed = 42}).text, Generate(options).text);
}

// Each seed has a stream of its own: seed k+1's draws are not seed k's shifted by one (as they
// were when the state was a linear function of the seed).
TEST(Generator, NeighbouringSeedsDrawUnrelatedStreams) {
  int shifted = 0;
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    Rng a(Rng::StreamFor(seed)), b(Rng::StreamFor(seed + 1));
    a.Next();  // a one draw ahead
    for (int i = 0; i < 8; ++i) shifted += a.Next() == b.Next();
  }
  EXPECT_EQ(shifted, 0);
}

// What a draw decides varies across scenarios: among 300 scenarios' busy steps, the readers and
// the writers in flight (25% and about 22% of them) both appear. With the shifted streams every
// scenario reached the choice with the same draw, and 1 busy in 150 was a reader, none a writer.
TEST(Generator, ChoicesVaryAcrossSeeds) {
  int busy = 0, readers = 0, writers = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    const std::string text = Generate(GenOptions{.seed = seed}).text;
    for (size_t at = text.find("op: busy"); at != std::string::npos;
         at = text.find("op: busy", at + 1)) {
      const std::string line = text.substr(at, text.find('\n', at) - at);
      ++busy;
      readers += line.find("touch: read") != std::string::npos;
      writers += line.find("touch: write") != std::string::npos;
    }
  }
  ASSERT_GE(busy, 40);
  EXPECT_GE(readers, busy / 10) << readers << " readers in " << busy << " busy steps";
  EXPECT_GE(writers, busy / 10) << writers << " writers in " << busy << " busy steps";
}

// How many of `ops` 60 scenarios make on the stream (top) and in a capture (captured).
std::pair<int, int> CountTopAndCaptured(std::initializer_list<const char*> ops) {
  int top = 0, captured = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    const std::string text = Generate(GenOptions{.seed = seed}).text;
    for (const char* op : ops) {
      for (size_t at = text.find(op); at != std::string::npos; at = text.find(op, at + 1)) {
        const size_t line = text.rfind('\n', at) + 1;
        (text.compare(line, 15, "  - {op: captur") == 0 ? captured : top) += 1;
      }
    }
  }
  return {top, captured};
}

// add, scale and axpy appear on the stream and as graph nodes (their replay simulated by the
// model), within 60 scenarios.
TEST(Generator, ElementwiseStepsAreMadeBothWays) {
  const auto [top, captured] = CountTopAndCaptured({"op: add", "op: scale", "op: axpy"});
  EXPECT_GE(top, 10);
  EXPECT_GE(captured, 10);
}

// kernel_copy appears on the stream and as a kernel node, within 60 scenarios.
TEST(Generator, KernelCopiesAreMadeBothWays) {
  const auto [top, captured] = CountTopAndCaptured({"op: kernel_copy"});
  EXPECT_GE(top, 3);
  EXPECT_GE(captured, 3);
}

// Threads groups appear, each thread on a buffer of its own (no two threads of a group name the
// same buffer), within 60 scenarios.
TEST(Generator, ThreadsGroupsGiveEachThreadABufferOfItsOwn) {
  int groups = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    const std::string text = Generate(GenOptions{.seed = seed}).text;
    for (size_t at = text.find("threads: ["); at != std::string::npos;
         at = text.find("threads: [", at + 1)) {
      ++groups;
      const std::string line = text.substr(at, text.find('\n', at) - at);
      std::set<std::string> buffers;
      int maps = 0;
      for (size_t m = line.find("op: map, buffer: "); m != std::string::npos;
           m = line.find("op: map, buffer: ", m + 1)) {
        const size_t from = m + 17;
        buffers.insert(line.substr(from, line.find(',', from) - from));
        ++maps;
      }
      EXPECT_GE(maps, 2) << line;
      EXPECT_EQ(buffers.size(), static_cast<size_t>(maps)) << line;
    }
  }
  EXPECT_GE(groups, 5);
}

// A page handed over between two threads (kvcached's mapper and compute thread): thread t0
// signals after it has mapped its page, thread t1 waits for that point and then fills; when t1
// signals back, t0 waits for it and only then unmaps and releases its page. Within 60 scenarios,
// several of each (the sync points' order is what the validator proves; EveryScenarioValidates).
TEST(Generator, ThreadsHandAPageOverThroughSyncPoints) {
  int handoffs = 0, hand_backs = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    const std::string text = Generate(GenOptions{.seed = seed}).text;
    for (size_t at = text.find("threads: ["); at != std::string::npos;
         at = text.find("threads: [", at + 1)) {
      const std::string line = text.substr(at, text.find('\n', at) - at);
      const size_t t1 = line.find("{thread: t1");
      const size_t signal = line.find("op: signal, point: ready");
      if (signal == std::string::npos) continue;
      ++handoffs;
      ASSERT_NE(t1, std::string::npos) << line;
      EXPECT_LT(signal, t1) << "thread t0 signals: " << line;
      const size_t from = signal + std::string("op: signal, point: ").size();
      const std::string ready = line.substr(from, line.find('}', from) - from);
      const size_t wait = line.find("op: wait_for, point: " + ready + "}");
      ASSERT_NE(wait, std::string::npos) << line;
      EXPECT_GT(wait, t1) << "thread t1 waits: " << line;
      const size_t back = line.find("op: signal, point: done", wait);
      if (back == std::string::npos) {
        EXPECT_EQ(line.find("op: unmap", signal), line.find("op: unmap", t1))
            << "without a hand-back thread t0 keeps its page: " << line;
        continue;
      }
      ++hand_backs;
      const size_t t0_wait = line.find("op: wait_for, point: done");
      ASSERT_NE(t0_wait, std::string::npos) << line;
      EXPECT_LT(t0_wait, t1) << "thread t0 waits for it: " << line;
      EXPECT_LT(line.find("op: unmap", signal), t1) << "then gives its page back: " << line;
    }
  }
  EXPECT_GE(handoffs, 3);
  EXPECT_GE(hand_backs, 1);
}

TEST(Generator, EveryScenarioValidates) {
  int failed = 0;
  std::string first;  // the first failing scenario, whole
  for (int devices : {1, 2}) {
    for (uint64_t seed = 1; seed <= 150; ++seed) {
      GenOptions options;
      options.seed = seed;
      options.devices = devices;
      options.isolate_percent = 20;
      const GeneratedScenario s = Generate(options);
      const std::string problems = Problems(s);
      if (!problems.empty()) {
        ++failed;
        ADD_FAILURE() << "seed " << seed << ", devices " << devices << ": " << problems;
        if (first.empty()) first = s.text;
      }
      EXPECT_GE(s.steps, options.steps / 2) << s.text;
    }
  }
  EXPECT_EQ(failed, 0) << "the first that failed:\n" << first;
}

// Seeds whose scenarios did not validate in a twin-fidelity run on the H200 (session 10): an
// update's capture copied a destroyed graph from a fork's branch (only top-level child graph nodes
// were checked for a live graph). Since the seeding fix of session 12 these seeds write other
// scenarios; they stay as six more that must validate.
TEST(Generator, AChildGraphInAForkBranchCopiesALiveGraph) {
  for (uint64_t seed : {110321, 110333, 110335, 112148, 112173, 120215}) {
    GenOptions options;
    options.seed = seed;
    options.isolate_percent = 1;
    const GeneratedScenario s = Generate(options);
    EXPECT_EQ(Problems(s), "") << "seed " << seed << ":\n" << s.text;
  }
}

}  // namespace
}  // namespace vmm::gen
