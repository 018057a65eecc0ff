#include "runner/plan/plan_builder.h"

#include <algorithm>
#include <limits>

#include "runner/base/diagnostic.h"
#include "runner/base/format.h"
#include "runner/vocab/cuda_errors.h"

namespace vmm {

Plan BuildPlan(const Scenario& scenario, std::vector<Diagnostic>* diagnostics, PlannedSteps keep) {
  ResetSuggestionBudget();
  const size_t first = diagnostics->size();
  Plan plan = PlanBuilder(scenario, diagnostics, keep).Build();
  // One step can report several fields; keep the whole list in file order.
  std::vector<Diagnostic> mine(diagnostics->begin() + static_cast<std::ptrdiff_t>(first),
                               diagnostics->end());
  SortByPosition(&mine);
  std::copy(mine.begin(), mine.end(), diagnostics->begin() + static_cast<std::ptrdiff_t>(first));
  return plan;
}

void AddStateErrors(const PartialScenario& partial, std::vector<Diagnostic>* diagnostics) {
  if (!partial.scenario) return;
  std::vector<Diagnostic> state;
  BuildPlan(*partial.scenario, &state, PlannedSteps::kDrop);
  for (Diagnostic& d : state)
    if (!partial.Tainted(d.loc.line)) diagnostics->push_back(std::move(d));
  SortByPosition(diagnostics);
}

PlanBuilder::PlanBuilder(const Scenario& scenario, std::vector<Diagnostic>* diagnostics,
                         PlannedSteps keep)
    : scenario_(scenario),
      steps_(scenario.steps),
      diagnostics_(diagnostics),
      keep_(keep),
      allocs_("alloc", "created", "release", "released", &plan_.allocs),
      graphs_("graph", "captured", "destroy", "destroyed", &plan_.graphs),
      execs_("exec", "instantiated", "destroy", "destroyed", &plan_.execs) {}

PlanBuilder::PlanBuilder(const PlanBuilder& parent, const Step& block,
                         const BlockExpectation& expect)
    : scenario_(parent.scenario_),
      steps_(block.steps),
      diagnostics_(parent.diagnostics_),
      parent_(&parent),
      report_duplicates_(false),
      faults_allowed_(expect.AllowsFaults()),
      granularity_(parent.granularity_),
      buffer_slots_(parent.buffer_slots_),
      allocs_("alloc", "created", "release", "released", &plan_.allocs),
      graphs_("graph", "captured", "destroy", "destroyed", &plan_.graphs),
      execs_("exec", "instantiated", "destroy", "destroyed", &plan_.execs) {
  plan_.scenario_name = parent.plan_.scenario_name;
  plan_.granularity = granularity_;
  plan_.devices = parent.plan_.devices;
  plan_.buffers = parent.plan_.buffers;
  for (PlanBuffer& b : plan_.buffers) b.reservation_size = 0;  // the child reserves for itself
  reservations_.resize(plan_.buffers.size());
  reserved_by_.resize(plan_.buffers.size());
  freed_line_.resize(plan_.buffers.size(), 0);
  reservation_id_.resize(plan_.buffers.size(), -1);
  last_reserved_size_.resize(plan_.buffers.size(), 0);
  graph_allocs_.resize(plan_.buffers.size());
}

Plan PlanBuilder::BuildBlock() && {
  IndexStepNames(steps_);
  PlanSteps();
  CheckFlagsSet();
  CheckRestoredAtEnd();
  return std::move(plan_);
}

void PlanBuilder::PlanSteps() {
  if (keep_ == PlannedSteps::kDrop) {
    for (size_t i = 0; i < steps_.size(); ++i) Visit(steps_[i], static_cast<int>(i), nullptr);
    return;
  }
  plan_.steps.reserve(steps_.size());
  for (size_t i = 0; i < steps_.size(); ++i)
    plan_.steps.push_back(Visit(steps_[i], static_cast<int>(i), nullptr));
}

std::string PlanBuilder::BlockHint() const {
  if (parent_ == nullptr) return "";
  return " (it is live outside this isolate block, but the block's child process sees only what "
         "the block itself reserves, creates and captures)";
}

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
  if (const Located<uint64_t>& d = scenario_.requires_.devices; d.set && d.value > 1) {
    plan_.devices = static_cast<int>(std::min<uint64_t>(d.value, kMaxScenarioDevices));
  }
  DeclareBuffers();
  IndexStepNames(steps_);
  PlanSteps();
  CheckFlagsSet();
  return std::move(plan_);
}

