// Log ingestion. Kernel lines (Xid, fell off the bus) found in any log are
// decoded here; the NCCL / PyTorch signature catalogue plugs in beside them.
#include <fstream>
#include <iostream>
#include <sstream>

#include "analysis/tree/log_facts.hpp"
#include "collectors/kernel/kernel_log.hpp"
#include "pipeline/ingest.hpp"

namespace ccdiag {

Status ingest_logs(const std::vector<LogFile>& files, EvidenceSet& set) {
  for (const auto& f : files) {
    std::string text;
    if (f.path == "-") {
      std::ostringstream ss;
      ss << std::cin.rdbuf();
      text = ss.str();
    } else {
      std::ifstream in(f.path, std::ios::binary);
      if (!in) return make_error("cannot open log file", f.shown, "check the path given to --log");
      std::ostringstream ss;
      ss << in.rdbuf();
      text = ss.str();
    }
    auto parsed = parse_kernel_log(text, f.shown, f.host);
    for (auto& fd : parsed.set.findings) set.findings.push_back(std::move(fd));
    // The decision tree's structural facts and mechanism signals (log_facts.hpp).
    extract_log_facts(text, f.shown, f.host, set);
    set.add_host(f.host);
  }
  return Ok{};
}

}  // namespace ccdiag
