#include "runner/timeline/timeline.h"

#include <map>
#include <optional>
#include <span>
#include <string_view>

#include "runner/base/format.h"

namespace vmm::timeline {
namespace {

using report::Scalar;
using report::ScalarText;
using report::StepRecord;

std::string Text(std::span<const report::Detail> details, std::string_view key) {
  const Scalar* v = report::FindDetail(details, key);
  if (v == nullptr) return {};
  if (const auto* s = std::get_if<std::string>(v)) return *s;
  return {};
}

std::optional<uint64_t> Number(std::span<const report::Detail> details, std::string_view key) {
  const Scalar* v = report::FindDetail(details, key);
  if (v == nullptr) return std::nullopt;
  if (const auto* i = std::get_if<int64_t>(v)) return static_cast<uint64_t>(*i);
  return std::nullopt;
}

std::string DetailsLine(const StepRecord& step) {
  std::string line;
  auto add = [&](std::span<const report::Detail> d) {
    for (const auto& [k, v] : d) line += (line.empty() ? "" : ", ") + k + "=" + ScalarText(v);
  };
  add(step.targets);
  add(step.details);
  if (step.check)
    line += (line.empty() ? "" : ", ") + std::string("verdict=") +
            report::VerdictName(step.check->verdict);
  if (!step.error.empty()) line += (line.empty() ? "" : ", ") + std::string("error=") + step.error;
  return line;
}

// Which roles of a step read and which write, by op (the roles are the `targets` keys). Steps
// that move no data have none: host_func, record_event, wait_event, mem_alloc and mem_free (a
// graph allocation's lifetime, not its data), trim, set_node. A replayed `parallel` or
// `child_graph` node touches what its branches or the child graph's nodes touch (Touch).
struct Roles {
  std::vector<const char*> reads, writes;
};
Roles RolesOf(const std::string& op) {
  if (op == "fill" || op == "memset" || op == "busy") return {{}, {"buffer"}};
  if (op == "matmul") return {{"a", "b"}, {"c"}};
  if (op == "copy") return {{"other"}, {"buffer"}};
  if (op == "snapshot") return {{"buffer"}, {}};
  if (op == "check_equal") return {{"buffer", "other"}, {}};
  if (op == "check_value") return {{"buffer"}, {}};
  if (op == "check_matmul") return {{"a", "b", "c"}, {}};
  // export / import: an allocation's handle as an fd and back; no buffer's bytes are touched. An
  // isolate block's steps (alone or in a together group) ran in a child process, with its own
  // address space: the parent's lanes do not show them.
  if (op == "export" || op == "import" || op == "isolate" || op == "together") return {};
  return {};
}

class Builder {
 public:
  explicit Builder(const report::Report& report) : report_(report) {}

  StatusOr<Timeline> Build() {
    if (report_.buffers.empty() && !report_.steps.empty()) {
      return InvalidInput(
          "the report has no 'buffers' table (written by a vmm-run older than report format "
          "1.1): run the scenario again with this vmm-run to draw its timeline");
    }
    out_.title = report_.scenario_name + " · " + report_.backend + " · " + report_.device.name;
    out_.result = report_.summary.result;
    for (const report::BufferRecord& b : report_.buffers) {
      if (!b.view_of.empty()) continue;
      lane_of_[b.name] = static_cast<int>(out_.lanes.size());
      Lane lane;
      lane.buffer = b.name;
      lane.bytes = b.reservation_bytes;
      out_.lanes.push_back(std::move(lane));
    }
    for (const report::BufferRecord& b : report_.buffers) buffer_[b.name] = &b;
    for (size_t i = 0; i < report_.steps.size(); ++i) Step(static_cast<int>(i), report_.steps[i]);
    const int columns = static_cast<int>(out_.columns.size());
    for (int b : open_) out_.blocks[b].end = columns;
    return std::move(out_);
  }

 private:
  // Where a buffer or view lies: its lane and byte range; nullopt for an unknown name.
  struct Place {
    int lane;
    uint64_t offset, size;
  };
  std::optional<Place> Locate(const std::string& name) const {
    auto b = buffer_.find(name);
    if (b == buffer_.end()) return std::nullopt;
    const report::BufferRecord& buffer = *b->second;
    const std::string& base = buffer.view_of.empty() ? buffer.name : buffer.view_of;
    auto lane = lane_of_.find(base);
    if (lane == lane_of_.end()) return std::nullopt;
    return Place{lane->second, buffer.view_of.empty() ? 0 : buffer.offset, buffer.bytes};
  }

