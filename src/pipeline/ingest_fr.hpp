// Flight-recorder dumps found in bundles (raw/fr/**) -> FR findings in the
// EvidenceSet. Dumps of one job are often spread over several bundles (one
// per host), so they are loaded per bundle (compact form; a tarball's
// temporary directory may go away) and analysed together once all are in.
#pragma once

#include <string>
#include <vector>

#include "ccdiag/evidence_set.hpp"
#include "bundle/bundle.hpp"
#include "ccdiag/result.hpp"
#include "collectors/fr/dump.hpp"
#include "analysis/cross_rank/fr_analysis.hpp"

namespace ccdiag {

// Loads the raw/fr/ dumps of one bundle (paths relative to the bundle dir).
// A dump that cannot be read or decoded is an input error naming the file.
Status load_bundle_fr_dumps(const Bundle& b, const std::vector<std::string>& rel_paths,
                            std::vector<fr::RankDump>& out);

// What the analysis checked, for the tree: "fr.analysis" (the framework
// layer was checked, so a clean result may read as healthy) only when at
// least two ranks' dumps held collectives to compare; otherwise an unchecked
// entry saying why nothing was compared (dumps written before any collective
// ran, or one rank's only), so empty dumps never read as health.
void add_fr_check(const fr::FrAnalysis& analysis, size_t dumps, const std::string& source, EvidenceSet& set);

// Cross-rank analysis of every dump loaded; findings go into `set`.
// Two dumps for one rank, or dumps of two jobs, are an input error.
Status ingest_fr_dumps(std::vector<fr::RankDump> dumps, EvidenceSet& set);

}  // namespace ccdiag
