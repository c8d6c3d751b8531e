// The shipped NCCL layout table (data/nccl-layouts.json, embedded) and its lookups.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <tuple>

#include "collectors/nccl/attach/layout.hpp"

using namespace ccdiag::nccl::attach;

namespace {

// Every NCCL release tag from v2.18.1-1 to v2.30.7-1 (NVIDIA/nccl), then 2.31.2 and 2.32.3.
const char* const kReleases[] = {"2.18.1", "2.18.3", "2.18.5", "2.18.6", "2.19.1", "2.19.3", "2.19.4", "2.20.3",
                                 "2.20.5", "2.21.5", "2.22.3", "2.23.4", "2.24.3", "2.25.1", "2.26.2", "2.26.3",
                                 "2.26.5", "2.26.6", "2.27.3", "2.27.5", "2.27.6", "2.27.7", "2.28.3", "2.28.7",
                                 "2.28.9", "2.29.2", "2.29.3", "2.29.7", "2.30.3", "2.30.4", "2.30.7",
                                 // From the PyPI wheels' DWARF (bench/nccl-wheels): 2.31.x and 2.32.x differ from
                                 // 2.30.7 and from each other in sizeof(ncclComm).
                                 "2.31.2", "2.32.3"};

NcclVersion version(const std::string& s, int cuda_major = 12, int cuda_minor = 4) {
  auto v = parse_nccl_version_string("NCCL version " + s);
  REQUIRE(v);
  v->cuda_major = cuda_major;
  v->cuda_minor = cuda_minor;
  return *v;
}

std::tuple<int, int, int> vkey(const std::string& s) {
  auto v = version(s);
  return {v.major, v.minor, v.patch};
}

bool at_least(const NcclLayout& row, const std::string& v) { return vkey(row.versions.front()) >= vkey(v); }

int64_t at(const NcclLayout& row, const std::string& key) {
  INFO(row.label << " " << key);
  auto v = row.get(key);
  REQUIRE(v);
  return *v;
}

}  // namespace

TEST_CASE("nccl layout keys: the documented list, unique", "[nccl][layout]") {
  const auto& keys = layout_field_keys();
  CHECK(keys.size() == 78);
  CHECK(std::set<std::string>(keys.begin(), keys.end()).size() == keys.size());
  CHECK(keys.front() == "ncclComm.sizeof");
  CHECK(keys.back() == "const.ncclPatternRecv");
  CHECK(std::count(keys.begin(), keys.end(), "ncclProxySubArgs.connection") == 1);
  CHECK(std::count(keys.begin(), keys.end(), "ncclProxyConnection.transport") == 1);
}

TEST_CASE("nccl layout table: rows are well formed and cover every release once", "[nccl][layout]") {
  const auto& table = layout_table();
  REQUIRE(!table.empty());
  const auto& keys = layout_field_keys();
  const std::set<std::string> known(keys.begin(), keys.end());
  std::multiset<std::string> covered;
  for (const auto& row : table) {
    INFO(row.label);
    CHECK(row.source == "table");
    CHECK(row.arch == "x86_64");
    CHECK(row.cuda_ge_11_3);
    REQUIRE(!row.versions.empty());
    const std::string expect_label =
        row.versions.size() == 1 ? row.versions.front() : row.versions.front() + "-" + row.versions.back();
    CHECK(row.label == expect_label);
    for (const auto& [k, v] : row.fields) {
      INFO(k);
      CHECK(known.count(k) == 1);
      CHECK(v >= 0);
    }
    covered.insert(row.versions.begin(), row.versions.end());
  }
  for (const char* v : kReleases) {
    INFO(v);
    CHECK(covered.count(v) == 1);
  }
  CHECK(covered.size() == std::size(kReleases));
}

