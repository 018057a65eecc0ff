#include "runner/vocab/isolate.h"

#include <cctype>
#include <csignal>

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

// Runtime error names whose driver name is not the mechanical spelling (same numbers).
struct RuntimeAlias {
  const char* runtime;  // after "cudaError"
  const char* driver;
};
constexpr RuntimeAlias kRuntimeAliases[] = {
    {"LaunchFailure", "CUDA_ERROR_LAUNCH_FAILED"},
    {"MemoryAllocation", "CUDA_ERROR_OUT_OF_MEMORY"},
    {"InitializationError", "CUDA_ERROR_NOT_INITIALIZED"},
    {"InvalidResourceHandle", "CUDA_ERROR_INVALID_HANDLE"},
    {"CudartUnloading", "CUDA_ERROR_DEINITIALIZED"},
};

bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// "IllegalAddress" -> "CUDA_ERROR_ILLEGAL_ADDRESS".
std::string DriverSpelling(std::string_view camel) {
  for (const RuntimeAlias& a : kRuntimeAliases)
    if (camel == a.runtime) return a.driver;
  std::string out = "CUDA_ERROR";
  for (size_t i = 0; i < camel.size(); ++i) {
    const char c = camel[i];
    if (std::isupper(static_cast<unsigned char>(c)) != 0) out += '_';
    out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return out;
}

}  // namespace

std::string BlockExpectation::Text() const {
  switch (kind) {
    case BlockExpect::kOk:
      return "ok";
    case BlockExpect::kError:
      return error;
    case BlockExpect::kSignal:
      return "signal " + SignalText(signal);
    case BlockExpect::kTimeout:
      return "timeout " + DurationText(limit_ns);
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
  const size_t driver = message.find("CUDA_ERROR_");
  const size_t runtime = message.find("cudaError");
  if (driver != std::string_view::npos && (runtime == std::string_view::npos || driver < runtime)) {
    size_t end = driver;
    while (end < message.size() && IsNameChar(message[end])) ++end;
    return std::string(message.substr(driver, end - driver));
  }
  if (runtime == std::string_view::npos) return "";
  const size_t start = runtime + 9;  // after "cudaError"
  size_t end = start;
  while (end < message.size() && std::isalnum(static_cast<unsigned char>(message[end])) != 0) ++end;
  if (end == start || std::isupper(static_cast<unsigned char>(message[start])) == 0) return "";
  return DriverSpelling(message.substr(start, end - start));
}

}  // namespace vmm
