#include "sys/temp_cleanup.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

namespace ccdiag {

namespace {

constexpr int kMaxDirs = 64;
constexpr size_t kMaxPath = 4096;
constexpr int kMaxDepth = 48;

struct LinuxDirent64 {
  ino64_t d_ino;
  off64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

bool dot_or_dotdot(const char* n) { return n[0] == '.' && (n[1] == 0 || (n[1] == '.' && n[2] == 0)); }

// Empties and removes `name` under `parent`. Only openat/getdents64/unlinkat:
// no allocation, no locks.
void remove_at(int parent, const char* name, int depth) {
  const int fd = ::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    ::unlinkat(parent, name, 0);  // a file or a symlink (never followed)
    return;
  }
  if (depth < kMaxDepth) {
    alignas(8) char buf[4096];
    // Entries shift while removed: read from the start until a pass removes nothing.
    for (bool removed = true; removed;) {
      removed = false;
      ::lseek(fd, 0, SEEK_SET);
      for (;;) {
        const long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
        if (n <= 0) break;
        for (long off = 0; off < n;) {
          auto* d = reinterpret_cast<LinuxDirent64*>(buf + off);
          off += d->d_reclen;
          if (dot_or_dotdot(d->d_name)) continue;
          if (d->d_type == DT_DIR || d->d_type == DT_UNKNOWN) remove_at(fd, d->d_name, depth + 1);
          else ::unlinkat(fd, d->d_name, 0);
          removed = true;
        }
      }
    }
  }
  ::close(fd);
  ::unlinkat(parent, name, AT_REMOVEDIR);
}

// The cleanup process: keeps the registered set from "+path"/"-path"
// messages; at end-of-file removes what is left. Static storage only.
char g_dirs[kMaxDirs][kMaxPath];
bool g_used[kMaxDirs];

[[noreturn]] void cleanup_main(int sock) {
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT}) ::signal(s, SIG_IGN);
  // Hold nothing of the caller's: an inherited stdout pipe kept open would
  // make `ccdiag ... | tool` wait for this process.
  for (int fd = 0; fd < 1024; ++fd)
    if (fd != sock) ::close(fd);
  ::syscall(SYS_close_range, 1024u, ~0u, 0u);  // ENOSYS on old kernels: fine, rarely that many
  ::chdir("/");
  static char msg[kMaxPath + 2];
  for (;;) {
    const ssize_t n = ::recv(sock, msg, sizeof msg - 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    msg[n] = 0;
    const char* p = msg + 1;
    if (msg[0] == '+') {
      for (int i = 0; i < kMaxDirs; ++i)
        if (!g_used[i]) {
          std::strncpy(g_dirs[i], p, kMaxPath - 1);
          g_used[i] = true;
          break;
        }
    } else if (msg[0] == '-') {
      for (int i = 0; i < kMaxDirs; ++i)
        if (g_used[i] && std::strcmp(g_dirs[i], p) == 0) g_used[i] = false;
    }
  }
  for (int i = 0; i < kMaxDirs; ++i)
    if (g_used[i]) remove_at(AT_FDCWD, g_dirs[i], 0);
  ::_exit(0);
}

std::mutex g_mu;
int g_sock = -1;
bool g_failed = false;

int cleanup_socket() {
  if (g_sock >= 0 || g_failed) return g_sock;
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    g_failed = true;
    return -1;
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(sv[0]);
    ::close(sv[1]);
    g_failed = true;
    return -1;
  }
  if (pid == 0) {
    ::close(sv[0]);
    cleanup_main(sv[1]);
  }
  ::close(sv[1]);
  g_sock = sv[0];
  return g_sock;
}

std::string absolute(const std::string& path) {
  // A relative path would be resolved against the cleanup process's "/".
  if (!path.empty() && path.front() == '/') return path;
  char cwd[kMaxPath];
  if (!::getcwd(cwd, sizeof cwd)) return {};
  return std::string(cwd) + "/" + path;
}

void send_msg(char op, const std::string& rel, bool start) {
  const std::string path = absolute(rel);
  if (path.empty() || path.size() >= kMaxPath) return;
  std::lock_guard<std::mutex> lock(g_mu);
  if (!start && g_sock < 0) return;  // nothing to tell a process never started
  const int s = cleanup_socket();
  if (s < 0) return;
  std::string m;
  m += op;
  m += path;
  (void)::send(s, m.data(), m.size(), MSG_NOSIGNAL);
}

}  // namespace

void register_temp_dir(const std::string& path) { send_msg('+', path, true); }

void unregister_temp_dir(const std::string& path) { send_msg('-', path, false); }

void remove_tree_raw(const char* path) { remove_at(AT_FDCWD, path, 0); }

TerminationSignalsDeferred::TerminationSignalsDeferred() {
  static_assert(sizeof(saved_) >= sizeof(sigset_t));
  {
    std::lock_guard<std::mutex> lock(g_mu);
    (void)cleanup_socket();
  }
  sigset_t block;
  sigemptyset(&block);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&block, s);
  pthread_sigmask(SIG_BLOCK, &block, reinterpret_cast<sigset_t*>(saved_));
}

TerminationSignalsDeferred::~TerminationSignalsDeferred() {
  pthread_sigmask(SIG_SETMASK, reinterpret_cast<sigset_t*>(saved_), nullptr);
}

}  // namespace ccdiag
