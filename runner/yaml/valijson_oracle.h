// ValijsonOracle: validates documents with valijson, a reference draft-07 implementation, over its
// yaml-cpp adapter, against the same schema text SchemaValidator compiles.
//
// Why it is not on the parse path: over the yaml-cpp adapter valijson costs ~13 µs per step even
// when each step is checked against its op's sub-schema only (the adapter copies nodes and strings
// on every lookup), which alone is several times the parse budget; its messages are also generic.
// SchemaValidator does the work; the oracle keeps it honest: tests run both over every scenario and
// bad input and assert they agree on valid/invalid, and callers may offer it as a cross-check.
//
// Known differences in valijson 1.0 (Debian 12), fixed upstream later: its yaml-cpp adapter treats
// maps and lists as strings (valijson PR #185), so `name: {a: 1}` passes; and its uniqueItems check
// needs a bidirectional iterator the adapter lacks (PR #175), which the .cc works around.
//
// Thread safety: Validate is const and uses no shared mutable state.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runner/base/diagnostic.h"
#include "runner/base/status.h"

namespace vmm {

class ValijsonOracle {
 public:
  // Parses `schema_json` with valijson; fails with kInvalidInput when valijson cannot.
  static StatusOr<ValijsonOracle> Create(const std::string& schema_json);

  ValijsonOracle(ValijsonOracle&&) noexcept;
  ValijsonOracle& operator=(ValijsonOracle&&) noexcept;
  ~ValijsonOracle();

  // valijson's errors for `text` (the contents of `file`), each located at the YAML node its
  // context path (<root> [steps] [3] [size]) names, in valijson's own wording. Text that is not
  // YAML yields one "invalid YAML" diagnostic.
  std::vector<Diagnostic> Validate(const std::string& text, const std::string& file) const;

 private:
  struct Impl;
  explicit ValijsonOracle(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace vmm
