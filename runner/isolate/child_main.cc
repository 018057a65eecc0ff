#include "runner/isolate/child_main.h"

#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>

#include "runner/base/exit_code.h"
#include "runner/base/limits.h"
#include "runner/engine/select/engine_select.h"
#include "runner/exec/executor.h"
#include "runner/isolate/child_process.h"
#include "runner/plan/plan.h"
#include "runner/scenario/parse.h"

namespace vmm::isolate {
namespace {

using report::ChildEvent;

// Sends each step's record to the parent as soon as it is final.
class Streamer final : public StepObserver {
 public:
  explicit Streamer(FrameChannel& channel) : channel_(channel) {}
  void OnStep(const PlanStep&, const report::StepRecord& record) override {
    ChildEvent e;
    e.kind = ChildEvent::Kind::kStep;
    e.step = record;
    // A parent that is gone cannot be told; PR_SET_PDEATHSIG ends this process anyway.
    (void)channel_.Send(report::EncodeChildEvent(e));
  }

 private:
  FrameChannel& channel_;
};

// The isolate block the request names in `plan` (top-level step `block`, or block `member` of the
// together group there), or nullptr.
const IsolatedBlock* BlockOf(const Plan& plan, const report::BlockRequest& r) {
  if (r.block < 0 || static_cast<size_t>(r.block) >= plan.steps.size()) return nullptr;
  const PlanStep& step = plan.steps[r.block];
  if (r.member < 0) return step.block.get();
  if (step.op != Op::kTogether || static_cast<size_t>(r.member) >= step.body.size()) return nullptr;
  return step.body[r.member].block.get();
}

// The plan of the block the request names in the scenario it carries, or why there is none.
StatusOr<Plan> BlockPlan(const report::BlockRequest& r, Scenario* scenario) {
  for (const std::string& limit : r.limits)
    if (Status set = SetLimit(limit); !set.ok()) return set;
  ExpandOptions expand;
  for (const auto& [name, value] : r.set) expand.set.push_back(VarOverride{name, value});
  expand.include_roots = r.include_roots;
  std::vector<Diagnostic> diagnostics;
  std::optional<Scenario> parsed =
      ParseScenario(r.scenario_text, r.scenario_path, expand, &diagnostics);
  if (!parsed)
    return InvalidInput("the scenario does not parse: " + FormatDiagnostics(diagnostics));
  *scenario = std::move(*parsed);
  Plan plan = BuildPlan(*scenario, &diagnostics);
  if (!diagnostics.empty())
    return InvalidInput("the scenario does not validate: " + FormatDiagnostics(diagnostics));
  if (BlockOf(plan, r) == nullptr) {
    return InvalidInput("step " + std::to_string(r.block) +
                        (r.member >= 0 ? " block " + std::to_string(r.member) : "") +
                        " is not an isolate block");
  }
  return plan;
}

int Finish(FrameChannel& channel, ChildEvent done, int code) {
  done.kind = ChildEvent::Kind::kDone;
  (void)channel.Send(report::EncodeChildEvent(done));
  // No engine teardown, no static destructors: see child_main.h.
  std::fflush(stderr);
  _exit(code);
}

}  // namespace

StatusOr<ReceivedBlock> ReceiveBlock(FrameChannel& channel) {
  std::string frame;
  bool eof = false;
  VMM_RETURN_IF_ERROR(channel.Receive(&frame, &eof));
  if (eof) return RuntimeError("the parent closed the channel before sending a request");
  StatusOr<report::BlockRequest> request = report::DecodeBlockRequest(frame);
  if (!request.ok()) return request.status();
  StatusOr<std::vector<UniqueFd>> fds = channel.TakeFds(request->fds.size());
  if (!fds.ok()) return fds.status();
  ReceivedBlock received;
  for (size_t i = 0; i < request->fds.size(); ++i)
    received.fds[request->fds[i]] = std::move(fds.value()[i]);
  received.request = std::move(request).value();
  return received;
}

int RunIsolateChild(int argc, char** argv) {
  // 1. Never outlive the parent.
  pid_t parent = 0;
  for (int i = 2; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--parent") == 0) parent = static_cast<pid_t>(std::atol(argv[i + 1]));
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (parent <= 0 || getppid() != parent) {
    std::fprintf(stderr, "vmm-run __child: not started by a running vmm-run (see --help)\n");
    return kExitInputError;
  }
  close_range(kChildChannelFd + 1, ~0U, 0);
  // A child may crash on purpose (`expect: {signal: ...}`): no core file for it.
  const rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);

  // 2-3. The request, the plan, an engine of the parent's backend, and hello (ready).
  FrameChannel channel{UniqueFd(kChildChannelFd)};
  StatusOr<ReceivedBlock> received = ReceiveBlock(channel);
  ChildEvent done;
  if (!received.ok()) {
    done.setup_error = received.status().message();
    return Finish(channel, done, kExitInputError);
  }
  const report::BlockRequest& r = received->request;

  Scenario scenario;
  StatusOr<Plan> plan = BlockPlan(r, &scenario);
  if (!plan.ok()) {
    done.setup_error = plan.status().message();
    return Finish(channel, done, kExitInputError);
  }
  const IsolatedBlock& block = *BlockOf(*plan, r);
  EngineRequest engine_request;
  if (!ParseBackendKind(r.backend, &engine_request.kind) ||
      engine_request.kind == BackendKind::kAuto) {
    done.setup_error = "unknown backend '" + r.backend + "'";
    return Finish(channel, done, kExitInputError);
  }
  engine_request.device = r.device;
  engine_request.granularity = plan->granularity;
  engine_request.trap_faults = true;
  StatusOr<EngineChoice> choice = SelectEngine(engine_request);
  if (!choice.ok()) {
    done.setup_error = choice.status().message();
    return Finish(channel, done, ExitForStatus(choice.status()));
  }
  Engine& engine = *choice->engine;
  // Ready: the parent's clock for the block's time limit starts now, after context creation.
  ChildEvent hello;
  hello.kind = ChildEvent::Kind::kHello;
  hello.pid = getpid();
  for (const std::string& name : r.fds)  // in the request's order, as held by this process
    if (received->fds.count(name) != 0) hello.fds.push_back(name);
  (void)channel.Send(report::EncodeChildEvent(hello));

  // 4. Run, stream, close with a synchronize.
  Streamer streamer(channel);
  // The parent's exported handles, under the names its import steps use.
  RunOutcome outcome = RunPlan(block.plan, engine, &streamer, nullptr, std::move(received->fds));
  done.summary = outcome.summary;
  int code = outcome.summary.exit_code;
  if (outcome.summary.failed_step < 0) {
    Status end = engine.Synchronize();
    if (!end.ok()) {
      done.end_error = end.message();
      code = kExitStepFailed;
    }
  }
  done.fault = engine.FaultNote();
  return Finish(channel, done, code);
}

}  // namespace vmm::isolate
