// examples/ci/vmm-run.yml, the GitHub Actions workflow users copy: it parses, has the structure
// Actions needs, uses no third-party action, calls only `vmm-run` subcommands and flags that the
// built binary's --help lists, and its host job's validate/run/diff steps pass when run with bash
// on the reference scenarios and baselines. (actionlint and the workflow JSON Schema are not
// available offline; docs/ci.md says so.)
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/scratch_dir.h"

namespace {

namespace fs = std::filesystem;
using vmm::ScratchDir;

// Commands that run their arguments as a command: `xargs vmm-run validate`.
const std::set<std::string> kRunners = {"xargs", "env", "sudo", "time", "exec"};

const std::string kWorkflow = std::string(VMMRUN_SOURCE_DIR) + "/examples/ci/vmm-run.yml";

// Runs `command` with sh; returns stdout and stderr together, the exit status in `*rc`.
std::string Capture(const std::string& command, int* rc) {
  std::string output;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) {
    *rc = -1;
    return output;
  }
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
  const int status = ::pclose(pipe);
  *rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return output;
}

// What the binary accepts, read off its --help: subcommands, and option names per subcommand ("" is
// the top level).
struct CliSurface {
  std::set<std::string> subcommands;
  std::map<std::string, std::set<std::string>> options;
};

// Parses CLI11's help: "Options:" lines "  -q,--quiet   ..." and "Subcommands:" lines "  run ...".
void ReadHelp(const std::string& help, std::set<std::string>* options,
              std::set<std::string>* subcommands) {
  std::istringstream lines(help);
  std::string line, section;
  while (std::getline(lines, line)) {
    if (!line.empty() && line[0] != ' ') {
      section = line;
      continue;
    }
    std::istringstream words(line);
    std::string first;
    if (!(words >> first)) continue;
    if (section == "Options:" && first[0] == '-') {
      std::stringstream names(first);
      std::string name;
      while (std::getline(names, name, ',')) options->insert(name);
    } else if (section == "Subcommands:" && subcommands != nullptr) {
      subcommands->insert(first);
    }
  }
}

CliSurface AskTheBinary() {
  CliSurface cli;
  int rc = 0;
  ReadHelp(Capture(std::string("'") + VMMRUN_BINARY + "' --help", &rc), &cli.options[""],
           &cli.subcommands);
  EXPECT_EQ(rc, 0);
  for (const std::string& sub : cli.subcommands) {
    ReadHelp(Capture(std::string("'") + VMMRUN_BINARY + "' " + sub + " --help", &rc),
             &cli.options[sub], nullptr);
    EXPECT_EQ(rc, 0) << sub;
  }
  return cli;
}

// Splits a shell script into simple commands: words (quotes kept together, comments dropped, line
// continuations joined), a new command after each of | & ; < > ( ) and newline.
std::vector<std::vector<std::string>> SimpleCommands(const std::string& script) {
  std::vector<std::vector<std::string>> commands(1);
  std::string word;
  bool in_word = false;
  auto end_word = [&] {
    if (in_word) commands.back().push_back(word);
    word.clear();
    in_word = false;
  };
  auto end_command = [&] {
    end_word();
    if (!commands.back().empty()) commands.emplace_back();
  };
  for (size_t i = 0; i < script.size(); ++i) {
    const char c = script[i];
    if (c == '\\' && i + 1 < script.size() && script[i + 1] == '\n') {
      ++i;
    } else if (c == '\'' || c == '"') {
      const size_t close = script.find(c, i + 1);
      word += script.substr(i + 1, close - i - 1);
      in_word = true;
      i = close == std::string::npos ? script.size() : close;
    } else if (c == '#' && !in_word) {
      while (i + 1 < script.size() && script[i + 1] != '\n') ++i;
    } else if (c == ' ' || c == '\t') {
      end_word();
    } else if (std::string("|&;<>()\n").find(c) != std::string::npos) {
      end_command();
    } else {
      word += c;
      in_word = true;
    }
  }
  end_command();
  commands.pop_back();
  return commands;
}

