#include "runner/trace/call_trace.h"

#include <algorithm>
#include <charconv>

#include "runner/base/format.h"
#include "runner/base/limits.h"

namespace vmm::trace {
namespace {

constexpr std::string_view kMagic = "# vmm-trace 1";
// The keys every record has before its call's own.
constexpr std::string_view kCommonKeys[] = {"result", "t_ns", "pid", "tid"};

std::vector<std::string> SplitWords(std::string_view text) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != '\t') ++j;
    if (j > i) words.emplace_back(text.substr(i, j - i));
    i = j;
  }
  return words;
}

bool IsTextKey(std::string_view key) { return key == "kernel"; }

// A decimal or 0x-prefixed hexadecimal 64-bit number, all of `text`.
bool ParseNumber(std::string_view text, uint64_t* out) {
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
    base = 16;
  }
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out, base);
  return ec == std::errc() && ptr == end;
}

// Splits "a,b,c" ("" is an empty list).
std::vector<std::string_view> SplitCommas(std::string_view text) {
  std::vector<std::string_view> items;
  if (text.empty()) return items;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == ',') {
      items.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return items;
}

class LineReader {
 public:
  LineReader(std::string_view file, int line) : file_(file), line_(line) {}

  Status Fail(const std::string& what) const {
    return InvalidInput(std::string(file_) + ":" + std::to_string(line_) + ": " + what);
  }

  // Every line, comments included (the importer copies some into the scenario's header).
  Status Printable(std::string_view text) const {
    for (size_t i = 0; i < text.size(); ++i) {
      const unsigned char c = static_cast<unsigned char>(text[i]);
      if ((c < 0x20 && c != '\t') || c > 0x7e)
        return Fail("byte " + Hex(c) + " at column " + std::to_string(i + 1) +
                    ": a trace is printable ASCII (was the file made by `vmm-run record`?)");
    }
    return Status::Ok();
  }

  Status Read(std::string_view text, TraceRecord* r) {
    r->line = line_;
    const std::vector<std::string> words = SplitWords(text);
    if (words.size() < 2 || !ParseNumber(words[0], &r->seq))
      return Fail(
          "expected a record: SEQ CALL key=value ... (for example '1 cuMemCreate "
          "result=0 ...'), got '" +
          Shorten(text) + "'");
    const std::optional<TraceCall> call = TraceCallNamed(words[1]);
    if (!call)
      return Fail("unknown call '" + Shorten(words[1]) +
                  "' (docs/recording.md lists the calls a trace holds)");
    r->call = *call;
    const TraceCallInfo& info = InfoOf(*call);
    r->numbers.assign(info.keys.size(), 0);
    std::vector<bool> seen(std::size(kCommonKeys) + info.keys.size(), false);
    for (size_t w = 2; w < words.size(); ++w) {
      const std::string& word = words[w];
      const size_t eq = word.find('=');
      if (eq == std::string::npos || eq == 0)
        return Fail(std::string(info.name) + ": expected key=value, got '" + Shorten(word) + "'");
      const std::string_view key = std::string_view(word).substr(0, eq);
      const std::string_view value = std::string_view(word).substr(eq + 1);
      const int slot = SlotOf(info, key);
      if (slot < 0)
        return Fail(std::string(info.name) + ": unknown key '" + Shorten(key) +
                    "' (its record has " + KeyList(info) + ")");
      if (seen[slot])
        return Fail(std::string(info.name) + ": key '" + std::string(key) + "' twice");
      seen[slot] = true;
      VMM_RETURN_IF_ERROR(Value(info, slot, key, value, r));
    }
    for (size_t slot = 0; slot < seen.size(); ++slot) {
      if (seen[slot]) continue;
      const std::string key = slot < std::size(kCommonKeys)
                                  ? std::string(kCommonKeys[slot])
                                  : info.keys[slot - std::size(kCommonKeys)];
      return Fail(std::string(info.name) + ": key '" + key + "' missing (its record has " +
                  KeyList(info) + ")");
    }
    return Status::Ok();
  }

 private:
  static std::string Shorten(std::string_view text) {
    return text.size() <= 60 ? std::string(text) : std::string(text.substr(0, 57)) + "...";
  }
  static std::string KeyList(const TraceCallInfo& info) {
    std::string list = "result t_ns pid tid";
    for (const std::string& k : info.keys) list += " " + k;
    return list;
  }
  // The key's place: the common keys first, then the call's; -1 when neither.
  static int SlotOf(const TraceCallInfo& info, std::string_view key) {
    for (size_t i = 0; i < std::size(kCommonKeys); ++i)
      if (kCommonKeys[i] == key) return static_cast<int>(i);
    for (size_t i = 0; i < info.keys.size(); ++i)
      if (info.keys[i] == key) return static_cast<int>(std::size(kCommonKeys) + i);
    return -1;
  }

