/* DWARF fixture for dwarf_layout() (tests/unit/nccl_layout_dwarf_test.cpp):
 * structs named like NCCL's, built with -g, no NCCL involved. They carry the
 * shapes the reader must handle: anonymous unions/structs, typedef'd and
 * const members, arrays whose bounds give the constants, a forward
 * declaration before the definition, and an anonymous typedef'd enum. Run, it
 * prints its own offsetof/sizeof values as "key offset" lines: the oracle the
 * test compares dwarf_layout() with. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct ncclProxyConnection;
struct ncclComm;

#define MAXCHANNELS 48
#define NCCL_PROXY_MAX_SUBS MAXCHANNELS
#define NCCL_STEPS 8
#define NCCL_NUM_FUNCTIONS 5

typedef enum { ncclPatternRing, ncclPatternTreeUp, ncclPatternSend = 21, ncclPatternRecv = 22 } ncclPattern_t;

struct ncclConnInfo {
  char* buffs[3];
  uint64_t* tail;
  uint64_t* head;
  int flags;
  void* connFifo;
  uint64_t step;
};
struct ncclConnector {
  int connected;
  char pad[20];
  void* transportResources;
  struct ncclConnInfo conn;
};
struct ncclChannelPeer {
  struct ncclConnector send[2];
  struct ncclConnector recv[2];
  int refCount;
};
typedef struct ncclChannelPeer ncclChannelPeer_t;
struct ncclChannel {
  ncclChannelPeer_t** peers;
  char ring[100];
  int id;
};
struct ncclProxyConnection {
  int send, transport, shared;
};
struct ncclProxySubArgs {
  struct ncclProxyConnection* connection;
  int channelId;
  int nsteps;
  ssize_t nbytes;
  int peer;
  uint64_t base, posted, received, flushed, transmitted, done, end;
  void* requests[NCCL_STEPS];
};
struct ncclProxyArgs {
  struct ncclProxySubArgs subs[NCCL_PROXY_MAX_SUBS];
  void (*progress)(void);
  int nsubs;
  int done;
  uint64_t opCount;
  ncclPattern_t pattern;
  uint8_t protocol;
  int state;
  struct ncclProxyArgs* next;
  struct ncclProxyArgs* nextPeer;
};
struct ncclProxyProgressState {
  void* opsPool;
  char shmPath[8];
  unsigned long thread;
  char pad[33];
  struct ncclProxyArgs* active;
};
struct ncclProxyState {
  int refCount;
  int tpRank;
  int tpnRanks;
  unsigned long thread;
  struct ncclProxyProgressState progressState;
};
struct ncclSharedResources {
  int refCount;
  struct ncclComm* owner;
  struct ncclChannelPeer* peers[MAXCHANNELS];
  uint64_t p2pOpCount[MAXCHANNELS];
  uint64_t collOpCount;
  struct ncclProxyState* proxyState;
};
struct ncclComm {
  uint64_t startMagic;
  struct ncclSharedResources* sharedRes;
  struct ncclChannel channels[MAXCHANNELS];
  union {
    uint64_t magic;
    char magicBytes[8];
  };
  struct {
    const uint64_t commHash;
    int rank;
  };
  int nRanks;
  int cudaDev;
  int64_t busId;
  uint64_t opCount;
  uint64_t collOpCount;
  int nChannels;
  struct ncclProxyState* proxyState;
  volatile uint32_t* abortFlag;
  int asyncResult;
  int destroyFlag;
  int initState;
  int finalizeCalled;
  /* Before NCCL 2.23.4 the only NCCL_NUM_FUNCTIONS-sized array of ncclComm. */
  float latencies[NCCL_NUM_FUNCTIONS][4][3];
#ifndef FIXTURE_BEFORE_2_23_4
  uint64_t seqNumber[NCCL_NUM_FUNCTIONS];
#endif
  uint64_t endMagic;
};

/* Objects of each type so that GCC emits their DWARF (types used only in
 * sizeof/offsetof may be left out). */
struct ncclComm fixture_comm;
struct ncclProxyArgs fixture_args;
struct ncclProxyConnection fixture_connection;

#define P(S, M) printf("%s.%s %zu\n", #S, #M, offsetof(struct S, M))
#define Z(S) printf("%s.sizeof %zu\n", #S, sizeof(struct S))

int main(void) {
  Z(ncclComm); Z(ncclChannel); Z(ncclChannelPeer); Z(ncclConnector); Z(ncclConnInfo);
  Z(ncclProxyArgs); Z(ncclProxySubArgs);
  P(ncclComm, startMagic); P(ncclComm, endMagic); P(ncclComm, magic); P(ncclComm, commHash);
  P(ncclComm, rank); P(ncclComm, nRanks); P(ncclComm, cudaDev); P(ncclComm, busId); P(ncclComm, opCount);
  P(ncclComm, collOpCount); P(ncclComm, nChannels); P(ncclComm, proxyState); P(ncclComm, initState);
#ifndef FIXTURE_BEFORE_2_23_4
  P(ncclComm, seqNumber);
#endif
  P(ncclComm, channels); P(ncclComm, sharedRes); P(ncclComm, abortFlag);
  P(ncclComm, asyncResult); P(ncclComm, destroyFlag); P(ncclComm, finalizeCalled);
  P(ncclChannel, peers); P(ncclChannel, id);
  P(ncclChannelPeer, send); P(ncclChannelPeer, recv);
  P(ncclConnector, connected); P(ncclConnector, transportResources); P(ncclConnector, conn);
  P(ncclConnInfo, tail); P(ncclConnInfo, head); P(ncclConnInfo, connFifo); P(ncclConnInfo, step);
  P(ncclSharedResources, owner); P(ncclSharedResources, peers); P(ncclSharedResources, collOpCount);
  P(ncclSharedResources, proxyState);
  P(ncclProxyState, tpRank); P(ncclProxyState, tpnRanks); P(ncclProxyState, thread);
  P(ncclProxyState, progressState);
  P(ncclProxyProgressState, thread); P(ncclProxyProgressState, active);
  P(ncclProxyArgs, subs); P(ncclProxyArgs, progress); P(ncclProxyArgs, nsubs); P(ncclProxyArgs, done);
  P(ncclProxyArgs, opCount); P(ncclProxyArgs, pattern); P(ncclProxyArgs, protocol); P(ncclProxyArgs, state);
  P(ncclProxyArgs, next); P(ncclProxyArgs, nextPeer);
  P(ncclProxySubArgs, connection); P(ncclProxySubArgs, channelId); P(ncclProxySubArgs, nsteps);
  P(ncclProxySubArgs, nbytes); P(ncclProxySubArgs, peer); P(ncclProxySubArgs, base); P(ncclProxySubArgs, posted);
  P(ncclProxySubArgs, received); P(ncclProxySubArgs, flushed); P(ncclProxySubArgs, transmitted);
  P(ncclProxySubArgs, done); P(ncclProxySubArgs, end);
  P(ncclProxyConnection, send); P(ncclProxyConnection, transport);
  printf("const.MAXCHANNELS %d\nconst.NCCL_PROXY_MAX_SUBS %d\nconst.NCCL_STEPS %d\nconst.NCCL_NUM_FUNCTIONS %d\n",
         MAXCHANNELS, NCCL_PROXY_MAX_SUBS, NCCL_STEPS, NCCL_NUM_FUNCTIONS);
  printf("const.ncclPatternSend %d\nconst.ncclPatternRecv %d\n", (int)ncclPatternSend, (int)ncclPatternRecv);
  return 0;
}
