// Layout probe: compiled against the headers of one NCCL tag (never linked
// against NCCL, never shipped) by gen.py. Prints one JSON object mapping every
// layout key of src/collectors/nccl/attach/layout.hpp to its byte offset, or
// to null when the tag's struct has no such member.
//
// Member existence is tested with SFINAE (std::void_t<decltype(&T::m)>) so the
// same source compiles for every tag from 2.18 to the newest.
#include "comm.h"
#include "proxy.h"
#include "transport.h"

#include <cstddef>
#include <cstdio>
#include <type_traits>

namespace {

bool first = true;
void emit(const char* key, long value, bool present) {
  std::printf("%s\n  \"%s\": ", first ? "{" : ",", key);
  first = false;
  if (present) std::printf("%ld", value);
  else std::printf("null");
}

}  // namespace

// One existence test + offset reader per (struct, member).
#define FIELD(S, M)                                                                             \
  template <typename T, typename = void> struct has_##S##_##M : std::false_type {};             \
  template <typename T> struct has_##S##_##M<T, std::void_t<decltype(&T::M)>> : std::true_type {}; \
  template <typename T> void probe_##S##_##M() {                                                \
    if constexpr (has_##S##_##M<T>::value) emit(#S "." #M, (long)offsetof(T, M), true);         \
    else emit(#S "." #M, 0, false);                                                             \
  }
#define SIZEOF(S) emit(#S ".sizeof", (long)sizeof(struct S), true)
#define RUN(S, M) probe_##S##_##M<struct S>();

#define NCCL_LAYOUT_FIELDS(X)                                                                   \
  X(ncclComm, startMagic) X(ncclComm, endMagic) X(ncclComm, magic) X(ncclComm, commHash)         \
  X(ncclComm, rank) X(ncclComm, nRanks) X(ncclComm, cudaDev) X(ncclComm, busId)                 \
  X(ncclComm, opCount) X(ncclComm, collOpCount) X(ncclComm, nChannels) X(ncclComm, proxyState)  \
  X(ncclComm, initState) X(ncclComm, seqNumber) X(ncclComm, channels) X(ncclComm, sharedRes)    \
  X(ncclComm, abortFlag) X(ncclComm, asyncResult) X(ncclComm, destroyFlag)                      \
  X(ncclComm, finalizeCalled)                                                                   \
  X(ncclChannel, peers) X(ncclChannel, id)                                                      \
  X(ncclChannelPeer, send) X(ncclChannelPeer, recv)                                             \
  X(ncclConnector, connected) X(ncclConnector, transportResources) X(ncclConnector, conn)       \
  X(ncclConnInfo, tail) X(ncclConnInfo, head) X(ncclConnInfo, connFifo) X(ncclConnInfo, step)   \
  X(ncclSharedResources, owner) X(ncclSharedResources, peers)                                   \
  X(ncclSharedResources, collOpCount) X(ncclSharedResources, proxyState)                        \
  X(ncclProxyState, tpRank) X(ncclProxyState, tpnRanks) X(ncclProxyState, thread)               \
  X(ncclProxyState, progressState)                                                              \
  X(ncclProxyProgressState, thread) X(ncclProxyProgressState, active)                           \
  X(ncclProxyArgs, subs) X(ncclProxyArgs, progress) X(ncclProxyArgs, nsubs)                     \
  X(ncclProxyArgs, done) X(ncclProxyArgs, opCount) X(ncclProxyArgs, pattern)                    \
  X(ncclProxyArgs, protocol) X(ncclProxyArgs, state) X(ncclProxyArgs, next)                     \
  X(ncclProxyArgs, nextPeer)                                                                    \
  X(ncclProxySubArgs, connection) X(ncclProxySubArgs, channelId) X(ncclProxySubArgs, nsteps)    \
  X(ncclProxySubArgs, nbytes) X(ncclProxySubArgs, peer) X(ncclProxySubArgs, base)               \
  X(ncclProxySubArgs, posted) X(ncclProxySubArgs, received) X(ncclProxySubArgs, flushed)        \
  X(ncclProxySubArgs, transmitted) X(ncclProxySubArgs, done) X(ncclProxySubArgs, end)           \
  X(ncclProxyConnection, send) X(ncclProxyConnection, transport)

NCCL_LAYOUT_FIELDS(FIELD)

int main() {
  SIZEOF(ncclComm);
  SIZEOF(ncclChannel);
  SIZEOF(ncclChannelPeer);
  SIZEOF(ncclConnector);
  SIZEOF(ncclConnInfo);
  SIZEOF(ncclProxyArgs);
  SIZEOF(ncclProxySubArgs);
  NCCL_LAYOUT_FIELDS(RUN)
  emit("const.MAXCHANNELS", MAXCHANNELS, true);
  emit("const.NCCL_PROXY_MAX_SUBS", NCCL_PROXY_MAX_SUBS, true);
  emit("const.NCCL_STEPS", NCCL_STEPS, true);
  emit("const.NCCL_NUM_FUNCTIONS", NCCL_NUM_FUNCTIONS, true);
  emit("const.ncclPatternSend", (long)ncclPatternSend, true);
  emit("const.ncclPatternRecv", (long)ncclPatternRecv, true);
  std::printf("\n}\n");
  return 0;
}
