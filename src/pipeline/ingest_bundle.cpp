#include <filesystem>
#include <fstream>
#include <sstream>

#include "analysis/census/census.hpp"
#include "collectors/hw/hw_findings.hpp"
#include "collectors/gpu/gpu_findings.hpp"
#include "collectors/kernel/kernel_log.hpp"
#include "collectors/nccl/attach/attach_evidence.hpp"
#include "collectors/nccl/nccl_artifacts.hpp"
#include "collectors/logs/analyzer.hpp"
#include "pipeline/ingest.hpp"
#include "pipeline/ingest_fr.hpp"
#include "pipeline/ingest_rings.hpp"

namespace fs = std::filesystem;

namespace ccdiag {

namespace {

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

}  // namespace

Status ingest_bundle(const Bundle& b, EvidenceSet& all, std::vector<LogFile>& logs_out,
                     std::vector<fr::RankDump>* fr_out) {
  // One bundle at a time, so the hardware findings below see only this host.
  EvidenceSet set;
  std::vector<std::string> fr_files;
  nccl::NcclRawFiles nccl_files{
      .dir = b.dir, .input = b.input, .host = b.manifest.host, .time = b.manifest.time, .raw_files = {}};
  set.inputs.push_back(b.input);
  set.add_host(b.manifest.host);
  for (const auto& e : b.evidence) set.evidence.push_back(e);
  for (const auto& u : b.unchecked) set.unchecked.push_back(u);
  for (auto& f : gpu_findings(b.evidence)) set.findings.push_back(std::move(f));
  for (const auto& rel : b.raw_files) {
    const std::string path = (fs::path(b.dir) / rel).string();
    const std::string shown = b.manifest.host + ":" + rel;
    if (rel == "raw/kernel.log" || starts_with(rel, "raw/kernel/")) {
      // The bounded reader: regular files only, newest 8 MiB (bundle/bundle.hpp).
      auto text = read_bundle_raw_text(b, rel);
      if (!text) return text.error();
      auto parsed = parse_kernel_log(*text, shown, b.manifest.host);
      set.append(std::move(parsed.set));
    } else if (starts_with(rel, "raw/logs/")) {
      logs_out.push_back(LogFile{path, shown, b.manifest.host});
    } else if (starts_with(rel, "raw/fr/")) {
      fr_files.push_back(rel);
    } else if (starts_with(rel, "raw/nccl/")) {
      nccl_files.raw_files.push_back(rel);
    }
    // Other raw artefacts (raw/proc/...) are read by the layers that own
    // them; unknown files are kept for humans.
  }
  if (auto st = nccl::ingest_nccl_raw(nccl_files, set); !st) return st.error();
  add_hardware_findings(set);  // PCIe / RDMA / host-config evidence -> findings; GPU BDF -> index, rank
  if (!fr_files.empty()) {
    // Flight-recorder dumps: loaded now (a tarball's directory goes away),
    // analysed across all bundles by load_inputs, or here when called alone.
    std::vector<fr::RankDump> mine;
    if (auto st = load_bundle_fr_dumps(b, fr_files, fr_out ? *fr_out : mine); !st) return st.error();
    if (!fr_out)
      if (auto st = ingest_fr_dumps(std::move(mine), set); !st) return st.error();
  }
  all.append(std::move(set));
  return Ok{};
}

Result<EvidenceSet> load_inputs(const DiagnoseInputs& inputs) {
  EvidenceSet set;
  std::vector<LogFile> logs;
  std::vector<fr::RankDump> fr_dumps;  // from every bundle: one job's ranks span hosts
  perf::TimingSet rings;               // the profiler plugin's flight files of every bundle, likewise
  // Bundles are read one at a time; only their evidence stays in memory.
  for (const auto& path : inputs.bundles) {
    auto b = read_bundle(path);
    if (!b) return b.error();
    if (auto st = ingest_bundle(*b, set, logs, &fr_dumps); !st) return st.error();
    collect_bundle_rings(*b, rings);
    // Raw logs of a tarball live in its temporary directory: analyse them now,
    // before the directory goes away with the bundle.
    if (b->temp && !logs.empty()) {
      if (auto st = ingest_logs(logs, set); !st) return st.error();
      logs.clear();
    }
  }
  // Stack evidence of every bundle (all hosts) forms one census.
  append_census_findings(set);
  // NCCL state read out of ranks (nccl attach) joins across hosts by commHash.
  nccl::attach::append_attach_findings(set);
  if (auto st = ingest_fr_dumps(std::move(fr_dumps), set); !st) return st.error();
  // The stacks name no collective sequence number; the dumps do.
  attach_fr_sequence(set);
  // Slow link / late rank from the flight files' timings (perf --rings in a diagnosis).
  append_ring_findings(rings, set);
  // A directory given to --log means every log under it, as `ccdiag logs DIR` reads it.
  auto expanded = logs::expand_log_paths(inputs.logs);
  if (!expanded) return make_error(expanded.error().message, expanded.error().context, "check the path given to --log");
  for (const auto& in : *expanded) {
    logs.push_back(LogFile{in.path, in.shown, ""});
    set.inputs.push_back(in.shown);
  }
  if (!logs.empty())
    if (auto st = ingest_logs(logs, set); !st) return st.error();
  return set;
}

}  // namespace ccdiag
