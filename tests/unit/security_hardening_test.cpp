// Defences against hostile input (docs/security.md, issue 22): the bounded
// reader, the JSON depth check, redaction by name and value, the --since and
// line-table overflows, tar budgets, the signal-safe tree removal.
#include <archive_entry.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "bundle/bundle_tar.hpp"
#include "collectors/kernel/kernel_log_window.hpp"
#include "collectors/proc/proc_parse.hpp"
#include "collectors/python/line_table.hpp"
#include "sys/redact.hpp"
#include "sys/temp_cleanup.hpp"
#include "sys/untrusted_file.hpp"

using namespace ccdiag;
namespace fs = std::filesystem;

namespace {

struct Scratch {
  std::string dir;
  Scratch() {
    std::string t = (fs::temp_directory_path() / "ccdiag-unit-XXXXXX").string();
    dir = ::mkdtemp(t.data());
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string file(const std::string& name, const std::string& content) const {
    const std::string p = dir + "/" + name;
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }
};

}  // namespace

TEST_CASE("redaction by value: each case of issue 22", "[security][redact]") {
  // Userinfo without a scheme, inside allowlisted variables.
  CHECK(secret_value("user:pw@host:29500"));
  CHECK(secret_value("admin:pw@store"));
  // With a scheme, the password holding '/'.
  CHECK(secret_value("https://user:pa/ss@host.example/x"));
  CHECK(secret_value("redis://default:s3cr/t@10.0.0.1:6379/0"));
  // Bearer / basic credentials.
  CHECK(secret_value("Authorization: Bearer abcdefghijklmnop"));
  CHECK(secret_value("Basic dXNlcjpwYXNzd29yZA=="));
  // Query-string and assignment values.
  CHECK(secret_value("https://h.example/p?token=abc123"));
  CHECK(secret_value("https://h.example/p?a=1&key=abc123"));
  CHECK(secret_value("--password=hunter2"));
  // Long lowercase (single-class) tokens.
  CHECK(secret_value("qhxzjvwkdmtplrbfngcsyaueiokzqmvhxbtrnl"));
  // Well-known prefixes and mixed-class keys, as before.
  CHECK(secret_value("ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"));
  CHECK(secret_value("Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFi"));
}

TEST_CASE("redaction by name: the PASS/PWD/SECRET/TOKEN/KEY/CREDENTIAL family", "[security][redact]") {
  for (const char* n : {"SLURM_DBD_PASS", "DB_PWD", "NCCL_SECRET", "NCCL_RAS_AUTH_TOKEN", "NCCL_API_KEY",
                        "SLURM_CREDENTIAL_FILE", "SSHKEY"})
    CHECK(secret_name(n));
  CHECK(looks_like_credential("SLURM_DBD_PASS", "x"));
  CHECK_FALSE(secret_name("NCCL_IB_PKEY"));  // an InfiniBand partition key: configuration
  CHECK_FALSE(secret_name("NCCL_SOCKET_IFNAME"));
}

TEST_CASE("redaction keeps configuration readable", "[security][redact]") {
  for (const char* v : {"eth0", "mlx5_0,mlx5_1", "mlx5_0:1", "job-8812", "10.0.0.7", "10.0.0.7:29500", "gpu-a[01-16]",
                        "/opt/microsoft/ndv5-topo.xml", "INIT,COLL,NET", "Ring,Tree", "^docker0,lo", "alice@host",
                        "GPU-5b4d7c2e-8f3a-4c1e-9d2b-1a2b3c4d5e6f", "0,1,2,3,4,5,6,7", "1764480000"})
    CHECK_FALSE(secret_value(v));
  const auto env = filter_environment({{"NCCL_COMM_ID", "u:p@h:1"}, {"NCCL_SOCKET_IFNAME", "eth0"}});
  CHECK(env["NCCL_COMM_ID"] == kRedacted);
  CHECK(env["NCCL_SOCKET_IFNAME"] == "eth0");
}

TEST_CASE("JSON depth check: 64 levels pass, 65 are refused, strings do not count", "[security][json]") {
  CHECK(check_json_depth(std::string(64, '[') + std::string(64, ']')).ok());
  CHECK_FALSE(check_json_depth(std::string(65, '[') + std::string(65, ']')).ok());
  CHECK(check_json_depth("{\"a\": \"" + std::string(1000, '[') + "\"}").ok());
  CHECK(check_json_depth(R"({"a": "\"[[[[", "b": [1]})", 2).ok());
  auto deep = parse_untrusted_json(std::string(100000, '[') + std::string(100000, ']'), "deep.json");
  REQUIRE_FALSE(deep.ok());
  CHECK(deep.error().message.find("nested deeper than 64") != std::string::npos);
  CHECK(parse_untrusted_json("{\"a\": [1, {\"b\": 2}]}", "ok.json").ok());
  CHECK_FALSE(parse_untrusted_json("{\"a\": ", "bad.json").ok());
}

TEST_CASE("bounded reader: regular files only, caps before reading, newest part of a log", "[security][reader]") {
  Scratch s;
  const std::string fifo = s.dir + "/fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto t0 = std::chrono::steady_clock::now();
  auto f = read_untrusted(fifo, 1 << 20, "fifo");
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(1));  // never waits for a writer
  REQUIRE_FALSE(f.ok());
  CHECK(f.error().message.find("FIFO") != std::string::npos);

