#include "runner/pipeline/isolate_child.h"

#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "runner/base/exit_code.h"
#include "runner/base/limits.h"
#include "runner/isolate/child_process.h"
#include "runner/isolate/child_request.h"
#include "runner/pipeline/run_scenario.h"
#include "runner/scenario/expr.h"

namespace vmm {
namespace {

using isolate::FrameChannel;
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

int Finish(FrameChannel& channel, ChildEvent done, int code) {
  done.kind = ChildEvent::Kind::kDone;
  (void)channel.Send(report::EncodeChildEvent(done));
  // No engine teardown, no static destructors: see isolate_child.h.
  std::fflush(stderr);
  _exit(code);
}

// The run the parent prepared, prepared again here from what the request carries; or why not
// (`done->setup_error`, and the exit code).
std::optional<PreparedRun> PrepareAsTheParentDid(const report::BlockRequest& r, ChildEvent* done,
                                                 int* code) {
  *code = kExitInputError;
  for (const std::string& limit : r.limits) {
    if (Status set = SetLimit(limit); !set.ok()) {
      done->setup_error = set.message();
      return std::nullopt;
    }
  }
  RunRequest request;
  request.path = r.scenario_path;
  request.text = r.scenario_text;
  for (const auto& [name, value] : r.set) request.expand.set.push_back(VarOverride{name, value});
  for (const auto& [name, value] : r.facts)
    request.expand.facts.emplace_back(name, LiteralValue(value));
  request.expand.include_roots = r.include_roots;
  if (!ParseBackendKind(r.backend, &request.backend) || request.backend == BackendKind::kAuto) {
    done->setup_error = "unknown backend '" + r.backend + "'";
    return std::nullopt;
  }
  request.device = r.device;
  request.host_devices = r.host_devices;
  request.trap_faults = true;
  PrepareOutcome prepared = PrepareRun(std::move(request));
  if (!prepared.diagnostics.empty()) {
    done->setup_error =
        "the scenario does not validate: " + FormatDiagnostics(prepared.diagnostics);
    return std::nullopt;
  }
  if (!prepared.run) {
    done->setup_error = prepared.error;
    *code = prepared.exit_code;
    return std::nullopt;
  }
  if (isolate::BlockOf(prepared.run->plan, r) == nullptr) {
    done->setup_error = "step " + std::to_string(r.block) +
                        (r.member >= 0 ? " block " + std::to_string(r.member) : "") +
                        " is not an isolate block";
    return std::nullopt;
  }
  return std::move(prepared.run);
}

}  // namespace

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
  close_range(isolate::kChildChannelFd + 1, ~0U, 0);
  // A child may crash on purpose (`expect: {signal: ...}`): no core file for it.
  const rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);

  // 2-3. The request, the run prepared as the parent's, and hello (ready).
  FrameChannel channel{UniqueFd(isolate::kChildChannelFd)};
  StatusOr<isolate::ReceivedBlock> received = isolate::ReceiveBlock(channel);
  ChildEvent done;
  if (!received.ok()) {
    done.setup_error = received.status().message();
    return Finish(channel, done, kExitInputError);
  }
  const report::BlockRequest& r = received->request;
  int setup_code = 0;
  std::optional<PreparedRun> run = PrepareAsTheParentDid(r, &done, &setup_code);
  if (!run) return Finish(channel, done, setup_code);
  const IsolatedBlock& block = *isolate::BlockOf(run->plan, r);
  Engine& engine = *run->engine.engine;
  // Ready: the parent's clock for the block's time limit starts now, after context creation.
  ChildEvent hello;
  hello.kind = ChildEvent::Kind::kHello;
  hello.pid = getpid();
  for (const std::string& name : r.fds)  // in the request's order, as held by this process
    if (received->fds.count(name) != 0) hello.fds.push_back(name);
  (void)channel.Send(report::EncodeChildEvent(hello));
  // A together group's children start their steps at once, when every one is ready.
  if (Status start = isolate::AwaitGroupStart(channel, r); !start.ok()) {
    done.setup_error = start.message();
    return Finish(channel, done, kExitInputError);
  }

  // 4. Run, stream, close with a synchronize.
  Streamer streamer(channel);
  // The parent's exported handles, under the names its import steps use.
  RunOutcome outcome;
  try {
    outcome = RunPlan(block.plan, engine, &streamer, nullptr, std::move(received->fds));
  } catch (const std::exception& e) {
    // Said, and ended here: unwinding would tear the engine down, whose CUDA calls never return
    // in a process left checkpointed.
    done.end_error = std::string("vmm-run internal error in the child: ") + e.what();
    engine.EndHelpers();
    return Finish(channel, done, kExitInternal);
  }
  done.summary = outcome.summary;
  int code = outcome.summary.exit_code;
  // A process left checkpointed (a restore that failed) would wait in the synchronize for good.
  if (outcome.summary.failed_step < 0 && !engine.Checkpointed()) {
    Status end = engine.Synchronize();
    if (!end.ok()) {
      done.end_error = end.message();
      code = kExitStepFailed;
    }
  }
  done.fault = engine.FaultNote();
  engine.EndHelpers();  // their memory is back before the parent's next step
  return Finish(channel, done, code);
}

}  // namespace vmm
