/* A rank spinning in host code (state R, no syscall): the stack must still be
 * captured and the process must keep running afterwards. */
#include <stdio.h>

static volatile unsigned long counter;

static void spin_forever(void) {
  for (;;) counter++;
}

int main(void) {
  printf("ready\n");
  fflush(stdout);
  spin_forever();
  return 0;
}