void PlanBuilder::DeclareBuffers() {
  for (const BufferDecl& b : scenario_.buffers) DeclareTensor(b, "buffer");
  const size_t buffers = plan_.buffers.size();
  for (const BufferDecl& v : scenario_.views) {
    const int slot = DeclareTensor(v, "view");
    if (slot < 0) continue;
    PlanBuffer& view = plan_.buffers[slot];
    view.offset = v.offset.value;
    auto it = buffer_slots_.find(v.of.value);
    if (it == buffer_slots_.end() || static_cast<size_t>(it->second) >= buffers) {
      std::vector<std::string> names;
      for (size_t i = 0; i < buffers; ++i) names.push_back(plan_.buffers[i].name);
      const std::string close = SuggestName(v.of.value, names);
      Error(v.of.loc,
            "view '" + v.name + "' lives in '" + v.of.value + "', which is not " +
                (it != buffer_slots_.end() ? "a buffer but a view" : "a declared buffer") +
                (close.empty() ? "" : "; did you mean '" + close + "'?"));
    } else {
      view.base = it->second;
    }
    if (view.offset % kViewAlignment != 0) {
      Error(v.offset.loc, "view '" + v.name + "' starts at offset " + FormatBytes(view.offset) +
                              ", not a multiple of " + std::to_string(kViewAlignment) +
                              " bytes (views stay aligned so device kernels stay vectorised)");
    }
  }
  reservations_.resize(plan_.buffers.size());
  reserved_by_.resize(plan_.buffers.size());
  freed_line_.resize(plan_.buffers.size(), 0);
  reservation_id_.resize(plan_.buffers.size(), -1);
  last_reserved_size_.resize(plan_.buffers.size(), 0);
  graph_allocs_.resize(plan_.buffers.size());
}

int PlanBuilder::DeclareTensor(const BufferDecl& b, const char* kind) {
  {
    PlanBuffer pb;
    pb.name = b.name;
    pb.shape = b.shape;
    uint64_t elements = 1;
    bool ok = !b.shape.empty();
    for (uint64_t d : b.shape) {
      if (d == 0) ok = false;
      if (d != 0 && elements > std::numeric_limits<uint64_t>::max() / 4 / d) {
        Error(b.loc, std::string(kind) + " '" + b.name + "' is too large: shape " +
                         FormatShape(b.shape) + " does not fit in 64-bit bytes");
        ok = false;
        elements = 0;
        break;
      }
      elements *= d;
    }
    if (b.shape.empty() || std::find(b.shape.begin(), b.shape.end(), 0) != b.shape.end()) {
      Error(b.loc, std::string(kind) + " '" + b.name +
                       "' needs a shape of positive dimensions, got " + FormatShape(b.shape));
    }
    pb.elements = ok ? elements : 0;
    pb.bytes = pb.elements * 4;
    const int slot = static_cast<int>(plan_.buffers.size());
    if (!buffer_slots_.emplace(b.name, slot).second) {
      Error(b.loc, std::string(kind) + " '" + b.name +
                       "' has the name of a buffer declared before; buffers and views share "
                       "one namespace");
      return -1;
    }
    plan_.buffers.push_back(std::move(pb));
    return slot;
  }
}

void PlanBuilder::IndexStepName(const Step& s, int index) {
  // Explicit names are report keys and node names: unique across the file, capture bodies,
  // parallel branches and isolate blocks included. Only this plan's own steps are top-level
  // (index >= 0).
  // A thread's name is its group's business (unique there), so that groups may reuse names.
  if (s.name.set && !s.name.value.empty() && s.op != Op::kThread) {
    auto [it, inserted] =
        step_names_.try_emplace(s.name.value, NamedStep{index, s.op, s.name.loc.line});
    if (!inserted && report_duplicates_) {
      Error(s.name.loc, "duplicate step name '" + s.name.value + "' (first at line " +
                            std::to_string(it->second.line) + ")");
    }
  }
  for (const Step& inner : s.steps) IndexStepName(inner, -1);
  for (const std::vector<Step>& branch : s.branches())
    for (const Step& inner : branch) IndexStepName(inner, -1);
}

void PlanBuilder::IndexStepNames(const std::vector<Step>& steps) {
  for (size_t i = 0; i < steps.size(); ++i) IndexStepName(steps[i], static_cast<int>(i));
}

