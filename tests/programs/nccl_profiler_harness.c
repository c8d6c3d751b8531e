/*
 * Drives libnccl-profiler-ccdiag.so the way NCCL 2.28 does, without NCCL:
 * dlopen the plugin, look up the versioned symbol ncclProfiler_v5 (or _v4),
 * init one context per rank of a communicator (one process driving several
 * ranks is what single-process multi-GPU NCCL does), then emit the events of
 * the host thread (Group -> Coll/P2p start, stop at enqueue) and of the proxy
 * progress thread (ProxyCtrl, ProxyOp -> ProxyStep with states, KernelCh) in
 * NCCL's order, with NCCL's descriptor layouts.
 *
 * Usage: nccl_profiler_harness PLUGIN.so SCENARIO [--v4] [--hold] [--finalize]
 * Scenarios (4 ranks, one comm, a ring r -> r+1):
 *   healthy          10 AllReduce ops, every step completes
 *   never_enqueues   rank 2 never enqueues AllReduce #10; its ring neighbours wait on it
 *   send_stuck       rank 1's send to rank 2 posted (SendWait) and never completes
 *   gpu_wait         rank 2's send waits for its own GPU (SendGPUWait), kernel started
 *   dead_proxy       rank 2 enqueued AllReduce #10 but its proxy thread never ran again
 * --hold: stay alive (a hung process) until killed; files are left in place.
 * --finalize: call finalize for every rank at the end (healthy shutdown).
 * Files go to $CCDIAG_NCCL_DIR. Prints one line per rank: "rank R pid P".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../tools/nccl-profiler-plugin/nccl_profiler_abi.h"

#define NRANKS 4
#define COMM_ID 0x5c1e0c4a9d2f7b31ull

static const ccdiag_profiler_v5_t* v5;
static const ccdiag_profiler_v4_t* v4;
static void* ctx[NRANKS];
static int mask;

static void logger(int level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
  (void)flags;
  (void)file;
  (void)line;
  if (level > 2 && !getenv("HARNESS_VERBOSE")) return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "NCCL %s ", level == 2 ? "WARN" : "INFO");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

static void pause_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static void* start(int r, ccdiag_prof_descr_v5_t* d) {
  void* h = NULL;
  if (v5) {
    v5->startEvent(ctx[r], &h, d);
  } else {
    ccdiag_prof_descr_v4_t d4;
    memset(&d4, 0, sizeof(d4));
    d4.type = (uint8_t)d->type;
    d4.parentObj = d->parentObj;
    d4.rank = d->rank;
    memcpy((char*)&d4 + offsetof(ccdiag_prof_descr_v4_t, coll), (char*)d + offsetof(ccdiag_prof_descr_v5_t, coll),
           sizeof(d4) - offsetof(ccdiag_prof_descr_v4_t, coll));
    v4->startEvent(ctx[r], &h, &d4);
  }
  return h;
}
static void stop(void* h) {
  if (v5) v5->stopEvent(h); else v4->stopEvent(h);
}
static void state(void* h, int s, ccdiag_prof_state_args_t* a) {
  if (v5) v5->recordEventState(h, s, a); else v4->recordEventState(h, s, a);
}

static void proxy_ctrl(int r, int st) {
  ccdiag_prof_descr_v5_t d;
  memset(&d, 0, sizeof(d));
  d.type = CCDIAG_PROF_PROXY_CTRL;
  d.rank = r;
  void* h = start(r, &d);
  ccdiag_prof_state_args_t a;
  memset(&a, 0, sizeof(a));
  state(h, st, &a);
  stop(h);
}

/* Host thread: group + collective, stopped at enqueue time (as NCCL does). */
static void* enqueue_allreduce(int r, uint64_t seq) {
  ccdiag_prof_descr_v5_t g;
  memset(&g, 0, sizeof(g));
  g.type = CCDIAG_PROF_GROUP;
  g.rank = r;
  void* gh = start(r, &g);
  ccdiag_prof_descr_v5_t d;
  memset(&d, 0, sizeof(d));
  d.type = CCDIAG_PROF_COLL;
  d.parentObj = gh;
  d.rank = r;
  d.coll.seqNumber = seq;
  d.coll.func = "AllReduce";
  d.coll.count = 262144;
  d.coll.root = 0;
  d.coll.datatype = "ncclFloat32";
  d.coll.nChannels = 2;
  d.coll.nWarps = 16;
  d.coll.algo = "RING";
  d.coll.proto = "SIMPLE";
  d.coll.parentGroup = gh;
  void* ch = start(r, &d);
  stop(ch);
  stop(gh);
  return ch;
}