  Status Value(const TraceCallInfo& info, int slot, std::string_view key, std::string_view value,
               TraceRecord* r) {
    const std::string where = std::string(info.name) + ": " + std::string(key) + "=";
    if (IsTextKey(key)) {
      if (value.empty()) return Fail(where + ": expected the kernel's name, got nothing");
      r->kernel = std::string(value);
      return Status::Ok();
    }
    if (key == "ptrs") {
      for (std::string_view item : SplitCommas(value)) {
        uint64_t ptr = 0;
        if (!ParseNumber(item, &ptr))
          return Fail(where + Shorten(value) + ": expected addresses separated by commas");
        r->ptrs.push_back(ptr);
      }
      return Status::Ok();
    }
    if (key == "access") {
      for (std::string_view item : SplitCommas(value)) {
        const size_t colon = item.find(':');
        uint64_t device = 0, flags = 0;
        if (colon == std::string_view::npos || !ParseNumber(item.substr(0, colon), &device) ||
            !ParseNumber(item.substr(colon + 1), &flags) || device > 1023 ||
            (flags != 0 && flags != 1 && flags != 3))
          return Fail(where + Shorten(value) +
                      ": expected DEVICE:FLAGS items separated by commas (FLAGS 0, 1 or 3)");
        r->access.emplace_back(static_cast<int>(device), static_cast<unsigned>(flags));
      }
      return Status::Ok();
    }
    uint64_t number = 0;
    if (!ParseNumber(value, &number))
      return Fail(where + Shorten(value) + ": expected a number (decimal or 0x hex)");
    if (slot < static_cast<int>(std::size(kCommonKeys))) {
      if (key == "result") {
        if (number > 100000) return Fail(where + std::string(value) + ": not a CUresult");
        r->result = static_cast<int>(number);
      } else if (key == "t_ns") {
        r->t_ns = number;
      } else if (key == "pid") {
        r->pid = number;
      } else {
        r->tid = number;
      }
    } else {
      r->numbers[slot - std::size(kCommonKeys)] = number;
    }
    return Status::Ok();
  }

  std::string_view file_;
  int line_;
};

}  // namespace

const std::vector<TraceCallInfo>& AllTraceCalls() {
  static const std::vector<TraceCallInfo> table = [] {
    std::vector<TraceCallInfo> t;
#define TRACE_CALL(name, family, keys) \
  t.push_back({TraceCall::k_##name, #name, CallFamily::family, SplitWords(keys)});
#include "runner/trace/trace_calls.def"
#undef TRACE_CALL
    return t;
  }();
  return table;
}

const TraceCallInfo& InfoOf(TraceCall call) { return AllTraceCalls()[static_cast<size_t>(call)]; }

std::optional<TraceCall> TraceCallNamed(std::string_view name) {
  for (const TraceCallInfo& info : AllTraceCalls())
    if (name == info.name) return info.call;
  return std::nullopt;
}

uint64_t TraceRecord::Number(std::string_view key) const {
  const std::vector<std::string>& keys = info().keys;
  for (size_t i = 0; i < keys.size(); ++i)
    if (keys[i] == key) return numbers[i];
  return 0;  // not a key of this call: callers ask only for the table's keys
}

StatusOr<CallTrace> ReadCallTrace(std::string_view text, std::string_view file) {
  CallTrace trace;
  const uint64_t max_records = LimitValue(Limit::kTraceRecords);
  int line = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view row = text.substr(pos, end - pos);
    pos = end + 1;
    ++line;
    if (!row.empty() && row.back() == '\r') row.remove_suffix(1);
    if (line == 1) {
      if (row != kMagic) {
        return InvalidInput(std::string(file) + ":1: not a call trace: the first line must be '" +
                            std::string(kMagic) + "' (`vmm-run record` writes it)");
      }
      continue;
    }
    if (row.find_first_not_of(" \t") == std::string_view::npos) continue;
    VMM_RETURN_IF_ERROR(LineReader(file, line).Printable(row));
    if (trace.records.size() + trace.comments.size() >= max_records) {
      return InvalidInput(std::string(file) + ":" + std::to_string(line) + ": more than " +
                          std::to_string(max_records) +
                          " records and comments (raise it with --limit trace_records=N)");
    }
    if (row[0] == '#') {
      row.remove_prefix(std::min<size_t>(row.size(), row.size() > 1 && row[1] == ' ' ? 2 : 1));
      trace.comments.emplace_back(row);
      continue;
    }
    TraceRecord record;
    VMM_RETURN_IF_ERROR(LineReader(file, line).Read(row, &record));
    trace.records.push_back(std::move(record));
  }
  if (line == 0)
    return InvalidInput(std::string(file) + ": empty: not a call trace (`vmm-run record` writes " +
                        "one)");
  return trace;
}

}  // namespace vmm::trace
