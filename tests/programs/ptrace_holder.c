/* Holds a target traced (PTRACE_SEIZE, like an attached debugger that lets it
 * run) so that ccdiag meets an already-traced process. Usage: ptrace_holder PID.
 * Detaches when it exits (kernel), never stops the target. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  pid_t pid = (pid_t)atoi(argv[1]);
  if (ptrace(PTRACE_SEIZE, pid, NULL, NULL) != 0) {
    perror("ptrace_holder: seize");
    return 1;
  }
  printf("ready\n");
  fflush(stdout);
  for (;;) pause();
}
