// `nccl attach` on synthesized ELF core files (no process is run): the core
// reader, the magic scan, the decoder with a table row, the layout inferred
// from the magic-pair distance when the library file is not on this host,
// the thread anchor (fs_base == the proxy progress thread), and the sub
// classification and cross-rank verdicts on plain data.
#include <elf.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "collectors/nccl/attach/attach.hpp"
#include "collectors/nccl/attach/attach_analysis.hpp"
#include "collectors/nccl/attach/comm_decode.hpp"
#include "collectors/nccl/attach/core_file.hpp"
#include "collectors/nccl/attach/layout.hpp"

using namespace ccdiag;
using namespace ccdiag::nccl::attach;

namespace {

const NcclLayout& row_2289() {
  static const NcclLayout l = [] {
    auto v = parse_nccl_version_string("NCCL version 2.28.9+cuda13.0");
    REQUIRE(v);
    auto r = table_layout(*v);
    REQUIRE(r);
    return *r;
  }();
  return l;
}

int64_t off(const char* k) { return *row_2289().get(k); }

// A core file under construction: memory segments and notes.
struct CoreBuilder {
  struct Seg {
    uint64_t vaddr;
    std::vector<uint8_t> bytes;
    uint32_t flags;
    bool dumped = true;
  };
  std::vector<Seg> segs;
  std::vector<std::pair<uint32_t, std::string>> notes;  // (type, desc), name "CORE"