// The `vmm-run` invocations in `script` (the arguments after the program word), each checked
// against `cli`; adds what they use to `used` ("run", "run --backend", "--version") and returns
// one line per unknown subcommand or option.
std::vector<std::string> CheckVmmRunCalls(const std::string& script, const CliSurface& cli,
                                          std::set<std::string>* used) {
  std::vector<std::string> errors;
  for (const std::vector<std::string>& command : SimpleCommands(script)) {
    for (size_t at = 0; at < command.size(); ++at) {
      // The program word: first in the command, or after a command that runs its arguments.
      if (at > 0 && !kRunners.count(command[at - 1])) break;
      const std::string& program = command[at];
      if (program != "vmm-run" && !program.ends_with("/vmm-run")) continue;
      const std::vector<std::string> args(command.begin() + at + 1, command.end());
      std::string text = "vmm-run";
      for (const std::string& arg : args) text += " " + arg;
      std::string sub;
      for (const std::string& arg : args) {
        if (arg.empty() || arg[0] == '-') continue;
        sub = arg;
        break;
      }
      if (!sub.empty() && !cli.subcommands.count(sub)) {
        errors.push_back("'" + text + "': no subcommand '" + sub + "'");
        break;
      }
      used->insert(sub);
      const std::set<std::string>& known = cli.options.at(sub);
      for (const std::string& arg : args) {
        if (arg == "--") break;
        if (arg.size() < 2 || arg[0] != '-') continue;
        const std::string name = arg.substr(0, arg.find('='));
        if (!known.count(name)) {
          errors.push_back("'" + text + "': '" + (sub.empty() ? "vmm-run" : sub) +
                           "' has no option '" + name + "'");
        }
        used->insert(sub.empty() ? name : sub + " " + name);
      }
      break;
    }
  }
  return errors;
}

std::string RunsOn(const YAML::Node& job) {
  const YAML::Node runs_on = job["runs-on"];
  if (runs_on.IsScalar()) return runs_on.as<std::string>();
  std::string labels;
  for (const YAML::Node& label : runs_on)
    labels += (labels.empty() ? "" : ",") + label.as<std::string>();
  return labels;
}

TEST(CiExampleTest, HasTheStructureActionsNeeds) {
  YAML::Node workflow;
  ASSERT_NO_THROW(workflow = YAML::LoadFile(kWorkflow));
  ASSERT_TRUE(workflow.IsMap());
  EXPECT_TRUE(workflow["name"].IsScalar());
  EXPECT_TRUE(workflow["on"].IsMap());
  ASSERT_TRUE(workflow["jobs"].IsMap());
  ASSERT_EQ(workflow["jobs"].size(), 2u);
  for (const auto& entry : workflow["jobs"]) {
    const std::string job = entry.first.as<std::string>();
    const YAML::Node& body = entry.second;
    ASSERT_TRUE(body.IsMap()) << job;
    EXPECT_TRUE(body["runs-on"].IsScalar() || body["runs-on"].IsSequence()) << job;
    ASSERT_TRUE(body["steps"].IsSequence()) << job;
    EXPECT_GT(body["steps"].size(), 3u) << job;
    for (const YAML::Node& step : body["steps"]) {
      ASSERT_TRUE(step.IsMap()) << job;
      EXPECT_NE(static_cast<bool>(step["uses"]), static_cast<bool>(step["run"]))
          << job << ": a step has exactly one of uses and run";
      if (step["uses"]) {
        const std::string uses = step["uses"].as<std::string>();
        EXPECT_TRUE(uses == "actions/checkout@v4" || uses == "actions/upload-artifact@v4")
            << job << ": only actions/checkout and actions/upload-artifact, not " << uses;
      }
    }
  }
}

