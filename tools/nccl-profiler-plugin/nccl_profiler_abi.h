/*
 * NCCL profiler plugin ABI, v4 and v5, as NCCL 2.27/2.28 call it.
 *
 * Declared here from the documented ABI (NVIDIA/nccl
 * src/include/plugin/nccl_profiler.h and profiler/profiler_v4.h, _v5.h;
 * see /docs/nccl.md "Profiler plugin ABI"), so the plugin and the test
 * harness build without NCCL's headers. Numeric values and field order are
 * ABI: never reorder. Notes on the two versions:
 *  - v5 widened the descriptor `type` from uint8_t to uint64_t; because the
 *    next member is a pointer, every other field keeps its offset, and the v4
 *    union members are a prefix of the v5 ones (v5 appends parentGroup to
 *    coll/p2p and adds the *Api/KernelLaunch members).
 *  - v5 moved commId to init's second parameter (v4: fourth, "commHash").
 */
#ifndef CCDIAG_NCCL_PROFILER_ABI_H
#define CCDIAG_NCCL_PROFILER_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef int ccdiag_nccl_result_t; /* ncclResult_t: 0 ncclSuccess, 2 ncclSystemError, 3 ncclInternalError */
#define CCDIAG_NCCL_SUCCESS 0
#define CCDIAG_NCCL_SYSTEM_ERROR 2
#define CCDIAG_NCCL_INTERNAL_ERROR 3

/* ncclDebugLogger_t: level 1 VERSION, 2 WARN, 3 INFO, 4 ABORT, 5 TRACE. */
typedef void (*ccdiag_nccl_logger_t)(int level, unsigned long flags, const char* file, int line, const char* fmt, ...);

/* Event type bits. */
enum {
  CCDIAG_PROF_GROUP = 1 << 0,
  CCDIAG_PROF_COLL = 1 << 1,
  CCDIAG_PROF_P2P = 1 << 2,
  CCDIAG_PROF_PROXY_OP = 1 << 3,
  CCDIAG_PROF_PROXY_STEP = 1 << 4,
  CCDIAG_PROF_PROXY_CTRL = 1 << 5,
  CCDIAG_PROF_KERNEL_CH = 1 << 6,
  CCDIAG_PROF_NET_PLUGIN = 1 << 7,
  CCDIAG_PROF_GROUP_API = 1 << 8,
  CCDIAG_PROF_COLL_API = 1 << 9,
  CCDIAG_PROF_P2P_API = 1 << 10,
  CCDIAG_PROF_KERNEL_LAUNCH = 1 << 11,
};

/* ncclProfilerEventState_t values used by the recorder. */
enum {
  CCDIAG_STATE_PROXY_OP_IN_PROGRESS_V4 = 19,
  CCDIAG_STATE_SEND_GPU_WAIT = 8,
  CCDIAG_STATE_SEND_PEER_WAIT_V4 = 20,
  CCDIAG_STATE_SEND_WAIT = 9,
  CCDIAG_STATE_RECV_WAIT = 10,
  CCDIAG_STATE_RECV_FLUSH_WAIT = 11,
  CCDIAG_STATE_RECV_GPU_WAIT = 12,
  CCDIAG_STATE_CTRL_IDLE = 13,
  CCDIAG_STATE_CTRL_ACTIVE = 14,
  CCDIAG_STATE_CTRL_SLEEP = 15,
  CCDIAG_STATE_CTRL_WAKEUP = 16,
  CCDIAG_STATE_CTRL_APPEND = 17,
  CCDIAG_STATE_CTRL_APPEND_END = 18,
  CCDIAG_STATE_NET_PLUGIN_UPDATE = 21,
  CCDIAG_STATE_KERNEL_CH_STOP = 22,
};
typedef int ccdiag_prof_state_t; /* enum-sized (int) in the C ABI */

typedef struct {
  uint64_t type;
  void* parentObj;
  int rank;
  union {
    struct { bool graphCaptured; int groupDepth; } groupApi;
    struct { const char* func; size_t count; const char* datatype; int root; void* stream; bool graphCaptured; } collApi;
    struct { const char* func; size_t count; const char* datatype; void* stream; bool graphCaptured; } p2pApi;
    struct { void* stream; } kernelLaunch;
    struct {
      uint64_t seqNumber;
      const char* func;
      void const* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      uint8_t nChannels;
      uint8_t nWarps;
      const char* algo;
      const char* proto;
      void* parentGroup;
    } coll;
    struct {
      const char* func;
      void* buff;
      const char* datatype;
      size_t count;
      int peer;
      uint8_t nChannels;
      void* parentGroup;
    } p2p;
    struct { pid_t pid; uint8_t channelId; int peer; int nSteps; int chunkSize; int isSend; } proxyOp;
    struct { int step; } proxyStep;
    struct { uint8_t channelId; uint64_t pTimer; } kernelCh;
    struct { int64_t id; void* data; } netPlugin;
  };
} ccdiag_prof_descr_v5_t;

/* v4: same as v5 but a one-byte type (the other 7 bytes are padding). */
typedef struct {
  uint8_t type;
  void* parentObj;
  int rank;
  union {
    struct {
      uint64_t seqNumber;
      const char* func;
      void const* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      uint8_t nChannels;
      uint8_t nWarps;
      const char* algo;
      const char* proto;
    } coll;
    struct { const char* func; void* buff; const char* datatype; size_t count; int peer; uint8_t nChannels; } p2p;
    struct { pid_t pid; uint8_t channelId; int peer; int nSteps; int chunkSize; int isSend; } proxyOp;
    struct { int step; } proxyStep;
    struct { uint8_t channelId; uint64_t pTimer; } kernelCh;
    struct { int64_t id; void* data; } netPlugin;
  };
} ccdiag_prof_descr_v4_t;

typedef union {
  struct { size_t transSize; } proxyStep;
  struct { int appendedProxyOps; } proxyCtrl;
  struct { void* data; } netPlugin;
  struct { uint64_t pTimer; } kernelCh;
} ccdiag_prof_state_args_t; /* v4 and v5 */

typedef struct {
  const char* name;
  ccdiag_nccl_result_t (*init)(void** context, uint64_t commId, int* eActivationMask, const char* commName, int nNodes,
                               int nranks, int rank, ccdiag_nccl_logger_t logfn);
  ccdiag_nccl_result_t (*startEvent)(void* context, void** eHandle, ccdiag_prof_descr_v5_t* eDescr);
  ccdiag_nccl_result_t (*stopEvent)(void* eHandle);
  ccdiag_nccl_result_t (*recordEventState)(void* eHandle, ccdiag_prof_state_t eState, ccdiag_prof_state_args_t* eStateArgs);
  ccdiag_nccl_result_t (*finalize)(void* context);
} ccdiag_profiler_v5_t;

typedef struct {
  const char* name;
  ccdiag_nccl_result_t (*init)(void** context, int* eActivationMask, const char* commName, uint64_t commHash, int nNodes,
                               int nranks, int rank, ccdiag_nccl_logger_t logfn);
  ccdiag_nccl_result_t (*startEvent)(void* context, void** eHandle, ccdiag_prof_descr_v4_t* eDescr);
  ccdiag_nccl_result_t (*stopEvent)(void* eHandle);
  ccdiag_nccl_result_t (*recordEventState)(void* eHandle, ccdiag_prof_state_t eState, ccdiag_prof_state_args_t* eStateArgs);
  ccdiag_nccl_result_t (*finalize)(void* context);
} ccdiag_profiler_v4_t;

#endif /* CCDIAG_NCCL_PROFILER_ABI_H */
