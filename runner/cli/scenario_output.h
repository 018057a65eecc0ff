// What import-snapshot and pin do last: a scenario they wrote, validated (schema, then the
// VMM/graph rules) before it goes anywhere, then printed to `out` or written atomically to a file.
#pragma once

#include <iosfwd>
#include <string>

namespace vmm {

struct ScenarioOutput {
  std::string target;          // the file to write; "": print it to `out`
  std::string name;            // how messages name the scenario (its path, or "<stdout>")
  int invalid_exit = 0;        // the exit code when it does not validate
  std::string invalid_header;  // the line before the diagnostics then
};

// Returns 0 when printed or written (then `err` gets "<what> <target> (N steps)"), else the exit
// code, with the reason on `err`.
int EmitScenario(const std::string& text, const ScenarioOutput& output, const std::string& what,
                 std::ostream& out, std::ostream& err);

// An importer's scenario (import-snapshot, import-trace) to `target` ("": stdout). It must
// validate: one that does not is the importer's bug (exit 70, asking for the `input_kind` file).
int EmitImportedScenario(const std::string& text, const std::string& target,
                         const std::string& input_kind, std::ostream& out, std::ostream& err);

}  // namespace vmm
