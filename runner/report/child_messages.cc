#include "runner/report/child_messages.h"

#include "runner/report/json_limits.h"
#include "runner/report/record_json.h"

namespace vmm::report {
namespace {

using json::Json;

// Parses `text` as a JSON object, or says why not.
StatusOr<Json> ParseObject(const std::string& text, const char* what) {
  VMM_RETURN_IF_ERROR(CheckJsonLimits(text, what));
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::exception& e) {
    return InvalidInput(std::string(what) + ": invalid JSON: " + e.what());
  }
  if (!j.is_object()) return InvalidInput(std::string(what) + ": expected a JSON object");
  return j;
}

// j[key] as T, or *error set (first problem only).
template <typename T>
T Get(const Json& j, const char* key, std::string* error) {
  auto it = j.find(key);
  if (it != j.end()) {
    try {
      return it->get<T>();
    } catch (const Json::exception&) {
    }
  }
  if (error->empty()) *error = std::string("missing or mistyped '") + key + "'";
  return T{};
}

}  // namespace

std::string EncodeBlockRequest(const BlockRequest& r) {
  Json j;
  j["type"] = "run_block";
  j["protocol"] = kBlockProtocolVersion;
  j["scenario_path"] = r.scenario_path;
  j["scenario_text"] = r.scenario_text;
  Json set = Json::array();
  for (const auto& [name, value] : r.set) set.push_back(Json::array({name, value}));
  j["set"] = std::move(set);
  Json facts = Json::array();
  for (const auto& [name, value] : r.facts) facts.push_back(Json::array({name, value}));
  j["facts"] = std::move(facts);
  j["include_roots"] = r.include_roots;
  j["limits"] = r.limits;
  j["block"] = r.block;
  j["member"] = r.member;
  j["backend"] = r.backend;
  j["device"] = r.device;
  j["host_devices"] = r.host_devices;
  j["fds"] = r.fds;
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

StatusOr<BlockRequest> DecodeBlockRequest(const std::string& text) {
  StatusOr<Json> parsed = ParseObject(text, "block request");
  if (!parsed.ok()) return parsed.status();
  const Json& j = parsed.value();
  std::string error;
  if (Get<std::string>(j, "type", &error) != "run_block" ||
      Get<int>(j, "protocol", &error) != kBlockProtocolVersion) {
    return InvalidInput("block request: not a run_block message of protocol " +
                        std::to_string(kBlockProtocolVersion));
  }
  BlockRequest r;
  r.scenario_path = Get<std::string>(j, "scenario_path", &error);
  r.scenario_text = Get<std::string>(j, "scenario_text", &error);
  for (const auto& pair : Get<std::vector<std::vector<std::string>>>(j, "set", &error)) {
    if (pair.size() != 2) {
      error = "'set' holds a pair that is not [name, value]";
      break;
    }
    r.set.emplace_back(pair[0], pair[1]);
  }
  if (j.contains("facts")) {
    for (const auto& pair : Get<std::vector<std::vector<std::string>>>(j, "facts", &error)) {
      if (pair.size() != 2) {
        error = "'facts' holds a pair that is not [name, value]";
        break;
      }
      r.facts.emplace_back(pair[0], pair[1]);
    }
  }
  if (j.contains("include_roots"))
    r.include_roots = Get<std::vector<std::string>>(j, "include_roots", &error);
  if (j.contains("limits")) r.limits = Get<std::vector<std::string>>(j, "limits", &error);
  r.block = Get<int>(j, "block", &error);
  r.member = Get<int>(j, "member", &error);
  r.backend = Get<std::string>(j, "backend", &error);
  r.device = Get<int>(j, "device", &error);
  if (j.contains("host_devices")) r.host_devices = Get<int>(j, "host_devices", &error);
  r.fds = Get<std::vector<std::string>>(j, "fds", &error);
  if (!error.empty()) return InvalidInput("block request: " + error);
  return r;
}

std::string EncodeChildEvent(const ChildEvent& e) {
  Json j;
  switch (e.kind) {
    case ChildEvent::Kind::kHello:
      j["type"] = "hello";
      j["pid"] = e.pid;
      j["fds"] = e.fds;
      break;
    case ChildEvent::Kind::kStep:
      j["type"] = "step";
      j["record"] = json::StepToJson(e.step);
      break;
    case ChildEvent::Kind::kDone:
      j["type"] = "done";
      j["summary"] = json::SummaryToJson(e.summary);
      j["setup_error"] = e.setup_error;
      j["fault"] = e.fault;
      j["end_error"] = e.end_error;
      break;
  }
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

StatusOr<ChildEvent> DecodeChildEvent(const std::string& text) {
  StatusOr<Json> parsed = ParseObject(text, "child message");
  if (!parsed.ok()) return parsed.status();
  const Json& j = parsed.value();
  std::string error;
  const std::string type = Get<std::string>(j, "type", &error);
  ChildEvent e;
  std::vector<std::string> errors;
  if (type == "hello") {
    e.kind = ChildEvent::Kind::kHello;
    e.pid = Get<int64_t>(j, "pid", &error);
    e.fds = Get<std::vector<std::string>>(j, "fds", &error);
  } else if (type == "step") {
    e.kind = ChildEvent::Kind::kStep;
    auto it = j.find("record");
    if (it == j.end()) {
      error = "missing 'record'";
    } else {
      e.step = json::StepFromJson(*it, "child message", "/record", &errors);
    }
  } else if (type == "done") {
    e.kind = ChildEvent::Kind::kDone;
    auto it = j.find("summary");
    if (it == j.end()) {
      error = "missing 'summary'";
    } else {
      e.summary = json::SummaryFromJson(*it, "child message", &errors);
    }
    e.setup_error = Get<std::string>(j, "setup_error", &error);
    e.fault = Get<std::string>(j, "fault", &error);
    e.end_error = Get<std::string>(j, "end_error", &error);
  } else if (error.empty()) {
    error = "unknown type '" + type + "'";
  }
  if (!errors.empty()) return InvalidInput(errors.front());
  if (!error.empty()) return InvalidInput("child message: " + error);
  return e;
}

}  // namespace vmm::report
