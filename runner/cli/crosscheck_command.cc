#include "runner/cli/crosscheck_command.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <map>
#include <ostream>

#include "runner/base/exit_code.h"
#include "runner/cli/generate_command.h"
#include "runner/cli/run_command.h"
#include "runner/report/atomic_file.h"
#include "runner/report/report_io.h"

namespace vmm {
namespace {

namespace fs = std::filesystem;

// Disagreements of one kind written to <out>/<name>/ at most (each is five files; a systematic
// difference can make thousands, which the summary counts).
constexpr int kMaxWrittenPerKind = 10;

std::string Seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", s);
  return text;
}

std::string SafeDirName(const std::string& name) {
  std::string out;
  for (char c : fs::path(name).stem().string())
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') ? c : '_';
  return out.empty() ? "scenario" : out;
}

// DIR/<name>/: scenario.yaml (shrunk), original.yaml, <reference>.json, <model>.json, diff.txt.
Status WriteDisagreement(const std::string& dir, const Disagreement& d, const std::string& ref,
                         const std::string& model) {
  const fs::path at = fs::path(dir) / SafeDirName(d.name);
  std::error_code ec;
  fs::create_directories(at, ec);
  if (ec) return RuntimeError("cannot create '" + at.string() + "': " + ec.message());
  std::string rows;
  for (const report::DiffRow& r : d.rows)
    rows += std::string(report::RowKindName(r.kind)) + " | " + r.step + " | " + r.field + " | " +
            r.base.value_or("-") + " | " + r.now.value_or("-") + " | " + r.reason + "\n";
  std::string header = "# Shrunk by vmm-run crosscheck from " +
                       std::to_string(d.shrink.steps_before) + " to " +
                       std::to_string(d.shrink.steps_after) + " steps; it keeps the disagreement " +
                       d.signature + "\n";
  const std::pair<std::string, std::string> files[] = {
      {"scenario.yaml", header + d.shrunk},
      {"original.yaml", d.text},
      {ref + ".json", report::ReportToJson(d.reference)},
      {model + ".json", report::ReportToJson(d.model)},
      {"diff.txt", "reference: " + ref + ", model: " + model + " (kind | step | field | " + ref +
                       " | " + model + " | why)\n" + rows}};
  for (const auto& [file, text] : files)
    VMM_RETURN_IF_ERROR(report::WriteFileAtomically((at / file).string(), text));
  return Status::Ok();
}

}  // namespace

void SetupCrosscheckCommand(CLI::App& app, CrosscheckCommandOptions& options) {
  CLI::App* c = app.add_subcommand(
      "crosscheck",
      "Run generated scenarios (or FILEs) on two backends, diff them, shrink disagreements");
  c->add_option("files", options.run.files, "Scenario files instead of generated ones")
      ->check(CLI::ExistingFile);
  AddGeneratorOptions(c, options.run.gen, options.max_tensor);
  c->add_option("--count", options.run.count, "How many generated scenarios")
      ->check(CLI::Range(1, 10000000))
      ->capture_default_str();
  c->add_option("--reference", options.reference, "The ground truth's backend")
      ->check(CLI::IsMember({"host", "cuda"}))
      ->capture_default_str();
  c->add_option("--model", options.model, "The backend held to it")
      ->check(CLI::IsMember({"host", "cuda"}))
      ->capture_default_str();
  AddDeviceOptions(c, options.run.device, options.run.host_devices);
  c->add_option("--out", options.out_dir, "Where each disagreement is written (<out>/<name>/)")
      ->capture_default_str();
  c->add_flag("--no-shrink", options.no_shrink, "Save disagreements as they were found");
  c->add_option("--shrink-budget", options.run.shrink_budget,
                "Candidates the shrinker may run per disagreement")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  c->add_option("--shrinks-per-kind", options.run.shrinks_per_signature,
                "Disagreements of one kind shrunk (later ones are saved as found)")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  c->add_option("--time-limit", options.run.time_limit_s,
                "Start no scenario after this many seconds (0: no limit)")
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  c->add_flag("-q,--quiet", options.quiet, "Print only disagreements and the summary");
}

