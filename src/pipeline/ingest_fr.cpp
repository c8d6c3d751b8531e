#include "pipeline/ingest_fr.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "analysis/cross_rank/fr_analysis.hpp"
#include "analysis/cross_rank/fr_findings.hpp"
#include "collectors/fr/loader.hpp"
#include "collectors/fr/progress.hpp"

namespace fs = std::filesystem;

namespace ccdiag {

Status load_bundle_fr_dumps(const Bundle& b, const std::vector<std::string>& rel_paths, std::vector<fr::RankDump>& out) {
  std::vector<fr::DumpFile> files;
  for (const auto& rel : rel_paths) {
    const std::string base = fs::path(rel).filename().string();
    if (base.size() > 5 && base.substr(base.size() - 5) == ".pipe") continue;
    auto rank = fr::rank_from_name(base);
    if (!rank) continue;  // not a dump (a README, a log kept beside the dumps)
    files.push_back(fr::DumpFile{(fs::path(b.dir) / rel).string(), b.input + "/" + rel, *rank, b.manifest.host});
  }
  auto loaded = fr::load_dumps(files, {});
  if (!loaded.bad.empty()) return loaded.bad.front();
  for (auto& d : loaded.dumps) out.push_back(std::move(d));
  return Ok{};
}

Status ingest_fr_dumps(std::vector<fr::RankDump> dumps, EvidenceSet& set) {
  if (dumps.empty()) return Ok{};
  std::stable_sort(dumps.begin(), dumps.end(), [](const fr::RankDump& a, const fr::RankDump& b) { return a.rank < b.rank; });
  for (size_t i = 1; i < dumps.size(); ++i)
    if (dumps[i].rank == dumps[i - 1].rank)
      return make_error(fmt::format("two dumps for rank {} (also {})", dumps[i].rank, dumps[i - 1].file), dumps[i].file,
                        "dumps from two jobs or two dump rounds are mixed");
  if (auto e = fr::check_same_job(dumps)) return *e;
  for (const auto& d : dumps)
    for (auto& ev : fr::rank_progress(d)) set.evidence.push_back(std::move(ev));
  const auto analysis = fr::analyze_fr(dumps);
  for (auto& f : fr::to_findings(analysis, dumps)) set.findings.push_back(std::move(f));
  add_fr_check(analysis, dumps.size(), dumps.front().file, set);
  return Ok{};
}

void add_fr_check(const fr::FrAnalysis& analysis, size_t dumps, const std::string& source, EvidenceSet& set) {
  if (dumps >= 2 && analysis.collectives_checked > 0) {
    // The recorder saw the ranks' collectives: a check of the framework layer.
    Evidence checked;
    checked.kind = "fr.analysis";
    checked.provenance.source = source;
    checked.data = {{"ranks", dumps}, {"collectives_checked", analysis.collectives_checked}};
    set.evidence.push_back(std::move(checked));
    return;
  }
  set.unchecked.push_back(Unchecked{
      "flight recorder", UncheckedState::unavailable,
      dumps < 2 ? fmt::format("only {} rank's dump: no other rank to compare it with", dumps)
                : fmt::format("{} dumps hold {} entries and no collective to compare (written before any collective ran)",
                              dumps, analysis.entries)});
}

}  // namespace ccdiag
