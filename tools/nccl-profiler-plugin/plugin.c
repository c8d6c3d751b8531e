/*
 * libnccl-profiler-ccdiag.so: an always-on flight recorder for NCCL.
 *
 * Loaded by NCCL with NCCL_PROFILER_PLUGIN=ccdiag (NCCL then dlopens
 * libnccl-profiler-ccdiag.so) and found through the versioned symbol
 * ncclProfiler_v5 (NCCL 2.28) or ncclProfiler_v4 (2.27). Per communicator it
 * keeps a shared-memory file (layout: ccdiag_fr_layout.h) that `ccdiag nccl
 * dump` reads without ptrace, also while every thread of the process is stuck
 * and after the process died.
 *
 * Contract with NCCL (why the code looks like this):
 *  - Event handlers run on NCCL's hot paths (ProxyStep can fire 10^5..10^6
 *    times per second): they are O(1), take no lock, allocate nothing and make
 *    no system call but clock_gettime (vDSO).
 *  - Handles are not pointers: a handle encodes (kind, communicator slot, ring
 *    or channel slot, generation). A handle that outlives its slot (ring
 *    wrapped, comm finalised) is recognised by its generation and dropped,
 *    never written through. NCCL only passes handles back (as eHandle or as a
 *    child's parentObj), so integers are as good as pointers to it.
 *  - With PXN a ProxyOp may run in another process's proxy thread; its
 *    parentObj belongs to the originating process and is not used then
 *    (descriptor pid != getpid()).
 *  - Only init may fail (NCCL then disables the plugin for that comm). If the
 *    file cannot be created, init still succeeds with events off, so a full
 *    /dev/shm never breaks the job.
 *
 * Environment: CCDIAG_NCCL_DIR (directory for the files, default /dev/shm),
 * CCDIAG_NCCL_KEEP=1 (keep the file at finalize, for post-mortems of clean
 * exits), CCDIAG_NCCL_MASK (override the event mask, decimal or 0x hex),
 * CCDIAG_NCCL_STALE_SEC (age after which files of dead processes are swept,
 * default 600).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ccdiag_fr_layout.h"
#include "nccl_profiler_abi.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_COMMS 64u

/* Handle encoding: | gen:43 | slot:12 | comm:6 | tag:3 | */
enum { TAG_OP = 1, TAG_PROXY_OP = 2, TAG_STEP = 3, TAG_CTRL = 4, TAG_KERNEL = 5 };
#define TAG_BITS 3u
#define COMM_BITS 6u
#define SLOT_BITS 12u
#define GEN_SHIFT (TAG_BITS + COMM_BITS + SLOT_BITS)
#define GEN_MASK ((1ull << (64u - GEN_SHIFT)) - 1u)

struct comm_ctx {
  _Atomic int in_use;
  struct ccdiag_fr_file* f; /* NULL: recording off for this comm */
  char path[256];
  int keep;
};

static struct comm_ctx g_comms[MAX_COMMS];

/* CLOCK_REALTIME_COARSE: a hang is measured in seconds, and the fine clock
 * costs ~200 ns per call on some VMs (no vDSO fast path), twice the budget of
 * a whole event. The coarse clock is one vDSO read (tick resolution, 1-4 ms). */
static inline uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void* encode(unsigned tag, unsigned comm, unsigned slot, uint64_t gen) {
  uint64_t v = (uint64_t)tag | ((uint64_t)comm << TAG_BITS) | ((uint64_t)slot << (TAG_BITS + COMM_BITS)) |
               ((gen & GEN_MASK) << GEN_SHIFT);
  return (void*)(uintptr_t)v;
}

struct decoded {
  unsigned tag, comm, slot;
  uint64_t gen;
  struct ccdiag_fr_file* f;
};

static inline int decode(const void* h, struct decoded* d) {
  uint64_t v = (uint64_t)(uintptr_t)h;
  d->tag = (unsigned)(v & ((1u << TAG_BITS) - 1u));
  d->comm = (unsigned)((v >> TAG_BITS) & ((1u << COMM_BITS) - 1u));
  d->slot = (unsigned)((v >> (TAG_BITS + COMM_BITS)) & ((1u << SLOT_BITS) - 1u));
  d->gen = v >> GEN_SHIFT;
  if (d->tag == 0 || d->comm >= MAX_COMMS) return 0;
  d->f = atomic_load_explicit(&g_comms[d->comm].in_use, memory_order_acquire) ? g_comms[d->comm].f : NULL;
  return d->f != NULL;
}

