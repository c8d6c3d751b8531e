// ccdiag analyze BUNDLE...|DIR : cross-host analysis of many bundles.
//
// Unlike `diagnose`, which refuses bad input, analyze is for a whole fleet
// where some hosts always fail to answer: a bad bundle, or a host listed with
// --hosts / in DIR/fleet.json that has no bundle, is listed under "hosts that
// did not answer" and lowers confidence, never stops the run.
//
// Memory is bounded: bundles are read one at a time; each is reduced to a
// compact HostSummary plus its evidence with large payloads trimmed
// (analysis/fleet/host_summary.hpp); its raw artefacts and any tarball
// extraction are released before the next one is read.
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <map>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "ccdiag/utf8.hpp"
#include "sys/untrusted_file.hpp"
#include "analysis/fleet/fleet_summary.hpp"
#include "analysis/fleet/never_joined.hpp"
#include "analysis/tree/decision_tree.hpp"
#include "bundle/bundle.hpp"
#include "cli/common.hpp"
#include "fleet/atomic_file.hpp"
#include "fleet/hostlist.hpp"
#include "pipeline/ingest.hpp"
#include "report/progress.hpp"
#include "report/html.hpp"
#include "report/render.hpp"
#include "report/render_fleet.hpp"

namespace fs = std::filesystem;

