#include "sys/child_process.hpp"

#include <sys/prctl.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace ccdiag {

bool program_exists(const std::string& name) {
  if (name.empty()) return false;
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(ss, dir, ':'))
    if (!dir.empty() && ::access((dir + "/" + name).c_str(), X_OK) == 0) return true;
  return false;
}

namespace {

struct LineBuffer {
  std::string buf;
  bool cutting = false;
  size_t cut = 0;
  void feed(const char* p, size_t n, const LineHandler& h) {
    for (size_t i = 0; i < n; ++i) {
      const char c = p[i];
      if (c == '\n') {
        if (!cutting) h(buf);
        buf.clear();
        cutting = false;
        continue;
      }
      if (cutting) continue;
      buf.push_back(c);
      if (buf.size() >= kMaxLine) {
        h(buf);
        buf.clear();
        cutting = true;
        ++cut;
      }
    }
  }
  void finish(const LineHandler& h) {
    if (!buf.empty() && !cutting) h(buf);
    buf.clear();
  }
};

}  // namespace

Result<ChildResult> run_child(const ChildSpec& spec, const LineHandler& on_stdout, const LineHandler& on_stderr) {
  if (spec.argv.empty()) return make_error("empty command", "run_child");
  if (!program_exists(spec.argv[0]))
    return make_error("not found in PATH", spec.argv[0], "install it or pass its path");
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return make_error(std::string("pipe: ") + std::strerror(errno), spec.argv[0]);
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return make_error(std::string("pipe: ") + std::strerror(errno), spec.argv[0]);
  }
  std::vector<char*> argv;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return make_error(std::string("fork: ") + std::strerror(errno), spec.argv[0]);
  if (pid == 0) {
    // Dies with ccdiag: a launcher blocked on a dead host must not outlive it.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
    ::setpgid(0, 0);
    // Default signal dispositions: a launcher must be killable by SIGTERM.
    for (int s : {SIGINT, SIGTERM, SIGPIPE, SIGCHLD}) ::signal(s, SIG_DFL);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    for (const auto& [k, v] : spec.env) ::setenv(k.c_str(), v.c_str(), 1);
    ::execvp(argv[0], argv.data());
    const std::string msg = std::string(argv[0]) + ": " + std::strerror(errno) + "\n";
    (void)!::write(2, msg.data(), msg.size());
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // both sides, so there is no race with the kill below
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);

  ChildResult res;
  LineBuffer lo, le;
  const auto start = std::chrono::steady_clock::now();
  auto killed_at = std::chrono::steady_clock::time_point{};
  bool out_open = true, err_open = true;
  char buf[1 << 16];
  while (out_open || err_open) {
    const auto now = std::chrono::steady_clock::now();
    if (!res.timed_out && now - start >= spec.deadline) {
      res.timed_out = true;
      killed_at = now;
      ::kill(-pid, SIGTERM);
    } else if (res.timed_out && now - killed_at >= spec.kill_grace) {
      ::kill(-pid, SIGKILL);
      break;  // the pipes may be held open by orphans: stop reading
    }
    pollfd fds[2];
    int n = 0;
    if (out_open) fds[n++] = {out_pipe[0], POLLIN, 0};
    if (err_open) fds[n++] = {err_pipe[0], POLLIN, 0};
    const int r = ::poll(fds, static_cast<nfds_t>(n), 200);
    if (r < 0 && errno != EINTR) break;
    for (int i = 0; i < n; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const bool is_out = fds[i].fd == out_pipe[0];
      const ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        (is_out ? lo : le).feed(buf, static_cast<size_t>(got), is_out ? on_stdout : on_stderr);
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        (is_out ? out_open : err_open) = false;
      }
    }
  }
  lo.finish(on_stdout);
  le.finish(on_stderr);
  ::close(out_pipe[0]);
  ::close(err_pipe[0]);
  int status = 0;
  // The launcher closed its output; reap it (bounded: kill if it lingers).
  for (int i = 0; i < 100; ++i) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (i == 50) ::kill(-pid, SIGKILL);
    ::usleep(20000);
    if (i == 99) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
    }
  }
  if (WIFEXITED(status)) res.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) res.signal = WTERMSIG(status);
  res.cut_lines = lo.cut + le.cut;
  return res;
}

}  // namespace ccdiag
