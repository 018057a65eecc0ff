#include "runner/vocab/isolate.h"

#include <cctype>
#include <csignal>

#include "runner/vocab/cuda_errors.h"

namespace vmm {
namespace {

struct SignalName {
  const char* name;
  int number;
};
// What a child can die of that a scenario might mean; the schema's enum lists the same names.
constexpr SignalName kSignals[] = {
    {"SIGSEGV", SIGSEGV}, {"SIGBUS", SIGBUS},   {"SIGABRT", SIGABRT}, {"SIGILL", SIGILL},
    {"SIGFPE", SIGFPE},   {"SIGKILL", SIGKILL}, {"SIGTERM", SIGTERM}, {"SIGINT", SIGINT},
    {"SIGHUP", SIGHUP},   {"SIGUSR1", SIGUSR1}, {"SIGUSR2", SIGUSR2}, {"SIGTRAP", SIGTRAP},
    {"SIGPIPE", SIGPIPE}, {"SIGSYS", SIGSYS},
};

bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

}  // namespace

std::string AtText(const std::string& step) { return step.empty() ? "" : " at '" + step + "'"; }

std::string BlockExpectation::Text() const {
  switch (kind) {
    case BlockExpect::kOk:
      return "ok";
    case BlockExpect::kError:
      return error + AtText(at);
    case BlockExpect::kSignal:
      return "signal " + SignalText(signal) + AtText(at);
    case BlockExpect::kTimeout:
      return "timeout " + DurationText(limit_ns);
    case BlockExpect::kObserve:
      return "observe";
  }
  return "ok";
}

int SignalNumber(std::string_view name) {
  for (const SignalName& s : kSignals)
    if (name == s.name) return s.number;
  return 0;
}

std::string SignalText(int signal_number) {
  for (const SignalName& s : kSignals)
    if (s.number == signal_number) return s.name;
  return "signal " + std::to_string(signal_number);
}

std::string SignalNames() {
  std::string out;
  for (const SignalName& s : kSignals) out += (out.empty() ? "" : ", ") + std::string(s.name);
  return out;
}

std::string DurationText(uint64_t ns) {
  struct Unit {
    uint64_t ns;
    const char* name;
  };
  constexpr Unit kUnits[] = {{1000000000, "s"}, {1000000, "ms"}, {1000, "us"}, {1, "ns"}};
  for (const Unit& u : kUnits)
    if (ns != 0 && ns % u.ns == 0) return std::to_string(ns / u.ns) + u.name;
  return "0s";
}

std::string CudaErrorNameIn(std::string_view message) {
  // The first CUDA error name in the message that runner/vocab/cuda_errors.h knows, driver
  // ("CUDA_ERROR_...") or runtime ("cudaError...", by the driver name it stands for).
  for (size_t i = 0; i < message.size(); ++i) {
    if (i > 0 && IsNameChar(message[i - 1])) continue;  // a token starts here
    size_t end = i;
    while (end < message.size() && IsNameChar(message[end])) ++end;
    if (end == i) continue;
    const std::string_view token = message.substr(i, end - i);
    if (token.rfind("CUDA_ERROR_", 0) == 0) {
      if (const CudaErrorName* e = FindCudaError(token)) return e->name;
    } else if (token.rfind("cudaError", 0) == 0) {
      if (const char* driver = DriverNameOfRuntimeError(token)) return driver;
    }
    i = end - 1;
  }
  return "";
}

}  // namespace vmm
