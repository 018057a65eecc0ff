// `vmm-run completion bash|zsh`: a shell completion script generated from the command-line
// definition itself (the CLI11 app: its subcommands, their options and flags, and the choices of
// options such as --backend), so it cannot fall behind the binary.
//
//   source <(vmm-run completion bash)                      # try it in this shell
//   vmm-run completion bash > ~/.local/share/bash-completion/completions/vmm-run
//   vmm-run completion zsh > "${fpath[1]}/_vmm-run"
//
// `cmake --install` and the Debian package install both scripts (cmake/install.cmake).
#pragma once

#include <ostream>
#include <string>

namespace CLI {
class App;
}

namespace vmm {

struct CompletionOptions {
  std::string shell;              // "bash" or "zsh"
  const CLI::App* app = nullptr;  // the whole command line; set by SetupCompletionCommand
};

// Adds the `completion` subcommand to `app` and remembers `app` in `options`; the script describes
// whatever `app` holds when RunCompletionCommand runs. `app` must outlive that call.
void SetupCompletionCommand(CLI::App& app, CompletionOptions& options);
// Writes the script to `out` and errors to `err`; returns the exit code (runner/base/exit_code.h).
int RunCompletionCommand(const CompletionOptions& options, std::ostream& out, std::ostream& err);

// The scripts for `app` (named `program` on the command line). Bash: complete -F _<program>.
// Zsh: a #compdef file for fpath.
std::string BashCompletion(const CLI::App& app, const std::string& program);
std::string ZshCompletion(const CLI::App& app, const std::string& program);

}  // namespace vmm
