#include "runner/report/detail_key.h"

#include <mutex>
#include <string>
#include <unordered_set>

namespace vmm::report {
namespace {

struct TextHash {
  using is_transparent = void;
  size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
};

}  // namespace

const char* InternKey(std::string_view text) {
  // Never destroyed: keys are viewed by records that may outlive static destruction's order.
  static auto* const table = new std::unordered_set<std::string, TextHash, std::equal_to<>>();
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  auto it = table->find(text);
  if (it == table->end()) it = table->emplace(text).first;
  return it->c_str();  // a node's string never moves: unordered_set keeps elements in place
}

DetailKey::DetailKey(const std::string& text) : text_(InternKey(text)) {}
DetailKey::DetailKey(std::string_view text) : text_(InternKey(text)) {}

}  // namespace vmm::report