#define LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define ADD(p, v) __atomic_add_fetch((p), (v), __ATOMIC_RELAXED)

static inline void copy_name(char* dst, size_t n, const char* src) {
  size_t len = src ? strnlen(src, n - 1) : 0;
  if (len) memcpy(dst, src, len);
  memset(dst + len, 0, n - len);
}

static int func_index(const char* f) {
  if (!f) return CCDIAG_FR_FUNC_OTHER;
  switch (f[0]) {
    case 'A': return strcmp(f, "AllReduce") == 0 ? CCDIAG_FR_FUNC_ALLREDUCE
                   : strcmp(f, "AllGather") == 0 ? CCDIAG_FR_FUNC_ALLGATHER : CCDIAG_FR_FUNC_OTHER;
    case 'B': return strcmp(f, "Broadcast") == 0 ? CCDIAG_FR_FUNC_BROADCAST : CCDIAG_FR_FUNC_OTHER;
    case 'R':
      if (strcmp(f, "Reduce") == 0) return CCDIAG_FR_FUNC_REDUCE;
      if (strcmp(f, "ReduceScatter") == 0) return CCDIAG_FR_FUNC_REDUCESCATTER;
      if (strcmp(f, "Recv") == 0) return CCDIAG_FR_FUNC_RECV;
      return CCDIAG_FR_FUNC_OTHER;
    case 'S': return strcmp(f, "Send") == 0 ? CCDIAG_FR_FUNC_SEND : CCDIAG_FR_FUNC_OTHER;
    default: return CCDIAG_FR_FUNC_OTHER;
  }
}

/* ---- files ------------------------------------------------------------ */

static const char* fr_dir(void) {
  const char* d = getenv("CCDIAG_NCCL_DIR");
  return (d && *d) ? d : "/dev/shm";
}

/* Removes files left by processes that no longer exist (a crash or kill -9
 * skips finalize). Files younger than CCDIAG_NCCL_STALE_SEC are kept so a
 * post-mortem collection after a crash still finds them. */
static void sweep_stale(const char* dir) {
  DIR* d = opendir(dir);
  if (!d) return;
  const char* s = getenv("CCDIAG_NCCL_STALE_SEC");
  long stale = s ? atol(s) : 600;
  time_t now = time(NULL);
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    size_t plen = strlen(CCDIAG_FR_FILE_PREFIX);
    if (strncmp(e->d_name, CCDIAG_FR_FILE_PREFIX, plen) != 0) continue;
    long pid = strtol(e->d_name + plen, NULL, 10);
    if (pid <= 0 || pid == (long)getpid()) continue;
    if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    if (st.st_uid != getuid() || now - st.st_mtime < stale) continue;
    unlinkat(dirfd(d), e->d_name, 0);
  }
  closedir(d);
}

static struct ccdiag_fr_file* create_file(const char* path) {
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return NULL;
  /* O_CREAT honours the umask; the file must be 0600 even if it pre-existed. */
  (void)fchmod(fd, 0600);
  size_t size = sizeof(struct ccdiag_fr_file);
  /* posix_fallocate, not ftruncate: on a full /dev/shm a sparse file would
   * SIGBUS the job at the first store instead of failing here. */
  if (posix_fallocate(fd, 0, (off_t)size) != 0) {
    close(fd);
    unlink(path);
    return NULL;
  }
  void* p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) {
    unlink(path);
    return NULL;
  }
  memset(p, 0, size);
  return (struct ccdiag_fr_file*)p;
}

static int default_mask(void) {
  const char* m = getenv("CCDIAG_NCCL_MASK");
  if (m && *m) return (int)strtol(m, NULL, 0);
  return CCDIAG_PROF_COLL | CCDIAG_PROF_P2P | CCDIAG_PROF_PROXY_OP | CCDIAG_PROF_PROXY_STEP | CCDIAG_PROF_PROXY_CTRL |
         CCDIAG_PROF_KERNEL_CH;
}

