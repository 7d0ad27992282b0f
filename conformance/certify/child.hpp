// run_child: runs a program in a child process of its own, hands its output
// (stdout and stderr, merged) to the caller line by line as it comes, and
// kills it when the caller's deadline passes. hal-certify runs every piece
// of a certification this way, so a driver that crashes or hangs fails the
// tests it was running, never hal-certify itself.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace certify {

using Clock = std::chrono::steady_clock;

struct ChildExit {
  bool timed_out = false;  // killed because the deadline passed
  int exit_code = -1;      // when it exited normally
  int signal = 0;          // when a signal ended it
  bool ok() const { return !timed_out && signal == 0 && exit_code == 0; }
  // "exit status 1", "signal 11 (Segmentation fault)", "timed out".
  std::string describe() const;
};

struct ChildSpec {
  std::vector<std::string> argv;
  std::vector<std::string> environment;  // "NAME=value", added to ours
  // Each complete line of output, without its newline.
  std::function<void(const std::string&)> on_line;
  // Asked after every line and while waiting: the child is killed (with its
  // whole process group) once this time has passed.
  std::function<Clock::time_point()> deadline;
};

// Throws std::runtime_error when the child cannot be started at all.
ChildExit run_child(const ChildSpec& spec);

}  // namespace certify
