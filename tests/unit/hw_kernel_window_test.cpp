// The --since window over kmsg records, dmesg lines and journal JSON export lines.
#include <catch2/catch.hpp>

#include "collectors/kernel/kernel_log_collector.hpp"
#include "collectors/kernel/kernel_log_window.hpp"

using namespace ccdiag;

TEST_CASE("--since values") {
  const int64_t now = 1764480000;
  CHECK(parse_since("10m", now) == now - 600);
  CHECK(parse_since("2h", now) == now - 7200);
  CHECK(parse_since("1d", now) == now - 86400);
  CHECK(parse_since("@1764475200", now) == 1764475200);
  CHECK(parse_since("2025-11-30T04:00:00Z", now) == 1764475200);
  CHECK(parse_since("2025-11-30 04:00:00", now) == 1764475200);
  CHECK_FALSE(parse_since("yesterday", now));
  CHECK_FALSE(parse_since("2025-13-30T04:00:00Z", now));
  // Past kMaxSeconds (year 4147), as an "@" time would be (fuzzer finding).
  CHECK_FALSE(parse_since("9025-05-30T04:00:00Z", now));
  CHECK(parse_since("4000-01-01T00:00:00Z", now) == 64060588800);
  CHECK_FALSE(parse_since("", now));
  CHECK(boot_time_from_proc_stat("cpu 1 2\nbtime 1764475200\nprocesses 3\n") == 1764475200);
  CHECK_FALSE(boot_time_from_proc_stat("cpu 1 2\n"));
}

TEST_CASE("window: kmsg (µs since boot), dmesg and journal lines by their own clocks; untimed lines kept") {
  const int64_t boot = 1764475200;
  const std::string text =
      "5,0,0,-;Linux version 6.5.0\n"
      "4,1731,8123617543,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.\n"
      "[   10.500000] early boot line\n"
      "[ 8200.000000] late dmesg line\n"
      "{\"MESSAGE\":\"old journal\",\"__REALTIME_TIMESTAMP\":\"1764475300000000\"}\n"
      "{\"MESSAGE\":\"new journal\",\"__REALTIME_TIMESTAMP\":\"1764483300000000\"}\n"
      "Nov 30 04:01:00 node kernel: syslog line without a year\n";
  const auto w = filter_kernel_log_since(text, boot + 8000, boot);
  CHECK(w.text.find("Xid") != std::string::npos);
  CHECK(w.text.find("late dmesg") != std::string::npos);
  CHECK(w.text.find("new journal") != std::string::npos);
  CHECK(w.text.find("syslog line") != std::string::npos);  // untimed: kept
  CHECK(w.text.find("Linux version") == std::string::npos);
  CHECK(w.text.find("early boot") == std::string::npos);
  CHECK(w.text.find("old journal") == std::string::npos);
  CHECK(w.dropped == 3);
  // Without the boot time, since-boot stamps cannot be placed: kept.
  const auto nb = filter_kernel_log_since(text, boot + 8000, std::nullopt);
  CHECK(nb.text.find("Linux version") != std::string::npos);
  CHECK(nb.dropped == 1);
}

TEST_CASE("kernel collector: a --root tree's dev/kmsg, windowed with /proc/stat btime") {
  CollectContext c;
  c.root = SysRoot(std::string(CCDIAG_FIXTURES) + "/sysroots/aer-fatal-gpu-fell-off-bus");
  c.host = "gpu-node-017";
  const auto all = collect_kernel_log(c);
  REQUIRE(all.raw.size() == 1);
  CHECK(all.raw[0].second.find("Xid (PCI:0000:3b:00): 79") != std::string::npos);
  KernelLogOptions o;
  o.since_epoch_s = 1764475200 + 60;  // a minute after boot: drops the boot messages, keeps the Xid
  const auto w = collect_kernel_log(c, o);
  REQUIRE(w.raw.size() == 1);
  CHECK(w.raw[0].second.find("Linux version") == std::string::npos);
  CHECK(w.raw[0].second.find("fallen off the bus") != std::string::npos);
  CHECK(w.evidence[0].data["window"]["dropped"].get<int>() > 0);
}
