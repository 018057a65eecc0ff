// `vmm-run completion`: the scripts are generated from the real command line (every subcommand's
// Setup function), so a new subcommand or option shows up in them without anyone editing a script.
#include "runner/cli/completion_command.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <sstream>

#include "runner/base/exit_code.h"
#include "runner/cli/diff_command.h"
#include "runner/cli/run_command.h"
#include "runner/cli/steps_command.h"
#include "runner/cli/validate_command.h"

namespace vmm {
namespace {

// The command line as main.cc builds it.
class CompletionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    app_.set_version_flag("--version", "vmm-run test");
    SetupRunCommand(app_, run_);
    SetupValidateCommand(app_, validate_);
    SetupStepsCommand(app_, steps_);
    SetupDiffCommand(app_, diff_);
    SetupCompletionCommand(app_, completion_);
  }
  int Run(const std::string& shell) {
    completion_.shell = shell;
    return RunCompletionCommand(completion_, out_, err_);
  }
  CLI::App app_{"vmm-run"};
  RunOptions run_;
  ValidateOptions validate_;
  StepsOptions steps_;
  DiffOptions diff_;
  CompletionOptions completion_;
  std::ostringstream out_, err_;
};

TEST_F(CompletionTest, BashNamesEverySubcommandOptionAndChoice) {
  ASSERT_EQ(Run("bash"), kExitPass) << err_.str();
  const std::string script = out_.str();
  EXPECT_NE(script.find("run|validate|steps|diff|completion) command="), std::string::npos)
      << script;
  for (const char* word :
       {"--backend", "--report-dir", "--junit", "--quiet", "--valijson", "--schema", "--markdown",
        "--fail-on", "--ignore-device", "--version", "--help"}) {
    EXPECT_NE(script.find(std::string(" ") + word), std::string::npos) << word << "\n" << script;
  }
  EXPECT_NE(script.find("--backend) COMPREPLY=($(compgen -W \"auto host cuda\""), std::string::npos)
      << script;
  EXPECT_NE(script.find("words=\"bash zsh\""), std::string::npos) << script;
  EXPECT_NE(script.find("complete -o default -F _vmm_run vmm-run\n"), std::string::npos);
}

TEST_F(CompletionTest, BashFollowsTheDefinition) {
  // An option added to a subcommand appears in the script without any other change.
  std::string extra;
  app_.get_subcommand("validate")->add_option("--brand-new", extra, "a new option");
  ASSERT_EQ(Run("bash"), kExitPass);
  EXPECT_NE(out_.str().find("--brand-new"), std::string::npos) << out_.str();
}

TEST_F(CompletionTest, ZshDescribesSubcommandsAndOptions) {
  ASSERT_EQ(Run("zsh"), kExitPass) << err_.str();
  const std::string script = out_.str();
  EXPECT_EQ(script.rfind("#compdef vmm-run\n", 0), 0u) << script;
  for (const char* name : {"'run:", "'validate:", "'steps:", "'diff:", "'completion:"}) {
    EXPECT_NE(script.find(name), std::string::npos) << name << "\n" << script;
  }
  EXPECT_NE(script.find("'(--backend)--backend["), std::string::npos) << script;
  EXPECT_NE(script.find(":backend:(auto host cuda)'"), std::string::npos) << script;
  EXPECT_NE(script.find("'(-q --quiet)'{-q,--quiet}'[Print only the summary line per scenario]'"),
            std::string::npos)
      << script;
  EXPECT_NE(script.find("'(- *)--version["), std::string::npos) << script;
  // `vmm-run FILE...` is `run`: its branch is the catch-all, after every other one.
  const size_t catch_all = script.find("        *)\n");
  ASSERT_NE(catch_all, std::string::npos) << script;
  EXPECT_GT(catch_all, script.find("        completion)\n"));
}

TEST_F(CompletionTest, ZshQuotesDescriptions) {
  bool flag = false;
  app_.get_subcommand("steps")->add_flag("--odd", flag, "it's [odd]: yes");
  ASSERT_EQ(Run("zsh"), kExitPass);
  EXPECT_NE(out_.str().find("'(--odd)--odd[it'\\''s \\[odd\\]\\: yes]'"), std::string::npos)
      << out_.str();
}

TEST_F(CompletionTest, UnknownShellIsAnInputError) {
  EXPECT_EQ(Run("fish"), kExitInputError);
  EXPECT_EQ(err_.str(), "error: unknown shell 'fish', expected bash or zsh\n");
  EXPECT_EQ(out_.str(), "");
}

TEST_F(CompletionTest, ParsesFromTheCommandLine) {
  const char* argv[] = {"vmm-run", "completion", "zsh"};
  app_.parse(3, const_cast<char**>(argv));
  EXPECT_EQ(completion_.shell, "zsh");
  const char* bad[] = {"vmm-run", "completion", "fish"};
  EXPECT_THROW(app_.parse(3, const_cast<char**>(bad)), CLI::ValidationError);
}

}  // namespace
}  // namespace vmm
