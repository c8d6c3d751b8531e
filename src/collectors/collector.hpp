// Collector: reads one part of the live host (through SysRoot) and returns
// evidence and raw artefacts for the bundle. Collectors run in forked children
// under a deadline (sys/probe_runner.hpp), so one that blocks in foreign code
// becomes a `timeout` entry instead of a hung ccdiag.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ccdiag/evidence.hpp"
#include "ccdiag/report.hpp"
#include "ccdiag/sysroot.hpp"
#include "sys/probe_runner.hpp"

namespace ccdiag {

struct CollectContext {
  SysRoot root;
  std::optional<std::string> kernel_log_file;  // --kernel-log: read this instead of /dev/kmsg
  std::string host;                             // resolved hostname (from root)
  // When this collector's budget ends (collect_host sets it per collector): a
  // collector with a slow part (the RAS query) gives that part a share and
  // keeps what it already has, instead of being killed with all of it.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

struct CollectorOutput {
  std::vector<Evidence> evidence;
  std::vector<std::pair<std::string, std::string>> raw;  // path under raw/ -> contents
  std::vector<Unchecked> unchecked;
};

struct CollectorInfo {
  std::string name;                        // "host", "versions", "kernel_log"
  std::chrono::milliseconds budget;        // its own limit, capped by --timeout
  std::function<CollectorOutput(const CollectContext&)> run;
  // Evidence kind recorded when the collector times out or fails, so the
  // tree knows which layer went unchecked ("kernel.source" -> hardware).
  std::string failure_kind = {};
  // The work grows with the target (threads to stop and unwind per rank), so
  // the budget is --timeout itself, not min(budget, timeout): a loaded host
  // given `--timeout 30` must get 30 s for stacks, not a fixed 5 s.
  bool follows_timeout = false;
};

// Every collector, in bundle order (collectors/registry.cpp).
const std::vector<CollectorInfo>& all_collectors();

struct CollectResult {
  std::string host;
  std::string kernel;
  std::vector<Evidence> evidence;
  std::vector<std::pair<std::string, std::string>> raw;
  std::vector<Unchecked> unchecked;
};

// Runs every collector concurrently, each in a child with min(budget, timeout)
// (timeout itself for a collector that follows_timeout);
// returns within `timeout` (plus process start/stop overhead).
// `on_wait`: progress while collectors run (sys/probe_runner.hpp).
CollectResult collect_host(const CollectContext& ctx, std::chrono::milliseconds timeout,
                           const ProbeWaitCallback& on_wait = {});

// Hostname as the host (or the --root tree) knows it.
std::string read_hostname(const SysRoot& root);

nlohmann::json to_json(const CollectorOutput& out);
CollectorOutput collector_output_from_json(const nlohmann::json& j);

}  // namespace ccdiag
