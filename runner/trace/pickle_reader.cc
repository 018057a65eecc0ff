#include "runner/trace/pickle_reader.h"

#include <cstring>
#include <unordered_map>

#include "runner/base/limits.h"

namespace vmm::trace {

const PickleValue* PickleValue::Find(std::string_view key) const {
  if (kind != Kind::kDict) return nullptr;
  for (const auto& [k, v] : members)
    if (k->kind == Kind::kText && k->text == key) return v;
  return nullptr;
}

const char* PickleValue::KindName() const {
  switch (kind) {
    case Kind::kNone:
      return "None";
    case Kind::kBool:
      return "a boolean";
    case Kind::kInt:
      return "an integer";
    case Kind::kFloat:
      return "a float";
    case Kind::kText:
      return "text";
    case Kind::kBytes:
      return "bytes";
    case Kind::kList:
      return "a list";
    case Kind::kTuple:
      return "a tuple";
    case Kind::kDict:
      return "a dict";
  }
  return "?";
}

PickleValue* PickleDocument::Add(PickleValue::Kind kind) {
  values_.push_back(std::make_unique<PickleValue>());
  values_.back()->kind = kind;
  return values_.back().get();
}

namespace {

using Node = PickleValue*;

// The opcodes read (pickletools' names), and those refused because they build objects.
enum : uint8_t {
  kMark = '(',
  kStop = '.',
  kPop = '0',
  kPopMark = '1',
  kDup = '2',
  kBinFloat = 'G',
  kBinInt = 'J',
  kBinInt1 = 'K',
  kBinInt2 = 'M',
  kNone = 'N',
  kBinUnicode = 'X',
  kAppend = 'a',
  kAppends = 'e',
  kBinGet = 'h',
  kLongBinGet = 'j',
  kBinPut = 'q',
  kLongBinPut = 'r',
  kSetItem = 's',
  kSetItems = 'u',
  kTuple = 't',
  kList = 'l',
  kDict = 'd',
  kEmptyDict = '}',
  kEmptyList = ']',
  kEmptyTuple = ')',
  kBinBytes = 'B',
  kShortBinBytes = 'C',
  kProto = 0x80,
  kTuple1 = 0x85,
  kTuple2 = 0x86,
  kTuple3 = 0x87,
  kNewTrue = 0x88,
  kNewFalse = 0x89,
  kLong1 = 0x8a,
  kLong4 = 0x8b,
  kShortBinUnicode = 0x8c,
  kBinUnicode8 = 0x8d,
  kBinBytes8 = 0x8e,
  kMemoize = 0x94,
  kFrame = 0x95,
};

class Reader {
 public:
  explicit Reader(std::string_view bytes)
      : in_(bytes), max_values_(LimitValue(Limit::kSnapshotValues)) {}

  StatusOr<PickleDocument> Run() {
    while (true) {
      if (pos_ >= in_.size()) return Error(in_.size(), "the pickle ends before its STOP opcode");
      at_ = pos_;
      const uint8_t op = static_cast<uint8_t>(in_[pos_++]);
      Status s = Step(op);
      if (!s.ok()) return s;
      if (op == kStop) break;
    }
    if (stack_.size() != 1 || !marks_.empty())
      return Error(at_, "STOP leaves " + std::to_string(stack_.size()) + " values on the stack");
    if (pos_ != in_.size())
      return Error(pos_, std::to_string(in_.size() - pos_) + " bytes after STOP");
    doc_.set_root(stack_.front());
    return std::move(doc_);
  }

 private:
  Status Error(size_t at, const std::string& what) const {
    return InvalidInput("pickle byte " + std::to_string(at) + ": " + what);
  }
  Status OpError(const std::string& what) const {
    char op[8];
    std::snprintf(op, sizeof op, "0x%02x", static_cast<uint8_t>(in_[at_]));
    return Error(at_, std::string("opcode ") + op + ": " + what);
  }

