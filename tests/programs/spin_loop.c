/* A rank spinning in host code (state R, no syscall): the stack must still be
 * captured and the process must keep running afterwards. */
#include <stdio.h>

static volatile unsigned long counter;

/* "ready" is written from inside spin_forever: a capture the moment the test
 * reads it (the thread may still be returning from write(2), seen in CI on a
 * loaded host) already has spin_forever on the stack. */
static __attribute__((noinline)) void spin_forever(void) {
  printf("ready\n");
  fflush(stdout);
  for (;;) counter++;
}

int main(void) {
  spin_forever();
  return 0;
}