  Seg& seg(uint64_t vaddr, size_t size, uint32_t flags = PF_R | PF_W) {
    segs.push_back({vaddr, std::vector<uint8_t>(size, 0), flags});
    return segs.back();
  }
  template <class T>
  void put(uint64_t addr, T v) {
    for (auto& s : segs)
      if (addr >= s.vaddr && addr + sizeof v <= s.vaddr + s.bytes.size()) {
        std::memcpy(s.bytes.data() + (addr - s.vaddr), &v, sizeof v);
        return;
      }
    FAIL("address outside every segment");
  }
  void thread(int tid, uint64_t fs_base) {
    std::string d(336, '\0');
    int32_t pid = tid;
    std::memcpy(d.data() + 32, &pid, 4);
    std::memcpy(d.data() + 112 + 21 * 8, &fs_base, 8);
    notes.push_back({NT_PRSTATUS, d});
  }
  void file(uint64_t start, uint64_t end, const std::string& path) {
    std::string d(16 + 24, '\0');
    uint64_t one = 1, page = 4096, zero = 0;
    std::memcpy(d.data(), &one, 8);
    std::memcpy(d.data() + 8, &page, 8);
    std::memcpy(d.data() + 16, &start, 8);
    std::memcpy(d.data() + 24, &end, 8);
    std::memcpy(d.data() + 32, &zero, 8);
    d += path;
    d += '\0';
    notes.push_back({NT_FILE, d});
  }
  std::string bytes() const {
    std::string notes_blob;
    for (const auto& [type, desc] : notes) {
      uint32_t hdr[3] = {5, static_cast<uint32_t>(desc.size()), type};
      notes_blob.append(reinterpret_cast<const char*>(hdr), 12);
      notes_blob.append("CORE\0\0\0\0", 8);
      notes_blob += desc;
      notes_blob.append((4 - desc.size() % 4) % 4, '\0');
    }
    const size_t nph = 1 + segs.size();
    Elf64_Ehdr eh{};
    std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = ELFCLASS64;
    eh.e_ident[EI_DATA] = ELFDATA2LSB;
    eh.e_ident[EI_VERSION] = EV_CURRENT;
    eh.e_type = ET_CORE;
    eh.e_machine = EM_X86_64;
    eh.e_version = EV_CURRENT;
    eh.e_phoff = sizeof eh;
    eh.e_ehsize = sizeof eh;
    eh.e_phentsize = sizeof(Elf64_Phdr);
    eh.e_phnum = static_cast<uint16_t>(nph);
    std::string out(reinterpret_cast<const char*>(&eh), sizeof eh);
    uint64_t data_off = sizeof eh + nph * sizeof(Elf64_Phdr);
    std::vector<Elf64_Phdr> ph(nph);
    ph[0].p_type = PT_NOTE;
    ph[0].p_offset = data_off;
    ph[0].p_filesz = notes_blob.size();
    data_off += notes_blob.size();
    for (size_t i = 0; i < segs.size(); ++i) {
      data_off = (data_off + 4095) & ~uint64_t(4095);
      auto& p = ph[i + 1];
      p.p_type = PT_LOAD;
      p.p_flags = segs[i].flags;
      p.p_vaddr = segs[i].vaddr;
      p.p_memsz = segs[i].bytes.size();
      p.p_offset = data_off;
      p.p_filesz = segs[i].dumped ? segs[i].bytes.size() : 0;
      p.p_align = 4096;
      data_off += p.p_filesz;
    }
    for (const auto& p : ph) out.append(reinterpret_cast<const char*>(&p), sizeof p);
    out += notes_blob;
    for (size_t i = 0; i < segs.size(); ++i) {
      out.resize(ph[i + 1].p_offset, '\0');
      if (segs[i].dumped) out.append(reinterpret_cast<const char*>(segs[i].bytes.data()), segs[i].bytes.size());
    }
    return out;
  }
};

constexpr uint64_t kMagic = 0x0280028002800280ULL;
constexpr uint64_t kComm = 0x7f1200000010ULL;
constexpr uint64_t kHeap = 0x555500000000ULL;
constexpr uint64_t kProgressThread = 0x7f12deadb640ULL;

// Rank 1 of 4, comm 0xabc..., one collective (#7) in flight: a send to rank 2
// the network never completed.
CoreBuilder stuck_send_core() {
  CoreBuilder b;
  const auto size = static_cast<size_t>(off("ncclComm.sizeof"));
  b.seg(kComm - 0x10, (size + 0x10 + 4095) & ~size_t(4095));
  b.seg(kHeap, 1 << 20);
  b.seg(0x7f1300000000ULL, 0x200000, PF_R | PF_X).dumped = false;  // libnccl text: never dumped
  b.file(0x7f1300000000ULL, 0x7f1300200000ULL, "/opt/nccl/lib/libnccl.so.2");
  b.thread(4242, 0x7f12aaaa0640ULL);
  b.thread(4250, kProgressThread);
  b.put<uint64_t>(kComm + off("ncclComm.startMagic"), kMagic);
  b.put<uint64_t>(kComm + off("ncclComm.endMagic"), kMagic);
  b.put<uint64_t>(kComm + off("ncclComm.commHash"), 0xabcdef0123456789ULL);
  b.put<int32_t>(kComm + off("ncclComm.rank"), 1);
  b.put<int32_t>(kComm + off("ncclComm.nRanks"), 4);
  b.put<int32_t>(kComm + off("ncclComm.cudaDev"), 1);
  b.put<int64_t>(kComm + off("ncclComm.busId"), 0x1b000);
  b.put<uint64_t>(kComm + off("ncclComm.collOpCount"), 7);
  b.put<uint64_t>(kComm + off("ncclComm.seqNumber") + 4 * 8, 8);
  const uint64_t shared = kHeap, ps = kHeap + 0x10000, args = kHeap + 0x20000, conn = kHeap + 0x40000;
  b.put<uint64_t>(kComm + off("ncclComm.sharedRes"), shared);
  b.put<uint64_t>(shared + off("ncclSharedResources.owner"), kComm);
  b.put<uint64_t>(kComm + off("ncclComm.proxyState"), ps);
  b.put<int32_t>(ps + off("ncclProxyState.tpRank"), 1);
  const uint64_t pps = ps + off("ncclProxyState.progressState");
  b.put<uint64_t>(pps + off("ncclProxyProgressState.thread"), kProgressThread);
  b.put<uint64_t>(pps + off("ncclProxyProgressState.active"), args);
  b.put<uint64_t>(args + off("ncclProxyArgs.opCount"), 7 << 1);
  b.put<int32_t>(args + off("ncclProxyArgs.nsubs"), 1);
  b.put<uint64_t>(args + off("ncclProxySubArgs.connection"), conn);
  b.put<int32_t>(conn + off("ncclProxyConnection.send"), 1);
  b.put<int32_t>(args + off("ncclProxySubArgs.channelId"), 3);
  b.put<int32_t>(args + off("ncclProxySubArgs.nsteps"), 64);
  b.put<int32_t>(args + off("ncclProxySubArgs.peer"), 2);
  b.put<uint64_t>(args + off("ncclProxySubArgs.posted"), 64);
  b.put<uint64_t>(args + off("ncclProxySubArgs.transmitted"), 64);
  b.put<uint64_t>(args + off("ncclProxySubArgs.done"), 41);
  return b;
}

std::string write_temp(const std::string& bytes) {
  char path[] = "/tmp/ccdiag-core-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
  close(fd);
  return path;
}

}  // namespace

