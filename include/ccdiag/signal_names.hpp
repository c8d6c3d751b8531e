// Linux signal names by number, as launchers and the kernel report them: a
// child killed by signal N shows as exit code -N (Python's subprocess,
// torchrun, DeepSpeed's launcher) or 128+N (a shell). x86-64/arm64 numbering.
#pragma once

namespace ccdiag {

// "SIGBUS" for 7; "" for a number this table does not name.
inline const char* linux_signal_name(int sig) {
  switch (sig) {
    case 1: return "SIGHUP";
    case 2: return "SIGINT";
    case 3: return "SIGQUIT";
    case 4: return "SIGILL";
    case 6: return "SIGABRT";
    case 7: return "SIGBUS";
    case 8: return "SIGFPE";
    case 9: return "SIGKILL";
    case 10: return "SIGUSR1";
    case 11: return "SIGSEGV";
    case 12: return "SIGUSR2";
    case 13: return "SIGPIPE";
    case 14: return "SIGALRM";
    case 15: return "SIGTERM";
    case 24: return "SIGXCPU";
    case 25: return "SIGXFSZ";
    default: return "";
  }
}

}  // namespace ccdiag
