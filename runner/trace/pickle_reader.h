// ReadPickle: the plain-data subset of Python's pickle format (protocols 2 to 5), enough for
// PyTorch's allocator snapshots (`torch.cuda.memory._dump_snapshot`) without Python or PyTorch.
// It builds None, booleans, integers (up to 64 bits), floats, text, bytes, lists, tuples and
// dicts. An opcode that would name or build a Python object (GLOBAL, REDUCE, BUILD, NEWOBJ, ...)
// is refused: the input is untrusted, and a snapshot holds plain data only. Every error names the
// byte offset and the opcode. Bounded by limits: the values built, the stack and the memo
// (snapshot_values), and the input's size (the caller reads it under snapshot_bytes).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runner/base/status.h"

namespace vmm::trace {

// One value of the pickle. Containers point at values their PickleDocument owns: a pickle's memo
// may put one container in several places (even inside itself), so a value is a graph, not always
// a tree; read it along known paths (Find, items) rather than recursing over all of it.
struct PickleValue {
  enum class Kind { kNone, kBool, kInt, kFloat, kText, kBytes, kList, kTuple, kDict };
  Kind kind = Kind::kNone;
  bool boolean = false;
  int64_t integer = 0;
  double real = 0;
  std::string text;                 // kText (UTF-8 as written) and kBytes
  std::vector<PickleValue*> items;  // kList, kTuple
  std::vector<std::pair<PickleValue*, PickleValue*>> members;  // kDict, in the order set

  // kDict: the value under text key `key`, or nullptr (also for any other kind).
  const PickleValue* Find(std::string_view key) const;
  // "a dict", "an integer", ...: for messages.
  const char* KindName() const;
};

// Every value a pickle built, owned in one place (so that a container inside itself is freed too),
// and the top-level one.
class PickleDocument {
 public:
  const PickleValue& root() const { return *root_; }
  // A new value owned by the document (the reader's, and tests' for hand-made documents).
  PickleValue* Add(PickleValue::Kind kind);
  void set_root(PickleValue* root) { root_ = root; }

 private:
  std::vector<std::unique_ptr<PickleValue>> values_;
  PickleValue* root_ = nullptr;
};

// Parses `bytes`, a whole pickle ending in STOP, into its one top-level value.
StatusOr<PickleDocument> ReadPickle(std::string_view bytes);

}  // namespace vmm::trace
