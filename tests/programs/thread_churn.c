/* Threads that start and exit all the time (4 creators, each creating and
 * joining short-lived threads in a loop): the capture must converge and never
 * leave a traced thread behind. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static void *short_lived(void *arg) {
  (void)arg;
  usleep(200);
  return NULL;
}

static void *creator(void *arg) {
  (void)arg;
  for (;;) {
    pthread_t t;
    if (pthread_create(&t, NULL, short_lived, NULL) == 0) pthread_join(t, NULL);
  }
  return NULL;
}

int main(void) {
  pthread_t t;
  for (int i = 0; i < 4; ++i) pthread_create(&t, NULL, creator, NULL);
  usleep(20000);
  printf("ready\n");
  fflush(stdout);
  for (;;) pause();
}
