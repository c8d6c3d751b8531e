// Temporary directories that must not outlive ccdiag, whatever kills it.
//
// A tarball bundle is extracted into /tmp/ccdiag-bundle-XXXXXX and a live
// diagnose collects into ccdiag-live-XXXXXX; both are removed by their owner's
// destructor, which SIGTERM, SIGINT, SIGHUP or SIGKILL never run (1.6 GB was
// seen left behind). The first registration forks a small cleanup process
// joined to ccdiag by a socket: when ccdiag ends, however it ends, the socket
// reports end-of-file and the cleanup process removes every directory still
// registered, then exits. It runs no code but system calls (fork of a
// threaded process), ignores terminal signals, holds no other descriptor
// (so it never keeps a caller's pipe open) and never follows a symlink.
#pragma once

#include <string>

namespace ccdiag {

// Removes `path` (a directory tree) if ccdiag dies before unregistering it.
// Best effort: when the cleanup process cannot be started, nothing else changes.
void register_temp_dir(const std::string& path);

// The owner removed `path` itself (or keeps it: a finished `collect`).
void unregister_temp_dir(const std::string& path);

// Blocks SIGINT, SIGTERM, SIGHUP and SIGQUIT in this thread while alive: a
// directory is created and registered inside one, so a signal that arrives in
// between is delivered only once the cleanup process knows the directory.
// The constructor starts the cleanup process first.
class TerminationSignalsDeferred {
 public:
  TerminationSignalsDeferred();
  ~TerminationSignalsDeferred();
  TerminationSignalsDeferred(const TerminationSignalsDeferred&) = delete;
  TerminationSignalsDeferred& operator=(const TerminationSignalsDeferred&) = delete;

 private:
  unsigned long long saved_[16];  // a sigset_t, without <signal.h> here
};

// Removes a directory tree without following symlinks, with system calls
// only (usable in a signal handler or a forked child). Bounded depth.
void remove_tree_raw(const char* path);

}  // namespace ccdiag
