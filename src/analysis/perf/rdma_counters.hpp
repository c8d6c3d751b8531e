// A congested or erroring NIC among many, from the RDMA counters `ccdiag
// collect` samples twice per port (evidence rdma.counters, docs/probe.md;
// docs/perf.md "RDMA counters"). Per port: the rate of its congestion counters
// (port_xmit_wait: ticks with data to send and no credit; ECN/CNP counters on
// RoCE) over the sampling window. Ports are compared with each other, as the
// communicators are: a port is congested when its port_xmit_wait rate has a
// modified z > 3.5 against all ports read (MAD floored at 2 % of the median and
// at min_rate) AND is >= 1.5 x the median AND >= min_rate. The window of two
// samples seconds apart is the persistence: one packet burst is not a rate.
// Error counters (symbol_error, port_rcv_errors, ...) are judged per port by
// the rdma findings already; they are listed here as evidence only.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ccdiag/evidence.hpp"
#include "ccdiag/finding.hpp"

namespace ccdiag::perf {

struct RdmaCounterOptions {
  int min_ports = 4;
  double z_threshold = 3.5;
  double min_ratio = 1.5;
  double mad_floor = 0.02;
  double min_rate = 10000;   // port_xmit_wait per second below which a port counts as idle
};

struct PortRate {
  std::string host, device;
  int port = 0;
  double interval_s = 0;
  double xmit_wait_per_s = 0;
  std::map<std::string, int64_t> grown;   // congestion and error counters that grew in the window
  double z = 0;
  bool congested = false;
};

struct RdmaCounterAnalysis {
  std::vector<PortRate> ports;      // sampled twice
  int single_sample = 0;            // ports read once (no rate)
  std::vector<std::string> notes;
};

RdmaCounterAnalysis analyze_rdma_counters(const std::vector<Evidence>& evidence, const RdmaCounterOptions& opts = {});
std::vector<Finding> rdma_counter_findings(const RdmaCounterAnalysis& a);
nlohmann::json rdma_counter_json(const RdmaCounterAnalysis& a);

}  // namespace ccdiag::perf
