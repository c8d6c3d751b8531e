/* Holds every thread of a target traced (PTRACE_SEIZE, like an attached
 * debugger that lets it run) so that ccdiag meets an already-traced process.
 * Usage: ptrace_holder PID. The kernel detaches when it exits; the target is
 * never stopped. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  char path[64];
  snprintf(path, sizeof path, "/proc/%s/task", argv[1]);
  DIR *d = opendir(path);
  if (!d) return 1;
  struct dirent *e;
  int n = 0;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    if (ptrace(PTRACE_SEIZE, (pid_t)atoi(e->d_name), NULL, NULL) != 0) {
      perror("ptrace_holder: seize");
      return 1;
    }
    ++n;
  }
  closedir(d);
  printf("ready %d\n", n);
  fflush(stdout);
  for (;;) pause();
}