  auto dev = read_untrusted("/dev/zero", 1 << 20, "zero");
  REQUIRE_FALSE(dev.ok());
  CHECK(dev.error().message.find("character device") != std::string::npos);

  const std::string big = s.file("big", std::string(5000, 'x'));
  auto capped = read_untrusted(big, 4096, "big");
  REQUIRE_FALSE(capped.ok());
  CHECK(capped.error().message.find("too large") != std::string::npos);
  CHECK(read_untrusted(big, 5000, "big").value().size() == 5000);

  fs::create_symlink(big, s.dir + "/link");
  auto link = read_untrusted(s.dir + "/link", 1 << 20, "link");
  REQUIRE_FALSE(link.ok());
  CHECK(link.error().message.find("symlink") != std::string::npos);

  const std::string log = s.file("log", "old line 1\nold line 2\nnew line 3\nnew line 4\n");
  auto tail = read_untrusted_tail(log, 25, "log");
  REQUIRE(tail.ok());
  CHECK(tail->cut);
  CHECK(tail->text == "new line 3\nnew line 4\n");  // cut at a line start
  CHECK(read_untrusted_tail(log, 1 << 20, "log")->text.size() == 44);
}

TEST_CASE("--since: values that overflow are refused, not wrapped", "[security][since]") {
  const int64_t now = 1764480000;
  CHECK_FALSE(parse_since("777777777777777d", now));
  CHECK_FALSE(parse_since("9223372036854775807s", now));
  CHECK_FALSE(parse_since("@99999999999999999", now));
  CHECK_FALSE(parse_since("0001-01-01T00:00:00Z", now));
  CHECK(parse_since("20000d", now) == now - 20000 * 86400);
  // A window that starts at any sane time never overflows when scaled to µs.
  CHECK(filter_kernel_log_since("[99999999999999.0] x\n", 0, int64_t(1) << 40).kept == 1);
}

TEST_CASE("python 3.11 line table: hostile deltas near 2^62 give no line, not overflow", "[security][python]") {
  // Entries of code 13 (one signed varint delta) of +(2^62 - 1), repeated.
  std::string entry;
  entry.push_back(static_cast<char>(0x80 | (13 << 3)));
  uint64_t u = (uint64_t(1) << 63) - 2;  // zig-zag: even -> +(2^62 - 1)
  while (true) {
    uint8_t b = u & 63;
    u >>= 6;
    if (u) b |= 64;
    entry.push_back(static_cast<char>(b));
    if (!u) break;
  }
  std::string table;
  for (int i = 0; i < 8; ++i) table += entry;
  CHECK(python::line_for_offset_311(table, 1, 12) == -1);
}

TEST_CASE("tar budget: member count and declared size are checked from the header", "[security][tar]") {
  TarLimits limits;
  limits.max_members = 3;
  limits.max_bytes = 1000;
  TarBudget budget;
  archive_entry* e = archive_entry_new();
  archive_entry_set_size(e, 10);
  CHECK(budget.admit(e, limits).empty());
  archive_entry_set_size(e, 5000);  // declared past the cap: refused before any byte is written
  CHECK(budget.admit(e, limits).find("expands beyond") != std::string::npos);
  archive_entry_set_size(e, 0);
  budget.admit(e, limits);
  CHECK(budget.admit(e, limits).find("more than 3 members") != std::string::npos);
  limits.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  TarBudget late;
  CHECK(late.admit(e, limits).find("--timeout") != std::string::npos);
  archive_entry_free(e);
}

TEST_CASE("tree removal: nested directories go, symlinks are never followed", "[security][cleanup]") {
  Scratch s;
  const std::string outside = s.dir + "/outside";
  fs::create_directories(outside);
  std::ofstream(outside + "/keep") << "x";
  const std::string victim = s.dir + "/ccdiag-bundle-test";
  fs::create_directories(victim + "/a/b/c");
  std::ofstream(victim + "/a/b/c/f") << "x";
  std::ofstream(victim + "/a/g") << "x";
  fs::create_directory_symlink(outside, victim + "/a/link");
  remove_tree_raw(victim.c_str());
  CHECK_FALSE(fs::exists(victim));
  CHECK(fs::exists(outside + "/keep"));
}