static ccdiag_nccl_result_t do_init(void** context, uint64_t comm_hash, int* mask, const char* name, int nnodes,
                                    int nranks, int rank, ccdiag_nccl_logger_t logfn, int abi) {
  unsigned idx = MAX_COMMS;
  for (unsigned i = 0; i < MAX_COMMS; i++) {
    int expected = 0;
    if (atomic_compare_exchange_strong(&g_comms[i].in_use, &expected, 2)) { /* 2: being set up */
      idx = i;
      break;
    }
  }
  /* The event mask is one global int shared by every communicator: keep it
   * identical across comms, also for those we do not record. */
  if (mask) *mask = default_mask();
  if (idx == MAX_COMMS) {
    if (logfn) logfn(2, ~0ul, __FILE__, __LINE__, "ccdiag profiler: more than %u communicators, not recording comm %lx", MAX_COMMS, (unsigned long)comm_hash);
    *context = NULL;
    return CCDIAG_NCCL_SUCCESS;
  }
  struct comm_ctx* c = &g_comms[idx];
  const char* dir = fr_dir();
  sweep_stale(dir);
  snprintf(c->path, sizeof(c->path), "%s/%s%d-%016llx-%d%s", dir, CCDIAG_FR_FILE_PREFIX, (int)getpid(),
           (unsigned long long)comm_hash, rank, CCDIAG_FR_FILE_SUFFIX);
  const char* keep = getenv("CCDIAG_NCCL_KEEP");
  c->keep = keep && keep[0] == '1';
  struct ccdiag_fr_file* f = create_file(c->path);
  if (!f) {
    if (logfn) logfn(2, ~0ul, __FILE__, __LINE__, "ccdiag profiler: cannot create %s: %s", c->path, strerror(errno));
    c->f = NULL;
    atomic_store(&c->in_use, 0);
    *context = NULL;
    return CCDIAG_NCCL_SUCCESS;
  }
  struct ccdiag_fr_header* h = &f->header;
  h->layout_version = CCDIAG_FR_LAYOUT_VERSION;
  h->file_size = (uint32_t)sizeof(*f);
  h->ring_size = CCDIAG_FR_RING_SIZE;
  h->max_channels = CCDIAG_FR_MAX_CHANNELS;
  h->comm_hash = comm_hash;
  h->rank = rank;
  h->nranks = nranks;
  h->nnodes = nnodes;
  h->pid = (int32_t)getpid();
  h->abi_version = abi;
  h->event_mask = mask ? (uint32_t)*mask : 0;
  h->created_ns = now_ns();
  gethostname(h->host, sizeof(h->host) - 1);
  copy_name(h->comm_name, sizeof(h->comm_name), name);
  for (unsigned i = 0; i < CCDIAG_FR_MAX_CHANNELS * 2; i++) {
    f->chans[i].last_step = -1;
    f->chans[i].op_slot = -1;
    f->chans[i].channel = (int32_t)(i / 2);
    f->chans[i].is_send = (int32_t)(i % 2);
  }
  for (unsigned i = 0; i < CCDIAG_FR_MAX_CHANNELS; i++) f->kernels[i].op_slot = -1;
  /* The magic goes last: a reader never sees a half-initialised header. */
  __atomic_store_n(&h->magic, CCDIAG_FR_MAGIC, __ATOMIC_RELEASE);
  c->f = f;
  atomic_store_explicit(&c->in_use, 1, memory_order_release);
  *context = &g_comms[idx];
  if (logfn) logfn(3, ~0ul, __FILE__, __LINE__, "ccdiag profiler: recording comm %016lx rank %d to %s", (unsigned long)comm_hash, rank, c->path);
  return CCDIAG_NCCL_SUCCESS;
}

static unsigned ctx_index(void* context) {
  if (!context) return MAX_COMMS;
  return (unsigned)((struct comm_ctx*)context - g_comms);
}

/* ---- events ----------------------------------------------------------- */

static inline void chan_begin(struct ccdiag_fr_chan* c) {
  uint64_t l = LOAD(&c->lock);
  __atomic_store_n(&c->lock, l + 1, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_RELEASE);
}
static inline void chan_end(struct ccdiag_fr_chan* c) {
  uint64_t l = LOAD(&c->lock);
  __atomic_store_n(&c->lock, l + 1, __ATOMIC_RELEASE);
}

