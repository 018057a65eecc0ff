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
  // Words for messages: `kind` ("alloc"), `made` ("created"), `end` ("release"), `ended`
  // ("released"). `slots` is the Plan's slot -> name table this one appends to; it must outlive
  // the NameTable.
  NameTable(std::string kind, std::string made, std::string end, std::string ended,
            std::vector<std::string>* slots)
      : kind_(std::move(kind)),
        made_(std::move(made)),
        end_(std::move(end)),
        ended_(std::move(ended)),
        slots_(slots) {}

  // The live slot of `name`, or -1.
  int LiveSlot(const std::string& name) const;
  // True when `name` named an object that has ended (released, destroyed) and is not live now.
  bool Ended(const std::string& name) const;
  // Line where the live object `name` was made (0 when not live).
  int MadeLine(const std::string& name) const;

  // The live slot of `name`, or -1 with *error saying why: "unknown alloc 'pX'; live allocs: pA,
  // pB" (or a did-you-mean), or "alloc 'pA' is not live: it was released at line 22".
  int Resolve(const std::string& name, std::string* error) const;

  // Makes a new live object and returns its slot. When `name` is still live nothing is made:
  // *error says so ("alloc 'pA' is already live (created at line 9); release it first or use
  // another name") and the live object's slot is returned, so later steps still resolve it.
  int Create(const std::string& name, int line, std::string* error);
  // The slot of the object `name` named last, live or ended, or -1 when it never named one.
  int LastSlot(const std::string& name) const;
  // Ends the live object `name` (no-op when not live).
  void End(const std::string& name, int line);

  std::vector<std::string> LiveNames() const;

 private:
  struct Entry {
    int slot = -1;
    bool live = false;
    int made_line = 0;
    int ended_line = 0;
    size_t order = 0;  // its index in order_
  };
  struct Ordered {
    std::string name;
    bool live = false;  // mirrors entries_[name].live, so LiveNames looks nothing up
  };
  std::string kind_, made_, end_, ended_;
  std::vector<std::string>* slots_;
  std::unordered_map<std::string, Entry> entries_;  // latest object per name
  std::vector<Ordered> order_;                      // names in order of first creation
};

}  // namespace vmm
