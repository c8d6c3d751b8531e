/* A child whose parent died: the parent forks, prints the child's pid and
 * exits at once; the child (reparented to init or a subreaper) parks in
 * child_park(). The test kills the child by pid. */
#define _GNU_SOURCE
#include <stdio.h>
#include <unistd.h>

static void child_park(void) {
  for (;;) pause();
}

int main(void) {
  pid_t c = fork();
  if (c < 0) return 1;
  if (c == 0) {
    child_park();
    return 0;
  }
  printf("ready child %d\n", (int)c);
  fflush(stdout);
  return 0;
}
