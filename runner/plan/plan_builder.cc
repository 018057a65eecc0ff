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
  std::vector<Diagnostic> mine(diagnostics->begin() + static_cast<std::ptrdiff_t>(first),
                               diagnostics->end());
  SortByPosition(&mine);
  std::copy(mine.begin(), mine.end(), diagnostics->begin() + static_cast<std::ptrdiff_t>(first));
  return plan;
}

PlanBuilder::PlanBuilder(const Scenario& scenario, std::vector<Diagnostic>* diagnostics)
    : scenario_(scenario),
      diagnostics_(diagnostics),
      allocs_("alloc", "created", "release", "released", &plan_.allocs),
      graphs_("graph", "captured", "destroy", "destroyed", &plan_.graphs),
      execs_("exec", "instantiated", "destroy", "destroyed", &plan_.execs) {}

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

namespace {
// "reserve A", "create pA1", "matmul C", "replay e1", "synchronize": the op and what it acts on.
// Not unique (reports key unnamed steps by op and index), just readable.
std::string DefaultLabel(const Step& step) {
  std::string label = OpName(step.op);
  for (const Located<std::string>* target :
       {&step.buffer, &step.alloc, &step.c, &step.exec, &step.graph}) {
    if (target->set && !target->value.empty()) return label + " " + target->value;
  }
  return label;
}
}  // namespace

PlanStep PlanBuilder::Common(const Step& step, int index) const {
  PlanStep p;
  p.src = &step;
  p.op = step.op;
  p.index = index;
  p.line = step.loc.line;
  p.named = step.name.set;
  p.label = (step.name.set && !step.name.value.empty()) ? step.name.value : DefaultLabel(step);
  p.repeat = step.repeat.value == 0 ? 1 : step.repeat.value;
  p.fatal = step.fatal.value;
  p.async = step.async.value;
  return p;
}

int PlanBuilder::ResolveBuffer(const Located<std::string>& ref, const Step& step) {
  auto it = buffer_slots_.find(ref.value);
  if (it != buffer_slots_.end()) return it->second;
  std::vector<std::string> names;
  for (const PlanBuffer& b : plan_.buffers) names.push_back(b.name);
  const std::string close = SuggestName(ref.value, names);
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

}  // namespace vmm
