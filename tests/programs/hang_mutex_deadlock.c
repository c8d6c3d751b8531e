/* Two threads take two mutexes in opposite order and deadlock: the classic
 * host-side hang of a rank (both threads end in a futex wait under
 * pthread_mutex_lock). Prints "ready" once both are blocked. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both_hold_one;

static void *lock_a_then_b(void *arg) {
  (void)arg;
  pthread_mutex_lock(&a);
  pthread_barrier_wait(&both_hold_one);
  pthread_mutex_lock(&b); /* never returns */
  return NULL;
}

static void *lock_b_then_a(void *arg) {
  (void)arg;
  pthread_mutex_lock(&b);
  pthread_barrier_wait(&both_hold_one);
  pthread_mutex_lock(&a); /* never returns */
  return NULL;
}

int main(void) {
  pthread_t t1, t2;
  pthread_barrier_init(&both_hold_one, NULL, 2);
  pthread_create(&t1, NULL, lock_a_then_b, NULL);
  pthread_create(&t2, NULL, lock_b_then_a, NULL);
  pthread_setname_np(t1, "deadlock-a");
  pthread_setname_np(t2, "deadlock-b");
  usleep(50000);
  printf("ready\n");
  fflush(stdout);
  pthread_join(t1, NULL);
  return 0;
}