TEST(CiExampleTest, HasAHostJobAndASelfHostedGpuJob) {
  const YAML::Node jobs = YAML::LoadFile(kWorkflow)["jobs"];
  std::map<std::string, std::string> scripts;  // runs-on -> every run: of the job
  for (const auto& entry : jobs) {
    for (const YAML::Node& step : entry.second["steps"]) {
      if (step["run"]) scripts[RunsOn(entry.second)] += step["run"].as<std::string>() + "\n";
    }
  }
  ASSERT_TRUE(scripts.count("ubuntu-24.04"));
  ASSERT_TRUE(scripts.count("self-hosted,gpu"));
  EXPECT_NE(scripts["ubuntu-24.04"].find("--backend host"), std::string::npos);
  EXPECT_NE(scripts["self-hosted,gpu"].find("--backend cuda"), std::string::npos);
  EXPECT_NE(scripts["self-hosted,gpu"].find("\"$BASELINES/gpu\""), std::string::npos);
  EXPECT_EQ(jobs["gpu"]["if"].as<std::string>(), "vars.VMMRUN_GPU == 'true'");
}

TEST(CiExampleTest, EveryVmmRunCommandAndFlagExists) {
  const CliSurface cli = AskTheBinary();
  ASSERT_TRUE(cli.subcommands.count("run")) << "could not read `vmm-run --help`";
  ASSERT_TRUE(cli.options.at("run").count("--backend"));
  std::set<std::string> used;
  for (const auto& job : YAML::LoadFile(kWorkflow)["jobs"]) {
    for (const YAML::Node& step : job.second["steps"]) {
      if (!step["run"]) continue;
      for (const std::string& error : CheckVmmRunCalls(step["run"].as<std::string>(), cli, &used)) {
        ADD_FAILURE() << job.first.as<std::string>() << ": " << error;
      }
    }
  }
  // The parser found the calls (a checker that finds nothing passes everything).
  for (const char* call : {"--version", "validate", "run", "run --backend", "run --report-dir",
                           "run --junit", "diff", "diff --markdown", "diff --config"}) {
    EXPECT_TRUE(used.count(call)) << call;
  }
}

TEST(CiExampleTest, TheCheckerRejectsWhatDoesNotExist) {
  CliSurface cli;
  cli.subcommands = {"run", "diff"};
  cli.options[""] = {"-h", "--help", "--version"};
  cli.options["run"] = {"-h", "--help", "--backend", "-q", "--quiet"};
  cli.options["diff"] = {"--markdown", "--fail-on"};
  std::set<std::string> used;
  EXPECT_EQ(CheckVmmRunCalls("vmm-run runn a.yaml\n", cli, &used),
            std::vector<std::string>{"'vmm-run runn a.yaml': no subcommand 'runn'"});
  EXPECT_EQ(
      CheckVmmRunCalls("x=1 && build/vmm-run run a.yaml \\\n  --bogus -q", cli, &used),
      std::vector<std::string>{"'vmm-run run a.yaml --bogus -q': 'run' has no option '--bogus'"});
  EXPECT_EQ(CheckVmmRunCalls("vmm-run --versio", cli, &used),
            std::vector<std::string>{"'vmm-run --versio': 'vmm-run' has no option '--versio'"});
  EXPECT_TRUE(CheckVmmRunCalls("vmm-run diff a b --markdown | tee d.md >> \"$S\" || true  # --x\n"
                               "echo '--nope' vmm-run-ish; vmm-run diff a b --fail-on=missing\n"
                               "cmake --prefix \"$T/vmm-run\" --x; xargs build/vmm-run run -q",
                               cli, &used)
                  .empty());
  EXPECT_TRUE(used.count("diff --fail-on"));
  EXPECT_TRUE(used.count("run -q"));
}

