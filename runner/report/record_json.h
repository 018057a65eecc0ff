// Internal to runner/report: the JSON form of the report's parts, shared by the report writer and
// reader (report_io.cc, report_parse.cc) and the isolate protocol's messages (child_messages.cc),
// so a step record streamed from a child reads exactly like one in a report.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runner/report/report.h"

namespace vmm::report::json {

using Json = nlohmann::ordered_json;

Json StepToJson(const StepRecord& step);
Json SummaryToJson(const Summary& summary);

// Readers: problems are appended to *errors as "<name>: <pointer>: <what>" (pointer relative to
// `pointer`); the result holds what could be read.
StepRecord StepFromJson(const Json& j, const std::string& name, const std::string& pointer,
                        std::vector<std::string>* errors);
Summary SummaryFromJson(const Json& j, const std::string& name, std::vector<std::string>* errors);

}  // namespace vmm::report::json
