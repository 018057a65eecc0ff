// Internal to runner/report: the JSON encoding of a details Scalar (see report_io.h for the rules).
#pragma once

#include <nlohmann/json.hpp>

#include "runner/report/report.h"

namespace vmm::report {

// Largest integer every JSON reader (IEEE double) holds exactly: 2^53 - 1.
inline constexpr int64_t kMaxExactJsonInteger = (int64_t{1} << 53) - 1;

nlohmann::ordered_json ScalarToJson(const Scalar& value);

// The inverse of ScalarToJson. Returns false (and leaves *out alone) for arrays and objects.
bool JsonToScalar(const nlohmann::ordered_json& j, Scalar* out);

}  // namespace vmm::report