namespace ccdiag {

namespace {

struct AnalyzeOptions {
  std::vector<std::string> inputs;
  std::string hosts;      // --hosts / -w: hosts that should have answered
  std::string hostfile;   // --hostfile
  std::string html;       // --html FILE
  OutputOptions output;
  size_t max_findings = 200;
};

struct Candidate {
  std::string path;
  std::string host_hint;  // the directory or tarball name, used when it cannot be read
};

std::string host_from_name(const std::string& path) {
  std::string n = fs::path(path).filename().string();
  if (n.empty()) n = fs::path(path).parent_path().filename().string();
  for (const char* suf : {".tar.gz", ".tgz", ".tar"})
    if (n.size() > std::strlen(suf) && n.compare(n.size() - std::strlen(suf), std::strlen(suf), suf) == 0)
      n.resize(n.size() - std::strlen(suf));
  return n;
}

// DIR/fleet.json from `ccdiag fleet collect`: the hosts asked and why some failed.
struct FleetRecord {
  std::vector<std::string> hosts;
  std::map<std::string, std::string> failed;
};

std::optional<FleetRecord> read_fleet_record(const std::string& dir) {
  // Bounded like a bundle's JSON: size cap, regular file, depth limit.
  const std::string path = (fs::path(dir) / "fleet.json").string();
  if (!fs::exists(path)) return std::nullopt;
  auto text = read_untrusted(path, 64ULL << 20, path);
  if (!text) return std::nullopt;
  auto parsed = parse_untrusted_json(*text, path);
  if (!parsed || !parsed->is_object()) return std::nullopt;
  const nlohmann::json& j = *parsed;
  FleetRecord r;
  if (j.contains("hosts") && j["hosts"].is_array())
    for (const auto& h : j["hosts"])
      if (h.is_string()) r.hosts.push_back(h.get<std::string>());
  if (j.contains("failed") && j["failed"].is_array())
    for (const auto& f : j["failed"])
      if (f.is_object() && f.contains("host") && f["host"].is_string())
        r.failed[f["host"].get<std::string>()] = f.contains("reason") && f["reason"].is_string()
                                                      ? f["reason"].get<std::string>()
                                                      : std::string("did not answer");
  return r;
}

int run_analyze(const AnalyzeOptions& opts, CommandContext& ctx) {
  // 1. What to read, and which hosts should have answered.
  std::vector<Candidate> cands;
  std::vector<std::string> expected;
  std::map<std::string, std::string> known_failures;
  for (const auto& p : opts.inputs) {
    std::error_code ec;
    if (!fs::exists(p, ec)) return report_input_error(ctx, make_error("no such file or directory", p));
    if (fs::is_directory(p, ec) && !looks_like_bundle(p)) {
      std::vector<Candidate> found;
      for (const auto& e : fs::directory_iterator(p, ec)) {
        const std::string name = e.path().filename().string();
        if (name.empty() || name.front() == '.') continue;  // fleet's work files
        if (e.is_directory(ec) || looks_like_bundle(e.path().string()))
          found.push_back({e.path().string(), host_from_name(e.path().string())});
      }
      std::sort(found.begin(), found.end(), [](const Candidate& a, const Candidate& b) { return a.path < b.path; });
      if (auto rec = read_fleet_record(p)) {
        expected.insert(expected.end(), rec->hosts.begin(), rec->hosts.end());
        known_failures.insert(rec->failed.begin(), rec->failed.end());
      } else if (found.empty()) {
        return report_input_error(ctx, make_error("not a bundle and holds no bundles (no manifest.json)", p,
                                                  "pass bundles written by `ccdiag collect` or a `ccdiag fleet collect --out` directory"));
      }
      cands.insert(cands.end(), found.begin(), found.end());
    } else {
      cands.push_back({p, host_from_name(p)});
    }
  }
  if (!opts.hosts.empty()) {
    auto hs = expand_hostlist(opts.hosts);
    if (!hs) return report_input_error(ctx, make_error(hs.error().message, "--hosts " + hs.error().context));
    expected.insert(expected.end(), hs->begin(), hs->end());
  }
  if (!opts.hostfile.empty()) {
    std::ifstream in(opts.hostfile);
    if (!in) return report_input_error(ctx, make_error("cannot read host file", opts.hostfile));
    std::stringstream ss;
    ss << in.rdbuf();
    auto hs = expand_hostlist_lines(ss.str());
    if (!hs) return report_input_error(ctx, make_error(hs.error().message, opts.hostfile + ": " + hs.error().context));
    expected.insert(expected.end(), hs->begin(), hs->end());
  }
  if (cands.empty() && expected.empty())
    return report_input_error(ctx, make_error("no bundles given", "analyze", "pass bundles, a directory of bundles, or --hosts"));

  // 2. Stream the bundles: one in memory at a time.
  EvidenceSet fleet_set;
  FleetInput fleet;
  std::set<std::string> answered;
  ProgressLine progress(ctx.err, opts.output.format() != OutputFormat::json && cands.size() > 1);
  size_t done = 0;
  for (const auto& c : cands) {
    progress.show("analyze: " + progress_bar(done++, cands.size()) + " bundles");
    auto b = read_bundle(c.path);
    if (!b) {
      fleet.add_unanswered(c.host_hint, HostStatus::bad_bundle, b.error().one_line(), c.path);
      continue;
    }
    EvidenceSet host_set;
    std::vector<LogFile> logs;
    Status st = ingest_bundle(*b, host_set, logs);
    if (st && !logs.empty()) st = ingest_logs(logs, host_set);
    if (!st) {
      fleet.add_unanswered(b->manifest.host, HostStatus::bad_bundle, st.error().one_line(), c.path);
      continue;
    }
    answered.insert(b->manifest.host);
    fleet.add(summarize_host(b->manifest.host, c.path, b->manifest.raw, host_set));
    compact_host_set(host_set);
    fleet_set.append(std::move(host_set));
  }  // each Bundle (and its extracted tarball) is released here
  progress.show("analyze: " + progress_bar(done, cands.size()) + " bundles", true);
  progress.clear();

  for (const auto& h : fleet.hosts)
    if (h.status == HostStatus::bad_bundle) answered.insert(h.host);  // listed once, as a bad bundle
  std::set<std::string> listed;
  for (const auto& h : expected) {
    if (answered.count(h) || !listed.insert(h).second) continue;
    auto f = known_failures.find(h);
    fleet.add_unanswered(h, HostStatus::no_bundle, f != known_failures.end() ? f->second : "no bundle: the host did not answer");
  }
  for (const auto& h : fleet.hosts)
    if (h.status != HostStatus::ok) fleet_set.unchecked.push_back(Unchecked{"host " + h.host, UncheckedState::unavailable, h.error});

  FleetSummary summary = summarize_fleet(fleet);
  if (summary.hosts_answered == 0) {
    for (const auto* h : summary.not_answered) ctx.err << "ccdiag: " << h->host << ": " << h->error << '\n';
    return report_input_error(ctx, make_error("no readable bundle among " + std::to_string(summary.hosts_total) + " host(s)",
                                              "analyze"));
  }

  // 3. One verdict for the fleet, from the same decision tree as diagnose.
  Report report = decide(std::move(fleet_set));
  mark_never_joined(summary, report.findings);  // before the findings are cut to --max-findings
  report.hosts.clear();
  for (const auto& h : fleet.hosts)
    if (h.status == HostStatus::ok) report.hosts.push_back(h.host);
  if (report.findings.size() > opts.max_findings) {
    // The worst first: a 4,096-host report lists what matters, the host table the rest.
    std::stable_sort(report.findings.begin(), report.findings.end(), [](const Finding& a, const Finding& b) {
      auto rank = [](const Finding& f) { return (f.role == FindingRole::primary ? 8 : 0) + static_cast<int>(f.severity); };
      return rank(a) > rank(b);
    });
    report.findings.resize(opts.max_findings);
  }

  if (!opts.html.empty()) {
    std::ostringstream html;
    render_html(report, summary, html);
    if (auto st = write_file_atomically(opts.html, html.str()); !st) return report_input_error(ctx, st.error());
  }
  switch (opts.output.format()) {
    case OutputFormat::json: {
      nlohmann::json j = report;
      j["fleet"] = fleet_to_json(summary);
      ctx.out << json_text(std::move(j)) << '\n';
      break;
    }
    case OutputFormat::markdown:
      render_markdown(report, ctx.out);
      render_fleet_markdown(summary, ctx.out);
      break;
    case OutputFormat::text:
      render_text(report, ctx.out, TextStyle{want_color(1), ctx.global.verbose});
      render_fleet_text(summary, ctx.out, ctx.global.verbose);
      break;
  }
  if (report.verdict.root_cause != kNoProblemFound) return kExitProblem;
  return (report.unchecked.empty() && summary.not_answered.empty()) ? kExitHealthy : kExitPartial;
}

}  // namespace

void register_analyze(CLI::App& app, CommandContext& ctx) {
  auto opts = std::make_shared<AnalyzeOptions>();
  auto* sub = app.add_subcommand("analyze", "Cross-host analysis of many bundles (one per host), with bounded memory");
  sub->add_option("inputs", opts->inputs, "Bundles (directories or tarballs) or directories of bundles")->required();
  sub->add_option("--hosts,-w", opts->hosts, "Hosts that should have answered (host list: node[001-128],gpu7)");
  sub->add_option("--hostfile", opts->hostfile, "File with one host list per line");
  sub->add_option("--html", opts->html, "Also write a self-contained HTML report to FILE");
  sub->add_option("--max-findings", opts->max_findings, "Findings listed in the report (worst first; default 200)")
      ->check(CLI::Range(1, 1000000));
  add_output_flags(sub, opts->output);
  sub->footer(
      "Examples:\n"
      "  ccdiag analyze bundles/                        # a directory of per-host bundles\n"
      "  ccdiag analyze bundles/ --hosts 'gpu[001-512]' --html report.html\n"
      "  ccdiag analyze node*.tar.gz --json\n"
      "Exit: 0 no problem, 1 problem found, 2 bad arguments or no readable bundle,\n"
      "      3 partial (hosts did not answer or probes did not run), 4 internal error");
  sub->callback([opts, &ctx] { ctx.exit_code = run_analyze(*opts, ctx); });
}

}  // namespace ccdiag