namespace {
// "reserve A", "create pA1", "matmul C", "replay e1", "synchronize": the op and what it acts on.
// Not unique (reports key unnamed steps by op and index), just readable.
std::string DefaultLabel(const Step& step) {
  std::string label = OpName(step.op);
  if (step.op == Op::kIsolate) return "isolate block";
  if (step.op == Op::kTogether) return "together";
  if (step.op == Op::kThreads) return "threads";
  if (step.op == Op::kSignal || step.op == Op::kWaitFor) {
    const StepMapEntry* point = step.keys().Find("point");
    return point != nullptr ? label + " " + point->value.value : label;
  }
  for (const Located<std::string>* target : {&step.buffer(), &step.alloc(), &step.c(), &step.to(),
                                             &step.exec(), &step.graph(), &step.event()}) {
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
  p.repeat =
      step.repeat().value == 0 ? 1 : static_cast<uint32_t>(step.repeat().value);  // schema: <= 1e6
  p.fatal = step.fatal().value;
  p.async = step.async().value;
  p.wait = step.wait().set ? step.wait().value : true;
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

const Located<std::string>& PlanBuilder::Key(const Step& step, std::string_view key) {
  static const Located<std::string> kAbsent;
  const StepMapEntry* entry = step.keys().Find(key);
  if (entry == nullptr) return kAbsent;
  entry->read = true;
  return entry->value;
}

const PlanBuilder::PlanFn PlanBuilder::kPlanners[] = {
#define VMM_OP(Enum, name, Family, Flags, label) &PlanBuilder::PlanOp<Op::Enum>,
#include "runner/vocab/ops.def"
#undef VMM_OP
};

PlanStep PlanBuilder::Visit(const Step& step, int index, BufferUses* capture_uses) {
  PlanStep p = Common(step, index);
  if (capture_uses != nullptr && !Describe(step.op).has(kCapturable)) {
    std::vector<std::string> capturable;
    for (const OpInfo& info : AllOps())
      if (info.has(kCapturable)) capturable.push_back(info.name);
    std::string list;
    for (size_t i = 0; i < capturable.size(); ++i)
      list += (i == 0 ? "" : i + 1 == capturable.size() ? " and " : ", ") + capturable[i];
    Error(step.loc, std::string("'") + OpName(step.op) +
                        "' cannot be recorded in a capture; only " + list + " can");
    return p;
  }
  if (capture_uses != nullptr && step.expect_error().set) {
    Error(step.expect_error().loc,
          "expect_error is not allowed in a capture: proving that the refused call changed nothing "
          "reads memory, which a capturing stream cannot do; put the step before or after the "
          "capture");
    return p;
  }
  if (capture_uses == nullptr && !AllowedWhileCheckpointed(step)) return p;
  ExpectError(step, &p);
  if (capture_uses == nullptr) CheckOpenFlags(step);
  const Step* outer = current_;  // a capture's body steps are visited inside the capture's visit
  PlanStep* outer_plan = current_plan_;
  current_ = &step;
  current_plan_ = &p;
  p.device = Device(step);
  if (capture_uses == nullptr && Describe(step.op).has(kCaptureOnly)) {
    Error(step.loc, std::string("'") + OpName(step.op) +
                        "' makes a graph node: it can only appear in a capture's steps");
    current_ = outer;
    current_plan_ = outer_plan;
    return p;
  }
  const size_t errors_before = diagnostics_->size();
  if (step.expect_error().set) {
    // The call is expected to fail, so it changes nothing: plan the step (its names, its rules)
    // and forget its effect. The executor proves the state unchanged after the call. A step that
    // observes (expect_error: observe) is assumed to succeed, keeping its effect, unless it breaks
    // a rule: then it is assumed refused, as with an error named. The executor stops the run where
    // the call does otherwise.
    SimulatedState before = SaveState();
    (this->*kPlanners[static_cast<size_t>(step.op)])(step, &p, capture_uses);
    if (p.expect_error != kObserveError || p.broken_rule != nullptr)
      RestoreState(std::move(before));
  } else {
    (this->*kPlanners[static_cast<size_t>(step.op)])(step, &p, capture_uses);
  }
  // A key the schema accepted that the op's planner never read (it may stop early on an error).
  const bool planned_cleanly = diagnostics_->size() == errors_before;
  for (const StepMapEntry& key : step.keys().entries) {
    if (!key.read && planned_cleanly) {
      Error(key.value.loc, "internal error: '" + key.key + "' of " + OpName(step.op) +
                               " is accepted by the schema but read by no planner");
    }
  }
  current_ = outer;
  current_plan_ = outer_plan;
  return p;
}

}  // namespace vmm