static inline struct ccdiag_fr_op* op_of(struct ccdiag_fr_file* f, unsigned slot, uint64_t gen) {
  if (slot >= CCDIAG_FR_RING_SIZE) return NULL;
  struct ccdiag_fr_op* op = &f->ops[slot];
  return (__atomic_load_n(&op->gen, __ATOMIC_ACQUIRE) & GEN_MASK) == gen ? op : NULL;
}

static void* start_op(unsigned ci, struct ccdiag_fr_file* f, const ccdiag_prof_descr_v5_t* d, int kind) {
  uint64_t ticket = __atomic_fetch_add(&f->header.ring_head, 1, __ATOMIC_RELAXED);
  unsigned slot = (unsigned)(ticket & (CCDIAG_FR_RING_SIZE - 1u));
  uint64_t gen = (ticket + 1) & GEN_MASK;
  struct ccdiag_fr_op* op = &f->ops[slot];
  __atomic_store_n(&op->gen, 0, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_RELEASE);
  uint64_t t = now_ns();
  const char* func;
  if (kind == CCDIAG_FR_OP_COLL) {
    func = d->coll.func;
    op->seq = d->coll.seqNumber;
    op->count = d->coll.count;
    op->peer = d->coll.root;
    op->n_channels = d->coll.nChannels;
    copy_name(op->dtype, sizeof(op->dtype), d->coll.datatype);
    copy_name(op->algo, sizeof(op->algo), d->coll.algo);
    copy_name(op->proto, sizeof(op->proto), d->coll.proto);
  } else {
    func = d->p2p.func;
    op->seq = __atomic_fetch_add(&f->header.p2p_seq, 1, __ATOMIC_RELAXED);
    op->count = d->p2p.count;
    op->peer = d->p2p.peer;
    op->n_channels = d->p2p.nChannels;
    copy_name(op->dtype, sizeof(op->dtype), d->p2p.datatype);
    copy_name(op->algo, sizeof(op->algo), NULL);
    copy_name(op->proto, sizeof(op->proto), NULL);
  }
  /* NCCL passes pointers into its constant name tables: remember the last
   * lookup instead of comparing strings on every collective. */
  static __thread const char* last_func;
  static __thread int last_fi;
  int fi;
  if (func && func == last_func) {
    fi = last_fi;
  } else {
    fi = func_index(func);
    last_func = func;
    last_fi = fi;
  }
  op->func_index = (uint8_t)fi;
  copy_name(op->func, sizeof(op->func), func);
  op->kind = kind;
  op->start_ns = t;
  op->enqueued_ns = 0;
  op->last_proxy_ns = 0;
  op->done_ns = 0;
  op->proxy_active = 0;
  op->proxy_total = 0;
  op->kernel_started = 0;
  op->kernel_stopped = 0;
  op->state = CCDIAG_FR_OP_STARTED;
  __atomic_store_n(&op->gen, gen, __ATOMIC_RELEASE);
  if (kind == CCDIAG_FR_OP_COLL) {
    /* Collectives of one comm are enqueued by one host thread at a time
     * (NCCL serialises a comm's group launches): a plain max store suffices. */
    uint64_t next = op->seq + 1;
    if (LOAD(&f->header.last_seq[fi]) < next) STORE(&f->header.last_seq[fi], next);
  } else {
    ADD(&f->header.last_seq[fi], 1);
  }
  return encode(TAG_OP, ci, slot, gen);
}