  void Step(int column, const StepRecord& step) {
    out_.columns.push_back(
        {step.name, step.op, report::StepStatusName(step.status), DetailsLine(step)});
    if (step.status != report::StepStatus::kOk) {
      // A check that ran and failed still read its data: mark it; anything else did nothing.
      if (!(step.check && step.check->verdict == report::Verdict::kFail)) return;
    }
    // A step with expect_error was refused (its pass proves the state unchanged): it did nothing.
    if (!step.expected_error.empty()) return;
    const report::Targets& t = step.targets;
    const std::string& op = step.op;
    const std::string buffer = Text(t, "buffer");
    const uint64_t offset = Number(t, "offset_bytes").value_or(0);
    const uint64_t size = Number(t, "size_bytes").value_or(0);
    auto lane = lane_of_.find(buffer);
    if (op == "reserve" && lane != lane_of_.end()) {
      out_.lanes[lane->second].reserved = column;
      out_.lanes[lane->second].va = Text(step.addresses, "va");
      if (size != 0) out_.lanes[lane->second].bytes = size;
    } else if (op == "free" && lane != lane_of_.end()) {
      out_.lanes[lane->second].freed = column;
    } else if (op == "map" && lane != lane_of_.end()) {
      Block block;
      block.lane = lane->second;
      block.alloc = Text(t, "alloc");
      block.offset = offset;
      block.size = size;
      block.start = column;
      block.access.push_back({column, "none"});
      open_.push_back(static_cast<int>(out_.blocks.size()));
      out_.blocks.push_back(std::move(block));
    } else if (op == "set_access" && lane != lane_of_.end()) {
      for (int b : Overlapping(lane->second, offset, size))
        out_.blocks[b].access.push_back({column, Text(t, "access")});
    } else if (op == "unmap" && lane != lane_of_.end()) {
      for (int b : Overlapping(lane->second, offset, size)) Close(b, column);
    } else if (op == "release") {
      const std::string alloc = Text(t, "alloc");
      for (int b : open_)
        if (out_.blocks[b].alloc == alloc && out_.blocks[b].released < 0)
          out_.blocks[b].released = column;
    } else if (op == "instantiate") {
      exec_graph_[Text(t, "exec")] = Text(t, "graph");
    } else if (op == "update") {
      if (Text(step.details, "result") == "success")
        exec_graph_[Text(t, "exec")] = Text(t, "graph");
    } else if (op == "capture") {
      graph_body_[Text(t, "graph")] = &step.body;
    } else if (op == "replay") {
      Replay(column, Text(t, "exec"));
    } else {
      Touch(column, step, "");
    }
  }

  // Marks what a kernel, copy or check step read and wrote (`via`: the replayed exec, if any).
  void Touch(int column, const StepRecord& step, const std::string& via) {
    if (step.op == "parallel") {  // its record's body holds every branch's steps
      for (const StepRecord& inner : step.body) Touch(column, inner, via);
      return;
    }
    if (step.op == "child_graph") {  // the child graph's nodes run as part of this one
      auto body = graph_body_.find(Text(step.targets, "graph"));
      if (body != graph_body_.end())
        for (const StepRecord& inner : *body->second) Touch(column, inner, via);
      return;
    }
    const Roles roles = RolesOf(step.op);
    const bool is_check = step.check.has_value();
    auto mark = [&](const char* role, MarkKind kind) {
      const std::string name = Text(step.targets, role);
      std::optional<Place> place = Locate(name);
      if (!place) return;
      out_.marks.push_back({place->lane, column, kind, place->offset, place->size, name, via});
    };
    for (const char* role : roles.writes) mark(role, MarkKind::kWrite);
    for (const char* role : roles.reads) {
      MarkKind kind = MarkKind::kRead;
      if (is_check)
        kind = step.check->verdict == report::Verdict::kPass ? MarkKind::kCheckPass
                                                             : MarkKind::kCheckFail;
      mark(role, kind);
    }
  }

  void Replay(int column, const std::string& exec) {
    auto graph = exec_graph_.find(exec);
    if (graph == exec_graph_.end()) return;
    auto body = graph_body_.find(graph->second);
    if (body == graph_body_.end()) return;
    for (const StepRecord& inner : *body->second) Touch(column, inner, exec);
  }

  std::vector<int> Overlapping(int lane, uint64_t offset, uint64_t size) const {
    std::vector<int> out;
    for (int b : open_) {
      const Block& block = out_.blocks[b];
      if (block.lane == lane && block.offset < offset + size && offset < block.offset + block.size)
        out.push_back(b);
    }
    return out;
  }

  void Close(int block, int column) {
    out_.blocks[block].end = column;
    std::erase(open_, block);
  }

  const report::Report& report_;
  Timeline out_;
  std::map<std::string, int> lane_of_;
  std::map<std::string, const report::BufferRecord*> buffer_;
  std::map<std::string, std::string> exec_graph_;  // exec -> the graph it now runs
  std::map<std::string, const std::vector<StepRecord>*> graph_body_;
  std::vector<int> open_;  // blocks still mapped, by index into out_.blocks
};

}  // namespace

const char* MarkKindName(MarkKind kind) {
  switch (kind) {
    case MarkKind::kRead:
      return "read";
    case MarkKind::kWrite:
      return "write";
    case MarkKind::kCheckPass:
      return "check-pass";
    case MarkKind::kCheckFail:
      return "check-fail";
  }
  return "read";
}

StatusOr<Timeline> BuildTimeline(const report::Report& report) { return Builder(report).Build(); }

}  // namespace vmm::timeline
