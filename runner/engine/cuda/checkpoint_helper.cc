#include "runner/engine/cuda/checkpoint_helper.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <vector>

#include "runner/base/stopwatch.h"
#include "runner/engine/cuda/cuda_call.h"
#include "runner/engine/cuda/cuda_engine.h"
#include "runner/engine/cuda/driver_api.h"
#include "runner/vocab/cuda_errors.h"

extern char** environ;

namespace vmm::cuda {
namespace {

// --- The helper's side ---

const char* StateName(CUprocessState s) {
  switch (s) {
    case CU_PROCESS_STATE_RUNNING:
      return "running";
    case CU_PROCESS_STATE_LOCKED:
      return "locked";
    case CU_PROCESS_STATE_CHECKPOINTED:
      return "checkpointed";
    case CU_PROCESS_STATE_FAILED:
      return "failed";
  }
  return "unknown";
}

class Helper {
 public:
  Helper(const DriverApi& api, Engine& engine, int pid) : api_(api), engine_(engine), pid_(pid) {}

  // One request line -> one reply line.
  std::string Answer(const std::string& line) {
    std::istringstream in(line);
    std::string verb;
    in >> verb;
    if (verb == "checkpoint") {
      uint32_t timeout_ms = 0;
      in >> timeout_ms;
      return Checkpoint(timeout_ms);
    }
    if (verb == "restore") return Restore();
    if (verb == "hold") {
      uint64_t leave = 0, held = 0;
      in >> leave;
      if (Status s = engine_.HoldMemory(leave, &held); !s.ok()) return Error(s);
      return "ok held=" + std::to_string(held);
    }
    if (verb == "return") {
      uint64_t returned = 0;
      if (Status s = engine_.ReturnMemory(&returned); !s.ok()) return Error(s);
      return "ok returned=" + std::to_string(returned);
    }
    if (verb == "info") {
      uint64_t free = 0, total = 0;
      if (Status s = engine_.MemoryInfo(&free, &total); !s.ok()) return Error(s);
      return "ok free=" + std::to_string(free) + " total=" + std::to_string(total);
    }
    return "error none state=" + State() + " unknown request '" + verb + "'";
  }

 private:
  std::string State() {
    CUprocessState s = CU_PROCESS_STATE_RUNNING;
    Status got = CU_LATE_CALL(api_, cuCheckpointProcessGetState, v12080, 12080, (pid_, &s));
    return got.ok() ? StateName(s) : "unknown";
  }
  std::string Error(const Status& s) {
    const char* name = s.cuda_error() != nullptr ? s.cuda_error() : "none";
    std::string message = s.message();
    for (char& c : message)
      if (c == '\n') c = ' ';
    return std::string("error ") + name + " state=" + State() + " " + message;
  }
  int64_t Free() {
    uint64_t free = 0, total = 0;
    (void)engine_.MemoryInfo(&free, &total);
    return static_cast<int64_t>(free);
  }
  std::string Checkpoint(uint32_t timeout_ms) {
    const int64_t before = Free();
    CUcheckpointLockArgs lock{};
    lock.timeoutMs = timeout_ms;
    Stopwatch lock_time;
    if (Status s = CU_LATE_CALL(api_, cuCheckpointProcessLock, v12080, 12080, (pid_, &lock));
        !s.ok())
      return Error(s);
    const double lock_us = lock_time.ElapsedUs();
    CUcheckpointCheckpointArgs args{};
    Stopwatch checkpoint_time;
    if (Status s = CU_LATE_CALL(api_, cuCheckpointProcessCheckpoint, v12080, 12080, (pid_, &args));
        !s.ok()) {
      CUcheckpointUnlockArgs unlock{};
      (void)CU_LATE_CALL(api_, cuCheckpointProcessUnlock, v12080, 12080, (pid_, &unlock));
      return Error(s);
    }
    const double checkpoint_us = checkpoint_time.ElapsedUs();
    return "ok lock_us=" + std::to_string(lock_us) +
           " checkpoint_us=" + std::to_string(checkpoint_us) +
           " freed=" + std::to_string(Free() - before) + " state=" + State();
  }
  std::string Restore() {
    const int64_t before = Free();
    CUcheckpointRestoreArgs args{};
    Stopwatch restore_time;
    if (Status s = CU_LATE_CALL(api_, cuCheckpointProcessRestore, v12080, 12080, (pid_, &args));
        !s.ok())
      return Error(s);
    const double restore_us = restore_time.ElapsedUs();
    CUcheckpointUnlockArgs unlock{};
    Stopwatch unlock_time;
    if (Status s = CU_LATE_CALL(api_, cuCheckpointProcessUnlock, v12080, 12080, (pid_, &unlock));
        !s.ok())
      return Error(s);
    return "ok restore_us=" + std::to_string(restore_us) +
           " unlock_us=" + std::to_string(unlock_time.ElapsedUs()) +
           " freed=" + std::to_string(Free() - before) + " state=" + State();
  }

