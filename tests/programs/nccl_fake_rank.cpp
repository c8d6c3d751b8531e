// A process that looks, in memory, like a rank running a stock NCCL: it
// dlopens a libnccl (the real one, or tests/fake_nccl with a patched version
// string) and lays out ncclComm / ncclSharedResources / channels / peers /
// ncclProxyState / ncclProxyArgs images at the byte offsets of one layout row
// (data/nccl-layouts.json, or offsets read from DWARF by the test), exactly
// where NCCL keeps them: heap memory, a large comm in its own mmap at page
// offset 0x10 or in the brk heap.
//
// Usage: nccl_fake_rank SPEC.json   (spec format: tests/live/test_nccl_attach.py)
// Prints one JSON line {"ready": true, "comms": ["0x..."]} then waits (pause),
// or abort()s after printing when spec.abort is true (core-file tests).
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

using nlohmann::json;

namespace {

constexpr uint64_t kMagic = 0x0280028002800280ULL;
json g_fields;

bool has(const char* k) { return g_fields.contains(k); }
int64_t off(const char* k) {
  if (!g_fields.contains(k)) {
    std::fprintf(stderr, "layout lacks %s\n", k);
    std::exit(3);
  }
  return g_fields[k].get<int64_t>();
}

template <class T>
void put(void* base, const char* key, T v) {
  if (!has(key)) return;
  std::memcpy(static_cast<char*>(base) + off(key), &v, sizeof v);
}

void* zalloc(size_t n) {
  void* p = std::calloc(1, n);
  if (!p) std::abort();
  return p;
}

void* idle_thread(void*) {
  for (;;) pause();
  return nullptr;
}

std::atomic<uint64_t*> g_mutate_sub{nullptr};
std::atomic<uint64_t*> g_mutate_seq{nullptr};

void* mutator(void*) {
  // Changes counters continuously, as the proxy thread and the launcher do.
  for (uint64_t i = 0;; ++i) {
    if (uint64_t* s = g_mutate_sub.load()) {
      s[0] = i;
      s[1] = i;
    }
    if (uint64_t* q = g_mutate_seq.load()) q[0] = i;
  }
  return nullptr;
}

char* make_comm(const json& c, size_t size) {
  const std::string placement = c.value("placement", "mmap");
  char* comm;
  if (placement == "heap") {
    comm = static_cast<char*>(zalloc(size));
  } else {
    // glibc's own large-chunk layout: the user pointer is page start + 0x10.
    size_t len = (size + 0x10 + 4095) & ~size_t(4095);
    void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) std::abort();
    comm = static_cast<char*>(p) + 0x10;
  }
  return comm;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: nccl_fake_rank SPEC.json\n");
    return 2;
  }
  std::ifstream in(argv[1]);
  std::stringstream ss;
  ss << in.rdbuf();
  const json spec = json::parse(ss.str());
  g_fields = spec.at("fields");
  if (spec.value("heap_threshold", false)) mallopt(M_MMAP_THRESHOLD, 64 << 20);  // large comms in [heap]

  void* lib = nullptr;
  if (spec.contains("lib")) {
    lib = dlopen(spec["lib"].get<std::string>().c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      std::fprintf(stderr, "dlopen: %s\n", dlerror());
      return 3;
    }
  }
  auto ras_add = lib ? reinterpret_cast<void (*)(void*)>(dlsym(lib, "ccdiag_fake_nccl_ras_add")) : nullptr;

  pthread_t progress;
  pthread_create(&progress, nullptr, idle_thread, nullptr);
  // Ballast: a rank's heap is mostly tensors' host copies and allocator caches.
  const size_t ballast = spec.value("ballast_mb", size_t(0)) << 20;
  if (ballast) {
    void* b = mmap(nullptr, ballast, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (b == MAP_FAILED) std::abort();
    std::memset(b, 0x5a, ballast);
  }

  const size_t comm_size = static_cast<size_t>(off("ncclComm.sizeof"));
  const int64_t ch_size = has("ncclChannel.sizeof") ? off("ncclChannel.sizeof") : 0;
  const int64_t sub_size = off("ncclProxySubArgs.sizeof");
  json addrs = json::array();

  for (const auto& c : spec.at("comms")) {
    char* comm = make_comm(c, comm_size);
    const bool poisoned = c.value("poisoned", false);
    if (!poisoned) {
      put<uint64_t>(comm, "ncclComm.startMagic", kMagic);
      put<uint64_t>(comm, "ncclComm.endMagic", kMagic);
    }
    if (c.value("start_magic_only", false)) put<uint64_t>(comm, "ncclComm.endMagic", 0);
    put<uint64_t>(comm, "ncclComm.magic", 0x1234abcd5678ef00ULL);  // bootstrap magic: must not matter
    put<uint64_t>(comm, "ncclComm.commHash", std::stoull(c.at("hash").get<std::string>(), nullptr, 16));
    const int rank = c.at("rank").get<int>(), nranks = c.at("nranks").get<int>();
    put<int32_t>(comm, "ncclComm.rank", poisoned || c.value("freed", false) ? -1 : rank);
    put<int32_t>(comm, "ncclComm.nRanks", poisoned || c.value("freed", false) ? -1 : nranks);
    put<int32_t>(comm, "ncclComm.cudaDev", c.value("cuda_dev", 0));
    put<int64_t>(comm, "ncclComm.busId", c.value("bus_id", int64_t(0x3b000)));
    put<int32_t>(comm, "ncclComm.initState", c.value("init_state", 0));
    put<int32_t>(comm, "ncclComm.asyncResult", c.value("async_result", 0));
    put<uint64_t>(comm, "ncclComm.opCount", c.value("op_count", uint64_t(0)));
    uint32_t* abort_flag = static_cast<uint32_t*>(zalloc(64));
    *abort_flag = c.value("abort_flag", 0u);
    put<uint32_t*>(comm, "ncclComm.abortFlag", abort_flag);
    if (has("ncclComm.seqNumber") && c.contains("seq")) {
      size_t f = 0;
      for (const auto& v : c["seq"]) {
        uint64_t x = v.get<uint64_t>();
        std::memcpy(comm + off("ncclComm.seqNumber") + 8 * f++, &x, 8);
      }
    }
    // Shared resources: owner back-pointer; collOpCount lives here before 2.24.3.
    char* shared = static_cast<char*>(zalloc(16384));
    put<char*>(shared, "ncclSharedResources.owner", c.value("foreign_owner", false) ? shared : comm);
    put<char*>(comm, "ncclComm.sharedRes", shared);
    if (has("ncclComm.collOpCount")) put<uint64_t>(comm, "ncclComm.collOpCount", c.value("coll_op_count", uint64_t(0)));
    else put<uint64_t>(shared, "ncclSharedResources.collOpCount", c.value("coll_op_count", uint64_t(0)));

    // Channels and the peers each one is connected to.
    const json channels = c.value("channels", json::array());
    put<int32_t>(comm, "ncclComm.nChannels", static_cast<int32_t>(channels.size()));
    for (size_t i = 0; i < channels.size(); ++i) {
      char* ch = comm + off("ncclComm.channels") + static_cast<int64_t>(i) * ch_size;
      put<int32_t>(ch, "ncclChannel.id", static_cast<int32_t>(i));
      auto** peers = static_cast<char**>(zalloc(sizeof(char*) * static_cast<size_t>(nranks + 1)));
      put<char**>(ch, "ncclChannel.peers", peers);
      for (const auto& p : channels[i].at("peers")) {
        char* cp = static_cast<char*>(zalloc(static_cast<size_t>(off("ncclChannelPeer.sizeof"))));
        const int64_t conn = off("ncclConnector.sizeof");
        if (p.value("send", false))
          std::memcpy(cp + off("ncclChannelPeer.send") + off("ncclConnector.connected"), "\1\0\0\0", 4);
        if (p.value("recv", false))
          std::memcpy(cp + off("ncclChannelPeer.recv") + off("ncclConnector.connected"), "\1\0\0\0", 4);
        (void)conn;
        peers[p.at("peer").get<int>()] = cp;
      }
    }

    // Proxy state: the progress thread's active op list.
    if (c.value("proxy", false)) {
      char* ps = static_cast<char*>(zalloc(65536));
      put<int32_t>(ps, "ncclProxyState.tpRank", rank);
      put<int32_t>(ps, "ncclProxyState.tpnRanks", nranks);
      put<pthread_t>(ps, "ncclProxyState.thread", pthread_self());  // the service thread (here: main)
      put<char*>(comm, "ncclComm.proxyState", ps);
      put<char*>(shared, "ncclSharedResources.proxyState", ps);
      char* pps = ps + off("ncclProxyState.progressState");
      put<pthread_t>(pps, "ncclProxyProgressState.thread", progress);
      char* prev = nullptr;
      for (const auto& op : c.value("proxy_ops", json::array())) {
        char* args = static_cast<char*>(zalloc(static_cast<size_t>(off("ncclProxyArgs.sizeof"))));
        put<uint64_t>(args, "ncclProxyArgs.opCount", op.at("op_count").get<uint64_t>());
        put<int32_t>(args, "ncclProxyArgs.state", 1);
        put<uint8_t>(args, "ncclProxyArgs.pattern", op.value("pattern", uint8_t(0)));
        const json subs = op.at("subs");
        put<int32_t>(args, "ncclProxyArgs.nsubs", static_cast<int32_t>(subs.size()));
        for (size_t s = 0; s < subs.size(); ++s) {
          const json& sj = subs[s];
          char* sub = args + (has("ncclProxyArgs.subs") ? off("ncclProxyArgs.subs") : 0) + static_cast<int64_t>(s) * sub_size;
          char* connection = static_cast<char*>(zalloc(256));
          int32_t send = sj.at("dir").get<std::string>() == "send";
          std::memcpy(connection + (has("ncclProxyConnection.send") ? off("ncclProxyConnection.send") : 0), &send, 4);
          put<char*>(sub, "ncclProxySubArgs.connection", connection);
          put<int32_t>(sub, "ncclProxySubArgs.channelId", sj.at("channel").get<int32_t>());
          put<int32_t>(sub, "ncclProxySubArgs.nsteps", sj.at("nsteps").get<int32_t>());
          put<int32_t>(sub, "ncclProxySubArgs.peer", sj.at("peer").get<int32_t>());
          put<uint64_t>(sub, "ncclProxySubArgs.posted", sj.value("posted", uint64_t(0)));
          put<uint64_t>(sub, "ncclProxySubArgs.received", sj.value("received", uint64_t(0)));
          put<uint64_t>(sub, "ncclProxySubArgs.flushed", sj.value("received", uint64_t(0)));
          put<uint64_t>(sub, "ncclProxySubArgs.transmitted", sj.value("transmitted", uint64_t(0)));
          put<uint64_t>(sub, "ncclProxySubArgs.done", sj.value("done", uint64_t(0)));
          if (spec.value("mutate", false) && !g_mutate_sub.load() && has("ncclProxySubArgs.posted"))
            g_mutate_sub.store(reinterpret_cast<uint64_t*>(sub + off("ncclProxySubArgs.posted")));
        }
        if (prev) put<char*>(prev, "ncclProxyArgs.next", args);
        else put<char*>(pps, "ncclProxyProgressState.active", args);
        prev = args;
      }
      if (c.value("cyclic_ops", false) && prev) {
        // next of the last element points back to the head: a list caught mid-update.
        char* head = nullptr;
        std::memcpy(&head, pps + off("ncclProxyProgressState.active"), sizeof head);
        put<char*>(prev, "ncclProxyArgs.next", head);
      }
    }
    if (spec.value("mutate", false) && has("ncclComm.seqNumber"))
      g_mutate_seq.store(reinterpret_cast<uint64_t*>(comm + off("ncclComm.seqNumber") + 32));
    if (c.value("in_ras_list", false) && ras_add) ras_add(comm);
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%lx", reinterpret_cast<unsigned long>(comm));
    addrs.push_back(buf);
  }
  if (spec.value("mutate", false)) {
    pthread_t m;
    pthread_create(&m, nullptr, mutator, nullptr);
  }
  std::printf("%s\n", json{{"ready", true}, {"comms", addrs}, {"progress_thread", static_cast<uint64_t>(progress)}}.dump().c_str());
  std::fflush(stdout);
  if (spec.value("abort", false)) std::abort();
  for (;;) pause();
}