TEST_CASE("core reader: segments, NT_FILE, NT_PRSTATUS; undumped memory is not zeros", "[nccl][attach]") {
  auto b = stuck_send_core();
  auto core = CoreFile::from_bytes(b.bytes(), "synthetic");
  REQUIRE(core.ok());
  CHECK(core->pid() == 4242);
  REQUIRE(core->threads().size() == 2);
  CHECK(core->threads()[1].fs_base == kProgressThread);
  REQUIRE(core->files().size() == 1);
  CHECK(core->files()[0].path == "/opt/nccl/lib/libnccl.so.2");
  uint64_t v = 0;
  CHECK(core->read_exact(kComm, &v, 8));
  CHECK(v == kMagic);
  CHECK_FALSE(core->read_exact(0x7f1300000000ULL, &v, 8));  // text segment with p_filesz 0
  CHECK_FALSE(core->read_exact(0x1000, &v, 8));             // unmapped
  CHECK_FALSE(core->truncated());
}

TEST_CASE("core reader: bad input is an error, a truncated core is flagged", "[nccl][attach]") {
  CHECK_FALSE(CoreFile::from_bytes("", "empty").ok());
  CHECK_FALSE(CoreFile::from_bytes(std::string(64, 'x'), "junk").ok());
  auto b = stuck_send_core();
  std::string bytes = b.bytes();
  std::string shared_object = bytes;
  shared_object[16] = ET_DYN;
  auto so = CoreFile::from_bytes(shared_object, "lib.so");
  REQUIRE_FALSE(so.ok());
  CHECK(so.error().message.find("not a core dump") != std::string::npos);
  auto cut = CoreFile::from_bytes(bytes.substr(0, bytes.size() - 100000), "cut");
  REQUIRE(cut.ok());
  CHECK(cut->truncated());
  CHECK(cut->missing_bytes() == 100000);
}

TEST_CASE("attach on a core from another host: layout from the magic-pair distance, thread anchor", "[nccl][attach]") {
  const std::string path = write_temp(stuck_send_core().bytes());
  auto t = open_core_target(path);
  REQUIRE(t.ok());
  AttachOptions o;
  ProcessAttach p = attach_target(*t, o);
  unlink(path.c_str());
  CHECK(p.status == "ok");
  CHECK(p.library == "/opt/nccl/lib/libnccl.so.2");
  CHECK(p.version.empty());  // the library file is not on this host
  CHECK(p.layout_source == "magic-distance");
  CHECK(p.layout_label == row_2289().label);
  REQUIRE(p.comms.size() == 1);
  const CommState& c = p.comms[0];
  CHECK(c.hash_hex() == "0xabcdef0123456789");
  CHECK(c.rank == 1);
  CHECK(c.nranks == 4);
  CHECK(c.bus_id == "0000:1b:00.0");
  CHECK(c.coll_op_count == 7u);
  CHECK(c.seq_numbers == std::vector<uint64_t>{0, 0, 0, 0, 8});
  CHECK(c.owner_ok == true);
  CHECK(c.proxy_thread_found == true);
  REQUIRE(c.proxy_ops.size() == 1);
  REQUIRE(c.proxy_ops[0].subs.size() == 1);
  const ProxySub& s = c.proxy_ops[0].subs[0];
  CHECK(s.direction == "send");
  CHECK(s.state == 'S');
  CHECK(s.peer == 2);
  CHECK(s.channel == 3);
  auto a = analyze_attach({p});
  REQUIRE(a.size() == 1);
  CHECK(a[0].verdict == "network_wait");
  CHECK(a[0].culprits == std::vector<int>{1});
  CHECK(a[0].layer == "transport");
}