static void* start_proxy_op(unsigned ci, struct ccdiag_fr_file* f, const ccdiag_prof_descr_v5_t* d) {
  unsigned ch = d->proxyOp.channelId;
  if (ch >= CCDIAG_FR_MAX_CHANNELS) {
    ADD(&f->header.dropped, 1);
    return NULL;
  }
  unsigned idx = ch * 2u + (d->proxyOp.isSend ? 1u : 0u);
  struct ccdiag_fr_chan* c = &f->chans[idx];
  uint64_t t = now_ns();
  struct ccdiag_fr_op* op = NULL;
  struct decoded pd;
  /* parentObj is ours only when the op originates in this process (PXN). */
  if (d->proxyOp.pid == getpid() && d->parentObj && decode(d->parentObj, &pd) && pd.tag == TAG_OP && pd.comm == ci)
    op = op_of(f, pd.slot, pd.gen);
  uint64_t gen = (LOAD(&c->gen) + 1) & GEN_MASK;
  chan_begin(c);
  c->gen = gen;
  c->op_gen = op ? pd.gen : 0;
  c->op_seq = op ? op->seq : 0;
  c->op_slot = op ? (int32_t)pd.slot : -1;
  c->op_start_ns = t;
  c->op_stop_ns = 0;
  c->step_ns = t;
  c->trans_size = 0;
  c->peer = d->proxyOp.peer;
  c->pid = (int32_t)d->proxyOp.pid;
  c->n_steps = d->proxyOp.nSteps;
  c->chunk_size = d->proxyOp.chunkSize;
  c->last_step = -1;
  c->step_state = CCDIAG_FR_STEP_STARTED;
  c->steps_done = 0;
  chan_end(c);
  if (op) {
    ADD(&op->proxy_active, 1);
    ADD(&op->proxy_total, 1);
    STORE(&op->last_proxy_ns, t);
    STORE(&op->state, CCDIAG_FR_OP_PROXY);
  }
  STORE(&f->header.proxy_heartbeat_ns, t);
  return encode(TAG_PROXY_OP, ci, idx, gen);
}

static void* start_step(unsigned ci, struct ccdiag_fr_file* f, const ccdiag_prof_descr_v5_t* d) {
  struct decoded pd;
  if (!d->parentObj || !decode(d->parentObj, &pd) || pd.tag != TAG_PROXY_OP || pd.comm != ci ||
      pd.slot >= CCDIAG_FR_MAX_CHANNELS * 2) {
    ADD(&f->header.dropped, 1);
    return NULL;
  }
  struct ccdiag_fr_chan* c = &f->chans[pd.slot];
  if (LOAD(&c->gen) != pd.gen) {
    ADD(&f->header.dropped, 1);
    return NULL;
  }
  uint64_t t = now_ns();
  chan_begin(c);
  c->last_step = d->proxyStep.step;
  c->step_state = CCDIAG_FR_STEP_STARTED;
  c->step_ns = t;
  chan_end(c);
  STORE(&f->header.proxy_heartbeat_ns, t);
  /* The step index rides in the generation bits' place: steps of one op share
   * the op's generation, the slot identifies the channel. */
  return encode(TAG_STEP, ci, pd.slot, pd.gen);
}

static void* start_kernel(unsigned ci, struct ccdiag_fr_file* f, const ccdiag_prof_descr_v5_t* d) {
  unsigned ch = d->kernelCh.channelId;
  if (ch >= CCDIAG_FR_MAX_CHANNELS) {
    ADD(&f->header.dropped, 1);
    return NULL;
  }
  struct ccdiag_fr_kernel* k = &f->kernels[ch];
  struct ccdiag_fr_op* op = NULL;
  struct decoded pd;
  if (d->parentObj && decode(d->parentObj, &pd) && pd.tag == TAG_OP && pd.comm == ci) op = op_of(f, pd.slot, pd.gen);
  uint64_t t = now_ns();
  uint64_t gen = (LOAD(&k->gen) + 1) & GEN_MASK;
  STORE(&k->gen, 0);
  k->op_gen = op ? pd.gen : 0;
  k->op_seq = op ? op->seq : 0;
  k->op_slot = op ? (int32_t)pd.slot : -1;
  k->start_ns = t;
  k->stop_ns = 0;
  k->start_ptimer = d->kernelCh.pTimer;
  k->stop_ptimer = 0;
  __atomic_store_n(&k->gen, gen, __ATOMIC_RELEASE);
  if (op) ADD(&op->kernel_started, 1);
  STORE(&f->header.proxy_heartbeat_ns, t);
  return encode(TAG_KERNEL, ci, ch, gen);
}

