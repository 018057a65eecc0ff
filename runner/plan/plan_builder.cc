#include "runner/plan/plan_builder.h"

#include <algorithm>
#include <limits>

#include "runner/base/format.h"

namespace vmm {
namespace {

std::string ShapeText(const std::vector<uint64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

// Adds `buffer` with `need` to `uses`, keeping the strongest access per buffer.
void AddUse(std::vector<std::pair<int, Access>>* uses, int buffer, Access need) {
  for (auto& [b, a] : *uses) {
    if (b == buffer) {
      if (need == Access::kReadWrite) a = need;
      return;
    }
  }
  uses->emplace_back(buffer, need);
}

}  // namespace

Plan BuildPlan(const Scenario& scenario, std::vector<Diagnostic>* diagnostics) {
  const size_t first = diagnostics->size();
  Plan plan = PlanBuilder(scenario, diagnostics).Build();
  // One step can report several fields; keep the whole list in file order.
  std::stable_sort(diagnostics->begin() + static_cast<std::ptrdiff_t>(first), diagnostics->end(),
                   [](const Diagnostic& a, const Diagnostic& b) {
                     if (a.loc.line != b.loc.line) return a.loc.line < b.loc.line;
                     return a.loc.column < b.loc.column;
                   });
  return plan;
}

std::string SuggestFrom(const std::string& word, const std::vector<std::string>& candidates) {
  // One-letter names (A, B, C) are all one edit apart: a suggestion would be a guess.
  return word.size() < 2 ? std::string() : ClosestMatch(word, candidates);
}

PlanBuilder::PlanBuilder(const Scenario& scenario, std::vector<Diagnostic>* diagnostics)
    : scenario_(scenario),
      diagnostics_(diagnostics),
      allocs_("alloc", "released", &plan_.allocs),
      graphs_("graph", "destroyed", &plan_.graphs),
      execs_("exec", "destroyed", &plan_.execs) {}

void PlanBuilder::Error(const SourceLoc& loc, std::string message) {
  diagnostics_->push_back(Diagnostic{loc, std::move(message)});
}

Plan PlanBuilder::Build() && {
  plan_.scenario_name = scenario_.name;
  const Located<uint64_t>& g = scenario_.granularity;
  if (g.set || g.value != 0) granularity_ = g.value;
  if (granularity_ == 0 || (granularity_ & (granularity_ - 1)) != 0) {
    Error(g.loc, "granularity must be a power of two, got " + FormatBytes(granularity_));
    granularity_ = kDefaultGranularity;  // keep checking with the usual value
  }
  plan_.granularity = granularity_;
  DeclareBuffers();
  IndexStepNames(scenario_.steps);
  plan_.steps.reserve(scenario_.steps.size());
  for (size_t i = 0; i < scenario_.steps.size(); ++i)
    plan_.steps.push_back(Visit(scenario_.steps[i], static_cast<int>(i), nullptr));
  return std::move(plan_);
}

void PlanBuilder::DeclareBuffers() {
  for (const BufferDecl& b : scenario_.buffers) {
    PlanBuffer pb;
    pb.name = b.name;
    pb.shape = b.shape;
    uint64_t elements = 1;
    bool ok = !b.shape.empty();
    for (uint64_t d : b.shape) {
      if (d == 0) ok = false;
      if (d != 0 && elements > std::numeric_limits<uint64_t>::max() / 4 / d) {
        Error(b.loc, "buffer '" + b.name + "' is too large: shape " + ShapeText(b.shape) +
                         " does not fit in 64-bit bytes");
        ok = false;
        elements = 0;
        break;
      }
      elements *= d;
    }
    if (b.shape.empty() || std::find(b.shape.begin(), b.shape.end(), 0) != b.shape.end()) {
      Error(b.loc, "buffer '" + b.name + "' needs a shape of positive dimensions, got " +
                       ShapeText(b.shape));
    }
    pb.elements = ok ? elements : 0;
    pb.bytes = pb.elements * 4;
    buffer_slots_.emplace(b.name, static_cast<int>(plan_.buffers.size()));
    plan_.buffers.push_back(std::move(pb));
  }
  reservations_.resize(plan_.buffers.size());
  reserved_by_.resize(plan_.buffers.size());
  freed_line_.resize(plan_.buffers.size(), 0);
}

void PlanBuilder::IndexStepNames(const std::vector<Step>& steps) {
  // Explicit names are report keys: unique across the file, capture bodies included.
  auto visit = [&](const Step& s, int index) {
    if (!s.name.set || s.name.value.empty()) return;
    auto [it, inserted] =
        step_names_.try_emplace(s.name.value, NamedStep{index, s.op, s.name.loc.line});
    if (!inserted) {
      Error(s.name.loc, "duplicate step name '" + s.name.value + "' (first at line " +
                            std::to_string(it->second.line) + ")");
    }
  };
  for (size_t i = 0; i < steps.size(); ++i) {
    visit(steps[i], static_cast<int>(i));
    for (const Step& inner : steps[i].steps) visit(inner, -1);
  }
}

PlanStep PlanBuilder::Common(const Step& step, int index) const {
  PlanStep p;
  p.src = &step;
  p.op = step.op;
  p.index = index;
  p.label = (step.name.set && !step.name.value.empty())
                ? step.name.value
                : std::string(OpName(step.op)) + " #" + std::to_string(index);
  p.repeat = step.repeat.value == 0 ? 1 : step.repeat.value;
  p.fatal = step.fatal.value;
  return p;
}

int PlanBuilder::ResolveBuffer(const Located<std::string>& ref, const Step& step) {
  auto it = buffer_slots_.find(ref.value);
  if (it != buffer_slots_.end()) return it->second;
  std::vector<std::string> names;
  for (const PlanBuffer& b : plan_.buffers) names.push_back(b.name);
  const std::string close = SuggestFrom(ref.value, names);
  std::string message = "unknown buffer '" + ref.value + "'";
  if (!close.empty()) {
    message += ", did you mean '" + close + "'?";
  } else if (names.empty()) {
    message += "; no buffers are declared (add them under 'buffers')";
  } else {
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    message += "; declared buffers: " + list;
  }
  Error(At(ref, step), std::move(message));
  return -1;
}

PlanStep PlanBuilder::Visit(const Step& step, int index, BufferUses* capture_uses) {
  PlanStep p = Common(step, index);
  if (capture_uses != nullptr && step.op != Op::kFill && step.op != Op::kMatmul) {
    Error(step.loc, std::string("'") + OpName(step.op) +
                        "' cannot be recorded in a capture; only fill and matmul can");
    return p;
  }
  switch (step.op) {
    case Op::kReserve:
      Reserve(step, &p);
      break;
    case Op::kFree:
      Free(step, &p);
      break;
    case Op::kCreate:
      Create(step, &p);
      break;
    case Op::kRelease:
      Release(step, &p);
      break;
    case Op::kMap:
      Map(step, &p);
      break;
    case Op::kSetAccess:
      SetAccess(step, &p);
      break;
    case Op::kUnmap:
      Unmap(step, &p);
      break;
    case Op::kFill:
    case Op::kMatmul:
    case Op::kCheckMatmul:
      Kernel(step, &p, capture_uses);
      break;
    case Op::kCapture:
      Capture(step, &p);
      break;
    case Op::kInstantiate:
    case Op::kReplay:
    case Op::kUpdate:
    case Op::kDestroyGraph:
    case Op::kDestroyExec:
      Graphs(step, &p);
      break;
    case Op::kSnapshot:
      Snapshot(step, &p);
      break;
    case Op::kCheckEqual:
      CheckEqual(step, &p);
      break;
    case Op::kCheckAddress:
      CheckAddress(step, index, &p);
      break;
    case Op::kCheckKernelParams:
      CheckKernelParams(step, &p);
      break;
    case Op::kSynchronize:
      break;
  }
  Expectation(step, &p);
  return p;
}

void PlanBuilder::Kernel(const Step& step, PlanStep* p, BufferUses* capture_uses) {
  const std::string op = OpName(step.op);
  if (step.op == Op::kFill) {
    p->buffer = ResolveBuffer(step.buffer, step);
    p->seed = step.seed.value;
    if (p->buffer < 0) return;
    if (capture_uses != nullptr) return AddUse(capture_uses, p->buffer, Access::kReadWrite);
    return Use(p->buffer, Access::kReadWrite, op + " writes", At(step.buffer, step));
  }
  p->a = ResolveBuffer(step.a, step);
  p->b = ResolveBuffer(step.b, step);
  p->c = ResolveBuffer(step.c, step);
  if (p->a < 0 || p->b < 0 || p->c < 0 || !MatmulShapes(step, p)) return;
  const Access out = step.op == Op::kMatmul ? Access::kReadWrite : Access::kRead;
  if (capture_uses != nullptr) {
    AddUse(capture_uses, p->a, Access::kRead);
    AddUse(capture_uses, p->b, Access::kRead);
    AddUse(capture_uses, p->c, out);
    return;
  }
  Use(p->a, Access::kRead, op + " reads", At(step.a, step));
  if (p->b != p->a) Use(p->b, Access::kRead, op + " reads", At(step.b, step));
  Use(p->c, out, op + (out == Access::kRead ? " reads" : " writes"), At(step.c, step));
}

bool PlanBuilder::MatmulShapes(const Step& step, PlanStep* p) {
  const std::string op = OpName(step.op);
  const PlanBuffer& a = plan_.buffers[p->a];
  const PlanBuffer& b = plan_.buffers[p->b];
  const PlanBuffer& c = plan_.buffers[p->c];
  bool ok = true;
  const std::pair<const PlanBuffer*, const Located<std::string>*> operands[] = {
      {&a, &step.a}, {&b, &step.b}, {&c, &step.c}};
  for (const auto& [buf, field] : operands) {
    if (buf->shape.size() != 2) {
      Error(At(*field, step),
            op + " needs 2-D buffers, but '" + buf->name + "' has shape " + ShapeText(buf->shape));
      ok = false;
    }
  }
  if (!ok) return false;
  if (step.op == Op::kMatmul && (p->c == p->a || p->c == p->b)) {
    Error(At(step.c, step), "matmul output '" + c.name + "' is also an input; use another buffer");
    return false;
  }
  if (a.shape[1] != b.shape[0]) {
    Error(At(step.b, step), op + " shapes disagree: '" + a.name + "' is " + ShapeText(a.shape) +
                                " so '" + b.name + "' needs " + std::to_string(a.shape[1]) +
                                " rows, got " + ShapeText(b.shape));
    return false;
  }
  if (c.shape[0] != a.shape[0] || c.shape[1] != b.shape[1]) {
    Error(At(step.c, step), op + " shapes disagree: '" + c.name + "' must be " +
                                ShapeText({a.shape[0], b.shape[1]}) + " (rows of '" + a.name +
                                "' by columns of '" + b.name + "'), got " + ShapeText(c.shape));
    return false;
  }
  p->m = static_cast<uint32_t>(a.shape[0]);
  p->k = static_cast<uint32_t>(a.shape[1]);
  p->n = static_cast<uint32_t>(b.shape[1]);
  return true;
}

void PlanBuilder::Capture(const Step& step, PlanStep* p) {
  BufferUses uses;
  if (step.steps.empty())
    Error(step.loc, "capture '" + step.graph.value + "' records nothing; add fill or matmul steps");
  p->body.reserve(step.steps.size());
  for (size_t i = 0; i < step.steps.size(); ++i)
    p->body.push_back(Visit(step.steps[i], static_cast<int>(i), &uses));
  if (const int live = graphs_.LiveSlot(step.graph.value); live >= 0) {
    Error(At(step.graph, step), "graph '" + step.graph.value +
                                    "' is already live (captured at line " +
                                    std::to_string(graphs_.MadeLine(step.graph.value)) +
                                    "); destroy it first or use another name");
    p->graph = live;
    return;
  }
  p->graph = graphs_.Create(step.graph.value, step.loc.line);
  graph_uses_.push_back(std::move(uses));
}

void PlanBuilder::Graphs(const Step& step, PlanStep* p) {
  std::string error;
  const bool needs_graph =
      step.op == Op::kInstantiate || step.op == Op::kUpdate || step.op == Op::kDestroyGraph;
  const bool needs_exec = step.op != Op::kInstantiate && step.op != Op::kDestroyGraph;
  if (needs_graph) {
    p->graph = graphs_.Resolve(step.graph.value, &error);
    if (p->graph < 0) Error(At(step.graph, step), error);
  }
  if (needs_exec) {
    p->exec = execs_.Resolve(step.exec.value, &error);
    if (p->exec < 0) Error(At(step.exec, step), error);
  }
  switch (step.op) {
    case Op::kInstantiate:
      if (execs_.LiveSlot(step.exec.value) >= 0) {
        Error(At(step.exec, step), "exec '" + step.exec.value +
                                       "' is already live (instantiated at line " +
                                       std::to_string(execs_.MadeLine(step.exec.value)) +
                                       "); destroy it first or use another name");
        p->exec = execs_.LiveSlot(step.exec.value);
        return;
      }
      p->exec = execs_.Create(step.exec.value, step.loc.line);
      exec_uses_.push_back(p->graph >= 0 ? graph_uses_[p->graph] : BufferUses{});
      return;
    case Op::kReplay:
      if (p->exec < 0) return;
      for (const auto& [buffer, need] : exec_uses_[p->exec])
        Use(buffer, need, "replay of '" + step.exec.value + "' would touch", At(step.exec, step));
      return;
    case Op::kUpdate:
      // cudaGraphExecUpdate copies the graph's parameters: from now on the exec touches its
      // buffers.
      if (p->exec >= 0 && p->graph >= 0) exec_uses_[p->exec] = graph_uses_[p->graph];
      return;
    case Op::kDestroyGraph:
      // Execs made from the graph stay valid (CUDA semantics).
      graphs_.End(step.graph.value, step.loc.line);
      return;
    case Op::kDestroyExec:
      execs_.End(step.exec.value, step.loc.line);
      return;
    default:
      return;
  }
}

void PlanBuilder::Snapshot(const Step& step, PlanStep* p) {
  p->buffer = ResolveBuffer(step.buffer, step);
  if (p->buffer >= 0) Use(p->buffer, Access::kRead, "snapshot reads", At(step.buffer, step));
  auto [it, inserted] = snapshots_.try_emplace(step.snapshot.value);
  if (!inserted) {
    Error(At(step.snapshot, step), "snapshot '" + step.snapshot.value +
                                       "' already exists (taken at line " +
                                       std::to_string(it->second.line) + "); use another name");
    p->snapshot = it->second.slot;
    return;
  }
  it->second = SnapshotInfo{static_cast<int>(plan_.snapshots.size()), p->buffer, step.loc.line};
  p->snapshot = it->second.slot;
  plan_.snapshots.push_back(step.snapshot.value);
}

void PlanBuilder::CheckEqual(const Step& step, PlanStep* p) {
  p->buffer = ResolveBuffer(step.buffer, step);
  if (p->buffer >= 0) Use(p->buffer, Access::kRead, "check_equal reads", At(step.buffer, step));
  if (step.snapshot.set == step.other.set) {
    Error(step.loc, "check_equal needs exactly one of 'snapshot' or 'other'");
    return;
  }
  int against = -1;  // buffer whose element count must match
  std::string against_name;
  if (step.other.set) {
    p->other = ResolveBuffer(step.other, step);
    if (p->other < 0) return;
    Use(p->other, Access::kRead, "check_equal reads", At(step.other, step));
    against = p->other;
    against_name = "'" + step.other.value + "'";
  } else {
    auto it = snapshots_.find(step.snapshot.value);
    if (it == snapshots_.end()) {
      std::vector<std::string> names;
      for (const std::string& n : plan_.snapshots) names.push_back(n);
      const std::string close = SuggestFrom(step.snapshot.value, names);
      std::string list;
      for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
      Error(At(step.snapshot, step),
            "unknown snapshot '" + step.snapshot.value + "'" +
                (!close.empty()  ? ", did you mean '" + close + "'?"
                 : names.empty() ? "; no snapshot was taken before this step"
                                 : "; snapshots so far: " + list));
      return;
    }
    p->snapshot = it->second.slot;
    against = it->second.buffer;
    against_name = "snapshot '" + step.snapshot.value + "'";
  }
  if (p->buffer >= 0 && against >= 0 &&
      plan_.buffers[p->buffer].elements != plan_.buffers[against].elements) {
    Error(step.loc, "check_equal compares different sizes: '" + step.buffer.value + "' has " +
                        std::to_string(plan_.buffers[p->buffer].elements) + " elements, " +
                        against_name + " has " + std::to_string(plan_.buffers[against].elements));
  }
}

void PlanBuilder::CheckAddress(const Step& step, int index, PlanStep* p) {
  if (step.of.size() < 2)
    Error(step.loc,
          "check_address needs at least 2 steps in 'of', got " + std::to_string(step.of.size()));
  for (const Located<std::string>& ref : step.of) {
    auto it = step_names_.find(ref.value);
    if (it == step_names_.end()) {
      std::vector<std::string> earlier;
      for (int i = 0; i < index; ++i) {
        const Step& s = scenario_.steps[i];
        if (s.name.set && (s.op == Op::kReserve || s.op == Op::kMap))
          earlier.push_back(s.name.value);
      }
      const std::string close = SuggestFrom(ref.value, earlier);
      Error(ref.loc, "'of' names '" + ref.value + "', which is not the name of a step" +
                         (close.empty() ? "" : "; did you mean '" + close + "'?"));
    } else if (it->second.index < 0 || it->second.index >= index) {
      Error(ref.loc, "'of' names '" + ref.value + "' (line " + std::to_string(it->second.line) +
                         "), which is not an earlier top-level step");
    } else if (it->second.op != Op::kReserve && it->second.op != Op::kMap) {
      Error(ref.loc, "'of' names '" + ref.value + "', a " + OpName(it->second.op) +
                         " step; check_address compares the addresses of reserve and map steps");
    } else {
      p->of_steps.push_back(it->second.index);
    }
  }
}

void PlanBuilder::CheckKernelParams(const Step& step, PlanStep* p) {
  if (step.graphs.size() != 2) {
    Error(step.loc,
          "check_kernel_params needs exactly 2 graphs, got " + std::to_string(step.graphs.size()));
  }
  for (const Located<std::string>& ref : step.graphs) {
    std::string error;
    const int slot = graphs_.Resolve(ref.value, &error);
    if (slot < 0) Error(ref.loc, error);
    p->graphs.push_back(slot);
  }
}

void PlanBuilder::Expectation(const Step& step, PlanStep* p) {
  const std::string& e = step.expect.value;
  auto bad = [&](const char* allowed) {
    Error(At(step.expect, step), std::string("'expect' of ") + OpName(step.op) + " must be " +
                                     allowed + ", got '" + e + "'");
  };
  switch (step.op) {
    case Op::kCheckMatmul:
      p->expect = Expectation::kPass;
      return;
    case Op::kCheckEqual:
      p->expect = (e.empty() || e == "equal") ? Expectation::kEqual : Expectation::kDifferent;
      if (!e.empty() && e != "equal" && e != "different") bad("equal or different");
      return;
    case Op::kCheckAddress:
      p->expect = (e.empty() || e == "same") ? Expectation::kSame : Expectation::kDifferent;
      if (!e.empty() && e != "same" && e != "different") bad("same or different");
      return;
    case Op::kCheckKernelParams:
      p->expect =
          (e.empty() || e == "identical") ? Expectation::kIdentical : Expectation::kDifferent;
      if (!e.empty() && e != "identical" && e != "different") bad("identical or different");
      return;
    case Op::kUpdate:
      p->expect = Expectation::kUpdateCode;
      p->expect_update = UpdateCode::kSuccess;
      if (!e.empty() && !ParseUpdateCode(e, &p->expect_update))
        bad("an update result such as success");
      return;
    default:
      p->expect = Expectation::kNone;
      return;
  }
}

}  // namespace vmm
