// Ingest: turns inputs (bundles, log files, raw artefacts) into one
// EvidenceSet for the analysers. This is the only place that knows which raw
// artefact goes to which reader.
#pragma once

#include <string>
#include <vector>

#include "ccdiag/evidence_set.hpp"
#include "bundle/bundle.hpp"
#include "ccdiag/result.hpp"
#include "collectors/fr/dump.hpp"

namespace ccdiag {

struct LogFile {
  std::string path;   // file to open ("-" for stdin)
  std::string shown;  // name in provenance ("node3/raw/logs/rank5.log")
  std::string host;   // host it came from when known (bundle host), else empty
};

// All log files are analysed together: the first failure and its cascades
// are found across ranks and hosts. A file that cannot be opened is an input
// error (exit 2) naming the file.
Status ingest_logs(const std::vector<LogFile>& files, EvidenceSet& set);

// A bundle's evidence plus everything derived from its raw artefacts.
// Flight-recorder dumps (raw/fr/**) are appended to `fr_out` for a cross-bundle
// analysis when it is given, else analysed on their own into `set`.
Status ingest_bundle(const Bundle& bundle, EvidenceSet& set, std::vector<LogFile>& logs_out,
                     std::vector<fr::RankDump>* fr_out = nullptr);

struct DiagnoseInputs {
  std::vector<std::string> bundles;  // directories or tarballs
  std::vector<std::string> logs;     // --log files
};

// Reads every input; the first bad one stops with its one-line error.
Result<EvidenceSet> load_inputs(const DiagnoseInputs& inputs);

}  // namespace ccdiag
