#include "runner/isolate/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <utility>

extern char** environ;

namespace vmm::isolate {
namespace {

Status Errno(const std::string& call, int error) {
  return RuntimeError(call + ": " + strerror(error));
}

// A descriptor number well above 3, so that the spawn's dup2 onto 0..3 never hits one of ours.
StatusOr<UniqueFd> Above3(UniqueFd fd) {
  if (fd.get() > kChildChannelFd) return fd;
  const int moved = fcntl(fd.get(), F_DUPFD_CLOEXEC, 10);
  if (moved < 0) return Errno("fcntl(F_DUPFD_CLOEXEC)", errno);
  return UniqueFd(moved);
}

// posix_spawn's two attribute objects, destroyed on every path.
struct SpawnSetup {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

}  // namespace

StatusOr<ChildProcess> ChildProcess::Start(const std::string& exe,
                                           const std::vector<std::string>& args, UniqueFd channel) {
  StatusOr<UniqueFd> socket = Above3(std::move(channel));
  if (!socket.ok()) return socket.status();
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return Errno("pipe2", errno);
  UniqueFd err_read(pipe_fds[0]);
  StatusOr<UniqueFd> err_write = Above3(UniqueFd(pipe_fds[1]));
  if (!err_write.ok()) return err_write.status();
  if (fcntl(err_read.get(), F_SETFL, O_NONBLOCK) != 0) return Errno("fcntl(O_NONBLOCK)", errno);

  SpawnSetup s;
  // dup2 onto a different number clears close-on-exec on the copy; the originals stay
  // close-on-exec and vanish at exec.
  posix_spawn_file_actions_addopen(&s.actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&s.actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&s.actions, err_write->get(), 2);
  posix_spawn_file_actions_adddup2(&s.actions, socket->get(), kChildChannelFd);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  sigdelset(&all, SIGKILL);
  sigdelset(&all, SIGSTOP);
  posix_spawnattr_setsigmask(&s.attr, &none);
  posix_spawnattr_setsigdefault(&s.attr, &all);
  posix_spawnattr_setpgroup(&s.attr, 0);
  posix_spawnattr_setflags(&s.attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);

  std::vector<std::string> argv_text;
  argv_text.push_back(exe);
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, exe.c_str(), &s.actions, &s.attr, argv.data(), environ);
  if (rc != 0) return Errno("posix_spawn " + exe, rc);
  return ChildProcess(pid, std::move(err_read));
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      stderr_(std::move(other.stderr_)),
      status_(std::exchange(other.status_, std::nullopt)) {}

ChildProcess::~ChildProcess() {
  if (pid_ <= 0 || status_) return;
  Kill();
  Wait();
}

std::optional<int> ChildProcess::TryWait() {
  if (status_ || pid_ <= 0) return status_;
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid_, &status, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid_) status_ = status;
  return status_;
}

int ChildProcess::Wait() {
  if (status_ || pid_ <= 0) return status_.value_or(0);
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid_, &status, 0);
  } while (r < 0 && errno == EINTR);
  status_ = r == pid_ ? status : 0;
  return *status_;
}

void ChildProcess::Kill() {
  if (pid_ <= 0 || status_) return;
  // The group first (the child and anything it started), then the child itself in case it has
  // not reached its own group yet.
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
}

}  // namespace vmm::isolate
