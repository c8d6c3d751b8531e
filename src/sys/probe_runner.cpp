#include "sys/probe_runner.hpp"

#include <sys/prctl.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sys/fd_io.hpp"

namespace ccdiag {

Deadline::Deadline(std::chrono::milliseconds total) : end_(std::chrono::steady_clock::now() + total) {}

std::chrono::milliseconds Deadline::remaining() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(end_ - std::chrono::steady_clock::now());
}

std::chrono::milliseconds Deadline::slice(std::chrono::milliseconds want) const {
  auto left = remaining();
  if (left.count() < 0) left = std::chrono::milliseconds(0);
  return std::min(want, left);
}

namespace {

using Clock = std::chrono::steady_clock;


void reap(pid_t pid, int* status) {
  while (::waitpid(pid, status, 0) < 0 && errno == EINTR) {
  }
}

struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::string buf;
  bool done = false;
  bool timed_out = false;
  Clock::time_point deadline;
};

}  // namespace

std::vector<ProbeOutcome> run_probes_isolated(const std::vector<ProbeSpec>& specs, const ProbeWaitCallback& on_wait) {
  const auto start = Clock::now();
  std::vector<ProbeOutcome> out(specs.size());
  std::vector<Child> kids(specs.size());

  for (size_t i = 0; i < specs.size(); ++i) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      out[i].availability = Availability::error(specs[i].name + ": pipe: " + std::strerror(errno));
      kids[i].done = true;
      continue;
    }
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
      ::close(fds[0]);
      ::close(fds[1]);
      out[i].availability = Availability::error(specs[i].name + ": fork: " + std::strerror(errno));
      kids[i].done = true;
      continue;
    }
    if (pid == 0) {
      // A probe stuck in the kernel or a driver must not outlive ccdiag
      // (a SIGKILLed diagnose left collector children blocked forever).
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(1);  // the parent died before prctl
      ::close(fds[0]);
      // A crash inside foreign code must kill only this child, and be seen by
      // the parent as a signal: drop any handlers inherited from the parent.
      for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGTERM, SIGINT})
        ::signal(sig, SIG_DFL);
      // Earlier children's write ends were already closed in the parent, so
      // this child holds no other probe's pipe open and EOF stays reliable.
      std::string payload;
      try {
        if (specs[i].text_probe) {
          // A leading byte no JSON document starts with: 'T' text, 'E' error message; a
          // trailing EOT so that a cut write reads as no result, as cut JSON does.
          auto r = specs[i].text_probe();
          payload = r ? "T" + std::move(*r) : "E" + r.error().one_line();
          payload += '\x04';
        } else {
          // Moved in, not copied by an initializer list (a stacks result is ~0.25 MB of JSON).
          nlohmann::json result;
          result["ok"] = specs[i].probe();
          payload = result.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        }
      } catch (const std::exception& e) {
        payload = nlohmann::json{{"error", e.what()}}.dump();
      }
      (void)write_all(fds[1], payload);  // a failed write reads as a truncated result
      ::_exit(0);  // no atexit handlers, no flush of the parent's stdio buffers
    }
    ::close(fds[1]);
    kids[i].pid = pid;
    kids[i].fd = fds[0];
    kids[i].deadline = start + specs[i].deadline;
  }

  for (;;) {
    std::vector<pollfd> pfds;
    std::vector<size_t> idx;
    auto now = Clock::now();
    Clock::time_point next = Clock::time_point::max();
    for (size_t i = 0; i < kids.size(); ++i) {
      auto& k = kids[i];
      if (k.done) continue;
      if (now >= k.deadline) {
        k.timed_out = true;
        k.done = true;
        continue;
      }
      next = std::min(next, k.deadline);
      pfds.push_back(pollfd{k.fd, POLLIN, 0});
      idx.push_back(i);
    }
    if (pfds.empty()) break;
    auto wait_ms = std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count() + 1;
    if (on_wait) {
      std::vector<std::string> running;
      Clock::time_point last = now;
      for (size_t i : idx) {
        running.push_back(specs[i].name);
        last = std::max(last, kids[i].deadline);
      }
      on_wait(running, std::chrono::duration_cast<std::chrono::milliseconds>(last - now));
      wait_ms = std::min<int64_t>(wait_ms, 200);
    }
    const int r = ::poll(pfds.data(), pfds.size(), static_cast<int>(wait_ms));
    if (r < 0 && errno != EINTR) break;
    if (r <= 0) continue;
    for (size_t j = 0; j < pfds.size(); ++j) {
      if (!(pfds[j].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      auto& k = kids[idx[j]];
      char chunk[65536];
      const ssize_t n = ::read(k.fd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        k.done = true;  // EOF: the child finished writing
        continue;
      }
      k.buf.append(chunk, static_cast<size_t>(n));
    }
  }

  for (size_t i = 0; i < kids.size(); ++i) {
    auto& k = kids[i];
    if (k.pid < 0) continue;
    ::close(k.fd);
    int status = 0;
    if (k.timed_out) {
      ::kill(k.pid, SIGKILL);
      reap(k.pid, &status);
      out[i].elapsed = specs[i].deadline;
      out[i].availability = Availability::timeout(specs[i].name + ": did not finish within " +
                                                  std::to_string(specs[i].deadline.count()) + " ms; killed");
      continue;
    }
    reap(k.pid, &status);
    out[i].elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    if (WIFSIGNALED(status)) {
      out[i].availability =
          Availability::error(specs[i].name + ": probe died with signal " + std::to_string(WTERMSIG(status)));
      continue;
    }
    if (specs[i].text_probe && k.buf.size() >= 2 && (k.buf[0] == 'T' || k.buf[0] == 'E') && k.buf.back() == '\x04') {
      if (k.buf[0] == 'E') {  // the probe ran and reports why it has no result, as a JSON probe's {"error"}
        out[i].value = nlohmann::json{{"error", k.buf.substr(1, k.buf.size() - 2)}};
        out[i].availability = Availability::ok();
        continue;
      }
      out[i].text = k.buf.substr(1, k.buf.size() - 2);
      out[i].availability = Availability::ok();
      continue;
    }
    auto parsed = nlohmann::json::parse(k.buf, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded() || !parsed.is_object()) {
      out[i].availability = Availability::error(specs[i].name + ": probe returned no result");
      continue;
    }
    if (parsed.contains("error")) {
      out[i].availability = Availability::error(specs[i].name + ": " + parsed["error"].get<std::string>());
      continue;
    }
    out[i].value = std::move(parsed["ok"]);
    out[i].availability = Availability::ok();
  }
  return out;
}

ProbeOutcome run_probe_isolated(const std::string& name, std::chrono::milliseconds deadline,
                                const std::function<nlohmann::json()>& probe) {
  return run_probes_isolated({ProbeSpec{name, deadline, probe}}).front();
}

}  // namespace ccdiag
