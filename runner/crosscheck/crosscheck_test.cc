// The differential runner on the host twin against itself (CI has no GPU): generated scenarios
// agree with themselves, and a disagreement planted in one side is found and shrunk.
#include "runner/crosscheck/crosscheck.h"

#include <gtest/gtest.h>

namespace vmm {
namespace {

TEST(Crosscheck, GeneratedScenariosRunAndAgreeOnTheTwin) {
  CrosscheckOptions options;
  options.reference = options.model = BackendKind::kHost;
  options.gen.seed = 1000;
  options.count = 40;
  StatusOr<CrosscheckSummary> s = RunCrosscheck(options);
  ASSERT_TRUE(s.ok()) << s.status().message();
  for (const auto& [name, why] : s->failures) ADD_FAILURE() << name << ": " << why;
  for (const Disagreement& d : s->disagreements)
    ADD_FAILURE() << d.name << ": " << d.signature << "\n" << d.shrunk;
  EXPECT_EQ(s->agreed, 40);
  EXPECT_GT(s->steps, 40u * 30);
  EXPECT_GT(s->ops["map"], 0u);
  EXPECT_GT(s->ops["capture"], 0u);
}

}  // namespace
}  // namespace vmm
