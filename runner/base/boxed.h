// Boxed<T>: an optional value kept on the heap, with std::optional's interface and value
// semantics (copies are deep). For members that are usually empty in objects made by the
// thousand: an empty Boxed costs one pointer instead of sizeof(T) + a flag.
#pragma once

#include <cassert>
#include <memory>
#include <optional>
#include <utility>

namespace vmm {

template <typename T>
class Boxed {
 public:
  Boxed() = default;
  Boxed(std::nullopt_t) {}                                       // NOLINT: as std::optional
  Boxed(T value) : p_(std::make_unique<T>(std::move(value))) {}  // NOLINT: as std::optional
  Boxed(const Boxed& other) : p_(other.p_ ? std::make_unique<T>(*other.p_) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& other) {
    if (this != &other) p_ = other.p_ ? std::make_unique<T>(*other.p_) : nullptr;
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;
  Boxed& operator=(T value) {
    if (p_) {
      *p_ = std::move(value);
    } else {
      p_ = std::make_unique<T>(std::move(value));
    }
    return *this;
  }
  Boxed& operator=(std::optional<T> value) {
    if (value) return *this = std::move(*value);
    p_.reset();
    return *this;
  }
  Boxed& operator=(std::nullopt_t) {
    p_.reset();
    return *this;
  }

  bool has_value() const { return p_ != nullptr; }
  explicit operator bool() const { return p_ != nullptr; }
  T& operator*() {
    assert(p_);
    return *p_;
  }
  const T& operator*() const {
    assert(p_);
    return *p_;
  }
  T* operator->() {
    assert(p_);
    return p_.get();
  }
  const T* operator->() const {
    assert(p_);
    return p_.get();
  }
  template <typename... Args>
  T& emplace(Args&&... args) {
    p_ = std::make_unique<T>(std::forward<Args>(args)...);
    return *p_;
  }
  void reset() { p_.reset(); }

  friend bool operator==(const Boxed& b, std::nullopt_t) { return !b.p_; }

 private:
  std::unique_ptr<T> p_;
};

}  // namespace vmm
