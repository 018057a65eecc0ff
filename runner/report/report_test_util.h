// Test-only helpers for runner/report tests (linked into vmm_tests, never into vmm-run).
#pragma once

#include <string>

#include "runner/report/report.h"

namespace vmm::report::testutil {

// A small, fully populated report modelled on scenarios/graph_update.yaml: named and unnamed steps,
// a capture with a body, timing stats, addresses, hashes, every kind of check, every Scalar type.
Report SampleReport();

// Validates `json_text` against the draft-07 schema in "<source dir>/<schema_path>" with valijson.
// Returns "" when valid, else one line per error ("<pointer>: <description>").
std::string SchemaErrors(const std::string& json_text, const std::string& schema_path);

// A fresh empty directory under the test temp dir (removed and recreated on each call).
std::string TempDir(const std::string& name);

// The file's contents, or "<missing>" when it cannot be read.
std::string ReadAll(const std::string& path);

}  // namespace vmm::report::testutil
