// vmm-run entry point: wires the subcommands (one file each) and is the one error boundary.
#include <CLI/CLI.hpp>
#include <csignal>
#include <exception>
#include <iostream>
#include <new>
#include <set>
#include <string>
#include <vector>

#include "runner/base/exit_code.h"
#include "runner/base/limits.h"
#include "runner/cli/compare_traces_command.h"
#include "runner/cli/completion_command.h"
#include "runner/cli/crosscheck_command.h"
#include "runner/cli/diff_command.h"
#include "runner/cli/expand_command.h"
#include "runner/cli/generate_command.h"
#include "runner/cli/import_snapshot_command.h"
#include "runner/cli/import_trace_command.h"
#include "runner/cli/pin_command.h"
#include "runner/cli/record_command.h"
#include "runner/cli/reduce_command.h"
#include "runner/cli/run_command.h"
#include "runner/cli/steps_command.h"
#include "runner/cli/timeline_command.h"
#include "runner/cli/validate_command.h"
#include "runner/cli/version_text.h"
#include "runner/engine/select/engine_select.h"
#include "runner/pipeline/isolate_child.h"

namespace {

// `vmm-run FILE...` is shorthand for `vmm-run run FILE...`: when no subcommand is named and some
// argument is not an option, "run" is inserted.
std::vector<std::string> WithDefaultSubcommand(std::vector<std::string> args,
                                               const std::set<std::string>& subcommands) {
  bool has_subcommand = false, has_positional = false;
  for (size_t i = 1; i < args.size(); ++i) {
    if (subcommands.count(args[i])) has_subcommand = true;
    if (!args[i].empty() && args[i][0] != '-') has_positional = true;
  }
  if (!has_subcommand && has_positional) args.insert(args.begin() + 1, "run");
  return args;
}

int Main(int argc, char** argv) {
  CLI::App app{
      "vmm-run: run CUDA VMM and CUDA graph scenarios, verify every claim, report as JSON.\n"
      "  vmm-run scenarios/reuse.yaml          (same as: vmm-run run ...)"};
  app.set_version_flag("--version", vmm::VersionText());
  app.require_subcommand(1);
  app.footer("Exit codes:\n" + vmm::ExitCodeTable());

  vmm::RunOptions run;
  vmm::ValidateOptions validate;
  vmm::StepsOptions steps;
  vmm::DiffOptions diff;
  vmm::ExpandCommandOptions expand;
  vmm::CompletionOptions completion;
  vmm::TimelineOptions timeline;
  vmm::GenerateOptions generate;
  vmm::CrosscheckCommandOptions crosscheck;
  vmm::ReduceCommandOptions reduce;
  vmm::ImportSnapshotOptions import_snapshot;
  vmm::PinOptions pin;
  vmm::RecordOptions record;
  vmm::ImportTraceOptions import_trace;
  vmm::CompareTracesOptions compare_traces;
  vmm::SetupRunCommand(app, run);
  vmm::SetupValidateCommand(app, validate);
  vmm::SetupStepsCommand(app, steps);
  vmm::SetupDiffCommand(app, diff);
  vmm::SetupExpandCommand(app, expand);
  vmm::SetupTimelineCommand(app, timeline);
  vmm::SetupGenerateCommand(app, generate);
  vmm::SetupCrosscheckCommand(app, crosscheck);
  vmm::SetupReduceCommand(app, reduce);
  vmm::SetupImportSnapshotCommand(app, import_snapshot);
  vmm::SetupPinCommand(app, pin);
  vmm::SetupRecordCommand(app, record);
  vmm::SetupImportTraceCommand(app, import_trace);
  vmm::SetupCompareTracesCommand(app, compare_traces);
  vmm::SetupCompletionCommand(app, completion);

  // --limit on every subcommand: the bounds are the process's (base/limits.h).
  std::vector<std::string> limits;
  std::string limit_names;
  for (const vmm::LimitInfo& info : vmm::AllLimits())
    limit_names += std::string(limit_names.empty() ? "" : ", ") + info.name;
  for (CLI::App* sub : app.get_subcommands({}))
    sub->add_option("--limit", limits,
                    "Change a bound of docs/limits-and-safety.md for this run (NAME=VALUE; " +
                        limit_names + ")");

  std::set<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) names.insert(sub->get_name());
  std::vector<std::string> args =
      WithDefaultSubcommand(std::vector<std::string>(argv, argv + argc), names);
  std::vector<char*> cargs;
  for (std::string& a : args) cargs.push_back(a.data());
  run.argv.assign(argv, argv + argc);

