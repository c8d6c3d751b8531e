/* N threads (default 100) parked the ways the threads of a rank park:
 * condition variable (futex), sleep, pipe read, epoll_wait, recv on a unix
 * socket, plus one thread in a deep recursion (depth 200) that then waits,
 * and heartbeat threads that record their largest gap between 1 ms sleeps.
 * Main waits in sigwait. Usage: many_threads [N]. Prints "ready". */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int pipefd[2], sockfd[2], epfd;
static volatile int started;

static void park_cond(void) {
  pthread_mutex_lock(&mu);
  for (;;) pthread_cond_wait(&cv, &mu);
}
static void park_sleep(void) {
  for (;;) sleep(1000);
}
static void park_pipe(void) {
  char c;
  for (;;) read(pipefd[0], &c, 1);
}
static void park_epoll(void) {
  struct epoll_event ev;
  for (;;) epoll_wait(epfd, &ev, 1, -1);
}
static void park_recv(void) {
  char c;
  for (;;) recv(sockfd[0], &c, 1, 0);
}
static int recurse_then_wait(int depth) {
  if (depth > 0) return recurse_then_wait(depth - 1) + 1;
  park_cond();
  return 0;
}
static void heartbeat(void) {
  struct timespec ts = {0, 1000000};
  for (;;) nanosleep(&ts, NULL);
}

static void *thread_main(void *arg) {
  long i = (long)arg;
  __sync_fetch_and_add(&started, 1);
  switch (i % 6) {
    case 0: park_cond(); break;
    case 1: park_sleep(); break;
    case 2: park_pipe(); break;
    case 3: park_epoll(); break;
    case 4: park_recv(); break;
    default: heartbeat(); break;
  }
  return NULL;
}

static void *deep_main(void *arg) {
  (void)arg;
  __sync_fetch_and_add(&started, 1);
  recurse_then_wait(200);
  return NULL;
}

static void main_wait(void) {
  sigset_t s;
  int sig;
  sigemptyset(&s);
  sigaddset(&s, SIGUSR1);
  for (;;) sigwait(&s, &sig);
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 100;
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &s, NULL);
  if (pipe(pipefd) != 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sockfd) != 0) return 1;
  epfd = epoll_create1(0);
  struct epoll_event ev = {.events = EPOLLIN};
  epoll_ctl(epfd, EPOLL_CTL_ADD, pipefd[0], &ev);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  for (long i = 0; i < n - 2; ++i) {
    pthread_t t;
    if (pthread_create(&t, &attr, thread_main, (void *)i) != 0) return 1;
    char name[16];
    snprintf(name, sizeof name, "worker-%ld", i);
    pthread_setname_np(t, name);
  }
  pthread_t d;
  pthread_create(&d, NULL, deep_main, NULL);
  pthread_setname_np(d, "deep-recursion");
  while (started < n - 1) usleep(1000);
  usleep(50000);
  printf("ready\n");
  fflush(stdout);
  main_wait();
  return 0;
}
