/* The main thread calls pthread_exit while workers live: the leader is a
 * zombie, /proc/PID/maps is empty and process_vm_readv(PID) fails; stacks
 * must be captured through a live thread. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static void *worker_after_leader_exit(void *arg) {
  (void)arg;
  for (;;) sleep(1000);
  return NULL;
}

int main(void) {
  pthread_t t;
  for (int i = 0; i < 3; ++i) pthread_create(&t, NULL, worker_after_leader_exit, NULL);
  printf("ready\n");
  fflush(stdout);
  pthread_exit(NULL);
}
