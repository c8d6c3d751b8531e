/* A process shaped like an NCCL rank, with the same function names so that
 * roles and the census can be asserted:
 *   - a thread named "NCCL Progress" running ncclProxyProgress (cond wait),
 *   - a thread named "pt_nccl_watchdg" (PyTorch watchdog) sleeping,
 *   - main: "collective" mode -> ncclAllReduce -> cudaStreamSynchronize,
 *     waiting on a futex like the CUDA runtime's blocking sync;
 *           "host" mode -> load_next_batch -> pthread_cond_wait (a rank stuck
 *     in its dataloader, the odd rank out).
 * Usage: nccl_like_rank collective|host */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;

static void wait_forever(void) {
  pthread_mutex_lock(&mu);
  for (;;) pthread_cond_wait(&never, &mu);
}

void *ncclProxyProgress(void *arg) {
  (void)arg;
  wait_forever();
  return NULL;
}

static void *watchdog_main(void *arg) {
  (void)arg;
  for (;;) sleep(1000);
  return NULL;
}

__attribute__((noinline)) int cudaStreamSynchronize(void *stream) {
  (void)stream;
  wait_forever();
  return 0;
}

__attribute__((noinline)) int ncclAllReduce(void) { return cudaStreamSynchronize(NULL) + 1; }

__attribute__((noinline)) int load_next_batch(void) {
  wait_forever();
  return 1;
}

int main(int argc, char **argv) {
  const int host_mode = argc > 1 && strcmp(argv[1], "host") == 0;
  pthread_t p, w;
  pthread_create(&p, NULL, ncclProxyProgress, NULL);
  pthread_setname_np(p, "NCCL Progress");
  pthread_create(&w, NULL, watchdog_main, NULL);
  pthread_setname_np(w, "pt_nccl_watchdg");
  usleep(20000);
  printf("ready\n");
  fflush(stdout);
  return host_mode ? load_next_batch() : ncclAllReduce();
}