  // `n` bytes of argument, or an error when the input ends first.
  Status Take(size_t n, std::string_view* out) {
    if (n > in_.size() - pos_) return OpError("its argument runs past the end of the pickle");
    *out = in_.substr(pos_, n);
    pos_ += n;
    return Status::Ok();
  }
  Status Unsigned(size_t n, uint64_t* out) {  // little-endian
    std::string_view b;
    VMM_RETURN_IF_ERROR(Take(n, &b));
    *out = 0;
    for (size_t i = 0; i < n; ++i) *out |= uint64_t{static_cast<uint8_t>(b[i])} << (8 * i);
    return Status::Ok();
  }

  // Counts one more value (or mark: "((((" must not grow without bound either).
  Status Count() {
    if (++values_ > max_values_)
      return OpError("the pickle builds more than " + std::to_string(max_values_) + " values" +
                     RaiseHint(Limit::kSnapshotValues));
    return Status::Ok();
  }
  Status Push(Node node) {
    VMM_RETURN_IF_ERROR(Count());
    stack_.push_back(node);
    return Status::Ok();
  }
  Status PushNew(PickleValue::Kind kind, PickleValue** out = nullptr) {
    VMM_RETURN_IF_ERROR(Count());  // before anything is made
    Node node = doc_.Add(kind);
    if (out != nullptr) *out = node;
    stack_.push_back(node);
    return Status::Ok();
  }
  Status PushText(PickleValue::Kind kind, size_t length_bytes) {
    uint64_t n = 0;
    VMM_RETURN_IF_ERROR(Unsigned(length_bytes, &n));
    std::string_view b;
    VMM_RETURN_IF_ERROR(Take(n, &b));
    PickleValue* v = nullptr;
    VMM_RETURN_IF_ERROR(PushNew(kind, &v));
    v->text.assign(b);
    return Status::Ok();
  }
  Status PushInt(int64_t value) {
    PickleValue* v = nullptr;
    VMM_RETURN_IF_ERROR(PushNew(PickleValue::Kind::kInt, &v));
    v->integer = value;
    return Status::Ok();
  }
  // LONG1 / LONG4: a little-endian two's complement integer of `n` bytes; more than 8 is refused.
  Status PushLong(size_t length_bytes) {
    uint64_t n = 0;
    VMM_RETURN_IF_ERROR(Unsigned(length_bytes, &n));
    if (n > 8) return OpError("an integer of " + std::to_string(n) + " bytes (at most 8 are read)");
    uint64_t raw = 0;
    VMM_RETURN_IF_ERROR(Unsigned(n, &raw));
    if (n > 0 && n < 8 && (raw >> (8 * n - 1)) != 0) raw |= ~uint64_t{0} << (8 * n);  // sign
    return PushInt(static_cast<int64_t>(raw));
  }

  Status Pop(Node* out) {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back()))
      return OpError("the stack (above the last mark) is empty");
    *out = std::move(stack_.back());
    stack_.pop_back();
    return Status::Ok();
  }
  Status Top(PickleValue::Kind kind, PickleValue** out) {
    if (stack_.empty()) return OpError("the stack is empty");
    if (stack_.back()->kind != kind) {
      PickleValue wanted;
      wanted.kind = kind;
      return OpError(std::string("expects ") + wanted.KindName() + " on the stack, got " +
                     stack_.back()->KindName());
    }
    *out = stack_.back();
    return Status::Ok();
  }
  // The values above the last mark, taken off the stack with the mark.
  Status PopToMark(std::vector<Node>* out) {
    if (marks_.empty()) return OpError("no MARK before it");
    const size_t from = marks_.back();
    marks_.pop_back();
    out->assign(std::make_move_iterator(stack_.begin() + from),
                std::make_move_iterator(stack_.end()));
    stack_.resize(from);
    return Status::Ok();
  }
  Status PushTuple(std::vector<Node> items) {
    PickleValue* v = nullptr;
    VMM_RETURN_IF_ERROR(PushNew(PickleValue::Kind::kTuple, &v));
    v->items = std::move(items);
    return Status::Ok();
  }
  Status TupleOf(size_t n) {
    if (stack_.size() < n + (marks_.empty() ? 0 : marks_.back()))
      return OpError("needs " + std::to_string(n) + " values on the stack");
    std::vector<Node> items(std::make_move_iterator(stack_.end() - n),
                            std::make_move_iterator(stack_.end()));
    stack_.resize(stack_.size() - n);
    return PushTuple(std::move(items));
  }
  Status SetItems(PickleValue* dict, std::vector<Node>& kv) {
    if (kv.size() % 2 != 0) return OpError("an odd number of values for dict items");
    for (size_t i = 0; i < kv.size(); i += 2) dict->members.emplace_back(kv[i], kv[i + 1]);
    return Status::Ok();
  }
  Status Put(uint64_t index) {
    if (stack_.empty()) return OpError("nothing on the stack to memoize");
    if (memo_.size() >= max_values_) return OpError("the memo is full");
    memo_[index] = stack_.back();
    return Status::Ok();
  }
  Status Get(uint64_t index) {
    auto it = memo_.find(index);
    if (it == memo_.end()) return OpError("memo entry " + std::to_string(index) + " is not set");
    return Push(it->second);
  }

