/*
 * ccdiag NCCL flight recorder: the layout of the per-communicator shared-memory
 * file written by libnccl-profiler-ccdiag.so and read by `ccdiag nccl dump`.
 *
 * One file per communicator and rank:
 *   $CCDIAG_NCCL_DIR (default /dev/shm) / ccdiag-nccl-<pid>-<commHash %016llx>-<rank>.fr
 * mode 0600, size sizeof(struct ccdiag_fr_file). All integers are native
 * endian (the reader runs on the same host, or reads a copy taken there).
 *
 * Writers (the plugin): the ring of operations is filled by NCCL's host
 * thread(s) (Coll/P2p events) and updated by the proxy thread (ProxyOp
 * start/stop); channel and kernel slots are written by the proxy progress
 * thread only. Every slot carries a generation so a late event for a recycled
 * slot is dropped, and channel slots a seqlock (odd while being written) so a
 * reader never takes a torn record for a real one.
 *
 * Times: *_ns are CLOCK_REALTIME nanoseconds since the epoch (comparable
 * across hosts with synchronised clocks); *_ptimer are GPU globaltimer values
 * as NCCL passes them (only comparable with each other).
 *
 * Layout changes bump CCDIAG_FR_LAYOUT_VERSION; a reader refuses versions it
 * does not know (layouts are data, checked before use).
 */
#ifndef CCDIAG_FR_LAYOUT_H
#define CCDIAG_FR_LAYOUT_H

#include <stdint.h>

/* "CDIAGFR1" read as a little-endian uint64 */
#define CCDIAG_FR_MAGIC 0x3152464741494443ull
#define CCDIAG_FR_LAYOUT_VERSION 1u
#define CCDIAG_FR_RING_SIZE 128u      /* recent collectives and p2p ops; power of two */
#define CCDIAG_FR_MAX_CHANNELS 64u    /* NCCL's MAXCHANNELS */
#define CCDIAG_FR_NAME_LEN 64u
#define CCDIAG_FR_FILE_PREFIX "ccdiag-nccl-"
#define CCDIAG_FR_FILE_SUFFIX ".fr"

/* Operation kinds in the ring. */
#define CCDIAG_FR_OP_COLL 1
#define CCDIAG_FR_OP_P2P 2

/* Operation states. */
#define CCDIAG_FR_OP_STARTED 1   /* Coll/P2p startEvent: the host task is building the op */
#define CCDIAG_FR_OP_ENQUEUED 2  /* Coll/P2p stopEvent: handed to the GPU stream / proxy (not completed) */
#define CCDIAG_FR_OP_PROXY 3     /* at least one ProxyOp of this op is progressing */
#define CCDIAG_FR_OP_DONE 4      /* every ProxyOp stopped (network ops completed) */

/* Step state values are NCCL's ncclProfilerEventState_t numbers (ABI):
 * 8 SendGPUWait, 20 SendPeerWait_v4, 9 SendWait, 10 RecvWait, 11 RecvFlushWait,
 * 12 RecvGPUWait. The recorder adds: */
#define CCDIAG_FR_STEP_STARTED 0   /* ProxyStep started, no state recorded yet */
#define CCDIAG_FR_STEP_DONE 100    /* ProxyStep stopped (transfer completed) */

/* Function indices of last_seq[] (RAS order, then p2p). */
#define CCDIAG_FR_FUNC_BROADCAST 0
#define CCDIAG_FR_FUNC_REDUCE 1
#define CCDIAG_FR_FUNC_ALLGATHER 2
#define CCDIAG_FR_FUNC_REDUCESCATTER 3
#define CCDIAG_FR_FUNC_ALLREDUCE 4
#define CCDIAG_FR_FUNC_SEND 5
#define CCDIAG_FR_FUNC_RECV 6
#define CCDIAG_FR_FUNC_OTHER 7
#define CCDIAG_FR_NFUNCS 8

/* One collective or p2p op (144 bytes). `gen` is written last with release
 * order: 0 while the slot is being (re)filled, else ticket+1. */
struct ccdiag_fr_op {
  uint64_t gen;
  uint64_t seq;            /* Coll: NCCL seqNumber (per function, same counter as RAS); P2p: per-comm counter */
  uint64_t count;          /* elements */
  uint64_t start_ns;       /* startEvent */
  uint64_t enqueued_ns;    /* stopEvent (0 until then) */
  uint64_t last_proxy_ns;  /* last ProxyOp start/stop of this op */
  uint64_t done_ns;        /* last ProxyOp stopped (0 until then) */
  int32_t kind;            /* CCDIAG_FR_OP_* */
  int32_t peer;            /* Coll: root; P2p: peer rank */
  int32_t state;           /* CCDIAG_FR_OP_STARTED.. */
  int32_t proxy_active;    /* ProxyOps started and not yet stopped */
  int32_t proxy_total;     /* ProxyOps started */
  int32_t kernel_started;  /* KernelCh events started */
  int32_t kernel_stopped;  /* KernelCh events stopped */
  uint8_t n_channels;
  uint8_t func_index;      /* CCDIAG_FR_FUNC_* */
  uint8_t pad[2];
  char func[16];           /* "AllReduce", "Send", ... */
  char dtype[16];          /* "ncclFloat32", ... */
  char algo[16];           /* "RING", "TREE", ... ("" for p2p) */
  char proto[8];           /* "LL", "LL128", "SIMPLE" */
};

