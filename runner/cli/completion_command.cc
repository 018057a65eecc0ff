#include "runner/cli/completion_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <ostream>
#include <sstream>
#include <vector>

#include "runner/base/exit_code.h"

namespace vmm {

void SetupCompletionCommand(CLI::App& app, CompletionOptions& options) {
  options.app = &app;
  CLI::App* completion = app.add_subcommand(
      "completion", "Print a shell completion script (bash or zsh) generated from this CLI");
  completion->add_option("shell", options.shell, "bash or zsh")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh"}));
}

namespace {

// `vmm-run FILE...` means `vmm-run run FILE...` (main.cc inserts "run" when no subcommand is
// named and some argument is not an option); the scripts complete such a line as `run`.
constexpr const char* kImpliedCommand = "run";

// What the scripts need to know of one option or positional, read off the CLI11 definition.
struct OptionSpec {
  std::vector<std::string> names;  // "-q", "--quiet"; empty for a positional
  std::string name;                // the positional's or first long name, without dashes
  std::string description;
  bool takes_value = false;
  bool many = false;                 // a positional that takes several values
  bool required = false;             // a positional that must be given
  bool numeric = false;              // INT, UINT, FLOAT: nothing to complete
  std::vector<std::string> choices;  // IsMember values, e.g. auto host cuda
};

struct CommandSpec {
  std::string name, description;
  std::vector<OptionSpec> options, positionals;
};

// "TEXT:{auto,host,cuda}" (CLI11's type name with an IsMember validator) -> auto, host, cuda.
std::vector<std::string> ChoicesOf(const std::string& type_name) {
  std::vector<std::string> choices;
  const size_t open = type_name.find(":{");
  const size_t close = type_name.find('}', open);
  if (open == std::string::npos || close == std::string::npos) return choices;
  std::stringstream list(type_name.substr(open + 2, close - open - 2));
  std::string choice;
  while (std::getline(list, choice, ',')) choices.push_back(choice);
  return choices;
}

OptionSpec SpecOf(const CLI::Option& option) {
  OptionSpec spec;
  for (const std::string& s : option.get_snames()) spec.names.push_back("-" + s);
  for (const std::string& l : option.get_lnames()) spec.names.push_back("--" + l);
  spec.name = option.nonpositional() ? (option.get_lnames().empty() ? option.get_snames().front()
                                                                    : option.get_lnames().front())
                                     : option.get_name(true, false);
  spec.description = option.get_description();
  spec.takes_value = option.get_expected_max() != 0;
  spec.many = option.get_items_expected_max() > 1;
  spec.required = option.get_required();
  const std::string type = option.get_type_name();
  spec.numeric = type.rfind("INT", 0) == 0 || type.rfind("UINT", 0) == 0 ||
                 type.rfind("FLOAT", 0) == 0 || type.rfind("NUMBER", 0) == 0;
  spec.choices = ChoicesOf(type);
  return spec;
}

CommandSpec SpecOf(const CLI::App& app) {
  CommandSpec spec{app.get_name(), app.get_description(), {}, {}};
  for (const CLI::Option* option : app.get_options()) {
    (option->nonpositional() ? spec.options : spec.positionals).push_back(SpecOf(*option));
  }
  return spec;
}

std::string Join(const std::vector<std::string>& words, const std::string& separator) {
  std::string joined;
  for (const std::string& word : words) joined += (joined.empty() ? "" : separator) + word;
  return joined;
}

std::string FunctionName(const std::string& program) {
  std::string name = "_";
  for (char c : program) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

// ---- bash ----

// The body of one `case "$command"` branch: value completion after an option that takes one,
// then option names for "-...", then positional choices.
void BashBranch(const CommandSpec& command, std::ostream& out) {
  std::vector<std::string> names, no_choices;
  std::ostringstream with_choices;
  for (const OptionSpec& option : command.options) {
    names.insert(names.end(), option.names.begin(), option.names.end());
    if (!option.takes_value) continue;
    if (option.choices.empty()) {
      no_choices.insert(no_choices.end(), option.names.begin(), option.names.end());
    } else {
      with_choices << "        " << Join(option.names, "|") << ") COMPREPLY=($(compgen -W \""
                   << Join(option.choices, " ") << "\" -- \"$cur\")); return ;;\n";
    }
  }
  if (!with_choices.str().empty() || !no_choices.empty()) {
    out << "      case \"$prev\" in\n" << with_choices.str();
    // An empty reply falls back to file names (complete -o default).
    if (!no_choices.empty()) out << "        " << Join(no_choices, "|") << ") return ;;\n";
    out << "      esac\n";
  }
  out << "      options=\"" << Join(names, " ") << "\"\n";
  std::vector<std::string> positional_choices;
  for (const OptionSpec& positional : command.positionals) {
    positional_choices.insert(positional_choices.end(), positional.choices.begin(),
                              positional.choices.end());
  }
  if (!positional_choices.empty())
    out << "      words=\"" << Join(positional_choices, " ") << "\"\n";
  out << "      ;;\n";
}

}  // namespace

std::string BashCompletion(const CLI::App& app, const std::string& program) {
  const std::string function = FunctionName(program);
  std::vector<CommandSpec> commands;
  std::vector<std::string> names;
  bool has_implied = false;
  for (const CLI::App* sub : app.get_subcommands({})) {
    commands.push_back(SpecOf(*sub));
    names.push_back(sub->get_name());
    has_implied = has_implied || sub->get_name() == kImpliedCommand;
  }
  std::ostringstream out;
  out << "# bash completion for " << program << ", generated by `" << program
      << " completion bash` from its command-line definition.\n"
      << "# Install: " << program
      << " completion bash > ~/.local/share/bash-completion/completions/" << program << "\n"
      << function << "() {\n"
      << "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
      << "  local command=\"\" implied=\"\" options=\"\" words=\"\" i\n"
      << "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      << "    case \"${COMP_WORDS[i]}\" in\n"
      << "      " << Join(names, "|") << ") command=\"${COMP_WORDS[i]}\"; break ;;\n"
      << "      -*) ;;\n"
      << "      *) implied=" << (has_implied ? kImpliedCommand : "") << " ;;\n"
      << "    esac\n"
      << "  done\n"
      << "  # `" << program << " FILE...` is `" << program << " " << kImpliedCommand
      << " FILE...`.\n"
      << "  [[ -z \"$command\" ]] && command=\"$implied\"\n"
      << "  case \"$command\" in\n";
  for (const CommandSpec& command : commands) {
    out << "    " << command.name << ")\n";
    BashBranch(command, out);
  }
  CommandSpec top = SpecOf(app);
  out << "    *)\n";
  std::vector<std::string> top_names;
  for (const OptionSpec& option : top.options) {
    top_names.insert(top_names.end(), option.names.begin(), option.names.end());
  }
  out << "      options=\"" << Join(top_names, " ") << "\"\n"
      << "      words=\"" << Join(names, " ") << "\"\n"
      << "      ;;\n"
      << "  esac\n"
      << "  if [[ \"$cur\" == -* ]]; then\n"
      << "    COMPREPLY=($(compgen -W \"$options\" -- \"$cur\"))\n"
      << "  elif [[ -n \"$words\" ]]; then\n"
      << "    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
      << "  fi\n"
      << "}\n"
      << "complete -o default -F " << function << " " << program << "\n";
  return out.str();
}

// ---- zsh ----

namespace {

// Quotes `text` for an _arguments/_describe description inside single quotes.
std::string ZshDescription(const std::string& text) {
  std::string quoted;
  for (char c : text) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      if (c == '[' || c == ']' || c == ':' || c == '\\') quoted += '\\';
      quoted += c;
    }
  }
  return quoted;
}

std::string ZshAction(const OptionSpec& spec) {
  if (!spec.choices.empty()) return "(" + Join(spec.choices, " ") + ")";
  if (spec.numeric) return " ";
  return spec.name.find("dir") != std::string::npos ? "_files -/" : "_files";
}

// One _arguments spec per option and positional of `command`. An option excludes its other
// names, or everything when `ends_line` (--help, --version).
std::vector<std::string> ZshSpecs(const CommandSpec& command, bool ends_line = false) {
  std::vector<std::string> specs;
  for (const OptionSpec& option : command.options) {
    const std::string excluded = ends_line ? "- *" : Join(option.names, " ");
    const std::string described = "[" + ZshDescription(option.description) + "]";
    std::string spec = "'(" + excluded + ")";
    if (option.names.size() > 1) {
      spec += "'{" + Join(option.names, ",") + "}'" + described;
    } else {
      spec += option.names.front() + described;
    }
    if (option.takes_value) spec += ":" + option.name + ":" + ZshAction(option);
    specs.push_back(spec + "'");
  }
  for (const OptionSpec& positional : command.positionals) {
    const std::string prefix = positional.many ? "*" : positional.required ? "" : ":";
    specs.push_back("'" + prefix + ":" + positional.name + ":" + ZshAction(positional) + "'");
  }
  return specs;
}

void ZshArguments(const std::vector<std::string>& specs, const std::string& indent,
                  std::ostream& out, const std::string& flags = "") {
  out << indent << "_arguments" << (flags.empty() ? "" : " " + flags);
  for (const std::string& spec : specs) out << " \\\n" << indent << "  " << spec;
  out << "\n";
}

}  // namespace

