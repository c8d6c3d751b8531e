#include "sys/journal.hpp"

#include <sys/prctl.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace ccdiag {

Result<std::string> read_journal_kernel(std::optional<int64_t> since, std::chrono::milliseconds deadline,
                                        size_t max_bytes) {
  std::vector<std::string> args = {"journalctl", "-k", "-o", "json", "--no-pager", "-q", "-b"};
  if (since) args.push_back("--since=@" + std::to_string(*since));
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return make_error(std::string("pipe: ") + std::strerror(errno), "journalctl");
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return make_error(std::string("fork: ") + std::strerror(errno), "journalctl");
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive ccdiag
    if (::getppid() != parent) ::_exit(127);
    ::dup2(fds[1], 1);
    const int devnull = ::open("/dev/null", O_RDWR);
    if (devnull >= 0) ::dup2(devnull, 2), ::dup2(devnull, 0);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execvp("journalctl", argv.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  std::string out;
  const auto end = std::chrono::steady_clock::now() + deadline;
  bool timed_out = false;
  char buf[65536];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      timed_out = r == 0;
      break;
    }
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > 2 * max_bytes) out.erase(0, out.size() - max_bytes);
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) return make_error("did not finish before the deadline", "journalctl");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return make_error(WIFEXITED(status) && WEXITSTATUS(status) == 127 ? "not installed"
                                                                        : "failed (exit " + std::to_string(WEXITSTATUS(status)) + ")",
                      "journalctl", "no systemd journal here; pass --kernel-log FILE");
  if (out.size() > max_bytes) {
    out.erase(0, out.size() - max_bytes);
    if (auto nl = out.find('\n'); nl != std::string::npos) out.erase(0, nl + 1);
  }
  return out;
}

}  // namespace ccdiag
