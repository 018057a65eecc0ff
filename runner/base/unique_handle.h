// UniqueHandle<Traits>: the one move-only owner of every handle in vmm-run (driver VMM objects,
// runtime streams/events/graphs, host fds, reservations and mappings), after std::unique_ptr with
// a deleter. Copying is deleted; a move leaves the source empty (std::exchange); the destructor is
// noexcept and releases a non-empty value exactly once. No allocation, no indirection: the object
// is exactly the Value it owns.
//
// Traits say what is owned and how to release it:
//   struct FdTraits {
//     using Value = int;                              // copyable, nothrow-movable; may be a struct
//     static constexpr Value kNull = -1;              // what an empty handle holds
//     static void Release(const Value& v) noexcept;   // called once per owned value
//     static bool IsNull(const Value& v) noexcept;    // optional; default: v == kNull
//   };
//   using UniqueFd = UniqueHandle<FdTraits>;
//
// Construction from a raw value is explicit and belongs in a factory that returns StatusOr<...>
// (style item 6). Release order between handles is encoded by their owners (member order,
// containers emptied newest-first), not here. Not thread-safe.
#pragma once

#include <type_traits>
#include <utility>

namespace vmm {

template <typename Traits>
class UniqueHandle {
 public:
  using Value = typename Traits::Value;

  static_assert(std::is_nothrow_move_constructible_v<Value> &&
                    std::is_nothrow_move_assignable_v<Value>,
                "UniqueHandle: Traits::Value must be nothrow-movable");
  static_assert(noexcept(Traits::Release(std::declval<const Value&>())),
                "UniqueHandle: Traits::Release must be noexcept");

  // Empty (holds Traits::kNull).
  UniqueHandle() noexcept : value_(Traits::kNull) {}
  // Takes ownership of `value` (which may be kNull: then the handle is empty).
  explicit UniqueHandle(Value value) noexcept : value_(std::move(value)) {}

  UniqueHandle(UniqueHandle&& other) noexcept : value_(other.release()) {}
  // Releases what this handle owned, then takes other's value. Self-move keeps the value (release()
  // empties the handle before reset() looks at what it held).
  UniqueHandle& operator=(UniqueHandle&& other) noexcept {
    reset(other.release());
    return *this;
  }
  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;
  ~UniqueHandle() { reset(); }

  // The owned value (kNull when empty). Never release it by other means while owned.
  const Value& get() const noexcept { return value_; }
  const Value* operator->() const noexcept { return &value_; }
  explicit operator bool() const noexcept { return !IsNull(value_); }

  // Gives up ownership without releasing: returns the value and leaves the handle empty. For a
  // value that was released by other means (e.g. one driver call unmapped several mappings).
  Value release() noexcept { return std::exchange(value_, Traits::kNull); }

  // Releases the owned value (if any) and takes `value` instead. The new value is stored before the
  // old one is released, as std::unique_ptr::reset does. `value` must not be the one owned now.
  void reset(Value value = Traits::kNull) noexcept {
    Value old = std::exchange(value_, std::move(value));
    if (!IsNull(old)) Traits::Release(old);
  }

 private:
  static bool IsNull(const Value& value) noexcept {
    if constexpr (requires { Traits::IsNull(value); }) {
      return Traits::IsNull(value);
    } else {
      return value == Traits::kNull;
    }
  }

  Value value_;
};

}  // namespace vmm
