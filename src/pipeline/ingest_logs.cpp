// Log ingestion: every log file goes through the log analyser together, so
// the first failure and its cascades are found across ranks and hosts; its
// findings and evidence (nccl.topology, nccl.version, log.summary) join the set.
// The decision tree's log facts (analysis/tree/log_facts.hpp) read the same
// lines in a second streaming pass (stdin is read once into memory for both).
#include <fstream>
#include <iostream>
#include <sstream>

#include "analysis/tree/log_facts.hpp"
#include "collectors/logs/analyzer.hpp"
#include "pipeline/ingest.hpp"

namespace ccdiag {

Status ingest_logs(const std::vector<LogFile>& files, EvidenceSet& set) {
  if (files.empty()) return Ok{};
  auto analyzer = logs::LogAnalyzer::create(logs::builtin_signatures());
  if (!analyzer) return analyzer.error();
  EvidenceSet facts;
  for (const auto& f : files) {
    if (f.path == "-") {
      std::ostringstream ss;
      ss << std::cin.rdbuf();
      const std::string text = ss.str();
      (*analyzer)->add_text(text, f.shown, f.host);
      extract_log_facts(text, f.shown, f.host, facts);
    } else {
      if (auto st = (*analyzer)->add_file(logs::LogInput{f.path, f.shown, f.host}); !st)
        return make_error(st.error().message, f.shown, "check the path given to --log");
      std::ifstream in(f.path, std::ios::binary);
      if (!in) return make_error("cannot open log file", f.shown, "check the path given to --log");
      LogFactExtractor x(f.shown, f.host, facts);
      for (std::string line; std::getline(in, line);) x.line(line);
      x.finish();
    }
    if (!f.host.empty()) set.add_host(f.host);
  }
  logs::LogAnalysis a = (*analyzer)->finish();
  for (auto& e : a.evidence) {
    if (e.subject.host) set.add_host(*e.subject.host);
    set.evidence.push_back(std::move(e));
  }
  for (auto& fd : a.findings) set.findings.push_back(std::move(fd));
  set.append(std::move(facts));
  return Ok{};
}

}  // namespace ccdiag