TEST_CASE("attach: a core whose comm was poisoned has no communicator", "[nccl][attach]") {
  auto b = stuck_send_core();
  b.put<uint64_t>(kComm + off("ncclComm.startMagic"), 0);
  b.put<uint64_t>(kComm + off("ncclComm.endMagic"), 0);
  const std::string path = write_temp(b.bytes());
  auto t = open_core_target(path);
  REQUIRE(t.ok());
  ProcessAttach p = attach_target(*t, AttachOptions{});
  unlink(path.c_str());
  CHECK(p.status == "no_comm");
  CHECK(p.comms.empty());
}

TEST_CASE("sub classification follows NCCL's proxy dump letters", "[nccl][attach]") {
  auto cls = [](const char* dir, uint64_t posted, uint64_t received, uint64_t transmitted, uint64_t done) {
    ProxySub s;
    s.direction = dir;
    s.nsteps = 16;
    s.posted = posted, s.received = received, s.transmitted = transmitted, s.done = done;
    classify(s, 8);
    return s.state;
  };
  CHECK(cls("send", 4, 0, 4, 4) == 'I');   // still posting: posted < nsteps and < done + NCCL_STEPS
  CHECK(cls("send", 16, 0, 10, 10) == 'G');
  CHECK(cls("send", 16, 0, 16, 12) == 'S');
  CHECK(cls("send", 16, 0, 16, 16) == 'D');
  CHECK(cls("recv", 16, 9, 9, 9) == 'R');
  CHECK(cls("recv", 16, 16, 12, 12) == 'F');
  CHECK(cls("recv", 16, 16, 16, 14) == 'G');
  CHECK(cls("recv", 16, 16, 16, 16) == 'D');
}

