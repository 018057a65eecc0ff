// SmallVector<T, N>: a vector whose first N elements live inside the object; a longer one moves
// them all to the heap, as std::vector would. For lists that are short in objects made by the
// hundred thousand (a step record's details): no allocation until the list outgrows N.
//
// The interface is the part of std::vector the tree uses: push_back, emplace_back, reserve,
// erase, clear, size, indexing, iteration (T* iterators: contiguous, so std::span accepts it),
// comparison. Copies are deep; a move steals a heap buffer and moves inline elements one by one.
// Iterators and references are invalidated as std::vector's are (by growth, erase, clear), and
// also by a move of the SmallVector itself while its elements are inline.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace vmm {

template <typename T, size_t N>
class SmallVector {
  static_assert(N > 0, "a SmallVector holds at least one element inline");
  // Growth and the noexcept move move elements one by one and cannot undo a throwing move.
  static_assert(std::is_nothrow_move_constructible_v<T>, "T must move without throwing");

 public:
  using value_type = T;
  using size_type = size_t;
  using iterator = T*;
  using const_iterator = const T*;
  using reference = T&;
  using const_reference = const T&;

  SmallVector() = default;
  // Delegating: a throwing element copy leaves a constructed (empty-or-partial) vector, whose
  // destructor frees what was made.
  SmallVector(std::initializer_list<T> items) : SmallVector() {
    reserve(items.size());
    for (const T& item : items) push_back(item);
  }
  SmallVector(const SmallVector& other) : SmallVector() {
    reserve(other.size_);
    for (const T& item : other) push_back(item);
  }
  SmallVector(SmallVector&& other) noexcept { TakeFrom(other); }
  SmallVector& operator=(const SmallVector& other) {
    if (this == &other) return *this;
    clear();
    reserve(other.size_);
    for (const T& item : other) push_back(item);
    return *this;
  }
  SmallVector& operator=(SmallVector&& other) noexcept {
    if (this == &other) return *this;
    Destroy();
    TakeFrom(other);
    return *this;
  }
  ~SmallVector() { Destroy(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return heap_ != nullptr ? capacity_ : N; }
  T* data() { return heap_ != nullptr ? heap_ : Inline(); }
  const T* data() const { return heap_ != nullptr ? heap_ : Inline(); }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T& front() { return data()[0]; }
  const T& front() const { return data()[0]; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }

  void reserve(size_t n) {
    if (n > capacity()) Grow(n);
  }
  template <typename... Args>
  T& emplace_back(Args&&... args) {
    if (size_ == capacity()) {
      // Built before growing: an argument may refer to an element of this vector.
      T item(std::forward<Args>(args)...);
      Grow(std::max<size_t>(2 * capacity(), N + 1));
      T* made = ::new (Slot(size_)) T(std::move(item));
      ++size_;
      return *made;
    }
    T* made = ::new (Slot(size_)) T(std::forward<Args>(args)...);  // counted once it exists
    ++size_;
    return *made;
  }
  void push_back(const T& item) { emplace_back(item); }
  void push_back(T&& item) { emplace_back(std::move(item)); }
  void pop_back() { data()[--size_].~T(); }
  T* erase(const T* first, const T* last) {
    T* from = data() + (first - data());
    const size_t n = static_cast<size_t>(last - first);
    if (n == 0) return from;
    std::move(from + n, end(), from);
    for (size_t i = 0; i < n; ++i) pop_back();
    return from;
  }
  T* erase(const T* pos) { return erase(pos, pos + 1); }
  void clear() {
    while (size_ > 0) pop_back();
  }

  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  T* Inline() { return std::launder(reinterpret_cast<T*>(inline_)); }
  const T* Inline() const { return std::launder(reinterpret_cast<const T*>(inline_)); }
  // Raw storage for element i (no object there yet): where placement new builds it.
  void* Slot(size_t i) {
    return heap_ != nullptr ? static_cast<void*>(heap_ + i)
                            : static_cast<void*>(inline_ + i * sizeof(T));
  }

  // Moves the elements to a heap buffer of `n` (> size_) elements.
  void Grow(size_t n) {
    std::allocator<T> alloc;
    T* fresh = alloc.allocate(n);
    T* old = data();
    for (size_t i = 0; i < size_; ++i) {
      ::new (fresh + i) T(std::move(old[i]));
      old[i].~T();
    }
    if (heap_ != nullptr) alloc.deallocate(heap_, capacity_);
    heap_ = fresh;
    capacity_ = static_cast<uint32_t>(n);
  }

  void Destroy() {
    clear();
    if (heap_ != nullptr) std::allocator<T>().deallocate(heap_, capacity_);
    heap_ = nullptr;
    capacity_ = 0;
  }

  // Leaves `other` empty (and inline); this one must be empty and inline.
  void TakeFrom(SmallVector& other) {
    if (other.heap_ != nullptr) {
      heap_ = std::exchange(other.heap_, nullptr);
      capacity_ = std::exchange(other.capacity_, 0);
      size_ = std::exchange(other.size_, 0);
      return;
    }
    for (size_t i = 0; i < other.size_; ++i) ::new (Slot(i)) T(std::move(other.Inline()[i]));
    size_ = other.size_;
    other.clear();
  }

  T* heap_ = nullptr;      // the elements when they outgrew N; null while they are inline
  uint32_t size_ = 0;      //
  uint32_t capacity_ = 0;  // of heap_ (N while inline: see capacity())
  alignas(T) unsigned char inline_[N * sizeof(T)];
};

}  // namespace vmm
