// The threads group: step lists run by host threads at once, ordered across threads only by named
// sync points (signal / wait_for).
//
// Proof that the group is legal in every order the sync points allow:
//   1. Every waited point is signalled once, by another thread, and the points do not deadlock:
//      the threads are run here in turns, each until it waits for a point not yet signalled; when
//      no thread can move and some are not done, the waits that block are named.
//   2. That run is one legal order. Each step gets a vector clock along it, so that whether step a
//      happens before step b in EVERY order is a comparison of clocks.
//   3. Two steps of different threads that touch the same object, one of them changing it, must
//      be ordered by the points; otherwise the two steps are named and the group refused. With no
//      such pair, every order the points allow does the same thing to every object as the run of
//      step 1, so planning the steps in that run's order (Visit) proves them all.
// Objects: a buffer's reservation (a byte range of it for map, unmap, set_access and the data ops
// on views), an allocation, a snapshot. Reserve and free take the whole reservation.
#include <algorithm>
#include <limits>
#include <map>

#include "runner/base/format.h"
#include "runner/plan/plan_builder.h"

namespace vmm {

namespace {

// The most threads a group runs at once: a thread costs a stack and a host thread of its own.
constexpr size_t kMaxThreads = 64;

// A planned step of a thread, in the order of the legal run.
struct Placed {
  int thread = 0;
  int position = 0;
  std::vector<int> clock;  // its vector clock: clock[t] = steps of thread t that precede it, +1 own
};

bool HappensBefore(const Placed& a, const Placed& b) {
  return a.clock[a.thread] <= b.clock[a.thread];
}

}  // namespace

struct PlanBuilder::ThreadAccess {
  enum class Kind : uint8_t { kReservation, kAlloc, kSnapshot };
  Kind kind = Kind::kReservation;
  int slot = -1;  // buffer slot of the reservation's buffer, alloc slot or snapshot slot
  ByteRange range{0, std::numeric_limits<uint64_t>::max()};  // reservations: the bytes touched
  bool writes = false;
  std::string what;  // "buffer 'K'", "allocation 'page'": for the message
};

bool PlanBuilder::AllowedInThread(const Step& step, bool no_context) {
  const OpInfo& info = Describe(step.op);
  std::string why;
  // Without a context: the calls the H200 ran with none current (tools/no_context_probe.cc). A
  // kernel, copy or wait goes through the runtime, which would make the primary context current
  // behind the scenario's back; cuMemGetInfo and cuCtxSynchronize answer INVALID_CONTEXT.
  if (no_context && info.family != OpFamily::kMemory && info.family != OpFamily::kBlock &&
      step.op != Op::kSignal && step.op != Op::kWaitFor && step.op != Op::kSetFlag &&
      step.op != Op::kCheckAccess) {
    Error(step.loc,
          std::string("'") + OpName(step.op) +
              "' cannot run in a thread with context: none: such a thread makes VMM "
              "calls (reserve, create, map, set_access, check_access, unmap, release, "
              "free), sync points and set_flag only, which the driver takes with no context "
              "current; a kernel, copy or wait would make the primary context current. "
              "Move it to a thread with context: current");
    return false;
  }
  switch (info.family) {
    case OpFamily::kMemory:
      if (step.op == Op::kExport || step.op == Op::kImport)
        why = "shareable handles are the run's, not a thread's";
      break;
    case OpFamily::kKernel:
      if (info.has(kCaptureOnly)) why = "it makes a graph node";
      if (step.op == Op::kBusy && !step.async().value)
        why =
            "a busy kernel in a thread must be left running (async: true), then waited for with "
            "synchronize: on the host twin a busy that is waited for holds the engine while it "
            "runs";
      break;
    case OpFamily::kData:
      break;
    case OpFamily::kWait:
      if (step.op == Op::kInjectError)
        why = "which call is the nth would depend on how the threads interleave";
      break;
    case OpFamily::kCheck:
      if (step.op == Op::kCheckAddress || step.op == Op::kCheckKernelParams ||
          step.op == Op::kCheckRecord)
        why = "it compares steps or graphs of the whole run";
      break;
    case OpFamily::kGraph:
      why = "graphs are captured, replayed and updated by the run's one thread";
      break;
    case OpFamily::kQuery:
      why = Describe(step.op).has(kWholeProcess)
                ? "it locks the whole process, every thread at once"
                : "queries of the device's memory and properties see every thread at once";
      break;
    case OpFamily::kBlock:
      why = "blocks and groups do not go inside a thread";
      break;
  }
  if (why.empty() && step.expect_error().set)
    why =
        "expect_error proves the whole engine unchanged around the call, which other threads "
        "change";
  if (why.empty() && step.device().set && step.device().value != 0)
    why = "threads run on device 0 only";
  if (why.empty()) return true;
  Error(step.loc, std::string("'") + OpName(step.op) + "' cannot run in a thread: " + why +
                      "; put it before or after the threads group");
  return false;
}

std::vector<PlanBuilder::ThreadAccess> PlanBuilder::Footprint(const PlanStep& p) const {
  std::vector<ThreadAccess> out;
  auto buffer = [&](int slot, bool writes, bool whole) {
    if (slot < 0) return;
    const PlanBuffer& b = plan_.buffers[slot];
    ThreadAccess a;
    a.slot = b.base >= 0 ? b.base : slot;
    if (!whole && b.base >= 0) a.range = ByteRange{b.offset, b.offset + b.bytes};
    a.writes = writes;
    a.what = std::string(b.base >= 0 ? "view '" : "buffer '") + b.name + "'";
    out.push_back(std::move(a));
  };
  auto object = [&](ThreadAccess::Kind kind, int slot, bool writes, const std::string& name) {
    if (slot < 0) return;
    ThreadAccess a;
    a.kind = kind;
    a.slot = slot;
    a.writes = writes;
    a.what = name;
    out.push_back(std::move(a));
  };
  auto alloc = [&](bool writes) {
    if (p.alloc >= 0)
      object(ThreadAccess::Kind::kAlloc, p.alloc, writes,
             "allocation '" + plan_.allocs[p.alloc] + "'");
  };
  auto snapshot = [&](int slot, bool writes) {
    if (slot >= 0)
      object(ThreadAccess::Kind::kSnapshot, slot, writes,
             "snapshot '" + plan_.snapshots[slot] + "'");
  };
  switch (p.op) {
    case Op::kReserve:
    case Op::kFree:
      buffer(p.buffer, true, true);
      return out;
    case Op::kCreate:
    case Op::kRelease:
      alloc(true);
      return out;
    case Op::kMap:
    case Op::kUnmap:
    case Op::kSetAccess: {
      buffer(p.buffer, true, true);
      if (!out.empty() && p.size > 0) out.back().range = ByteRange{p.offset, p.offset + p.size};
      alloc(false);  // map: mapping an allocation twice commutes; its release does not
      return out;
    }
    default:
      break;
  }
  const OpFamily family = Describe(p.op).family;
  const bool check = family == OpFamily::kCheck;
  const bool reads_buffer =
      check || p.op == Op::kSnapshot || (p.op == Op::kBusy && p.touch == kernels::BusyTouch::kRead);
  buffer(p.buffer, !reads_buffer, false);
  buffer(p.other, false, false);
  buffer(p.a, false, false);
  buffer(p.b, false, false);
  buffer(p.c, !check, false);
  snapshot(p.snapshot, p.op == Op::kSnapshot);
  snapshot(p.to_snapshot, true);
  return out;
}

template <>
void PlanBuilder::PlanOp<Op::kThreads>(const Step& step, PlanStep* p, BufferUses*) {
  plan_.has_threads = true;
  if (thread_ != nullptr) {
    Error(step.loc, "threads groups do not nest: put the inner group after this one");
    return;
  }
  if (step.steps.size() > kMaxThreads) {
    Error(step.loc, "the threads group has " + std::to_string(step.steps.size()) +
                        " threads; at most " + std::to_string(kMaxThreads) + " run at once");
    return;
  }
  const int threads = static_cast<int>(step.steps.size());
  // Names, and the sync points each thread signals.
  std::unordered_map<std::string, int> thread_names;
  std::unordered_map<std::string, std::pair<int, const Step*>> signals;  // point -> thread, step
  for (int t = 0; t < threads; ++t) {
    const Step& thread = step.steps[t];
    if (!thread_names.emplace(thread.name.value, t).second)
      Error(thread.name.loc, "thread '" + thread.name.value + "' is named twice in this group");
    for (const Step& s : thread.steps) {
      if (s.op != Op::kSignal) continue;
      const Located<std::string>& point = Key(s, "point");
      auto [it, fresh] = signals.try_emplace(point.value, t, &s);
      if (!fresh)
        Error(At(point, s), "sync point '" + point.value + "' is signalled twice (first at line " +
                                std::to_string(it->second.second->loc.line) +
                                "): each point is signalled by one step");
    }
  }
  sync_points_.clear();
  for (const auto& [point, where] : signals) {
    (void)where;
    sync_points_.emplace(point, static_cast<int>(plan_.sync_points.size()));
    plan_.sync_points.push_back(point);
  }
  bool points_ok = true;
  for (int t = 0; t < threads; ++t) {
    for (const Step& s : step.steps[t].steps) {
      if (s.op != Op::kWaitFor) continue;
      const Located<std::string>& point = Key(s, "point");
      auto it = signals.find(point.value);
      if (it == signals.end()) {
        points_ok = false;
        Error(At(point, s), "no thread of this group signals '" + point.value +
                                "': add {op: signal, point: " + point.value +
                                "} to the thread this one waits for");
      } else if (it->second.first == t) {
        points_ok = false;
        Error(At(point, s), "thread '" + step.steps[t].name.value + "' waits for '" + point.value +
                                "', which it signals itself (line " +
                                std::to_string(it->second.second->loc.line) +
                                "): a wait orders a thread after ANOTHER thread's step");
      }
    }
  }
  if (!points_ok) return;

  // 1. A legal run: each thread in turn, as far as it can go.
  std::vector<size_t> next(threads, 0);
  std::vector<bool> signalled(plan_.sync_points.size(), false);
  std::vector<std::vector<int>> clock(threads, std::vector<int>(threads, 0));
  std::vector<std::vector<int>> point_clock(plan_.sync_points.size());
  std::vector<Placed> order;
  std::vector<std::pair<int, int>> index_of;  // order position -> (thread, position)
  for (bool moved = true; moved;) {
    moved = false;
    for (int t = 0; t < threads; ++t) {
      const std::vector<Step>& body = step.steps[t].steps;
      while (next[t] < body.size()) {
        const Step& s = body[next[t]];
        int point = -1;
        if (s.op == Op::kSignal || s.op == Op::kWaitFor)
          point = sync_points_.at(Key(s, "point").value);
        if (s.op == Op::kWaitFor && !signalled[point]) break;
        ++clock[t][t];
        if (s.op == Op::kWaitFor)
          for (int u = 0; u < threads; ++u)
            clock[t][u] = std::max(clock[t][u], point_clock[point][u]);
        if (s.op == Op::kSignal) {
          signalled[point] = true;
          point_clock[point] = clock[t];
        }
        order.push_back(Placed{t, static_cast<int>(next[t]), clock[t]});
        ++next[t];
        moved = true;
      }
    }
  }
  bool stuck = false;
  for (int t = 0; t < threads; ++t) {
    const std::vector<Step>& body = step.steps[t].steps;
    if (next[t] >= body.size()) continue;
    stuck = true;
    const Step& s = body[next[t]];
    Error(s.loc, "thread '" + step.steps[t].name.value + "' waits for '" + Key(s, "point").value +
                     "' forever: the threads wait for each other (a cycle of sync points); "
                     "signal one of them before the other's wait");
  }
  if (stuck) return;

  // 2. Plan the steps in that order (each thread's steps in its own body).
  p->body.resize(threads);
  for (int t = 0; t < threads; ++t) {
    const Step& thread = step.steps[t];
    PlanStep& tp = p->body[t];
    tp = Common(thread, t);
    tp.label = thread.name.value;
    const Located<std::string>& context = Key(thread, "context");
    tp.no_context = context.set && context.value == "none";
    tp.body.resize(thread.steps.size());
  }
  std::vector<std::vector<ThreadAccess>> footprints(order.size());
  const size_t errors_before = diagnostics_->size();
  for (size_t i = 0; i < order.size(); ++i) {
    const Placed& at = order[i];
    const Step& thread = step.steps[at.thread];
    const Step& s = thread.steps[at.position];
    thread_ = &thread;
    if (AllowedInThread(s, p->body[at.thread].no_context)) {
      PlanStep planned = Visit(s, at.position, nullptr);
      planned.in_thread = true;
      footprints[i] = Footprint(planned);
      p->body[at.thread].body[at.position] = std::move(planned);
    }
    thread_ = nullptr;
  }
  sync_points_.clear();
  if (diagnostics_->size() != errors_before) return;  // the order check needs every step planned

  // 3. Unordered steps of different threads must not touch one object, one of them changing it.
  struct Use {
    size_t placed;
    const ThreadAccess* access;
  };
  std::map<std::pair<int, int>, std::vector<Use>> by_object;  // (kind, slot) -> uses
  for (size_t i = 0; i < order.size(); ++i)
    for (const ThreadAccess& a : footprints[i])
      by_object[{static_cast<int>(a.kind), a.slot}].push_back(Use{i, &a});
  for (const auto& [object, uses] : by_object) {
    (void)object;
    bool reported = false;
    for (size_t x = 0; x < uses.size() && !reported; ++x) {
      for (size_t y = x + 1; y < uses.size() && !reported; ++y) {
        const Placed& a = order[uses[x].placed];
        const Placed& b = order[uses[y].placed];
        const ThreadAccess& ua = *uses[x].access;
        const ThreadAccess& ub = *uses[y].access;
        if (a.thread == b.thread || !(ua.writes || ub.writes) || !ua.range.Overlaps(ub.range))
          continue;
        if (HappensBefore(a, b) || HappensBefore(b, a)) continue;
        const Step& sa = step.steps[a.thread].steps[a.position];
        const Step& sb = step.steps[b.thread].steps[b.position];
        const PlanStep& pa = p->body[a.thread].body[a.position];
        const PlanStep& pb = p->body[b.thread].body[b.position];
        Error(sb.loc, "'" + pb.label + "' (thread '" + step.steps[b.thread].name.value +
                          "') and '" + pa.label + "' (thread '" + step.steps[a.thread].name.value +
                          "', line " + std::to_string(sa.loc.line) + ") both use " + ub.what +
                          ", " + (ua.writes && ub.writes ? "both" : "one of them") +
                          " changing it, and no sync point orders them: the outcome depends on "
                          "which runs first. Order them: {op: signal, point: P} after one, "
                          "{op: wait_for, point: P} before the other");
        reported = true;
      }
    }
  }
}

template <>
void PlanBuilder::PlanOp<Op::kThread>(const Step& step, PlanStep*, BufferUses*) {
  Error(step.loc, "a thread belongs in a threads group: {threads: [{thread: NAME, steps: [...]}]}");
}

// signal and wait_for: the sync point's slot (PlanStep::event), inside a thread only.
void PlanBuilder::SyncPoint(const Step& step, PlanStep* p) {
  const Located<std::string>& point = Key(step, "point");
  if (thread_ == nullptr) {
    Error(step.loc, std::string(OpName(step.op)) +
                        " orders the threads of a threads group; outside one there is nothing to "
                        "order (the run's steps already run one after another)");
    return;
  }
  auto it = sync_points_.find(point.value);
  p->event = it == sync_points_.end() ? -1 : it->second;
}

template <>
void PlanBuilder::PlanOp<Op::kSignal>(const Step& step, PlanStep* p, BufferUses*) {
  SyncPoint(step, p);
}

template <>
void PlanBuilder::PlanOp<Op::kWaitFor>(const Step& step, PlanStep* p, BufferUses*) {
  SyncPoint(step, p);
}

}  // namespace vmm