  const DriverApi& api_;
  Engine& engine_;
  int pid_;
};

// --- The checkpointed process's side ---

Status HelperError(pid_t pid, const std::string& what) {
  return RuntimeError("the checkpoint helper (pid " + std::to_string(pid) + ") " + what);
}

}  // namespace

int RunCheckpointHelper(int argc, char** argv) {
  close_range(3, ~0U, 0);  // what the process that started it holds (an isolate child's channel)
  int pid = 0, device = -1;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--pid") == 0) pid = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--device") == 0) device = std::atoi(argv[i + 1]);
  }
  if (pid <= 0 || device < 0 || getppid() != pid) {
    std::cout << "error none state=unknown vmm-run __checkpoint-helper: not started by a vmm-run "
                 "that checkpoints"
              << std::endl;
    return 2;
  }
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // the kernel frees what a killed helper held
  StatusOr<std::unique_ptr<Engine>> engine = CreateCudaEngine(device);
  StatusOr<DriverApi> api = engine.ok() ? LoadDriverApi() : StatusOr<DriverApi>(engine.status());
  if (!api.ok()) {
    std::cout << "error none state=unknown the helper needs a CUDA context of its own on device "
              << device << " (a device in EXCLUSIVE_PROCESS compute mode, or a full one, refuses "
              << "it): " << api.status().message() << std::endl;
    return 1;
  }
  Helper helper(*api, **engine, pid);
  std::cout << "ok ready=1" << std::endl;
  for (std::string line; std::getline(std::cin, line);)
    std::cout << helper.Answer(line) << std::endl;
  return 0;
}

StatusOr<std::unique_ptr<CheckpointHelper>> CheckpointHelper::Start(int ordinal) {
  // Requests go over a socket (send with MSG_NOSIGNAL: a helper that is gone is an error, not a
  // SIGPIPE), replies over a pipe.
  int to[2], from[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, to) != 0)
    return RuntimeError(std::string("checkpoint helper: socketpair: ") + strerror(errno));
  UniqueFd to_write(to[0]), to_read(to[1]);
  if (pipe2(from, O_CLOEXEC) != 0)
    return RuntimeError(std::string("checkpoint helper: pipe2: ") + strerror(errno));
  UniqueFd from_read(from[0]), from_write(from[1]);
  const char* env = std::getenv("VMMRUN_EXE");
  std::string exe = env != nullptr && *env != '\0' ? env : "/proc/self/exe";
  std::vector<std::string> args = {exe,        "__checkpoint-helper",
                                   "--pid",    std::to_string(getpid()),
                                   "--device", std::to_string(ordinal)};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  int spawned = posix_spawn_file_actions_adddup2(&actions, to_read.get(), 0);
  if (spawned == 0) spawned = posix_spawn_file_actions_adddup2(&actions, from_write.get(), 1);
  pid_t pid = 0;
  if (spawned == 0)
    spawned = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0)
    return RuntimeError("checkpoint helper: starting " + exe + ": " + strerror(spawned));
  // The helper's ends are the helper's alone: its exit must read as the end of the pipe here.
  to_read.reset();
  from_write.reset();
  std::unique_ptr<CheckpointHelper> helper(
      new CheckpointHelper(pid, std::move(to_write), std::move(from_read)));
  std::map<std::string, std::string> values;
  Status ready = helper->Ask("", &values);  // its first line answers no request
  if (!ready.ok()) return ready.WithContext("starting the checkpoint helper");
  return helper;
}