  Status Step(uint8_t op) {
    using K = PickleValue::Kind;
    uint64_t n = 0;
    std::string_view b;
    switch (op) {
      case kProto:
        VMM_RETURN_IF_ERROR(Unsigned(1, &n));
        if (n < 2 || n > 5) return OpError("protocol " + std::to_string(n) + " (2 to 5 are read)");
        return Status::Ok();
      case kFrame:
        return Unsigned(8, &n);  // a hint of the frame's length; the bytes follow inline
      case kStop:
        return Status::Ok();
      case kMark:
        VMM_RETURN_IF_ERROR(Count());
        marks_.push_back(stack_.size());
        return Status::Ok();
      case kPop: {
        Node dropped;
        return Pop(&dropped);
      }
      case kPopMark: {
        std::vector<Node> dropped;
        return PopToMark(&dropped);
      }
      case kDup:
        if (stack_.empty()) return OpError("the stack is empty");
        return Push(stack_.back());
      case kNone:
        return PushNew(K::kNone);
      case kNewTrue:
      case kNewFalse: {
        PickleValue* v = nullptr;
        VMM_RETURN_IF_ERROR(PushNew(K::kBool, &v));
        v->boolean = op == kNewTrue;
        return Status::Ok();
      }
      case kBinInt1:
        VMM_RETURN_IF_ERROR(Unsigned(1, &n));
        return PushInt(static_cast<int64_t>(n));
      case kBinInt2:
        VMM_RETURN_IF_ERROR(Unsigned(2, &n));
        return PushInt(static_cast<int64_t>(n));
      case kBinInt:
        VMM_RETURN_IF_ERROR(Unsigned(4, &n));
        return PushInt(static_cast<int32_t>(static_cast<uint32_t>(n)));
      case kLong1:
        return PushLong(1);
      case kLong4:
        return PushLong(4);
      case kBinFloat: {
        VMM_RETURN_IF_ERROR(Take(8, &b));
        uint64_t bits = 0;
        for (int i = 0; i < 8; ++i) bits = bits << 8 | static_cast<uint8_t>(b[i]);  // big-endian
        PickleValue* v = nullptr;
        VMM_RETURN_IF_ERROR(PushNew(K::kFloat, &v));
        std::memcpy(&v->real, &bits, sizeof bits);
        return Status::Ok();
      }
      case kShortBinUnicode:
        return PushText(K::kText, 1);
      case kBinUnicode:
        return PushText(K::kText, 4);
      case kBinUnicode8:
        return PushText(K::kText, 8);
      case kShortBinBytes:
        return PushText(K::kBytes, 1);
      case kBinBytes:
        return PushText(K::kBytes, 4);
      case kBinBytes8:
        return PushText(K::kBytes, 8);
      case kEmptyDict:
        return PushNew(K::kDict);
      case kEmptyList:
        return PushNew(K::kList);
      case kEmptyTuple:
        return PushNew(K::kTuple);
      case kTuple1:
      case kTuple2:
      case kTuple3:
        return TupleOf(op - kTuple1 + 1);
      case kTuple: {
        std::vector<Node> items;
        VMM_RETURN_IF_ERROR(PopToMark(&items));
        return PushTuple(std::move(items));
      }
      case kList: {
        std::vector<Node> items;
        VMM_RETURN_IF_ERROR(PopToMark(&items));
        PickleValue* v = nullptr;
        VMM_RETURN_IF_ERROR(PushNew(K::kList, &v));
        v->items = std::move(items);
        return Status::Ok();
      }
      case kDict: {
        std::vector<Node> kv;
        VMM_RETURN_IF_ERROR(PopToMark(&kv));
        PickleValue* v = nullptr;
        VMM_RETURN_IF_ERROR(PushNew(K::kDict, &v));
        return SetItems(v, kv);
      }
      case kAppend: {
        Node item;
        VMM_RETURN_IF_ERROR(Pop(&item));
        PickleValue* list = nullptr;
        VMM_RETURN_IF_ERROR(Top(K::kList, &list));
        list->items.push_back(std::move(item));
        return Status::Ok();
      }
      case kAppends: {
        std::vector<Node> items;
        VMM_RETURN_IF_ERROR(PopToMark(&items));
        PickleValue* list = nullptr;
        VMM_RETURN_IF_ERROR(Top(K::kList, &list));
        for (Node& item : items) list->items.push_back(std::move(item));
        return Status::Ok();
      }
      case kSetItem: {
        Node value, key;
        VMM_RETURN_IF_ERROR(Pop(&value));
        VMM_RETURN_IF_ERROR(Pop(&key));
        PickleValue* dict = nullptr;
        VMM_RETURN_IF_ERROR(Top(K::kDict, &dict));
        dict->members.emplace_back(std::move(key), std::move(value));
        return Status::Ok();
      }
      case kSetItems: {
        std::vector<Node> kv;
        VMM_RETURN_IF_ERROR(PopToMark(&kv));
        PickleValue* dict = nullptr;
        VMM_RETURN_IF_ERROR(Top(K::kDict, &dict));
        return SetItems(dict, kv);
      }
      case kMemoize:
        return Put(memo_.size());
      case kBinPut:
        VMM_RETURN_IF_ERROR(Unsigned(1, &n));
        return Put(n);
      case kLongBinPut:
        VMM_RETURN_IF_ERROR(Unsigned(4, &n));
        return Put(n);
      case kBinGet:
        VMM_RETURN_IF_ERROR(Unsigned(1, &n));
        return Get(n);
      case kLongBinGet:
        VMM_RETURN_IF_ERROR(Unsigned(4, &n));
        return Get(n);
      case 'c':
      case 0x93:  // GLOBAL, STACK_GLOBAL
      case 'R':
      case 'b':
      case 0x81:
      case 0x92:  // REDUCE, BUILD, NEWOBJ, NEWOBJ_EX
      case 'i':
      case 'o':  // INST, OBJ
        return OpError(
            "it would build a Python object; vmm-run reads plain data only (dicts, "
            "lists, numbers, text), as an allocator snapshot holds");
      default:
        return OpError(
            "not read by vmm-run (protocol 0/1 text opcodes, extensions and persistent "
            "ids are not part of an allocator snapshot)");
    }
  }

  std::string_view in_;
  PickleDocument doc_;
  size_t pos_ = 0, at_ = 0;
  const uint64_t max_values_;
  uint64_t values_ = 0;
  std::vector<Node> stack_;
  std::vector<size_t> marks_;  // stack sizes at each MARK
  std::unordered_map<uint64_t, Node> memo_;
};

}  // namespace

StatusOr<PickleDocument> ReadPickle(std::string_view bytes) { return Reader(bytes).Run(); }

}  // namespace vmm::trace