static ccdiag_nccl_result_t start_event(void* context, void** eHandle, ccdiag_prof_descr_v5_t* d) {
  *eHandle = NULL;
  unsigned ci = ctx_index(context);
  if (ci >= MAX_COMMS) return CCDIAG_NCCL_SUCCESS;
  struct ccdiag_fr_file* f = g_comms[ci].f;
  if (!f) return CCDIAG_NCCL_SUCCESS;
  ADD(&f->header.events, 1);
  switch (d->type) {
    case CCDIAG_PROF_COLL: *eHandle = start_op(ci, f, d, CCDIAG_FR_OP_COLL); break;
    case CCDIAG_PROF_P2P: *eHandle = start_op(ci, f, d, CCDIAG_FR_OP_P2P); break;
    case CCDIAG_PROF_PROXY_OP: *eHandle = start_proxy_op(ci, f, d); break;
    case CCDIAG_PROF_PROXY_STEP: *eHandle = start_step(ci, f, d); break;
    case CCDIAG_PROF_KERNEL_CH: *eHandle = start_kernel(ci, f, d); break;
    case CCDIAG_PROF_PROXY_CTRL:
      STORE(&f->header.proxy_heartbeat_ns, now_ns());
      *eHandle = encode(TAG_CTRL, ci, 0, 1);
      break;
    default: break; /* Group, *Api, KernelLaunch, NetPlugin: not recorded */
  }
  return CCDIAG_NCCL_SUCCESS;
}