// .pre-commit-hooks.yaml: one hook, `vmm-run validate` (a command that exists) on scenario files.
TEST(CiExampleTest, PreCommitHookDefinition) {
  const YAML::Node hooks =
      YAML::LoadFile(std::string(VMMRUN_SOURCE_DIR) + "/.pre-commit-hooks.yaml");
  ASSERT_TRUE(hooks.IsSequence());
  ASSERT_EQ(hooks.size(), 1u);
  const YAML::Node hook = hooks[0];
  EXPECT_EQ(hook["id"].as<std::string>(), "vmm-run-validate");
  EXPECT_EQ(hook["entry"].as<std::string>(), "vmm-run validate");
  EXPECT_EQ(hook["language"].as<std::string>(), "system");
  std::set<std::string> used;
  EXPECT_TRUE(CheckVmmRunCalls(hook["entry"].as<std::string>(), AskTheBinary(), &used).empty());
  EXPECT_TRUE(used.count("validate"));
  // pre-commit matches `files` with Python's re.search; this pattern means the same in ECMAScript.
  const std::regex files(hook["files"].as<std::string>());
  EXPECT_TRUE(std::regex_search("scenarios/reuse.yaml", files));
  EXPECT_TRUE(std::regex_search("scenarios/team/x.yml", files));
  EXPECT_FALSE(std::regex_search("reports/baselines/host/reuse.json", files));
  EXPECT_FALSE(std::regex_search("other/scenarios.yaml.bak", files));
}

// examples/ci/pre-commit as .git/hooks/pre-commit of a scratch repository: a valid scenario is
// committed, an invalid one is refused with vmm-run's diagnostics.
TEST(CiExampleTest, GitHookStopsAnInvalidScenario) {
  const fs::path repo =
      fs::temp_directory_path() / ("vmm_ci_git_hook_" + std::to_string(::getpid()));
  fs::remove_all(repo);
  fs::create_directories(repo / "scenarios");
  fs::copy(fs::path(VMMRUN_SOURCE_DIR) / "scenarios/reuse.yaml", repo / "scenarios/reuse.yaml");
  const std::string in_repo = "cd '" + repo.string() + "' && export PATH='" +
                              fs::path(VMMRUN_BINARY).parent_path().string() + "':\"$PATH\" && ";
  int rc = 0;
  std::string output =
      Capture(in_repo + "git init -q . && git config user.email t@example.invalid && " +
                  "git config user.name t && git config core.hooksPath .git/hooks && cp '" +
                  VMMRUN_SOURCE_DIR + "/examples/ci/pre-commit' .git/hooks/pre-commit && " +
                  "git add scenarios && git commit -q -m valid",
              &rc);
  EXPECT_EQ(rc, 0) << output;
  std::ofstream(repo / "scenarios/bad.yaml")
      << "name: bad\nbuffers: {A: {shape: [1024]}}\nsteps:\n  - {op: reserve, buffer: A, sizee: "
         "1}\n";
  output = Capture(in_repo + "git add scenarios && sh .git/hooks/pre-commit", &rc);
  EXPECT_EQ(rc, 2) << output;
  EXPECT_NE(output.find("scenarios/bad.yaml:4:"), std::string::npos) << output;
  output = Capture(in_repo + "git commit -q -m invalid", &rc);
  EXPECT_NE(rc, 0) << output;
  EXPECT_NE(output.find("sizee"), std::string::npos) << output;
  output = Capture(in_repo + "git log --oneline | wc -l", &rc);
  EXPECT_EQ(output, "1\n");
  fs::remove_all(repo);
}

// The host job's vmm-run steps, run with bash the way Actions runs them, in a copy of a user's
// repository made of vmm-run's reference scenarios and host baselines.
class CiExampleHostJob : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(repo_ / "baselines");
    const fs::path source = VMMRUN_SOURCE_DIR;
    fs::copy(source / "scenarios", repo_ / "scenarios", fs::copy_options::recursive);
    fs::copy(source / "reports/baselines/host", repo_ / "baselines/host",
             fs::copy_options::recursive);
    fs::copy(source / "examples/ci/host-diff.yaml", repo_ / "baselines/host-diff.yaml");
    workflow_ = YAML::LoadFile(kWorkflow);
  }
  // Runs the host job's step with this id; returns its exit status, its output in `*output`.
  int RunStep(const std::string& id, std::string* output) {
    std::string script = "export PATH='" + fs::path(VMMRUN_BINARY).parent_path().string() +
                         "':\"$PATH\"\nexport GITHUB_STEP_SUMMARY='" +
                         (repo_ / "summary.md").string() + "'\n";
    for (const auto& var : workflow_["env"]) {
      script +=
          "export " + var.first.as<std::string>() + "='" + var.second.as<std::string>() + "'\n";
    }
    bool found = false;
    for (const YAML::Node& step : workflow_["jobs"]["host"]["steps"]) {
      if (step["id"] && step["id"].as<std::string>() == id) {
        const std::string run = step["run"].as<std::string>();
        EXPECT_EQ(run.find("${{"), std::string::npos) << id << ": bash cannot run expressions";
        script += run;
        found = true;
      }
    }
    EXPECT_TRUE(found) << "no step with id '" << id << "' in the host job";
    const fs::path file = repo_ / ("step_" + id + ".sh");
    std::ofstream(file) << script;
    int rc = 0;
    *output = Capture("cd '" + repo_.string() + "' && bash --noprofile --norc -eo pipefail '" +
                          file.string() + "'",
                      &rc);
    return rc;
  }
  ScratchDir scratch_{"vmm_ci_example"};
  const fs::path& repo_ = scratch_.dir();
  YAML::Node workflow_;
};

