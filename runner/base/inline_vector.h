// InlineVector<T, N>: a vector whose first N elements live inside the object, so a container that
// usually holds a few elements costs no allocation; the (N+1)-th moves them all to the heap, and
// from then on it grows like std::vector. std::vector's interface for what the project uses.
//
// For objects made by the thousand on a hot path (a report's step records: a VMM step records one
// to three details, and each heap block cost the runner more than the arithmetic around it).
//
// Contract: T's move constructor does not throw (every growth moves the elements); references and
// iterators are invalidated by any growth and by a move of the container (elements stored inline
// move with it). Otherwise the usual guarantees: a throwing copy or construction leaves the
// container as it was.
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
class InlineVector {
  static_assert(N > 0, "an InlineVector with no inline room is a std::vector");
  static_assert(std::is_nothrow_move_constructible_v<T>, "growth moves the elements");

 public:
  using value_type = T;
  using size_type = size_t;
  using reference = T&;
  using const_reference = const T&;
  using iterator = T*;
  using const_iterator = const T*;

  InlineVector() noexcept {}  // NOLINT(modernize-use-equals-default): leaves inline_ untouched
  InlineVector(std::initializer_list<T> init) { Append(init.begin(), init.end()); }
  InlineVector(const InlineVector& other) { Append(other.begin(), other.end()); }
  InlineVector(InlineVector&& other) noexcept { Take(other); }
  ~InlineVector() { Release(); }

  InlineVector& operator=(const InlineVector& other) {
    if (this != &other) {
      InlineVector copy(other);  // a throwing copy leaves *this as it was
      *this = std::move(copy);
    }
    return *this;
  }
  InlineVector& operator=(InlineVector&& other) noexcept {
    if (this != &other) {
      Release();
      Take(other);
    }
    return *this;
  }

  T* data() noexcept { return heap_ != nullptr ? heap_ : Inline(); }
  const T* data() const noexcept { return heap_ != nullptr ? heap_ : Inline(); }
  size_t size() const noexcept { return size_; }
  size_t capacity() const noexcept { return heap_ != nullptr ? heap_capacity_ : N; }
  bool empty() const noexcept { return size_ == 0; }

  iterator begin() noexcept { return data(); }
  iterator end() noexcept { return data() + size_; }
  const_iterator begin() const noexcept { return data(); }
  const_iterator end() const noexcept { return data() + size_; }

  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T& front() { return data()[0]; }
  const T& front() const { return data()[0]; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }

  // Room for `n` elements without a further allocation.
  void reserve(size_t n) {
    if (n > capacity()) MoveTo(n);
  }

  template <typename... Args>
  T& emplace_back(Args&&... args) {
    if (size_ < capacity()) {
      T* slot = ::new (static_cast<void*>(data() + size_)) T(std::forward<Args>(args)...);
      ++size_;
      return *slot;
    }
    // Full: the new element is built in the new storage before the old ones move, so `args` may
    // refer to an element of this container.
    const size_t grown = std::max<size_t>(2 * capacity(), size_ + 1);
    T* fresh = Allocate(grown);
    try {
      ::new (static_cast<void*>(fresh + size_)) T(std::forward<Args>(args)...);
    } catch (...) {
      Deallocate(fresh, grown);
      throw;
    }
    Adopt(fresh, grown);
    return data()[size_++];
  }
  void push_back(const T& value) { emplace_back(value); }
  void push_back(T&& value) { emplace_back(std::move(value)); }
  void pop_back() {
    --size_;
    std::destroy_at(data() + size_);
  }

  void clear() noexcept {
    std::destroy(begin(), end());
    size_ = 0;
  }

  // Removes [first, last) and returns the position after them (as std::vector::erase).
  iterator erase(const_iterator first, const_iterator last) {
    T* from = begin() + (first - begin());
    T* to = begin() + (last - begin());
    T* kept_end = std::move(to, end(), from);
    std::destroy(kept_end, end());
    size_ = static_cast<uint32_t>(kept_end - begin());
    return from;
  }
  iterator erase(const_iterator at) { return erase(at, at + 1); }

  friend bool operator==(const InlineVector& a, const InlineVector& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  T* Inline() noexcept { return std::launder(reinterpret_cast<T*>(inline_)); }
  const T* Inline() const noexcept { return std::launder(reinterpret_cast<const T*>(inline_)); }

  static T* Allocate(size_t n) { return std::allocator<T>().allocate(n); }
  static void Deallocate(T* p, size_t n) { std::allocator<T>().deallocate(p, n); }

  template <typename It>
  void Append(It first, It last) {
    reserve(size_ + static_cast<size_t>(last - first));
    try {
      for (; first != last; ++first) emplace_back(*first);
    } catch (...) {
      Release();  // only constructors call Append: nothing of the object survives
      throw;
    }
  }

  // Moves the elements into fresh heap storage of `n` elements (n > size_) and keeps it.
  void MoveTo(size_t n) { Adopt(Allocate(n), n); }
  // Moves the elements into `fresh` (room for n) and makes it the storage.
  void Adopt(T* fresh, size_t n) noexcept {
    std::uninitialized_move(begin(), end(), fresh);
    std::destroy(begin(), end());
    if (heap_ != nullptr) Deallocate(heap_, heap_capacity_);
    heap_ = fresh;
    heap_capacity_ = static_cast<uint32_t>(n);
  }

  // Destroys the elements and frees heap storage: the state of a moved-from or new vector.
  void Release() noexcept {
    clear();
    if (heap_ != nullptr) Deallocate(heap_, heap_capacity_);
    heap_ = nullptr;
    heap_capacity_ = 0;
  }

  // Takes `other`'s elements (its heap block, or its inline elements one by one); `other` is left
  // empty. *this holds nothing before.
  void Take(InlineVector& other) noexcept {
    if (other.heap_ != nullptr) {
      heap_ = std::exchange(other.heap_, nullptr);
      heap_capacity_ = std::exchange(other.heap_capacity_, 0);
      size_ = std::exchange(other.size_, 0);
      return;
    }
    std::uninitialized_move(other.begin(), other.end(), Inline());
    size_ = other.size_;
    other.clear();
  }

  T* heap_ = nullptr;  // the elements when more than N were ever held; else they are in inline_
  uint32_t size_ = 0;
  uint32_t heap_capacity_ = 0;
  alignas(T) unsigned char inline_[N * sizeof(T)];
};

}  // namespace vmm
