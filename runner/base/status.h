// Status and StatusOr: errors as values in the core (no exceptions cross a layer boundary).
//
// A Status is either ok or carries a Code and a message that says what failed and, where possible,
// what to change. The CLI turns codes into exit codes (kInvalidInput 2, kUnavailable 3, kRuntime
// 4). A failure that a CUDA driver or runtime call returned (or that the host twin returns in its
// place) also names that error, as a field (cuda_error), so callers compare codes without parsing
// messages.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace vmm {

enum class Code {
  kOk = 0,
  kInvalidInput,  // scenario, config or usage error: nothing ran (exit 2)
  kUnavailable,   // backend not available on this machine (exit 3)
  kRuntime,       // a step failed while running (exit 4)
  kInternal,      // a bug in vmm-run itself
};

class [[nodiscard]] Status {
 public:
  Status() = default;  // ok
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  // `cuda_error` must point to a string with static storage duration (a literal, or a name from
  // runner/vocab/cuda_errors.h); nullptr for none.
  Status(Code code, std::string message, const char* cuda_error)
      : code_(code), message_(std::move(message)), cuda_error_(cuda_error) {}

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // The CUresult name of the failed driver call ("CUDA_ERROR_INVALID_VALUE"; a runtime error is
  // given by the driver name it stands for), or nullptr when the failure did not come from a CUDA
  // call (or the backend could not name it). Never set on an ok Status.
  const char* cuda_error() const { return cuda_error_; }

  // Returns a copy whose message is "context: message" (the CUDA error is kept).
  Status WithContext(const std::string& context) const {
    if (ok()) return *this;
    return Status(code_, context + ": " + message_, cuda_error_);
  }

 private:
  Code code_ = Code::kOk;
  std::string message_;
  const char* cuda_error_ = nullptr;
};

inline Status InvalidInput(std::string m) { return Status(Code::kInvalidInput, std::move(m)); }
inline Status Unavailable(std::string m) { return Status(Code::kUnavailable, std::move(m)); }
inline Status RuntimeError(std::string m) { return Status(Code::kRuntime, std::move(m)); }
inline Status InternalError(std::string m) { return Status(Code::kInternal, std::move(m)); }

// Holds either a value or a non-ok Status.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  StatusOr(Status status) : status_(std::move(status)) { assert(!status_.ok()); }  // NOLINT

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace vmm

// Returns early from the enclosing function with the Status of `expr` when it is not ok.
#define VMM_RETURN_IF_ERROR(expr)              \
  do {                                         \
    ::vmm::Status vmm_status_ = (expr);        \
    if (!vmm_status_.ok()) return vmm_status_; \
  } while (0)
