/* A process shaped like an NCCL rank, with the same function names so that
 * roles and the census can be asserted:
 *   - a thread named "NCCL Progress" running ncclProxyProgress (cond wait),
 *   - a thread named "pt_nccl_watchdg" (PyTorch watchdog) sleeping,
 *   - main: "collective" mode -> ncclAllReduce -> cudaStreamSynchronize,
 *     waiting on a futex like the CUDA runtime's blocking sync;
 *           "host" mode -> load_next_batch -> pthread_cond_wait (a rank stuck
 *     in its dataloader, the odd rank out);
 *           "running" mode -> the same ncclAllReduce -> cudaStreamSynchronize
 *     frames, but each call waits 2 ms and returns and main calls it again:
 *     a rank of a job that runs, caught in its collective by a snapshot.
 * Usage: nccl_like_rank collective|host|running */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t step_mu = PTHREAD_MUTEX_INITIALIZER;
static int running_mode;

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
  if (running_mode) {
    /* The collective completes 2 ms later: a futex wait that ends. */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 2000000;
    if (ts.tv_nsec >= 1000000000) {
      ts.tv_sec += 1;
      ts.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&step_mu);
    pthread_cond_timedwait(&never, &step_mu, &ts);
    pthread_mutex_unlock(&step_mu);
    return 0;
  }
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
  running_mode = argc > 1 && strcmp(argv[1], "running") == 0;
  pthread_t p, w;
  pthread_create(&p, NULL, ncclProxyProgress, NULL);
  pthread_setname_np(p, "NCCL Progress");
  pthread_create(&w, NULL, watchdog_main, NULL);
  pthread_setname_np(w, "pt_nccl_watchdg");
  usleep(20000);
  printf("ready\n");
  fflush(stdout);
  if (running_mode)
    for (;;) ncclAllReduce();
  return host_mode ? load_next_batch() : ncclAllReduce();
}
