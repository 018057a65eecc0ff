#include "runner/plan/name_table.h"

#include "runner/base/diagnostic.h"

namespace vmm {

int NameTable::LiveSlot(const std::string& name) const {
  auto it = entries_.find(name);
  return (it != entries_.end() && it->second.live) ? it->second.slot : -1;
}

bool NameTable::Ended(const std::string& name) const {
  auto it = entries_.find(name);
  return it != entries_.end() && !it->second.live;
}

int NameTable::MadeLine(const std::string& name) const {
  auto it = entries_.find(name);
  return (it != entries_.end() && it->second.live) ? it->second.made_line : 0;
}

int NameTable::Resolve(const std::string& name, std::string* error) const {
  auto it = entries_.find(name);
  if (it != entries_.end()) {
    if (it->second.live) return it->second.slot;
    *error = kind_ + " '" + name + "' is not live: it was " + ended_ + " at line " +
             std::to_string(it->second.ended_line);
    return -1;
  }
  // Built without copying every live name: this runs once per iteration of a loop whose body
  // names something unknown, so its cost must not grow with the names' length. A name can only
  // be suggested if its length is close to `name`'s (SuggestName), and at most kListed are listed.
  // Once the suggestion budget is spent no candidate is gathered (SuggestName would answer "").
  constexpr size_t kListed = 8;
  const bool suggest = name.size() <= kMaxSuggestedLength && !SuggestionBudgetSpent();
  std::vector<std::string> candidates;
  std::vector<const std::string*> listed;
  size_t live = 0;
  for (const Ordered& o : order_) {
    if (!o.live) continue;
    ++live;
    if (listed.size() < kListed) listed.push_back(&o.name);
    if (suggest && o.name.size() <= 2 * kMaxSuggestedLength) candidates.push_back(o.name);
  }
  const std::string close = suggest ? SuggestName(name, candidates) : std::string();
  if (!close.empty()) {
    *error = "unknown " + kind_ + " '" + name + "', did you mean '" + close + "'?";
  } else if (live == 0) {
    *error = "unknown " + kind_ + " '" + name + "'; no " + kind_ + " is live at this step";
  } else {
    std::string list;
    for (const std::string* n : listed) list += (list.empty() ? "" : ", ") + *n;
    if (live > kListed) list += " and " + std::to_string(live - kListed) + " more";
    *error = "unknown " + kind_ + " '" + name + "'; live " + kind_ + "s: " + list;
  }
  return -1;
}

int NameTable::Create(const std::string& name, int line, std::string* error) {
  error->clear();
  if (const int live = LiveSlot(name); live >= 0) {
    *error = kind_ + " '" + name + "' is already live (" + made_ + " at line " +
             std::to_string(MadeLine(name)) + "); " + end_ + " it first or use another name";
    return live;
  }
  auto [it, inserted] = entries_.try_emplace(name);
  if (inserted) {
    it->second.order = order_.size();
    order_.push_back(Ordered{name, false});
  }
  it->second = Entry{static_cast<int>(slots_->size()), true, line, 0, it->second.order};
  order_[it->second.order].live = true;
  slots_->push_back(name);
  return it->second.slot;
}

void NameTable::End(const std::string& name, int line) {
  auto it = entries_.find(name);
  if (it == entries_.end() || !it->second.live) return;
  it->second.live = false;
  it->second.ended_line = line;
  order_[it->second.order].live = false;
}

std::vector<std::string> NameTable::LiveNames() const {
  std::vector<std::string> out;
  for (const Ordered& o : order_)
    if (o.live) out.push_back(o.name);
  return out;
}

int NameTable::LastSlot(const std::string& name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? -1 : it->second.slot;
}

}  // namespace vmm
