#include "runner/scenario/scenario.h"

namespace vmm {

uint64_t BufferDecl::elements() const {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  return n;
}

const StepMapEntry* StepMap::Find(std::string_view key) const {
  for (const StepMapEntry& e : entries)
    if (e.key == key) return &e;
  return nullptr;
}

const Step::RareFields Step::kNoRare{};
const StepMap Step::kNoKeys{};
const IsolateSpec Step::kNoIsolate{};

namespace {

template <typename V>
const V& Unset() {
  static const V unset{};
  return unset;
}
// The entry of `field` in `entries`, or nullptr.
template <typename E, typename F>
auto* FindEntry(E& entries, F field) {
  for (auto& e : entries)
    if (e.field == field) return &e.value;
  return static_cast<decltype(&entries.front().value)>(nullptr);
}
// The entry of `field`, added unset when missing.
template <typename E, typename F>
auto& AddEntry(E& entries, F field) {
  if (auto* value = FindEntry(entries, field)) return *value;
  return entries.push_back({field, {}}), entries.back().value;
}

}  // namespace

const Located<std::string>& Step::Text(Field f) const {
  const auto* v = FindEntry(texts_, f);
  return v != nullptr ? *v : Unset<Located<std::string>>();
}
const Located<uint64_t>& Step::Number(Field f) const {
  const auto* v = FindEntry(numbers_, f);
  return v != nullptr ? *v : Unset<Located<uint64_t>>();
}
const Located<bool>& Step::Flag(Field f) const {
  const auto* v = FindEntry(flags_, f);
  return v != nullptr ? *v : Unset<Located<bool>>();
}
Located<std::string>& Step::MutableText(Field f) { return AddEntry(texts_, f); }
Located<uint64_t>& Step::MutableNumber(Field f) { return AddEntry(numbers_, f); }
Located<bool>& Step::MutableFlag(Field f) { return AddEntry(flags_, f); }
Step::RareFields& Step::Rare() {
  if (!rare_) rare_ = RareFields{};
  return *rare_;
}

}  // namespace vmm