TEST_CASE("nccl layout table: exact version lookup", "[nccl][layout]") {
  // 2.28.9, numbers also read from the DWARF of the nvidia-nccl-cu13 wheel library.
  auto l = table_layout(version("2.28.9", 13, 0));
  REQUIRE(l);
  CHECK(l->source == "table");
  CHECK(std::find(l->versions.begin(), l->versions.end(), "2.28.9") != l->versions.end());
  CHECK(l->get("ncclComm.sizeof") == 1082968);
  CHECK(l->get("ncclComm.endMagic") == 1082960);
  CHECK(l->get("ncclComm.commHash") == 1066184);
  CHECK(l->get("ncclComm.rank") == 1066192);
  CHECK(l->get("ncclComm.opCount") == 1066480);
  CHECK(l->get("ncclComm.seqNumber") == 1075728);
  CHECK(l->get("ncclComm.proxyState") == 1069312);
  CHECK(l->get("ncclComm.initState") == 1075672);
  CHECK(l->get("ncclProxyArgs.sizeof") == 33016);
  CHECK(l->get("ncclProxySubArgs.posted") == 128);
  CHECK(l->get("ncclProxySubArgs.done") == 160);
  CHECK(l->get("ncclProxyProgressState.active") == 1072);
  CHECK(l->get("ncclConnInfo.step") == 104);
  CHECK(l->get("const.MAXCHANNELS") == 64);

  // Every release resolves, and to the row that lists it.
  for (const char* v : kReleases) {
    INFO(v);
    auto row = table_layout(version(v));
    REQUIRE(row);
    CHECK(std::count(row->versions.begin(), row->versions.end(), v) == 1);
  }
  // A version without a CUDA suffix counts as CUDA >= 11.3.
  auto nosuffix = parse_nccl_version_string("NCCL version 2.18.6");
  REQUIRE(nosuffix);
  CHECK(table_layout(*nosuffix));
}

TEST_CASE("nccl layout table: no nearest-row guessing", "[nccl][layout]") {
  CHECK_FALSE(table_layout(version("2.28.8")));   // between two releases of one row
  CHECK_FALSE(table_layout(version("2.28.10")));
  CHECK_FALSE(table_layout(version("2.31.0")));   // newer than the table
  CHECK_FALSE(table_layout(version("2.17.1")));   // older than the table
  CHECK_FALSE(table_layout(version("3.0.0")));
  // Built for CUDA < 11.3: ncclCudaGraph is empty there, the comm is 8 bytes shorter.
  CHECK_FALSE(table_layout(version("2.18.6", 11, 0)));
  CHECK_FALSE(table_layout(version("2.28.9", 11, 2)));
  CHECK(table_layout(version("2.28.9", 11, 3)));
  // aarch64 was never generated.
  CHECK_FALSE(table_layout(version("2.28.9"), "aarch64"));
}

TEST_CASE("nccl layout table: the magic distance fingerprints a layout", "[nccl][layout]") {
  auto rows = layouts_for_comm_size(1082968);  // 2.28.7-2.28.9
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].source == "magic-distance");
  CHECK(std::count(rows[0].versions.begin(), rows[0].versions.end(), "2.28.9") == 1);
  CHECK(layouts_for_comm_size(16288).size() == 1);  // 2.21.5, the first with magics
  // 2.18.6 has no magics: its size never fingerprints.
  CHECK(layouts_for_comm_size(11432).empty());
  CHECK(layouts_for_comm_size(12345).empty());
  CHECK(layouts_for_comm_size(0).empty());
  CHECK(layouts_for_comm_size(-8).empty());
  // Every magic row is found by its own size, and the sizes tell rows apart
  // except where two rows share one ncclComm.
  for (const auto& row : layout_table()) {
    if (!row.has("ncclComm.endMagic")) continue;
    auto found = layouts_for_comm_size(at(row, "ncclComm.sizeof"));
    INFO(row.label);
    CHECK(std::count_if(found.begin(), found.end(), [&](const NcclLayout& l) { return l.label == row.label; }) == 1);
    for (const auto& f : found) CHECK(f.get("ncclComm.sizeof") == row.get("ncclComm.sizeof"));
  }
}

