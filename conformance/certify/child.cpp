// run_child (child.hpp): fork + exec with a pipe for the output, poll() for
// lines and deadlines, SIGKILL to the child's process group on timeout.
#include "child.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace certify {

std::string ChildExit::describe() const {
  if (timed_out) return "timed out";
  if (signal != 0)
    return fmt::format("signal {} ({})", signal, strsignal(signal));
  return fmt::format("exit status {}", exit_code);
}

namespace {

[[noreturn]] void exec_child(const ChildSpec& spec, int out_fd) {
  // Its own process group: a timeout kills the child and anything it
  // started, and a terminal's Ctrl-C still reaches it through ours.
  setpgid(0, 0);
  dup2(out_fd, STDOUT_FILENO);
  dup2(out_fd, STDERR_FILENO);
  close(out_fd);
  for (const std::string& variable : spec.environment) {
    putenv(const_cast<char*>(variable.c_str()));
  }
  std::vector<char*> argv;
  argv.reserve(spec.argv.size() + 1);
  for (const std::string& arg : spec.argv) {
    argv.push_back(const_cast<char*>(arg.c_str()));
  }
  argv.push_back(nullptr);
  execv(argv[0], argv.data());
  fmt::print(stderr, "hal-certify: cannot run {}: {}\n", spec.argv[0],
             std::strerror(errno));
  _exit(127);
}

}  // namespace

ChildExit run_child(const ChildSpec& spec) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    throw std::runtime_error(fmt::format("pipe: {}", std::strerror(errno)));
  }
  const pid_t pid = fork();
  if (pid < 0) {
    throw std::runtime_error(fmt::format("fork: {}", std::strerror(errno)));
  }
  if (pid == 0) {
    close(pipe_fds[0]);
    exec_child(spec, pipe_fds[1]);
  }
  close(pipe_fds[1]);
  setpgid(pid, pid);  // also here, so kill(-pid) works even before exec

  ChildExit result;
  std::string pending;
  char buffer[65536];
  bool open = true;
  while (open) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        spec.deadline() - Clock::now());
    if (left.count() <= 0) {
      kill(-pid, SIGKILL);
      result.timed_out = true;
      break;
    }
    pollfd poll_fd{pipe_fds[0], POLLIN, 0};
    const int ready = poll(
        &poll_fd, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    const ssize_t got = read(pipe_fds[0], buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      open = false;  // the child (and whatever it started) closed the pipe
      break;
    }
    pending.append(buffer, static_cast<size_t>(got));
    size_t start = 0;
    for (size_t newline;
         (newline = pending.find('\n', start)) != std::string::npos;
         start = newline + 1) {
      spec.on_line(pending.substr(start, newline - start));
    }
    pending.erase(0, start);
  }
  if (!pending.empty() && !result.timed_out) spec.on_line(pending);
  close(pipe_fds[0]);

  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // Whatever the child left running in its group goes with it.
  kill(-pid, SIGKILL);
  if (!result.timed_out) {
    if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
    if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  }
  return result;
}

}  // namespace certify
