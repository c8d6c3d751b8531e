// Log ingestion: every log file goes through the log analyser together, so
// the first failure and its cascades are found across ranks and hosts; its
// findings and evidence (nccl.topology, nccl.version, log.summary) join the set.
// The decision tree's log facts (analysis/tree/log_facts.hpp) see the same
// lines from the same read: the analyser hands each block it reads (gzip
// already inflated) to the fact extractor, so plain and .gz logs give the same
// facts and the same verdict (stdin is read once into memory for both).
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
      LogFactExtractor x(f.shown, f.host, facts);
      auto tap = [&x](std::string_view block) {
        while (!block.empty()) {
          const size_t nl = block.find('\n');
          x.line(block.substr(0, nl));
          block = nl == std::string_view::npos ? std::string_view{} : block.substr(nl + 1);
        }
      };
      if (auto st = (*analyzer)->add_file(logs::LogInput{f.path, f.shown, f.host}, tap); !st)
        return make_error(st.error().message, f.shown, "check the path given to --log");
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