TEST_F(CiExampleHostJob, PassesOnTheReferenceScenarios) {
  std::string output;
  for (const char* id : {"validate", "run", "summary", "diff"}) {
    ASSERT_EQ(RunStep(id, &output), 0) << id << ":\n" << output;
  }
  // Another machine than the baselines' adds info rows (device name, kernel release): the diff
  // step passes when nothing regressed, whatever it lists.
  EXPECT_NE(output.find(" 0 regressions, "), std::string::npos) << output;
  EXPECT_NE(output.find("result: pass"), std::string::npos) << output;
  // One report per scenario, and one per point of a sweep (named <scenario>.<axis>=<value>,...);
  // graphs add DOT files beside them.
  size_t reports = 0, point_reports = 0, scenarios = 0, sweeps = 0;
  for (const auto& entry : fs::directory_iterator(repo_ / "out")) {
    if (entry.path().extension() != ".json") continue;
    (entry.path().filename().string().find('=') != std::string::npos ? point_reports : reports)++;
  }
  for (const auto& entry : fs::directory_iterator(repo_ / "scenarios")) {
    if (entry.path().extension() != ".yaml") continue;
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    (text.find("\nsweep:") != std::string::npos ? sweeps : scenarios)++;
  }
  EXPECT_EQ(reports, scenarios);
  EXPECT_EQ(point_reports > 0, sweeps > 0);
  EXPECT_GE(point_reports, 2 * sweeps);
  EXPECT_GE(scenarios, 6u);
  EXPECT_TRUE(fs::file_size(repo_ / "junit.xml") > 0);
  std::ifstream summary(repo_ / "summary.md");
  const std::string markdown((std::istreambuf_iterator<char>(summary)), {});
  EXPECT_FALSE(markdown.empty());
  EXPECT_EQ(markdown, [&] {
    std::ifstream copy(repo_ / "diff.md");
    return std::string((std::istreambuf_iterator<char>(copy)), {});
  }()) << "the job summary and the uploaded diff.md differ";
}

TEST_F(CiExampleHostJob, FailsOnARegressionButStillWritesTheSummary) {
  // A baseline for a scenario that no longer runs: a `missing` row, which fails by default.
  std::ifstream in(repo_ / "baselines/host/reuse.json");
  std::string report((std::istreambuf_iterator<char>(in)), {});
  const size_t name = report.find("\"name\": \"reuse\"");
  ASSERT_NE(name, std::string::npos);
  report.replace(name, 15, "\"name\": \"ghost\"");
  std::ofstream(repo_ / "baselines/host/ghost.json") << report;

  std::string output;
  for (const char* id : {"validate", "run", "summary"}) {
    ASSERT_EQ(RunStep(id, &output), 0) << id << ":\n" << output;
  }
  EXPECT_EQ(RunStep("diff", &output), 1) << output;
  EXPECT_NE(output.find("ghost"), std::string::npos) << output;
  std::ifstream summary(repo_ / "summary.md");
  const std::string markdown((std::istreambuf_iterator<char>(summary)), {});
  EXPECT_NE(markdown.find("ghost"), std::string::npos) << markdown;
}

}  // namespace