TEST_CASE("nccl layout table: invariants of every row", "[nccl][layout]") {
  for (const auto& row : layout_table()) {
    INFO(row.label);
    const bool v2_21_5 = at_least(row, "2.21.5"), v2_24_3 = at_least(row, "2.24.3"), v2_25_1 = at_least(row, "2.25.1");

    // Magics: first and last word of the comm from 2.21.5, absent before.
    CHECK(row.has("ncclComm.startMagic") == v2_21_5);
    CHECK(row.has("ncclComm.endMagic") == v2_21_5);
    if (v2_21_5) {
      CHECK(at(row, "ncclComm.startMagic") == 0);
      CHECK(at(row, "ncclComm.endMagic") == at(row, "ncclComm.sizeof") - 8);
    }
    CHECK(row.has("ncclComm.collOpCount") == v2_24_3);
    if (v2_24_3) CHECK(row.has("ncclComm.seqNumber"));

    // Identity run: commHash, rank, nRanks, cudaDev packed as NCCL declares them.
    CHECK(at(row, "ncclComm.rank") == at(row, "ncclComm.commHash") + 8);
    CHECK(at(row, "ncclComm.nRanks") == at(row, "ncclComm.rank") + 4);
    CHECK(at(row, "ncclComm.cudaDev") == at(row, "ncclComm.nRanks") + 4);
    CHECK(at(row, "ncclComm.busId") > at(row, "ncclComm.cudaDev"));

    // Constants.
    const int64_t maxch = at(row, "const.MAXCHANNELS");
    CHECK(maxch == (v2_25_1 ? 64 : 32));
    CHECK(at(row, "const.NCCL_PROXY_MAX_SUBS") == maxch);
    CHECK(at(row, "const.NCCL_STEPS") == 8);
    CHECK(at(row, "const.NCCL_NUM_FUNCTIONS") == 5);
    // PatUp/PatDown were inserted before Send/Recv in 2.23.4 (proxy.h of v2.23.4-1).
    CHECK(at(row, "const.ncclPatternSend") == (at_least(row, "2.23.4") ? 13 : 11));
    CHECK(at(row, "const.ncclPatternRecv") == at(row, "const.ncclPatternSend") + 1);

    // Sizes consistent with MAXCHANNELS: channels[] and subs[] fit their structs.
    const int64_t comm = at(row, "ncclComm.sizeof");
    CHECK(at(row, "ncclComm.channels") + maxch * at(row, "ncclChannel.sizeof") <= comm);
    for (const char* k : {"ncclComm.magic", "ncclComm.commHash", "ncclComm.busId", "ncclComm.opCount",
                          "ncclComm.nChannels", "ncclComm.proxyState", "ncclComm.initState", "ncclComm.sharedRes",
                          "ncclComm.abortFlag", "ncclComm.asyncResult", "ncclComm.finalizeCalled"}) {
      INFO(k);
      CHECK(at(row, k) < comm);
      const bool inside_channels = at(row, k) >= at(row, "ncclComm.channels") &&
                                   at(row, k) < at(row, "ncclComm.channels") + maxch * at(row, "ncclChannel.sizeof");
      CHECK_FALSE(inside_channels);
    }
    const int64_t sub = at(row, "ncclProxySubArgs.sizeof");
    CHECK(at(row, "ncclProxyArgs.subs") == 0);
    CHECK(at(row, "ncclProxyArgs.progress") >= at(row, "const.NCCL_PROXY_MAX_SUBS") * sub);
    CHECK(at(row, "ncclProxyArgs.nextPeer") + 8 <= at(row, "ncclProxyArgs.sizeof"));
    CHECK(at(row, "ncclProxyArgs.next") < at(row, "ncclProxyArgs.nextPeer"));

    // Sub-op counters: the order NCCL declares them, 8-byte steps, inside the sub.
    const char* counters[] = {"base", "posted", "received", "flushed", "transmitted", "done", "end"};
    for (size_t i = 1; i < std::size(counters); ++i) {
      INFO(counters[i]);
      CHECK(at(row, std::string("ncclProxySubArgs.") + counters[i]) ==
            at(row, std::string("ncclProxySubArgs.") + counters[i - 1]) + 8);
    }
    CHECK(at(row, "ncclProxySubArgs.end") + 8 <= sub);
    CHECK(at(row, "ncclProxySubArgs.nsteps") == at(row, "ncclProxySubArgs.channelId") + 4);
    CHECK(at(row, "ncclProxySubArgs.peer") < at(row, "ncclProxySubArgs.base"));

    // What the decoder relies on for a sub's direction and a peer's connectors.
    CHECK(at(row, "ncclProxySubArgs.connection") == 0);
    CHECK(at(row, "ncclProxyConnection.send") == 0);
    CHECK(at(row, "ncclProxyConnection.transport") == 4);
    CHECK(at(row, "ncclChannelPeer.send") == 0);
    CHECK(at(row, "ncclChannel.peers") == 0);
    CHECK(at(row, "ncclSharedResources.owner") == 8);
    // send[NCCL_MAX_CONNS=2] then recv[2].
    CHECK(at(row, "ncclChannelPeer.recv") == 2 * at(row, "ncclConnector.sizeof"));
    CHECK(at(row, "ncclChannelPeer.sizeof") >= 4 * at(row, "ncclConnector.sizeof"));
    CHECK(at(row, "ncclConnector.conn") + at(row, "ncclConnInfo.sizeof") <= at(row, "ncclConnector.sizeof"));
    CHECK(at(row, "ncclConnInfo.head") == at(row, "ncclConnInfo.tail") + 8);
    CHECK(at(row, "ncclConnInfo.step") + 8 <= at(row, "ncclConnInfo.sizeof"));
    CHECK(row.has("ncclConnInfo.connFifo") == at_least(row, "2.20.3"));
    CHECK(at(row, "ncclChannel.id") < at(row, "ncclChannel.sizeof"));

    // Proxy state: the progress thread and active list sit inside progressState.
    CHECK(at(row, "ncclProxyProgressState.active") > at(row, "ncclProxyProgressState.thread"));
    CHECK(at(row, "ncclProxyState.progressState") > at(row, "ncclProxyState.thread"));
  }
}

