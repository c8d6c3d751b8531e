// Prometheus node_exporter textfile metrics from one host's evidence
// (reference: perf-and-fleet.md §8), so monitoring tracks degradation between
// incidents. Pure: builds the text; cli/prom.cpp writes it atomically.
//
// Rules followed: `ccdiag_` prefix, base units, `_total` for counters; the
// text format itself (HELP/TYPE, escaping, no timestamps) is report/prom_text.hpp,
// shared with `ccdiag perf --prom`. Label names match
// node_exporter (device, port) and dcgm-exporter (gpu, UUID, pci_bus_id) so
// PromQL can join; no name collides with theirs or NCCL Inspector's.
// A metric whose evidence is absent is not emitted (absent != zero).
#pragma once

#include <string>
#include <string_view>

#include "ccdiag/evidence_set.hpp"
#include "ccdiag/report.hpp"

namespace ccdiag {

struct PromContext {
  std::string mode = "bundle";   // "live" or "bundle"
  double run_timestamp_s = 0;    // end of the run, Unix seconds
  double run_duration_s = 0;
  std::vector<std::string> collectors;  // names from the manifest
};

std::string render_prom(const Report& report, const EvidenceSet& set, const PromContext& ctx);

}  // namespace ccdiag