/* Proxy progress of one channel in one direction (index channel*2 + isSend). */
struct ccdiag_fr_chan {
  uint64_t lock;           /* seqlock: odd while the proxy thread writes */
  uint64_t gen;            /* ProxyOps seen on this slot */
  uint64_t op_gen;         /* gen of the parent op in the ring (0: unknown, e.g. PXN) */
  uint64_t op_seq;         /* seq of the parent op */
  uint64_t op_start_ns;
  uint64_t op_stop_ns;     /* 0 while the ProxyOp is in progress */
  uint64_t step_ns;        /* time of the last step transition */
  uint64_t trans_size;     /* bytes of the last step, when NCCL passed it */
  int32_t peer;
  int32_t is_send;
  int32_t channel;
  int32_t pid;             /* originating pid (PXN ops come from another process) */
  int32_t n_steps;
  int32_t chunk_size;
  int32_t last_step;       /* index of the last step started (-1: none) */
  int32_t step_state;      /* state of that step (ncclProfilerEventState_t or CCDIAG_FR_STEP_*) */
  int32_t steps_done;      /* steps stopped */
  int32_t op_slot;         /* ring slot of the parent op (-1: unknown) */
};

/* GPU kernel activity on one channel (KernelCh events). */
struct ccdiag_fr_kernel {
  uint64_t gen;
  uint64_t op_gen;
  uint64_t op_seq;
  uint64_t start_ns, stop_ns;          /* host time the proxy saw start / stop */
  uint64_t start_ptimer, stop_ptimer;  /* GPU globaltimer */
  int32_t op_slot;
  int32_t pad;
};

struct ccdiag_fr_header {
  uint64_t magic;                 /* CCDIAG_FR_MAGIC */
  uint32_t layout_version;        /* CCDIAG_FR_LAYOUT_VERSION */
  uint32_t file_size;             /* sizeof(struct ccdiag_fr_file) */
  uint32_t ring_size;             /* CCDIAG_FR_RING_SIZE */
  uint32_t max_channels;          /* CCDIAG_FR_MAX_CHANNELS */
  uint64_t comm_hash;             /* NCCL commHash (= RAS hash, init-log commId) */
  int32_t rank, nranks, nnodes;
  int32_t pid;
  int32_t abi_version;            /* profiler ABI NCCL loaded us with (4 or 5) */
  uint32_t event_mask;            /* what init asked NCCL for */
  uint64_t created_ns;
  uint64_t finalized_ns;          /* set by finalize when the file is kept */
  char host[CCDIAG_FR_NAME_LEN];
  char comm_name[CCDIAG_FR_NAME_LEN];
  uint64_t ring_head;             /* tickets handed out (next op goes to ring_head % ring_size) */
  uint64_t p2p_seq;               /* p2p ops seen */
  uint64_t proxy_heartbeat_ns;    /* last event of any kind from the proxy thread */
  int32_t proxy_ctrl_state;       /* last ProxyCtrl state (13 Idle .. 18 AppendEnd), 0 none */
  int32_t pad0;
  uint64_t proxy_ctrl_ns;         /* time of that ProxyCtrl state */
  uint64_t last_seq[CCDIAG_FR_NFUNCS];    /* last Coll seqNumber enqueued per function, +1 (0 = none) */
  uint64_t events;                /* events handled (diagnostic) */
  uint64_t dropped;               /* events dropped (channel out of range, stale handle) */
  uint8_t reserved[64];
};

struct ccdiag_fr_file {
  struct ccdiag_fr_header header;
  struct ccdiag_fr_op ops[CCDIAG_FR_RING_SIZE];
  struct ccdiag_fr_chan chans[CCDIAG_FR_MAX_CHANNELS * 2];
  struct ccdiag_fr_kernel kernels[CCDIAG_FR_MAX_CHANNELS];
};

#ifdef __cplusplus
static_assert(sizeof(struct ccdiag_fr_op) == 144, "ccdiag_fr_op layout");
static_assert(sizeof(struct ccdiag_fr_chan) == 104, "ccdiag_fr_chan layout");
static_assert(sizeof(struct ccdiag_fr_kernel) == 64, "ccdiag_fr_kernel layout");
#else
_Static_assert(sizeof(struct ccdiag_fr_op) == 144, "ccdiag_fr_op layout");
_Static_assert(sizeof(struct ccdiag_fr_chan) == 104, "ccdiag_fr_chan layout");
_Static_assert(sizeof(struct ccdiag_fr_kernel) == 64, "ccdiag_fr_kernel layout");
#endif

#endif /* CCDIAG_FR_LAYOUT_H */
