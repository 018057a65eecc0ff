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
  const std::vector<std::string> live = LiveNames();
  const std::string close = SuggestName(name, live);
  if (!close.empty()) {
    *error = "unknown " + kind_ + " '" + name + "', did you mean '" + close + "'?";
  } else if (live.empty()) {
    *error = "unknown " + kind_ + " '" + name + "'; no " + kind_ + " is live at this step";
  } else {
    std::string list;
    for (const std::string& n : live) list += (list.empty() ? "" : ", ") + n;
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
  if (inserted) order_.push_back(name);
  it->second = Entry{static_cast<int>(slots_->size()), true, line, 0};
  slots_->push_back(name);
  return it->second.slot;
}

void NameTable::End(const std::string& name, int line) {
  auto it = entries_.find(name);
  if (it == entries_.end() || !it->second.live) return;
  it->second.live = false;
  it->second.ended_line = line;
}

std::vector<std::string> NameTable::LiveNames() const {
  std::vector<std::string> out;
  for (const std::string& n : order_)
    if (entries_.at(n).live) out.push_back(n);
  return out;
}

}  // namespace vmm