int RunCrosscheckCommand(const CrosscheckCommandOptions& options, std::ostream& out,
                         std::ostream& err) {
  CrosscheckOptions run = options.run;
  if (!ResolveGeneratorOptions(options.max_tensor, &run.gen, err)) return kExitInputError;
  ParseBackendKind(options.reference, &run.reference);
  ParseBackendKind(options.model, &run.model);
  run.shrink = !options.no_shrink;
  out << "crosscheck: reference " << options.reference << ", model " << options.model << "; "
      << (run.files.empty() ? std::to_string(run.count) + " generated scenarios from seed " +
                                  std::to_string(run.gen.seed) +
                                  " (replay one with vmm-run "
                                  "generate --seed N and the same options)"
                            : std::to_string(run.files.size()) + " files")
      << "\n";
  run.progress = [&](const std::string& name, const std::string& outcome) {
    if (!options.quiet || outcome != "agree") out << name << ": " << outcome << "\n";
    out.flush();
  };
  std::map<std::string, int> written;  // by kind
  run.found = [&](const Disagreement& d) {
    if (written[d.signature]++ >= kMaxWrittenPerKind) return;  // counted in the summary
    if (Status w = WriteDisagreement(options.out_dir, d, options.reference, options.model); !w.ok())
      err << "error: " << w.message() << "\n";
  };
  StatusOr<CrosscheckSummary> done = RunCrosscheck(run);
  if (!done.ok()) {
    err << "error: " << done.status().message() << "\n";
    return ExitForStatus(done.status());
  }
  const CrosscheckSummary& s = *done;
  int code = kExitPass;
  std::map<std::string, int> kinds;
  for (const Disagreement& d : s.disagreements) {
    if (kinds[d.signature]++ >= 3) {  // the first few of each kind by name; the rest counted
      code = WorseExit(code, kExitCheckFailed);
      continue;
    }
    out << "disagreement " << d.name << " (" << d.signature << "): ";
    if (d.shrink.candidates > 0) {
      out << "shrunk from " << d.shrink.steps_before << " to " << d.shrink.steps_after
          << " steps in " << d.shrink.candidates << " runs";
    } else {  // --no-shrink, or --shrinks-per-kind of this kind already shrunk
      out << "saved as found (not shrunk)";
    }
    out << "; " << options.out_dir << "/" << SafeDirName(d.name) << "/\n";
    code = WorseExit(code, kExitCheckFailed);
  }
  for (const auto& [name, why] : s.failures) {
    out << "failed " << name << ": " << why << (why.empty() || why.back() != '\n' ? "\n" : "");
    code = WorseExit(code, run.files.empty() ? kExitInternal : kExitInputError);
  }
  if (s.time_limit_hit)
    out << "stopped at the time limit (" << run.time_limit_s << " s) after " << s.scenarios
        << " scenarios\n";
  for (const auto& [kind, n] : kinds) out << "kind " << kind << ": " << n << " scenario(s)\n";
  out << "\nsummary: " << s.scenarios << " scenarios, " << s.steps << " step records ("
      << options.reference << "); " << s.agreed << " agreed (" << s.skipped << " skipped on both), "
      << s.disagreements.size() << " disagreed, " << s.invalid << " invalid, " << s.internal
      << " internal errors\n";
  out << "results (" << options.reference << "):";
  for (const auto& [result, n] : s.results) out << " " << result << " " << n;
  out << "\ntime: generate " << Seconds(s.generate_s) << ", " << options.reference << " "
      << Seconds(s.reference_s) << ", " << options.model << " " << Seconds(s.model_s)
      << " (shrinking " << Seconds(s.shrink_s) << " of them)\n";
  out << "step records by op:";
  for (const auto& [op, n] : s.ops) out << " " << op << " " << n;
  out << "\nrefusals by VMM rule:";
  for (const auto& [rule, n] : s.rules) out << " " << rule << " " << n;
  out << "\nresult: " << (code == kExitPass ? "every scenario agreed" : "see above") << "\n";
  return code;
}

}  // namespace vmm
