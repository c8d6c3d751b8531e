/* A thread in D state: it vforks a child that sleeps SECONDS (default 4)
 * before exiting, so the parent thread waits uninterruptibly in kernel_clone.
 * Other threads park in a futex. ptrace cannot stop the D thread until the
 * child exits: the capture must give up on it in bounded time and the process
 * must not be left stopped afterwards. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int seconds = 4;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static void *vfork_waiter(void *arg) {
  (void)arg;
  for (;;) {
    pid_t c = vfork();
    if (c == 0) {
      sleep((unsigned)seconds);
      _exit(0);
    }
    if (c < 0) return NULL;
    sleep(1000);
  }
}

static void *parked(void *arg) {
  (void)arg;
  pthread_mutex_lock(&mu);
  for (;;) pthread_cond_wait(&cv, &mu);
}

int main(int argc, char **argv) {
  if (argc > 1) seconds = atoi(argv[1]);
  pthread_t t;
  for (int i = 0; i < 3; ++i) pthread_create(&t, NULL, parked, NULL);
  pthread_create(&t, NULL, vfork_waiter, NULL);
  pthread_setname_np(t, "vfork-waiter");
  usleep(100000);
  printf("ready\n");
  fflush(stdout);
  for (;;) pause();
}