static void* proxy_op(int r, void* coll, int channel, int peer, int is_send) {
  ccdiag_prof_descr_v5_t d;
  memset(&d, 0, sizeof(d));
  d.type = CCDIAG_PROF_PROXY_OP;
  d.parentObj = coll;
  d.rank = r;
  d.proxyOp.pid = getpid();
  d.proxyOp.channelId = (uint8_t)channel;
  d.proxyOp.peer = peer;
  d.proxyOp.nSteps = 4;
  d.proxyOp.chunkSize = 131072;
  d.proxyOp.isSend = is_send;
  void* h = start(r, &d);
  state(h, CCDIAG_STATE_PROXY_OP_IN_PROGRESS_V4, NULL);
  return h;
}

/* One network step; `upto` is the last state reached (the step completes only
 * when upto == 0). Send: SendGPUWait -> SendPeerWait -> SendWait -> stop.
 * Recv: RecvWait -> RecvFlushWait -> RecvGPUWait -> stop. */
static void step(int r, void* op, int s, int is_send, int upto) {
  ccdiag_prof_descr_v5_t d;
  memset(&d, 0, sizeof(d));
  d.type = CCDIAG_PROF_PROXY_STEP;
  d.parentObj = op;
  d.rank = r;
  d.proxyStep.step = s;
  void* h = start(r, &d);
  static const int send_states[] = {CCDIAG_STATE_SEND_GPU_WAIT, CCDIAG_STATE_SEND_PEER_WAIT_V4, CCDIAG_STATE_SEND_WAIT};
  static const int recv_states[] = {CCDIAG_STATE_RECV_WAIT, CCDIAG_STATE_RECV_FLUSH_WAIT, CCDIAG_STATE_RECV_GPU_WAIT};
  const int* states = is_send ? send_states : recv_states;
  ccdiag_prof_state_args_t a;
  memset(&a, 0, sizeof(a));
  a.proxyStep.transSize = 131072;
  for (int i = 0; i < 3; i++) {
    state(h, states[i], &a);
    if (states[i] == upto) return;
  }
  stop(h);
}

static void kernel(int r, void* coll, int channel, int finish) {
  ccdiag_prof_descr_v5_t d;
  memset(&d, 0, sizeof(d));
  d.type = CCDIAG_PROF_KERNEL_CH;
  d.parentObj = coll;
  d.rank = r;
  d.kernelCh.channelId = (uint8_t)channel;
  d.kernelCh.pTimer = 1700000000000000000ull + (uint64_t)channel;
  void* h = start(r, &d);
  if (!finish) return;
  ccdiag_prof_state_args_t a;
  memset(&a, 0, sizeof(a));
  a.kernelCh.pTimer = d.kernelCh.pTimer + 250000;
  state(h, CCDIAG_STATE_KERNEL_CH_STOP, &a);
  stop(h);
}

/* Proxy side of one AllReduce on rank r for channel 0 with the ring peers.
 * send_upto / recv_upto: 0 = complete, else the state it stays in. */