static ccdiag_nccl_result_t stop_event(void* eHandle) {
  struct decoded h;
  if (!eHandle || !decode(eHandle, &h)) return CCDIAG_NCCL_SUCCESS;
  struct ccdiag_fr_file* f = h.f;
  uint64_t t = now_ns();
  switch (h.tag) {
    case TAG_OP: {
      struct ccdiag_fr_op* op = op_of(f, h.slot, h.gen);
      if (!op) break;
      STORE(&op->enqueued_ns, t);
      int expected = CCDIAG_FR_OP_STARTED;
      __atomic_compare_exchange_n(&op->state, &expected, CCDIAG_FR_OP_ENQUEUED, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
      break;
    }
    case TAG_PROXY_OP: {
      if (h.slot >= CCDIAG_FR_MAX_CHANNELS * 2) break;
      struct ccdiag_fr_chan* c = &f->chans[h.slot];
      if (LOAD(&c->gen) != h.gen) break;
      int32_t slot = c->op_slot;
      uint64_t op_gen = c->op_gen;
      chan_begin(c);
      c->op_stop_ns = t;
      chan_end(c);
      STORE(&f->header.proxy_heartbeat_ns, t);
      if (slot >= 0) {
        struct ccdiag_fr_op* op = op_of(f, (unsigned)slot, op_gen);
        if (op) {
          STORE(&op->last_proxy_ns, t);
          if (__atomic_sub_fetch(&op->proxy_active, 1, __ATOMIC_RELAXED) == 0) {
            STORE(&op->done_ns, t);
            STORE(&op->state, CCDIAG_FR_OP_DONE);
          }
        }
      }
      break;
    }
    case TAG_STEP: {
      if (h.slot >= CCDIAG_FR_MAX_CHANNELS * 2) break;
      struct ccdiag_fr_chan* c = &f->chans[h.slot];
      if (LOAD(&c->gen) != h.gen) break;
      chan_begin(c);
      c->step_state = CCDIAG_FR_STEP_DONE;
      c->steps_done = c->steps_done + 1;
      c->step_ns = t;
      chan_end(c);
      STORE(&f->header.proxy_heartbeat_ns, t);
      break;
    }
    case TAG_KERNEL: {
      if (h.slot >= CCDIAG_FR_MAX_CHANNELS) break;
      struct ccdiag_fr_kernel* k = &f->kernels[h.slot];
      if (__atomic_load_n(&k->gen, __ATOMIC_ACQUIRE) != h.gen) break;
      if (LOAD(&k->stop_ns) == 0) STORE(&k->stop_ns, t);
      if (k->op_slot >= 0) {
        struct ccdiag_fr_op* op = op_of(f, (unsigned)k->op_slot, k->op_gen);
        if (op) ADD(&op->kernel_stopped, 1);
      }
      STORE(&f->header.proxy_heartbeat_ns, t);
      break;
    }
    case TAG_CTRL: STORE(&f->header.proxy_heartbeat_ns, t); break;
    default: break;
  }
  return CCDIAG_NCCL_SUCCESS;
}

static ccdiag_nccl_result_t record_state(void* eHandle, ccdiag_prof_state_t state, ccdiag_prof_state_args_t* args) {
  struct decoded h;
  if (!eHandle || !decode(eHandle, &h)) return CCDIAG_NCCL_SUCCESS;
  struct ccdiag_fr_file* f = h.f;
  uint64_t t = now_ns();
  switch (h.tag) {
    case TAG_STEP: {
      if (h.slot >= CCDIAG_FR_MAX_CHANNELS * 2) break;
      struct ccdiag_fr_chan* c = &f->chans[h.slot];
      if (LOAD(&c->gen) != h.gen) break;
      chan_begin(c);
      c->step_state = state;
      c->step_ns = t;
      if (args) c->trans_size = args->proxyStep.transSize;
      chan_end(c);
      STORE(&f->header.proxy_heartbeat_ns, t);
      break;
    }
    case TAG_CTRL:
      STORE(&f->header.proxy_ctrl_state, state);
      STORE(&f->header.proxy_ctrl_ns, t);
      STORE(&f->header.proxy_heartbeat_ns, t);
      break;
    case TAG_KERNEL: {
      if (h.slot >= CCDIAG_FR_MAX_CHANNELS || state != CCDIAG_STATE_KERNEL_CH_STOP) break;
      struct ccdiag_fr_kernel* k = &f->kernels[h.slot];
      if (__atomic_load_n(&k->gen, __ATOMIC_ACQUIRE) != h.gen) break;
      if (args) STORE(&k->stop_ptimer, args->kernelCh.pTimer);
      STORE(&k->stop_ns, t);
      STORE(&f->header.proxy_heartbeat_ns, t);
      break;
    }
    case TAG_PROXY_OP: STORE(&f->header.proxy_heartbeat_ns, t); break;
    default: break;
  }
  return CCDIAG_NCCL_SUCCESS;
}

static ccdiag_nccl_result_t finalize(void* context) {
  unsigned ci = ctx_index(context);
  if (ci >= MAX_COMMS) return CCDIAG_NCCL_SUCCESS;
  struct comm_ctx* c = &g_comms[ci];
  struct ccdiag_fr_file* f = c->f;
  /* Unpublish first so late events (none should come) find no file. */
  atomic_store_explicit(&c->in_use, 2, memory_order_release);
  c->f = NULL;
  if (f) {
    if (c->keep) {
      __atomic_store_n(&f->header.finalized_ns, now_ns(), __ATOMIC_RELEASE);
    } else {
      unlink(c->path);
    }
    munmap(f, sizeof(*f));
  }
  atomic_store_explicit(&c->in_use, 0, memory_order_release);
  return CCDIAG_NCCL_SUCCESS;
}

/* ---- v5 --------------------------------------------------------------- */

static ccdiag_nccl_result_t init_v5(void** context, uint64_t commId, int* mask, const char* name, int nNodes,
                                    int nranks, int rank, ccdiag_nccl_logger_t logfn) {
  return do_init(context, commId, mask, name, nNodes, nranks, rank, logfn, 5);
}

EXPORT const ccdiag_profiler_v5_t ncclProfiler_v5 = {
    "ccdiag", init_v5, start_event, stop_event, record_state, finalize,
};

/* ---- v4 (NCCL 2.27): different init order, one-byte descriptor type ---- */

static ccdiag_nccl_result_t init_v4(void** context, int* mask, const char* name, uint64_t commHash, int nNodes,
                                    int nranks, int rank, ccdiag_nccl_logger_t logfn) {
  return do_init(context, commHash, mask, name, nNodes, nranks, rank, logfn, 4);
}

static ccdiag_nccl_result_t start_event_v4(void* context, void** eHandle, ccdiag_prof_descr_v4_t* d4) {
  ccdiag_prof_descr_v5_t d;
  /* The v4 union is a prefix of v5's at the same offset (see the ABI header). */
  memset(&d, 0, sizeof(d));
  d.type = d4->type;
  d.parentObj = d4->parentObj;
  d.rank = d4->rank;
  memcpy((char*)&d + offsetof(ccdiag_prof_descr_v5_t, coll), (const char*)d4 + offsetof(ccdiag_prof_descr_v4_t, coll),
         sizeof(*d4) - offsetof(ccdiag_prof_descr_v4_t, coll));
  return start_event(context, eHandle, &d);
}

EXPORT const ccdiag_profiler_v4_t ncclProfiler_v4 = {
    "ccdiag", init_v4, start_event_v4, stop_event, record_state, finalize,
};
