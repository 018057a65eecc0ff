#include "runner/exec/step_text.h"

#include <cstdio>
#include <variant>

namespace vmm {

std::string DetailText(const report::StepRecord& record, const std::string& key) {
  for (const auto& [k, v] : record.details) {
    if (k != key) continue;
    if (const auto* s = std::get_if<std::string>(&v)) return *s;
    if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
    if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
    if (const auto* d = std::get_if<double>(&v)) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.3g", *d);
      return buf;
    }
  }
  return "";
}

std::string AddressText(const report::StepRecord& record, const std::string& key) {
  for (const auto& [k, v] : record.addresses)
    if (k == key) return std::get<std::string>(v);
  return "?";
}

std::string VerdictText(const report::StepRecord& record) {
  if (!record.check) return "";
  return record.check->verdict == report::Verdict::kPass ? "PASS" : "FAIL";
}

std::string SyncText(const report::StepRecord& record) {
  if (DetailText(record, "wait") == "false") return "sent without waiting for in-flight work";
  return DetailText(record, "waited_for_work") == "true"
             ? "waited " + DetailText(record, "wait_us") + " µs for in-flight work"
             : "no work in flight";
}

std::string FloatText(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string ElementwiseText(const Plan& plan, const PlanStep& step) {
  auto name = [&](int slot) { return plan.buffers[slot].name; };
  std::string text = name(step.c) + " = ";
  if (step.op != Op::kAdd && !(step.op == Op::kCheckElementwise && step.alpha == 1.0f))
    text += FloatText(step.alpha) + "·";
  text += name(step.a);
  if (step.b >= 0) text += " + " + name(step.b);
  return text;
}

}  // namespace vmm
