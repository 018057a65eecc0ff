#include "runner/base/slot_map.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace vmm {
namespace {

TEST(SlotMapTest, FirstKeysOfAFreshMapAreOneToN) {
  SlotMap<std::string> map;
  EXPECT_EQ(map.Insert("a"), 1u);
  EXPECT_EQ(map.Insert("b"), 2u);
  EXPECT_EQ(map.Insert("c"), 3u);
  EXPECT_EQ(map.size(), 3u);
  ASSERT_NE(map.Find(2), nullptr);
  EXPECT_EQ(*map.Find(2), "b");
}

TEST(SlotMapTest, UnknownKeysFindNothing) {
  SlotMap<int> map;
  EXPECT_EQ(map.Find(0), nullptr);
  EXPECT_EQ(map.Find(1), nullptr);
  const uint64_t key = map.Insert(7);
  EXPECT_EQ(map.Find(key + 1), nullptr);
  EXPECT_EQ(map.Find(key | (5ull << 32)), nullptr);  // right slot, generation never issued
  EXPECT_FALSE(map.Erase(key + 1));
  EXPECT_EQ(map.size(), 1u);
}

TEST(SlotMapTest, AStaleKeyFindsNothingEvenAfterItsSlotIsReused) {
  SlotMap<int> map;
  const uint64_t old_key = map.Insert(1);
  ASSERT_TRUE(map.Erase(old_key));
  EXPECT_FALSE(map.Erase(old_key));  // a double release is refused, not applied twice
  const uint64_t new_key = map.Insert(2);
  EXPECT_NE(new_key, old_key);
  EXPECT_EQ(new_key & 0xffffffffu, old_key & 0xffffffffu);  // same slot, new generation
  EXPECT_EQ(map.Find(old_key), nullptr);
  ASSERT_NE(map.Find(new_key), nullptr);
  EXPECT_EQ(*map.Find(new_key), 2);
}

TEST(SlotMapTest, ASteadyInsertEraseLoopReusesOneSlot) {
  SlotMap<int> map;
  uint64_t first = map.Insert(0);
  ASSERT_TRUE(map.Erase(first));
  for (int i = 1; i < 1000; ++i) {
    const uint64_t key = map.Insert(i);
    EXPECT_EQ(key & 0xffffffffu, 1u);
    EXPECT_EQ(key >> 32, static_cast<uint64_t>(i));
    ASSERT_TRUE(map.Erase(key));
  }
  EXPECT_TRUE(map.empty());
}

TEST(SlotMapTest, ValuesAreDestroyedOnEraseAndMoveOnly) {
  SlotMap<std::unique_ptr<int>> map;
  auto shared = std::make_shared<int>(3);
  const uint64_t key = map.Insert(std::make_unique<int>(4));
  EXPECT_EQ(**map.Find(key), 4);
  SlotMap<std::shared_ptr<int>> owners;
  const uint64_t k = owners.Insert(shared);
  EXPECT_EQ(shared.use_count(), 2);
  owners.Erase(k);
  EXPECT_EQ(shared.use_count(), 1);
}

// Records the order in which values die.
struct Witness {
  Witness(int id, std::vector<int>* log) : id(id), log(log) {}
  Witness(Witness&& o) noexcept : id(o.id), log(std::exchange(o.log, nullptr)) {}
  Witness& operator=(Witness&&) = delete;
  ~Witness() {
    if (log != nullptr) log->push_back(id);
  }
  int id;
  std::vector<int>* log;
};

TEST(SlotMapTest, ClearDestroysNewestFirstEvenWhenSlotsWereReused) {
  std::vector<int> died;
  SlotMap<Witness> map;
  const uint64_t a = map.Insert(Witness(1, &died));  // slot 1
  map.Insert(Witness(2, &died));                     // slot 2
  map.Erase(a);                                      // 1 dies; slot 1 free
  const uint64_t c = map.Insert(Witness(3, &died));  // reuses slot 1, but is the newest
  map.Insert(Witness(4, &died));                     // slot 3
  ASSERT_EQ(died, (std::vector<int>{1}));
  map.ClearNewestFirst();
  EXPECT_EQ(died, (std::vector<int>{1, 4, 3, 2}));
  EXPECT_TRUE(map.empty());
  EXPECT_EQ(map.Find(c), nullptr);
}

}  // namespace
}  // namespace vmm
