/*
 * Overhead of libnccl-profiler-ccdiag.so per profiler event (target < 100 ns).
 * Drives the plugin through dlopen + ncclProfiler_v5 exactly as NCCL does and
 * times the hot paths: Coll start/stop (host thread, per collective) and
 * ProxyStep start + 3 state records + stop (proxy thread, per network step).
 * Usage: nccl_plugin_bench PLUGIN.so [iterations]   (files go to $CCDIAG_NCCL_DIR)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nccl_profiler_abi.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU time of this thread: on a shared, oversubscribed machine wall time
 * also counts the time the thread waited for a core. Both are reported; the
 * target applies to CPU time. */
static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s PLUGIN.so [iterations]\n", argv[0]);
    return 2;
  }
  long iters = argc > 2 ? atol(argv[2]) : 2000000;
  void* lib = dlopen(argv[1], RTLD_NOW);
  if (!lib) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 1; }
  const ccdiag_profiler_v5_t* p = (const ccdiag_profiler_v5_t*)dlsym(lib, "ncclProfiler_v5");
  if (!p) { fprintf(stderr, "no ncclProfiler_v5\n"); return 1; }
  void* ctx = NULL;
  int mask = 0;
  if (p->init(&ctx, 0x1234abcdull, &mask, "bench", 1, 1, 0, NULL) != 0 || !ctx) { fprintf(stderr, "init failed\n"); return 1; }

  ccdiag_prof_descr_v5_t coll;
  memset(&coll, 0, sizeof(coll));
  coll.type = CCDIAG_PROF_COLL;
  coll.coll.func = "AllReduce"; coll.coll.datatype = "ncclFloat32"; coll.coll.algo = "RING"; coll.coll.proto = "SIMPLE";
  coll.coll.count = 1024; coll.coll.nChannels = 2;

  /* Collective: start + stop = 2 events. */
  double t0 = now_s(), c0 = cpu_s();
  for (long i = 0; i < iters; i++) {
    void* h;
    coll.coll.seqNumber = (uint64_t)i;
    p->startEvent(ctx, &h, &coll);
    p->stopEvent(h);
  }
  double coll_ns = (now_s() - t0) * 1e9 / (double)(iters * 2);
  double coll_cpu_ns = (cpu_s() - c0) * 1e9 / (double)(iters * 2);

  /* Proxy step: start + 3 states + stop = 5 events, under one live ProxyOp. */
  void* ch;
  coll.coll.seqNumber = (uint64_t)iters;
  p->startEvent(ctx, &ch, &coll);
  ccdiag_prof_descr_v5_t op;
  memset(&op, 0, sizeof(op));
  op.type = CCDIAG_PROF_PROXY_OP; op.parentObj = ch; op.proxyOp.pid = getpid(); op.proxyOp.channelId = 3;
  op.proxyOp.peer = 1; op.proxyOp.nSteps = 1 << 30; op.proxyOp.isSend = 1;
  void* oh;
  p->startEvent(ctx, &oh, &op);
  ccdiag_prof_descr_v5_t st;
  memset(&st, 0, sizeof(st));
  st.type = CCDIAG_PROF_PROXY_STEP; st.parentObj = oh;
  ccdiag_prof_state_args_t a;
  memset(&a, 0, sizeof(a));
  t0 = now_s();
  c0 = cpu_s();
  for (long i = 0; i < iters; i++) {
    void* h;
    st.proxyStep.step = (int)i;
    p->startEvent(ctx, &h, &st);
    p->recordEventState(h, CCDIAG_STATE_SEND_GPU_WAIT, &a);
    p->recordEventState(h, CCDIAG_STATE_SEND_PEER_WAIT_V4, &a);
    p->recordEventState(h, CCDIAG_STATE_SEND_WAIT, &a);
    p->stopEvent(h);
  }
  double step_ns = (now_s() - t0) * 1e9 / (double)(iters * 5);
  double step_cpu_ns = (cpu_s() - c0) * 1e9 / (double)(iters * 5);
  p->stopEvent(oh);
  p->finalize(ctx);
  printf("{\"iterations\": %ld, \"coll_ns_per_event\": {\"cpu\": %.1f, \"wall\": %.1f}, "
         "\"proxy_step_ns_per_event\": {\"cpu\": %.1f, \"wall\": %.1f}, \"target_ns\": 100}\n",
         iters, coll_cpu_ns, coll_ns, step_cpu_ns, step_ns);
  return (coll_cpu_ns < 100.0 && step_cpu_ns < 100.0) ? 0 : 1;
}
