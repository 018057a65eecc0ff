// NameTable: named objects with lifetimes (allocs, graphs, execs) while BuildPlan simulates a
// scenario. Each creation gets a new slot (so a name re-used after release/destroy names a new
// object with its own slot); a name resolves to the slot of its live object.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

namespace vmm {

class NameTable {
 public:
  // `kind` ("alloc") and `ended` ("released") are used in messages. `slots` is the Plan's
  // slot -> name table this one appends to; it must outlive the NameTable.
  NameTable(std::string kind, std::string ended, std::vector<std::string>* slots)
      : kind_(std::move(kind)), ended_(std::move(ended)), slots_(slots) {}

  // The live slot of `name`, or -1.
  int LiveSlot(const std::string& name) const;
  // Line where the live object `name` was made (0 when not live).
  int MadeLine(const std::string& name) const;

  // The live slot of `name`, or -1 with *error saying why: "unknown alloc 'pX'; live allocs: pA,
  // pB" (or a did-you-mean), or "alloc 'pA' is not live: it was released at line 22".
  int Resolve(const std::string& name, std::string* error) const;

  // Makes a new live object (the caller checked `name` is not live) and returns its slot.
  int Create(const std::string& name, int line);
  // Ends the live object `name` (no-op when not live).
  void End(const std::string& name, int line);

  std::vector<std::string> LiveNames() const;

 private:
  struct Entry {
    int slot = -1;
    bool live = false;
    int made_line = 0;
    int ended_line = 0;
  };
  std::string kind_, ended_;
  std::vector<std::string>* slots_;
  std::unordered_map<std::string, Entry> entries_;  // latest object per name
  std::vector<std::string> order_;                  // names in order of first creation
};

}  // namespace vmm
