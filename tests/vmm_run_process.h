// Helpers for end-to-end tests that run the vmm-run binary as a child process: start it in the
// background (its pid, for signals), wait for it with its exit status and resource usage, and find
// what it started. Header-only, for the e2e test binary.
#pragma once

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace vmm {

using Clock = std::chrono::steady_clock;

// A child vmm-run started from the source directory, stdout and stderr to `log`. `shell` runs in
// the same shell first (e.g. "ulimit -f 8; ").
inline pid_t Spawn(const std::string& args, const std::string& log, const std::string& shell = "") {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  if (chdir(VMMRUN_SOURCE_DIR) != 0) _exit(125);
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) _exit(125);
  dup2(fd, 1);
  dup2(fd, 2);
  const std::string command = shell + "exec '" VMMRUN_BINARY "' " + args;
  execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
  _exit(127);
}

struct Finished {
  int exit_code = -1;      // -1: killed by a signal
  double seconds = 0;      // wall clock
  double cpu_seconds = 0;  // user + system: what the child itself cost (the host may be busy)
  long max_rss_kib = 0;
  std::string out;
};

inline Finished Wait(pid_t pid, Clock::time_point start, const std::string& log) {
  Finished f;
  int status = 0;
  struct rusage usage {};
  wait4(pid, &status, 0, &usage);
  f.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  f.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  f.max_rss_kib = usage.ru_maxrss;
  f.cpu_seconds = usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
                  (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  std::ifstream in(log);
  std::ostringstream text;
  text << in.rdbuf();
  f.out = text.str();
  return f;
}

// True once `pid` catches SIGINT (vmm-run installed its stop handlers), within `limit`.
inline bool WaitForStopHandlers(pid_t pid, std::chrono::seconds limit) {
  const auto until = Clock::now() + limit;
  while (Clock::now() < until) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("SigCgt:", 0) == 0 && (std::stoull(line.substr(7), nullptr, 16) & 2) != 0)
        return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// The pids of `pid`'s children (its main thread's, as /proc lists them).
inline std::vector<pid_t> ChildrenOf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  std::vector<pid_t> out;
  pid_t child;
  while (in >> child) out.push_back(child);
  return out;
}

// The first child of `pid` whose command line has `word` (e.g. "__child"), within `limit`; -1.
inline pid_t WaitForChild(pid_t pid, const std::string& word, std::chrono::seconds limit) {
  const auto until = Clock::now() + limit;
  while (Clock::now() < until) {
    for (pid_t c : ChildrenOf(pid)) {
      std::ifstream cmdline("/proc/" + std::to_string(c) + "/cmdline");
      std::string text((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
      if (text.find(word) != std::string::npos) return c;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -1;
}

// True when process `pid` is gone (not even a zombie) within `limit`.
inline bool GoneWithin(pid_t pid, std::chrono::milliseconds limit) {
  const auto until = Clock::now() + limit;
  while (Clock::now() < until) {
    if (access(("/proc/" + std::to_string(pid)).c_str(), F_OK) != 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace vmm
