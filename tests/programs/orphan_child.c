/* A child whose parent died: the parent forks and exits at once; the child
 * (reparented to init or a subreaper) says it is ready from inside
 * child_park() and parks there, so any capture after the ready line finds
 * child_park on its stack (the parent's own "ready" right after fork raced
 * the child still returning from fork). The test kills the child by pid. */
#define _GNU_SOURCE
#include <stdio.h>
#include <unistd.h>

static __attribute__((noinline)) void child_park(void) {
  printf("ready child %d\n", (int)getpid());
  fflush(stdout);
  for (;;) pause();
}

int main(void) {
  pid_t c = fork();
  if (c < 0) return 1;
  if (c == 0) {
    child_park();
    return 0;
  }
  return 0;
}
