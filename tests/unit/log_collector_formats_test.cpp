// Lines as the tools that collect logs off a node write them: kubelet's CRI
// log files, Docker's json-file driver, journalctl -o short-iso, pdsh/clush.
// Formats: the CRI logging spec (kubelet, "<RFC 3339 nano> <stream> <P|F> <line>"),
// moby's jsonfilelog ({"log","stream","time"}, lines over 16 KiB split),
// systemd's journalctl short-iso output, pdsh's "host: " labels.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "ccdiag/line_prefix.hpp"
#include "collectors/logs/docker_json_log.hpp"
#include "collectors/logs/reader.hpp"

using namespace ccdiag::logs;

TEST_CASE("kubelet CRI log lines: time, stream and tag are prefixes", "[logs][collector-formats]") {
  auto p = parse_line_prefix(
      "2024-05-01T12:00:07.123456789Z stderr F node1:11:12 [1] transport/net_ib.cc:1295 NCCL WARN NET/IB : x");
  CHECK(p.time_kind == TimeKind::wall);
  CHECK(p.host == "node1");
  CHECK(p.level == "WARN");
  p = parse_line_prefix("2024-05-01T12:00:07.5Z stdout P 0000");
  CHECK(p.body == "0000");
}

TEST_CASE("journalctl -o short-iso: offset without a colon, host and proc[pid]", "[logs][collector-formats]") {
  auto p = parse_line_prefix("2024-05-01T12:00:07+0000 node1 python3[4242]: RuntimeError: NCCL error");
  CHECK(p.time_kind == TimeKind::wall);
  CHECK(p.body == "RuntimeError: NCCL error");
  p = parse_line_prefix("2024-05-01T12:00:07+0200 node1 kernel: NVRM: Xid (PCI:0000:3b:00): 79");
  CHECK(p.body.substr(0, 5) == "NVRM:");
  // A logging format's "LEVEL name: " after a time is the message, not a host and tag.
  p = parse_line_prefix("2024-05-01T12:00:07Z INFO trainer: step 10");
  CHECK(p.body == "INFO trainer: step 10");
}

TEST_CASE("pdsh / clush host labels are prefixes; devices and words are not", "[logs][collector-formats]") {
  auto p = parse_line_prefix("gpu-node017: 001d");
  CHECK(p.body == "001d");
  p = parse_line_prefix("node017: node017:48213:48213 [3] NCCL INFO Bootstrap : Using eth0:10.0.0.7<0>");
  CHECK(p.host == "node017");
  CHECK(p.pid == 48213);
  for (const char* kept : {"eth0: link down", "mlx5_0: port 1 down", "nvme0n1: I/O error", "RuntimeError: boom",
                           "rank0: hello", "step10: loss 3.2", "abc: no digit",
                           "nvidia-nvswitch0: SXid (PCI:0000:c3:00.0): 24007, Fatal"}) {
    INFO(kept);
    CHECK(parse_line_prefix(kept).body == kept);
  }
}

TEST_CASE("Docker json-file entries decode to their lines behind their time", "[logs][collector-formats]") {
  const std::string file =
      "{\"log\":\"NCCL version 2.21.5+cuda12.4\\n\",\"stream\":\"stderr\",\"time\":\"2024-05-01T12:00:00.1Z\"}\n"
      "{\"log\":\"\\u001b[31mRuntimeError: \\\"x\\\" \\u003cb\\u003e caf\\u00e9 \\ud83d\\ude00\\u001b[0m\\n\","
      "\"stream\":\"stderr\",\"time\":\"2024-05-01T12:00:01.2Z\"}\n"
      "{\"log\":\"part one \",\"stream\":\"stdout\",\"time\":\"2024-05-01T12:00:02.3Z\"}\n"
      "{\"log\":\"and its end\\n\",\"stream\":\"stdout\",\"time\":\"2024-05-01T12:00:02.4Z\"}\n"
      "not an entry\n";
  REQUIRE(looks_docker_json_log(file));
  CHECK_FALSE(looks_docker_json_log("node1:1:1 [0] NCCL INFO x\n"));
  CHECK_FALSE(looks_docker_json_log("{\"log\":\"x\"}\n"));  // no stream or time: some other JSON
  std::string out;
  bool at_start = true;
  decode_docker_json_log(file, out, at_start);
  CHECK(out ==
        "2024-05-01T12:00:00.1Z NCCL version 2.21.5+cuda12.4\n"
        "2024-05-01T12:00:01.2Z \x1b[31mRuntimeError: \"x\" <b> caf\xc3\xa9 \xf0\x9f\x98\x80\x1b[0m\n"
        "2024-05-01T12:00:02.3Z part one and its end\n"
        "not an entry\n");
  CHECK(at_start);

  // A lone surrogate and a cut escape do not break the decoder.
  out.clear();
  decode_docker_json_log("{\"log\":\"a\\ud800b\\n\",\"time\":\"t\"}\n{\"log\":\"cut\\", out, at_start);
  CHECK(out == "t a\xef\xbf\xbd" "b\n{\"log\":\"cut\\\n");
}

TEST_CASE("the reader hands out a json-file log as plain lines", "[logs][collector-formats]") {
  const auto dir = std::filesystem::temp_directory_path() / "ccdiag_json_file_reader_test";
  std::filesystem::create_directories(dir);
  const auto path = (dir / "abc-json.log").string();
  std::string text;
  for (int i = 0; i < 3000; ++i)
    text += "{\"log\":\"node1:7:7 [0] NCCL INFO line " + std::to_string(i) +
            "\\n\",\"stream\":\"stderr\",\"time\":\"2024-05-01T12:00:00.000000001Z\"}\n";
  std::ofstream(path) << text;
  auto r = LogReader::open(path, "abc-json.log", 4096);
  REQUIRE(r);
  std::string back;
  for (;;) {
    auto b = (*r)->next();
    REQUIRE(b);
    if (b->empty()) break;
    back.append(*b);
  }
  CHECK((*r)->docker_json());
  size_t lines = 0;
  for (char c : back) lines += c == '\n';
  CHECK(lines == 3000);
  CHECK(back.substr(0, 62) == "2024-05-01T12:00:00.000000001Z node1:7:7 [0] NCCL INFO line 0\n");
  std::filesystem::remove_all(dir);
}