  try {
    app.parse(static_cast<int>(cargs.size()), cargs.data());
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);  // prints help/version (code 0) or the usage error
    return code == 0 ? vmm::kExitPass : vmm::kExitInputError;
  }
  for (const std::string& limit : limits) {
    if (vmm::Status set = vmm::SetLimit(limit); !set.ok()) {
      std::cerr << "error: " << set.message() << "\n";
      return vmm::kExitInputError;
    }
  }
  if (app.got_subcommand("run")) return vmm::RunRunCommand(run, std::cout, std::cerr);
  if (app.got_subcommand("validate"))
    return vmm::RunValidateCommand(validate, std::cout, std::cerr);
  if (app.got_subcommand("steps")) return vmm::RunStepsCommand(steps, std::cout, std::cerr);
  if (app.got_subcommand("diff")) return vmm::RunDiffCommand(diff, std::cout, std::cerr);
  if (app.got_subcommand("expand")) return vmm::RunExpandCommand(expand, std::cout, std::cerr);
  if (app.got_subcommand("timeline"))
    return vmm::RunTimelineCommand(timeline, std::cout, std::cerr);
  if (app.got_subcommand("generate"))
    return vmm::RunGenerateCommand(generate, std::cout, std::cerr);
  if (app.got_subcommand("crosscheck"))
    return vmm::RunCrosscheckCommand(crosscheck, std::cout, std::cerr);
  if (app.got_subcommand("reduce")) return vmm::RunReduceCommand(reduce, std::cout, std::cerr);
  if (app.got_subcommand("pin")) return vmm::RunPinCommand(pin, std::cout, std::cerr);
  if (app.got_subcommand("import-snapshot"))
    return vmm::RunImportSnapshotCommand(import_snapshot, std::cout, std::cerr);
  if (app.got_subcommand("record")) return vmm::RunRecordCommand(record, std::cout, std::cerr);
  if (app.got_subcommand("import-trace"))
    return vmm::RunImportTraceCommand(import_trace, std::cout, std::cerr);
  if (app.got_subcommand("compare-traces"))
    return vmm::RunCompareTracesCommand(compare_traces, std::cout, std::cerr);
  if (app.got_subcommand("completion"))
    return vmm::RunCompletionCommand(completion, std::cout, std::cerr);
  return vmm::kExitInputError;
}

}  // namespace

int main(int argc, char** argv) {
  // Past a file-size limit (ulimit -f) a write fails with EFBIG, which every writer reports (and
  // the atomic writer cleans up after), instead of SIGXFSZ ending the process without a word.
  std::signal(SIGXFSZ, SIG_IGN);
  try {
    // The child of an isolate block (runner/pipeline/isolate_child.h): not a subcommand for people,
    // so it is not in --help.
    if (argc >= 2 && std::string(argv[1]) == "__child") return vmm::RunIsolateChild(argc, argv);
    // The process that checkpoints an isolate block's child (engine_select.h): not for people.
    if (argc >= 2 && std::string(argv[1]) == "__checkpoint-helper")
      return vmm::RunCheckpointHelperProcess(argc, argv);
    return Main(argc, argv);
  } catch (const std::bad_alloc&) {
    // Out of memory outside a step (a step's own is a step failure, reported in its report): the
    // input is larger than this process may hold, which is the input's to change, not a bug.
    std::cerr << "vmm-run: error: out of memory while reading, expanding or checking the input; "
                 "make it smaller (docs/limits-and-safety.md says what each bound costs) or run "
                 "where more memory is allowed\n";
    return vmm::kExitInputError;
  } catch (const std::exception& e) {
    std::cerr << "vmm-run: internal error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "vmm-run: internal error: unknown exception\n";
  }
  return vmm::kExitInternal;
}