TEST_CASE("cross-rank verdicts on plain data", "[nccl][attach]") {
  auto proc = [](int rank, std::vector<ProxySub> subs, std::optional<int> async = std::nullopt) {
    ProcessAttach p;
    p.pid = 100 + rank;
    p.source = "pid " + std::to_string(p.pid);
    CommState c;
    c.comm_hash = 0x42;
    c.rank = rank;
    c.nranks = 2;
    c.seq_numbers = {0, 0, 0, 0, 3};
    c.async_result = async;
    if (!subs.empty()) {
      ProxyOp o;
      o.op_count = 3 << 1;
      o.index = 3;
      for (auto& s : subs) classify(s, 8);
      o.subs = subs;
      c.proxy_ops.push_back(o);
    }
    p.comms.push_back(c);
    return p;
  };
  auto sub = [](const char* dir, int peer, uint64_t posted, uint64_t received, uint64_t transmitted, uint64_t done,
                std::optional<bool> moving = false) {
    ProxySub s;
    s.direction = dir;
    s.peer = peer;
    s.nsteps = 8;
    s.posted = posted, s.received = received, s.transmitted = transmitted, s.done = done;
    s.moving = moving;
    return s;
  };
  SECTION("data arrived, the GPU does not consume it: gpu_wait on that rank") {
    auto a = analyze_attach({proc(0, {sub("recv", 1, 8, 8, 8, 5)}), proc(1, {sub("recv", 0, 8, 3, 3, 3)})});
    CHECK(a[0].verdict == "gpu_wait");
    CHECK(a[0].culprits == std::vector<int>{0});
    auto f = attach_findings(a);
    REQUIRE_FALSE(f.empty());
    CHECK(f[0].id == "nccl.attach.gpu_wait");
    CHECK(f[0].layer == Layer::hardware);
    CHECK_FALSE(f[0].supports.empty());
  }
  SECTION("a send the NIC never completed outranks unconsumed data elsewhere (backpressure)") {
    auto a = analyze_attach({proc(0, {sub("recv", 1, 8, 8, 8, 5)}), proc(1, {sub("send", 0, 8, 0, 8, 6)})});
    CHECK(a[0].verdict == "network_wait");
    CHECK(a[0].culprits == std::vector<int>{1});
  }
  SECTION("sends waiting for their own GPU alone name nobody") {
    auto a = analyze_attach({proc(0, {sub("send", 1, 8, 0, 3, 3)}), proc(1, {sub("send", 0, 8, 0, 3, 3)})});
    CHECK(a[0].culprits.empty());
    CHECK(a[0].verdict == "stuck");
    CHECK(a[0].ranks[0].where == "waiting_on_gpu");
    auto f = attach_findings(a);
    REQUIRE(f.size() == 2);
    CHECK(f[0].role == FindingRole::symptom);
  }
  SECTION("a rank whose peers wait for its data while its sends wait for its own GPU: that GPU") {
    auto a = analyze_attach({proc(0, {sub("recv", 1, 8, 3, 3, 3)}), proc(1, {sub("send", 0, 8, 0, 3, 3)})});
    CHECK(a[0].verdict == "gpu_wait");
    CHECK(a[0].culprits == std::vector<int>{1});
    CHECK(a[0].layer == "hardware");
  }
  SECTION("a flush that never ends") {
    auto a = analyze_attach({proc(0, {sub("recv", 1, 8, 8, 5, 5)}), proc(1, {})});
    CHECK(a[0].verdict == "flush_wait");
  }
  SECTION("steps that moved between samples are progress, not a hang") {
    auto a = analyze_attach({proc(0, {sub("recv", 1, 8, 3, 3, 3, true)}), proc(1, {sub("send", 0, 8, 0, 3, 3, true)})});
    CHECK(a[0].verdict == "healthy");
  }
  SECTION("an asynchronous error outranks waits; ncclRemoteError is not a cause") {
    auto a = analyze_attach({proc(0, {}, 2), proc(1, {}, 6)});
    CHECK(a[0].verdict == "async_error");
    CHECK(a[0].culprits == std::vector<int>{0});
  }
}

TEST_CASE("attach: a core cut before its notes cannot say \"no NCCL\"", "[nccl][attach]") {
  // gcore writes the notes after the memory: a truncated gcore core has its
  // PT_LOADs but no NT_FILE. Not knowing the libraries is not "no NCCL".
  auto b = stuck_send_core();
  b.notes.erase(std::remove_if(b.notes.begin(), b.notes.end(), [](const auto& n) { return n.first == NT_FILE; }),
                b.notes.end());
  const std::string path = write_temp(b.bytes());
  auto t = open_core_target(path);
  REQUIRE(t.ok());
  ProcessAttach p = attach_target(*t, AttachOptions{});
  unlink(path.c_str());
  CHECK(p.status == "unreadable");
  CHECK(p.reason.find("mapped-file list") != std::string::npos);
  CHECK(p.reason.find("--nccl-lib") != std::string::npos);
}

TEST_CASE("attach: a comm of a size no layout has is undecodable, not absent", "[nccl][attach]") {
  // A release newer than the table (its comm grew): the start magic is there,
  // the end magic is not where any known sizeof(ncclComm) puts it.
  auto b = stuck_send_core();
  const auto size = static_cast<uint64_t>(off("ncclComm.sizeof"));
  b.segs[0].bytes.resize(b.segs[0].bytes.size() + 4096);
  b.put<uint64_t>(kComm + off("ncclComm.endMagic"), 0);
  b.put<uint64_t>(kComm + size, kMagic);  // sizeof + 8
  const std::string path = write_temp(b.bytes());
  auto t = open_core_target(path);
  REQUIRE(t.ok());
  ProcessAttach p = attach_target(*t, AttachOptions{});
  unlink(path.c_str());
  CHECK(p.comms.empty());
  CHECK(p.status == "no_layout");
  CHECK(p.reason.find("start magic(s) found but none decoded") != std::string::npos);
  CHECK(p.reason.find("--nccl-lib") != std::string::npos);  // the library is not on this host
}
