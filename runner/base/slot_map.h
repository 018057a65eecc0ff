// SlotMap: owns values under 64-bit keys that stay valid until erased. A stale key (erased, or
// never issued by this map) finds nothing, even after its slot was reused for a newer value.
//
// Insert, Find and Erase are O(1) and allocate only when the map grows past its high-water mark, so
// a steady create/release loop allocates nothing (the engines' hot path between driver calls).
//
// Keys: low 32 bits = slot index + 1 (0 is never a key), high 32 bits = the slot's generation. A
// slot's first use has generation 0, so the first N keys of a fresh map are 1..N.
// Pointers returned by Find are invalidated by the next Insert. Not thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace vmm {

template <typename T>
class SlotMap {
 public:
  uint64_t Insert(T value) {
    uint32_t index;
    if (!free_.empty()) {
      index = free_.back();  // the most recently freed slot: still warm in cache
      free_.pop_back();
    } else {
      index = static_cast<uint32_t>(slots_.size());
      slots_.emplace_back();
    }
    Slot& slot = slots_[index];
    slot.value.emplace(std::move(value));
    slot.sequence = next_sequence_++;
    ++size_;
    return Key(index, slot.generation);
  }

  // The value under `key`, or nullptr when the key is stale or was never issued.
  T* Find(uint64_t key) {
    Slot* slot = Lookup(key);
    return slot != nullptr ? &*slot->value : nullptr;
  }

  // Destroys the value under `key`; false (and nothing happens) when the key finds nothing.
  bool Erase(uint64_t key) {
    Slot* slot = Lookup(key);
    if (slot == nullptr) return false;
    slot->value.reset();
    ++slot->generation;  // every key issued for this slot so far is now stale
    free_.push_back(static_cast<uint32_t>((key & 0xffffffffu) - 1));
    --size_;
    return true;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Calls visit(key, value) for every live value, in slot order.
  template <typename Visit>
  void ForEach(Visit visit) const {
    for (uint32_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i].value) visit(Key(i, slots_[i].generation), *slots_[i].value);
    }
  }

  // Destroys every value, the most recently inserted first (objects built on earlier ones go
  // before them). Keys issued before stay stale afterwards.
  void ClearNewestFirst() noexcept {
    std::vector<std::pair<uint64_t, uint32_t>> live;  // (sequence, index)
    live.reserve(size_);
    for (uint32_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i].value) live.emplace_back(slots_[i].sequence, i);
    }
    std::sort(live.begin(), live.end(), std::greater<>());
    for (const auto& [sequence, index] : live) {
      slots_[index].value.reset();
      ++slots_[index].generation;
      free_.push_back(index);
    }
    size_ = 0;
  }

 private:
  struct Slot {
    std::optional<T> value;
    uint32_t generation = 0;
    uint64_t sequence = 0;  // insertion order, for ClearNewestFirst
  };

  static uint64_t Key(uint32_t index, uint32_t generation) {
    return (static_cast<uint64_t>(generation) << 32) | (static_cast<uint64_t>(index) + 1);
  }

  Slot* Lookup(uint64_t key) {
    const uint64_t low = key & 0xffffffffu;
    if (low == 0 || low > slots_.size()) return nullptr;
    Slot& slot = slots_[low - 1];
    if (!slot.value || slot.generation != static_cast<uint32_t>(key >> 32)) return nullptr;
    return &slot;
  }

  std::vector<Slot> slots_;
  std::vector<uint32_t> free_;  // indices of empty slots, most recently freed last
  uint64_t next_sequence_ = 0;
  size_t size_ = 0;
};

}  // namespace vmm
