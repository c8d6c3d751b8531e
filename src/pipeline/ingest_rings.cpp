#include "pipeline/ingest_rings.hpp"

#include <filesystem>

#include "analysis/perf/slow_timing.hpp"
#include "analysis/perf/topology.hpp"
#include "collectors/nccl/flight_recorder.hpp"
#include "collectors/perf/ring_timing.hpp"

namespace ccdiag {

void collect_bundle_rings(const Bundle& b, perf::TimingSet& out) {
  for (const auto& rel : b.raw_files) {
    if (rel.rfind("raw/nccl/fr/", 0) != 0) continue;
    auto s = nccl::read_flight_file((std::filesystem::path(b.dir) / rel).string());
    if (!s) continue;
    if (s->host.empty()) s->host = b.manifest.host;
    perf::add_ring_timings(*s, out);
  }
}

void append_ring_findings(const perf::TimingSet& rings, EvidenceSet& set) {
  if (rings.colls.empty() && rings.channels.empty()) return;
  auto a = perf::analyze_timings(rings, "profiler rings", perf::kRingClockTickMs);
  std::vector<perf::HostTopology> topo;
  for (const auto& h : set.hosts) topo.push_back(perf::topology_from_evidence(set.evidence, h));
  perf::attach_hardware(a, set, topo);
  // Only what is slow or late: a healthy ring says nothing in a diagnosis (its
  // notes belong to `perf --rings`, where the comparison is what was asked for).
  for (auto& f : perf::timing_findings(a)) set.findings.push_back(std::move(f));
}

}  // namespace ccdiag
