// Log ingestion: every log file goes through the log analyser together, so
// the first failure and its cascades are found across ranks and hosts; its
// findings and evidence (nccl.topology, nccl.version, log.summary) join the set.
#include "collectors/logs/analyzer.hpp"
#include "pipeline/ingest.hpp"

namespace ccdiag {

Status ingest_logs(const std::vector<LogFile>& files, EvidenceSet& set) {
  if (files.empty()) return Ok{};
  auto analyzer = logs::LogAnalyzer::create(logs::builtin_signatures());
  if (!analyzer) return analyzer.error();
  for (const auto& f : files) {
    if (auto st = (*analyzer)->add_file(logs::LogInput{f.path, f.shown, f.host}); !st)
      return make_error(st.error().message, f.shown, "check the path given to --log");
    if (!f.host.empty()) set.add_host(f.host);
  }
  logs::LogAnalysis a = (*analyzer)->finish();
  for (auto& e : a.evidence) {
    if (e.subject.host) set.add_host(*e.subject.host);
    set.evidence.push_back(std::move(e));
  }
  for (auto& fd : a.findings) set.findings.push_back(std::move(fd));
  return Ok{};
}

}  // namespace ccdiag
