#include "runner/report/detail_key.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace vmm::report {
namespace {

TEST(DetailKeyTest, ALiteralIsViewedInPlaceAndOtherTextIsInterned) {
  static const char kLiteral[] = "size_bytes";
  const DetailKey literal(kLiteral);
  EXPECT_EQ(literal.c_str(), kLiteral);  // no copy
  std::string built = "create";
  built += "_p99_us";
  const DetailKey interned(built);
  EXPECT_NE(interned.c_str(), built.c_str());
  built = "changed";  // the key holds its own copy
  EXPECT_EQ(interned, "create_p99_us");
  EXPECT_EQ(interned.size(), 13u);
  // Equal text interns to one copy, whoever asks.
  EXPECT_EQ(DetailKey(std::string("create_p99_us")).c_str(), interned.c_str());
  EXPECT_EQ(DetailKey(std::string_view("create_p99_us")).c_str(), interned.c_str());
}

TEST(DetailKeyTest, ComparesByTextWhereverTheTextLives) {
  const DetailKey literal("va");
  const DetailKey interned(std::string("va"));
  EXPECT_EQ(literal, interned);
  EXPECT_EQ(literal, std::string("va"));
  EXPECT_EQ(literal, std::string_view("va"));
  EXPECT_FALSE(literal == DetailKey("vb"));
  EXPECT_LT(DetailKey("a_hash"), DetailKey(std::string("b_hash")));
  EXPECT_TRUE(DetailKey().empty());
  EXPECT_EQ(DetailKey().view(), "");
  EXPECT_EQ("key " + literal + "!", "key va!");
}

TEST(DetailKeyTest, ThreadsInterningTheSameTextGetOneCopy) {
  std::vector<const char*> seen(8, nullptr);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < seen.size(); ++t)
    threads.emplace_back([&seen, t] {
      for (int i = 0; i < 1000; ++i) DetailKey(std::string("k") + std::to_string(i));
      seen[t] = DetailKey(std::string("shared_key")).c_str();
    });
  for (std::thread& t : threads) t.join();
  for (const char* p : seen) EXPECT_EQ(p, seen.front());
}

}  // namespace
}  // namespace vmm::report
