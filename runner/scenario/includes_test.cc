// `include:` as a hostile scenario uses it (issue: hostile input II): includes read only inside the
// scenario's folder (real paths: a symlink out is refused), through the guarded reader (no FIFO,
// device or oversized file, UTF-8 only), with bounded depth and count, and a file's contents never
// appear in a message about a file that was refused.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "runner/base/diagnostic.h"
#include "runner/base/input_file.h"
#include "runner/scenario/parse.h"
#include "tests/scratch_dir.h"

namespace vmm {
namespace {

namespace fs = std::filesystem;

constexpr char kFragment[] =
    "params: {buffer: ~}\nsteps:\n  - {op: reserve, buffer: \"${buffer}\"}\n";

// A scenario in `dir` that includes `entry` and uses fragment `use` (when given).
std::string Scenario(const std::string& entry, const std::string& use = "") {
  return "name: s\ninclude: [" + entry + "]\nbuffers: {A: {shape: [1024]}}\nsteps:\n" +
         (use.empty() ? "  - {op: reserve, buffer: A}\n"
                      : "  - {use: " + use + ", with: {buffer: A}}\n");
}

std::string Problems(const std::string& path, const ExpandOptions& options = {}) {
  std::vector<Diagnostic> d;
  LoadScenarioFile(path, options, &d);
  return FormatDiagnostics(d);
}

TEST(Includes, ReadInsideTheScenariosFolderOnly) {
  ScratchDir s("includes");
  fs::create_directories(s.dir() / "tree/frags");
  s.Write("tree/frags/r.yaml", kFragment);
  s.Write("outside.yaml", kFragment);
  s.Write("secret.txt", "password: hunter2\n");
  EXPECT_EQ(Problems(s.Write("tree/ok.yaml", Scenario("frags/r.yaml", "r"))), "");

  const std::string escape = s.Write("tree/escape.yaml", Scenario("../outside.yaml", "outside"));
  const std::string problems = Problems(escape);
  EXPECT_NE(problems.find("cannot read included file '../outside.yaml' (" +
                          fs::weakly_canonical(s.Path("outside.yaml")).string() +
                          "): it lies outside the scenario's folder"),
            std::string::npos)
      << problems;
  // Allowed on purpose: --include-root.
  ExpandOptions wider;
  wider.include_roots = {s.dir().string()};
  EXPECT_EQ(Problems(escape, wider), "");

  // A symlink inside the folder that leads out is refused by its real path, and nothing of the
  // file it names reaches the message.
  fs::create_symlink(s.Path("secret.txt"), s.Path("tree/frags/link.yaml"));
  const std::string linked = Problems(s.Write("tree/link.yaml", Scenario("frags/link.yaml")));
  EXPECT_NE(linked.find("lies outside the scenario's folder"), std::string::npos) << linked;
  EXPECT_EQ(linked.find("hunter2"), std::string::npos) << linked;
}

TEST(Includes, GoThroughTheGuardedReader) {
  ScratchDir s("includes");
  ASSERT_EQ(::mkfifo(s.Path("fifo.yaml").c_str(), 0600), 0);
  EXPECT_NE(Problems(s.Write("a.yaml", Scenario("fifo.yaml"))).find("it is a FIFO"),
            std::string::npos);
  // A device, even reached through a link inside the folder.
  fs::create_symlink("/dev/zero", s.Path("zero.yaml"));
  EXPECT_NE(Problems(s.Write("b.yaml", Scenario("zero.yaml"))).find("outside the scenario's"),
            std::string::npos);
  ExpandOptions dev;
  dev.include_roots = {"/dev"};
  EXPECT_NE(Problems(s.Path("b.yaml"), dev).find("a character device"), std::string::npos);
  // Larger than a scenario may be.
  s.Write("big.yaml", std::string(LimitValue(Limit::kInputBytes) + 1, '#'));
  EXPECT_NE(Problems(s.Write("c.yaml", Scenario("big.yaml"))).find("the limit is 16 MiB"),
            std::string::npos);
  // Not UTF-8.
  s.Write("latin1.yaml", "steps: []\n# caf\xe9\n");
  EXPECT_NE(Problems(s.Write("d.yaml", Scenario("latin1.yaml")))
                .find("it is not valid UTF-8 (line 2, column 6)"),
            std::string::npos);
}

TEST(Includes, DepthCountAndLinkLoopsAreBounded) {
  ScratchDir s("includes");
  // A chain of 40 files, each including the next: deeper than 32 is refused, no stack overflow.
  for (int i = 0; i < 40; ++i) {
    s.Write("f" + std::to_string(i) + ".yaml",
            "include: [f" + std::to_string(i + 1) + ".yaml]\nsteps: []\n");
  }
  s.Write("f40.yaml", "steps: []\n");
  const std::string deep = Problems(s.Write("deep.yaml", Scenario("f0.yaml")));
  EXPECT_NE(deep.find("includes nest deeper than 32 files"), std::string::npos) << deep;
  // Two links to the folder itself: each file is read once by its real path, so the paths that
  // name it many ways cost nothing (a cycle is a cycle, whatever the spelling).
  fs::create_symlink(".", s.Path("x"));
  fs::create_symlink(".", s.Path("y"));
  s.Write("loop.yaml", "include: [x/y/x/loop.yaml, y/x/y/loop.yaml]\nsteps: []\n");
  const std::string loops = Problems(s.Write("e.yaml", Scenario("x/y/loop.yaml")));
  EXPECT_NE(loops.find("include cycle"), std::string::npos) << loops;
  // More files than an expansion reads.
  std::string list;
  for (int i = 0; i < 300; ++i) {
    s.Write("m" + std::to_string(i) + ".yaml", "fragment: m" + std::to_string(i) + "\nsteps: []\n");
    list += (i ? ", " : "") + std::string("m") + std::to_string(i) + ".yaml";
  }
  const std::string many = Problems(s.Write("g.yaml", Scenario(list)));
  EXPECT_NE(many.find("more than 256 fragment files"), std::string::npos);
}

}  // namespace
}  // namespace vmm