CheckpointHelper::~CheckpointHelper() {
  to_.reset();
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

Status CheckpointHelper::Ask(const std::string& request, std::map<std::string, std::string>* values,
                             CheckpointFacts* facts) {
  if (!request.empty()) {
    const std::string line = request + "\n";
    for (size_t put = 0; put < line.size();) {
      const ssize_t n = send(to_.get(), line.data() + put, line.size() - put, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return HelperError(pid_, "is gone: " + std::string(strerror(errno)));
      put += static_cast<size_t>(n);
    }
  }
  size_t end;
  while ((end = pending_.find('\n')) == std::string::npos) {
    char buffer[512];
    const ssize_t n = read(from_.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return HelperError(pid_, std::string(n == 0 ? "ended" : strerror(errno)) +
                                   " without a reply to '" + request + "'");
    }
    pending_.append(buffer, static_cast<size_t>(n));
  }
  const std::string reply = pending_.substr(0, end);
  pending_.erase(0, end + 1);
  std::istringstream in(reply);
  std::string word;
  in >> word;
  if (word == "ok") {
    while (in >> word) {
      const size_t eq = word.find('=');
      if (eq != std::string::npos) (*values)[word.substr(0, eq)] = word.substr(eq + 1);
    }
    return Status::Ok();
  }
  std::string error, state, message;
  in >> error >> state;
  std::getline(in >> std::ws, message);
  if (facts != nullptr && state.rfind("state=", 0) == 0) facts->state = state.substr(6);
  const CudaErrorName* known = FindCudaError(error);
  if (word != "error" || (known == nullptr && error != "none"))
    return HelperError(pid_, "replied '" + reply + "'");
  return Status(Code::kRuntime, message, known != nullptr ? known->name : nullptr);
}

Status CheckpointHelper::Number(const std::map<std::string, std::string>& values, const char* key,
                                double* out) const {
  auto it = values.find(key);
  const char* text = it == values.end() ? "" : it->second.c_str();
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text, &end);
  if (it == values.end() || end == text || *end != '\0' || errno != 0)
    return HelperError(pid_, std::string("replied without a number for '") + key + "'");
  *out = value;
  return Status::Ok();
}

Status CheckpointHelper::Checkpoint(uint32_t lock_timeout_ms, CheckpointFacts* facts) {
  return AskForFacts("checkpoint " + std::to_string(lock_timeout_ms), "lock_us", &facts->lock_us,
                     "checkpoint_us", &facts->checkpoint_us, facts);
}

Status CheckpointHelper::Restore(CheckpointFacts* facts) {
  return AskForFacts("restore", "restore_us", &facts->restore_us, "unlock_us", &facts->unlock_us,
                     facts);
}

Status CheckpointHelper::AskForFacts(const std::string& request, const char* first_key,
                                     double* first, const char* second_key, double* second,
                                     CheckpointFacts* facts) {
  std::map<std::string, std::string> v;
  VMM_RETURN_IF_ERROR(Ask(request, &v, facts));
  facts->state = v.count("state") != 0 ? v["state"] : "unknown";
  double freed = 0;
  VMM_RETURN_IF_ERROR(Number(v, first_key, first));
  VMM_RETURN_IF_ERROR(Number(v, second_key, second));
  VMM_RETURN_IF_ERROR(Number(v, "freed", &freed));
  facts->freed_bytes = static_cast<int64_t>(freed);
  return Status::Ok();
}

Status CheckpointHelper::Hold(uint64_t leave_free, uint64_t* held) {
  std::map<std::string, std::string> v;
  VMM_RETURN_IF_ERROR(Ask("hold " + std::to_string(leave_free), &v));
  double bytes = 0;
  VMM_RETURN_IF_ERROR(Number(v, "held", &bytes));
  *held = static_cast<uint64_t>(bytes);
  return Status::Ok();
}

Status CheckpointHelper::Return(uint64_t* returned) {
  std::map<std::string, std::string> v;
  VMM_RETURN_IF_ERROR(Ask("return", &v));
  double bytes = 0;
  VMM_RETURN_IF_ERROR(Number(v, "returned", &bytes));
  *returned = static_cast<uint64_t>(bytes);
  return Status::Ok();
}

Status CheckpointHelper::Info(uint64_t* free_bytes, uint64_t* total_bytes) {
  std::map<std::string, std::string> v;
  VMM_RETURN_IF_ERROR(Ask("info", &v));
  double free = 0, total = 0;
  VMM_RETURN_IF_ERROR(Number(v, "free", &free));
  VMM_RETURN_IF_ERROR(Number(v, "total", &total));
  *free_bytes = static_cast<uint64_t>(free);
  *total_bytes = static_cast<uint64_t>(total);
  return Status::Ok();
}

}  // namespace vmm::cuda