static void progress(int r, void* coll, int send_upto, int recv_upto, int kernel_runs) {
  int next = (r + 1) % NRANKS, prev = (r + NRANKS - 1) % NRANKS;
  if (kernel_runs) kernel(r, coll, 0, send_upto == 0 && recv_upto == 0);
  void* s = proxy_op(r, coll, 0, next, 1);
  void* rv = proxy_op(r, coll, 0, prev, 0);
  for (int i = 0; i < 4; i++) {
    int last = i == 3;
    step(r, s, i, 1, last ? send_upto : 0);
    step(r, rv, i, 0, last ? recv_upto : 0);
  }
  if (send_upto == 0) stop(s);
  if (recv_upto == 0) stop(rv);
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s PLUGIN.so SCENARIO [--v4] [--hold] [--finalize]\n", argv[0]);
    return 2;
  }
  int use_v4 = 0, hold = 0, fin = 0;
  for (int i = 3; i < argc; i++) {
    if (strcmp(argv[i], "--v4") == 0) use_v4 = 1;
    else if (strcmp(argv[i], "--hold") == 0) hold = 1;
    else if (strcmp(argv[i], "--finalize") == 0) fin = 1;
  }
  const char* sc = argv[2];
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  if (use_v4) v4 = (const ccdiag_profiler_v4_t*)dlsym(lib, "ncclProfiler_v4");
  else v5 = (const ccdiag_profiler_v5_t*)dlsym(lib, "ncclProfiler_v5");
  if (!v4 && !v5) {
    fprintf(stderr, "dlsym: no ncclProfiler_v%d\n", use_v4 ? 4 : 5);
    return 1;
  }
  for (int r = 0; r < NRANKS; r++) {
    int rc = v5 ? v5->init(&ctx[r], COMM_ID, &mask, "harness", 1, NRANKS, r, logger)
                : v4->init(&ctx[r], &mask, "harness", COMM_ID, 1, NRANKS, r, logger);
    if (rc != 0 || !ctx[r]) {
      fprintf(stderr, "init rank %d failed (%d)\n", r, rc);
      return 1;
    }
    printf("rank %d pid %d mask 0x%x\n", r, (int)getpid(), mask);
    proxy_ctrl(r, CCDIAG_STATE_CTRL_WAKEUP);
    proxy_ctrl(r, CCDIAG_STATE_CTRL_ACTIVE);
  }
  /* Ten healthy AllReduce ops on every rank. */
  for (uint64_t seq = 0; seq < 10; seq++)
    for (int r = 0; r < NRANKS; r++) {
      void* c = enqueue_allreduce(r, seq);
      progress(r, c, 0, 0, 1);
    }
  for (int r = 0; r < NRANKS; r++) proxy_ctrl(r, CCDIAG_STATE_CTRL_IDLE);
  pause_ms(20);

  if (strcmp(sc, "healthy") == 0) {
    /* nothing in flight */
  } else if (strcmp(sc, "never_enqueues") == 0) {
    /* Rank 2 is stuck in its own code and never enqueues #10. Rank 1 sent its
     * data and waits for rank 2 to grant credit; rank 3 waits to receive from 2. */
    for (int r = 0; r < NRANKS; r++) {
      if (r == 2) continue;
      void* c = enqueue_allreduce(r, 10);
      proxy_ctrl(r, CCDIAG_STATE_CTRL_ACTIVE);
      progress(r, c, r == 1 ? CCDIAG_STATE_SEND_PEER_WAIT_V4 : 0, r == 3 ? CCDIAG_STATE_RECV_WAIT : 0, 1);
    }
  } else if (strcmp(sc, "send_stuck") == 0) {
    /* Rank 1's isend to rank 2 never completes (NIC / fabric). */
    for (int r = 0; r < NRANKS; r++) {
      void* c = enqueue_allreduce(r, 10);
      proxy_ctrl(r, CCDIAG_STATE_CTRL_ACTIVE);
      progress(r, c, r == 1 ? CCDIAG_STATE_SEND_WAIT : 0, r == 2 ? CCDIAG_STATE_RECV_WAIT : 0, 1);
    }
  } else if (strcmp(sc, "gpu_wait") == 0) {
    /* Rank 2's kernel started but never produces its send data. */
    for (int r = 0; r < NRANKS; r++) {
      void* c = enqueue_allreduce(r, 10);
      proxy_ctrl(r, CCDIAG_STATE_CTRL_ACTIVE);
      progress(r, c, r == 2 ? CCDIAG_STATE_SEND_GPU_WAIT : 0, r == 3 ? CCDIAG_STATE_RECV_WAIT : 0, 1);
    }
  } else if (strcmp(sc, "dead_proxy") == 0) {
    /* Rank 2 enqueues #10, but its proxy thread emits nothing after that:
     * no kernel-channel poll, no proxy op. Rank 3 waits to receive from 2. */
    for (int r = 0; r < NRANKS; r++) {
      void* c = enqueue_allreduce(r, 10);
      if (r == 2) continue;
      proxy_ctrl(r, CCDIAG_STATE_CTRL_ACTIVE);
      progress(r, c, 0, r == 3 ? CCDIAG_STATE_RECV_WAIT : 0, 1);
    }
  } else {
    fprintf(stderr, "unknown scenario %s\n", sc);
    return 2;
  }
  fflush(stdout);
  if (hold) {
    printf("holding\n");
    fflush(stdout);
    for (;;) pause();
  }
  if (fin)
    for (int r = 0; r < NRANKS; r++) {
      if (v5) v5->finalize(ctx[r]); else v4->finalize(ctx[r]);
    }
  return 0;
}