TEST_CASE("nccl layout table: layouts change where the NCCL history says", "[nccl][layout]") {
  // Patch releases back-port fields: 2.18.6 is larger than 2.19.1 (tag order is not layout order).
  CHECK(at(*table_layout(version("2.18.6")), "ncclComm.sizeof") >
        at(*table_layout(version("2.19.1")), "ncclComm.sizeof"));
  // 2.26.3 and 2.26.6 share a row; 2.28.3 and 2.28.7 do not.
  CHECK(table_layout(version("2.26.3"))->label == table_layout(version("2.26.6"))->label);
  CHECK(table_layout(version("2.28.3"))->label != table_layout(version("2.28.7"))->label);
  // The proxy active list moved by 8 bytes in 2.30.3.
  CHECK(at(*table_layout(version("2.29.7")), "ncclProxyProgressState.active") == 1072);
  CHECK(at(*table_layout(version("2.30.3")), "ncclProxyProgressState.active") == 1080);
  // sharedRes->collOpCount after p2pOpCount[MAXCHANNELS] doubled at 2.25.1.
  CHECK(at(*table_layout(version("2.24.3")), "ncclSharedResources.collOpCount") == 784);
  CHECK(at(*table_layout(version("2.25.1")), "ncclSharedResources.collOpCount") == 1552);
}

TEST_CASE("nccl layout table: 2.30.7, 2.31.2 and 2.32.3 do not share a row", "[nccl][layout]") {
  // Releases in a row with different struct sizes must never resolve to one
  // row (numbers from the DWARF of the nvidia-nccl-cu12 wheels).
  auto a = table_layout(version("2.30.7")), b = table_layout(version("2.31.2")), c = table_layout(version("2.32.3"));
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(c);
  CHECK(a->label == "2.30.7");
  CHECK(b->label == "2.31.2");
  CHECK(c->label == "2.32.3");
  CHECK(b->get("ncclComm.sizeof") == 1196464);
  CHECK(a->get("ncclComm.sizeof") != b->get("ncclComm.sizeof"));
  CHECK(b->get("ncclComm.sizeof") != c->get("ncclComm.sizeof"));
  CHECK(b->get("ncclComm.endMagic") == *b->get("ncclComm.sizeof") - 8);
  CHECK(c->get("ncclComm.endMagic") == *c->get("ncclComm.sizeof") - 8);
}