std::string ZshCompletion(const CLI::App& app, const std::string& program) {
  const std::string function = FunctionName(program);
  std::ostringstream out;
  out << "#compdef " << program << "\n"
      << "# zsh completion for " << program << ", generated by `" << program
      << " completion zsh` from its command-line definition.\n"
      << "# Install: " << program << " completion zsh > \"${fpath[1]}/_" << program
      << "\" (or any directory on $fpath)\n"
      << function << "() {\n"
      << "  local curcontext=\"$curcontext\" state line\n"
      << "  typeset -A opt_args\n";
  std::vector<std::string> top = ZshSpecs(SpecOf(app), /*ends_line=*/true);
  top.push_back("'1: :->command'");
  top.push_back("'*:: :->argument'");
  ZshArguments(top, "  ", out, "-C");
  out << "  case $state in\n"
      << "    command)\n"
      << "      local -a commands\n"
      << "      commands=(\n";
  std::vector<CommandSpec> commands;
  for (const CLI::App* sub : app.get_subcommands({})) commands.push_back(SpecOf(*sub));
  for (const CommandSpec& command : commands) {
    out << "        '" << command.name << ":" << ZshDescription(command.description) << "'\n";
  }
  out << "      )\n"
      << "      _describe -t commands '" << program << " command' commands\n"
      << "      _files  # `" << program << " FILE...` is `" << program << " " << kImpliedCommand
      << " FILE...`\n"
      << "      ;;\n"
      << "    argument)\n"
      << "      case $line[1] in\n";
  // The implied command's branch is `*)`, so it goes last.
  std::stable_partition(commands.begin(), commands.end(),
                        [](const CommandSpec& c) { return c.name != kImpliedCommand; });
  for (const CommandSpec& command : commands) {
    out << "        " << (command.name == kImpliedCommand ? "*" : command.name) << ")\n";
    ZshArguments(ZshSpecs(command), "          ", out);
    out << "          ;;\n";
  }
  out << "      esac\n"
      << "      ;;\n"
      << "  esac\n"
      << "}\n"
      << "if [[ \"$funcstack[1]\" == \"" << function << "\" ]]; then\n"
      << "  " << function << " \"$@\"\n"
      << "else\n"
      << "  compdef " << function << " " << program << "\n"
      << "fi\n";
  return out.str();
}

int RunCompletionCommand(const CompletionOptions& options, std::ostream& out, std::ostream& err) {
  if (options.app == nullptr) {
    err << "vmm-run: internal error: completion has no command line to describe\n";
    return kExitInternal;
  }
  if (options.shell == "bash") {
    out << BashCompletion(*options.app, "vmm-run");
  } else if (options.shell == "zsh") {
    out << ZshCompletion(*options.app, "vmm-run");
  } else {
    err << "error: unknown shell '" << options.shell << "', expected bash or zsh\n";
    return kExitInputError;
  }
  return kExitPass;
}

}  // namespace vmm
