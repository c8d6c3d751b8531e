// ccdiag perf RESULTS... [--bundle DIR]... [--baseline FILE] [--save-baseline FILE]
// [--prom FILE] [--html FILE] [--json|--markdown]: nccl-tests / perftest results judged against what the
// hardware in the bundles allows and against a stored baseline (docs/perf.md).
//
// Exit: 0 every judged run ok, 1 a problem (data corruption, below expected,
// regression, test failure, or a hardware verdict from the bundles), 2 bad
// input (nothing parsable, bad bundle or baseline), 3 some inputs unreadable.
#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ccdiag/utf8.hpp"
#include "analysis/perf/perf_analysis.hpp"
#include "analysis/perf/rdma_counters.hpp"
#include "analysis/perf/slow_comm.hpp"
#include "collectors/fr/loader.hpp"
#include "analysis/perf/topology.hpp"
#include "analysis/tree/decision_tree.hpp"
#include "ccdiag/version.hpp"
#include "cli/common.hpp"
#include "cli/perf_timing.hpp"
#include "collectors/perf/perf_results.hpp"
#include "fleet/atomic_file.hpp"
#include "pipeline/ingest.hpp"
#include "report/perf_render.hpp"
#include "report/prom_text.hpp"
#include "report/render.hpp"

namespace ccdiag {

namespace {

namespace fs = std::filesystem;
using namespace ccdiag::perf;

struct PerfOptions {
  std::vector<std::string> inputs;
  std::vector<std::string> bundles;
  std::string baseline;
  std::string save_baseline;
  std::vector<std::string> fr;
  std::vector<std::string> rings;  // --rings: the profiler plugin's flight files (snapshots)
  std::vector<std::string> logs;   // --log: NCCL INFO logs with timestamps (NCCL_DEBUG_SUBSYS=INIT,COLL)
  std::string prom;  // --prom FILE: node_exporter textfile metrics of the runs
  std::string html;  // --html FILE: one self-contained page with a chart per run
  OutputOptions output;
};

constexpr uintmax_t kMaxResultBytes = 64u << 20;

Result<std::string> read_text(const std::string& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) return make_error("cannot read: " + ec.message(), path);
  if (size > kMaxResultBytes) return make_error("larger than 64 MiB: not a benchmark output", path);
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error("cannot open", path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Files named on the command line, and the regular files directly inside named directories.
Result<std::vector<std::string>> expand_inputs(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (const auto& a : args) {
    std::error_code ec;
    if (fs::is_directory(a, ec)) {
      std::vector<std::string> files;
      for (const auto& e : fs::directory_iterator(a, ec))
        if (e.is_regular_file()) files.push_back(e.path().string());
      std::sort(files.begin(), files.end());
      if (files.empty()) return make_error("directory has no files", a);
      out.insert(out.end(), files.begin(), files.end());
    } else if (fs::exists(a, ec)) {
      out.push_back(a);
    } else {
      return make_error("no such file or directory", a);
    }
  }
  return out;
}

std::string fmt_size(int64_t b) {
  if (b >= (1LL << 30)) return fmt::format("{:g}G", static_cast<double>(b) / (1LL << 30));
  if (b >= (1LL << 20)) return fmt::format("{:g}M", static_cast<double>(b) / (1LL << 20));
  if (b >= (1LL << 10)) return fmt::format("{:g}K", static_cast<double>(b) / (1LL << 10));
  return std::to_string(b);
}

std::string opt(const std::optional<double>& v, const char* f = "{:.2f}") {
  return v ? fmt::format(fmt::runtime(f), *v) : std::string("-");
}

void render_runs_text(const std::vector<RunAnalysis>& runs, std::ostream& out) {
  for (const auto& a : runs) {
    const PerfRun& r = *a.run;
    out << fmt::format("{} — {} ({}{}{})\n", r.file, r.collective.empty() ? "unknown test" : r.collective, r.format,
                       r.version.empty() ? "" : " " + r.version,
                       r.tool == Tool::perftest ? ", " + r.nic
                                                : fmt::format(", {} ranks on {} host(s)", r.ranks(), r.hosts().size()));
    if (a.wrong_total > 0 || r.out_of_bounds.value_or(0) > 0)
      out << fmt::format("  DATA CORRUPTION: {} wrong elements, out-of-bounds values {}\n", a.wrong_total, r.out_of_bounds.value_or(0));
    for (const auto& b : r.failures) out << "  failure: " << b.text << "\n";
    if (r.tool == Tool::nccl_tests) {
      out << fmt::format("  {:>8} {:>10} {:>9} {:>9} {:>7}\n", "size", "time(us)", "algbw", "busbw", "#wrong");
      for (const auto& row : r.rows)
        out << fmt::format("  {:>8} {:>10} {:>9} {:>9} {:>7}\n", fmt_size(row.size_bytes), opt(row.time_us()),
                           opt(row.oop.algbw_gbs ? row.oop.algbw_gbs : row.ip.algbw_gbs), opt(row.busbw()),
                           row.oop.wrong ? std::to_string(*row.oop.wrong) : std::string("-"));
    } else {
      for (const auto& row : r.pt_rows)
        out << fmt::format("  {:>8} iters {:>10}  BW avg {} Gb/s  peak {}  t_typical {} us\n", fmt_size(row.size_bytes), row.iterations,
                           opt(row.bw_avg_gbps), opt(row.bw_peak_gbps), opt(row.t_typical_us ? row.t_typical_us : row.t_avg_us));
    }
    const char* unit = r.tool == Tool::nccl_tests ? "GB/s busbw" : "Gb/s";
    if (a.plateau)
      out << fmt::format("  plateau: {:.2f} {} (median of {} size(s) up to {})\n", *a.plateau, unit, a.plateau_points, fmt_size(a.plateau_size));
    if (a.latency_floor_us) out << fmt::format("  latency floor: {:.2f} us at {}\n", *a.latency_floor_us, fmt_size(a.latency_floor_size));
    if (a.expected) {
      out << fmt::format("  expected: {:.1f} {} = {}\n", a.expected->nominal, a.expected->unit, a.expected->formula);
      if (a.expected->present + 1e-6 < a.expected->nominal)
        out << fmt::format("  as trained now: {:.1f} = {}\n", a.expected->present, a.expected->present_formula);
      for (const auto& c : a.expected->caveats) out << "  caveat: " << c << "\n";
    }
    out << fmt::format("  verdict: {} — {}\n", a.verdict.status, a.verdict.why);
    for (const auto& n : a.notes) out << "  note: " << n << "\n";
    for (const auto& n : r.notes) out << "  note: " << n << "\n";
    out << "\n";
  }
}

void render_runs_markdown(const std::vector<RunAnalysis>& runs, std::ostream& out) {
  out << "## Collective performance\n\n| file | test | ranks/hosts | plateau | expected | verdict | why |\n|---|---|---|---|---|---|---|\n";
  for (const auto& a : runs) {
    const PerfRun& r = *a.run;
    out << fmt::format("| {} | {} | {} | {} | {} | {}{} | {} |\n", r.file, r.collective,
                       r.tool == Tool::perftest ? r.nic : fmt::format("{}/{}", r.ranks(), r.hosts().size()), opt(a.plateau),
                       a.expected ? fmt::format("{:.1f} {}", a.expected->nominal, a.expected->unit) : "-", a.verdict.status,
                       a.wrong_total > 0 || r.out_of_bounds.value_or(0) > 0 ? " **DATA CORRUPTION**" : "", a.verdict.why);
  }
  out << "\n";
}

int run_perf(const PerfOptions& opts, CommandContext& ctx) {
  if (opts.inputs.empty() && opts.fr.empty() && opts.rings.empty() && opts.logs.empty())
    return report_input_error(ctx, make_error("nothing to read", "perf", "give RESULTS files, --fr DUMPS, --rings FILES or --log FILE"));
  // Checked before any work: a misnamed metrics file would be written and never scraped.
  if (!opts.prom.empty() && !prom_file_name_ok(opts.prom))
    return report_input_error(ctx, make_error("must end in .prom (node_exporter reads only *.prom files)", opts.prom));
  auto files = opts.inputs.empty() ? Result<std::vector<std::string>>(std::vector<std::string>{}) : expand_inputs(opts.inputs);
  if (!files) return report_input_error(ctx, files.error());
  std::vector<PerfRun> runs;
  std::vector<Error> bad;
  for (const auto& f : *files) {
    auto text = read_text(f);
    if (!text) {
      bad.push_back(text.error());
      continue;
    }
    auto r = parse_results(*text, f);
    if (!r) {
      bad.push_back(r.error());
      continue;
    }
    runs.push_back(std::move(*r));
  }
  // Flight-recorder dumps of a running or finished job: slow link vs arrival skew.
  std::vector<fr::RankDump> dumps;
  std::optional<SlowCommAnalysis> slow;
  if (!opts.fr.empty()) {
    fr::LoadOptions lo{"", 0};
    auto df = fr::discover_dumps(opts.fr, lo);
    if (!df) return report_input_error(ctx, df.error());
    if (df->empty()) return report_input_error(ctx, make_error("no flight-recorder dumps found", opts.fr.front()));
    auto loaded = fr::load_dumps(*df, lo);
    bad.insert(bad.end(), loaded.bad.begin(), loaded.bad.end());
    dumps = std::move(loaded.dumps);
    slow = analyze_slow_comms(dumps);
  }
  // Per-rank timings of a running or finished job: the profiler rings, NCCL INFO logs.
  std::vector<TimingAnalysis> timing;
  if (!opts.rings.empty()) {
    auto t = load_ring_timings(opts.rings, bad);
    if (!t) return report_input_error(ctx, t.error());
    timing.push_back(std::move(*t));
  }
  if (!opts.logs.empty()) {
    auto t = load_log_timings(opts.logs, bad);
    if (!t) {
      for (const auto& e : bad) ctx.err << "ccdiag: error: " << e.one_line() << '\n';
      return report_input_error(ctx, t.error());
    }
    timing.push_back(std::move(*t));
  }
  for (const auto& e : bad) ctx.err << "ccdiag: error: " << e.one_line() << '\n';
  if (runs.empty() && dumps.empty() && timing.empty()) return kExitUsage;

  EvidenceSet set;
  if (!opts.bundles.empty()) {
    DiagnoseInputs in;
    in.bundles = opts.bundles;
    auto loaded = load_inputs(in);
    if (!loaded) return report_input_error(ctx, loaded.error());
    set = std::move(*loaded);
  }
  std::vector<HostTopology> topo;
  for (const auto& h : set.hosts) topo.push_back(topology_from_evidence(set.evidence, h));
  // The bundles' RDMA counters, sampled twice by `collect`: a port congested among all ports read.
  std::optional<RdmaCounterAnalysis> rdma;
  if (!opts.bundles.empty()) rdma = analyze_rdma_counters(set.evidence);

  std::optional<Baseline> baseline;
  if (!opts.baseline.empty()) {
    auto text = read_text(opts.baseline);
    if (!text) return report_input_error(ctx, text.error());
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(*text);
    } catch (const std::exception&) {
      return report_input_error(ctx, make_error("not JSON", opts.baseline, "create one with --save-baseline FILE"));
    }
    auto b = parse_baseline(j, opts.baseline);
    if (!b) return report_input_error(ctx, b.error());
    baseline = std::move(*b);
  }

  std::vector<RunAnalysis> analyses;
  for (const auto& r : runs) {
    analyses.push_back(measure(r));
    judge(analyses.back(), topo, baseline ? &*baseline : nullptr);
  }
  if (baseline && !topo.empty()) {
    std::string fp;
    for (const auto& t : topo) fp += (fp.empty() ? "" : ",") + t.host + ":" + t.fingerprint();
    if (!baseline->fingerprint.empty() && baseline->fingerprint != fp)
      set.unchecked.push_back(Unchecked{"baseline " + opts.baseline, UncheckedState::unknown,
                                        "topology fingerprint differs from the bundles' (" + baseline->fingerprint + " vs " + fp +
                                            "): compared anyway, read regressions with care"});
  }

  auto findings = to_findings(analyses);
  if (slow) {
    auto sf = slow_comm_findings(*slow, dumps);
    findings.insert(findings.end(), sf.begin(), sf.end());
    for (const auto& d : dumps)
      if (!d.host.empty()) set.add_host(d.host);
  }
  for (auto& t : timing) {
    attach_hardware(t, set, topo);
    auto tf = timing_findings(t);
    findings.insert(findings.end(), tf.begin(), tf.end());
    for (const auto& [key, proc] : t.skew.procs)
      if (!proc.host.empty()) set.add_host(proc.host);
    for (const auto& n : t.notes) set.unchecked.push_back(Unchecked{"slow rank / link from " + t.source, UncheckedState::unavailable, n});
    // Links compared (communicators or channels): the transport layer was checked.
    const bool compared = std::any_of(t.skew.comms.begin(), t.skew.comms.end(), [](const CommWire& c) { return c.compared; }) ||
                          std::any_of(t.channels.channels.begin(), t.channels.channels.end(), [](const ChannelStat& c) { return c.ops >= 5; });
    if (compared) {
      Evidence checked;
      checked.kind = "perf.fr_links";
      checked.provenance.source = t.source;
      checked.data = {{"communicators", t.skew.comms.size()}, {"channels", t.channels.channels.size()}};
      set.evidence.push_back(std::move(checked));
    }
  }
  if (rdma) {
    auto rf = rdma_counter_findings(*rdma);
    findings.insert(findings.end(), rf.begin(), rf.end());
    for (const auto& n : rdma->notes) set.unchecked.push_back(Unchecked{"RDMA port congestion", UncheckedState::unavailable, n});
  }
  findings.insert(findings.end(), set.findings.begin(), set.findings.end());
  set.findings = std::move(findings);
  for (const auto& f : runs) set.inputs.push_back(f.file);
  for (const auto& e : bad) set.unchecked.push_back(Unchecked{e.context, UncheckedState::error, e.message});
  // A run with nothing to compare with is not "healthy": say what was not judged.
  if (slow)
    for (const auto& n : slow->notes) set.unchecked.push_back(Unchecked{"links from flight-recorder dumps", UncheckedState::unavailable, n});
  for (const auto& a : analyses) {
    if (a.verdict.status == "unjudged") {
      set.unchecked.push_back(Unchecked{"bandwidth of " + a.run->file, UncheckedState::unavailable, a.verdict.why});
      continue;
    }
    // A run judged against the topology or a baseline checked the data path:
    // a clean one may be reported healthy (decision_tree.cpp needs a check).
    Evidence checked;
    checked.kind = "perf.run";
    checked.provenance.source = a.run->file;
    checked.data = {{"status", a.verdict.status}};
    set.evidence.push_back(std::move(checked));
  }
  if (slow && slow->comms.size() >= 2) {
    Evidence checked;
    checked.kind = "perf.fr_links";
    checked.provenance.source = "flight-recorder dumps";
    checked.data = {{"communicators", slow->comms.size()}};
    set.evidence.push_back(std::move(checked));
  }
  Report report = decide(std::move(set));
  report.ccdiag_version = version_string();

  if (!opts.save_baseline.empty()) {
    std::optional<Baseline> prior;
    std::error_code ec;
    if (fs::exists(opts.save_baseline, ec)) {
      auto text = read_text(opts.save_baseline);
      nlohmann::json j;
      bool ok = text.ok();
      if (ok) try {
          j = nlohmann::json::parse(*text);
        } catch (const std::exception&) {
          ok = false;
        }
      auto b = ok ? parse_baseline(j, opts.save_baseline) : Result<Baseline>(make_error("x"));
      if (!b)
        return report_input_error(ctx, make_error("exists and is not a ccdiag baseline; refusing to overwrite", opts.save_baseline));
      prior = std::move(*b);
    }
    char when[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    const auto j = baseline_json(analyses, topo, prior ? &*prior : nullptr, when);
    if (auto st = write_file_atomically(opts.save_baseline, json_text(j) + "\n"); !st) return report_input_error(ctx, st.error());
  }

  if (!opts.prom.empty() || !opts.html.empty()) {
    std::vector<RunSummary> summaries;
    for (const auto& a : analyses) summaries.push_back(summarize(a));
    if (!opts.prom.empty()) {
      const auto text = render_perf_prom(summaries, static_cast<double>(std::time(nullptr)));
      if (auto st = write_file_atomically(opts.prom, text); !st) return report_input_error(ctx, st.error());
    }
    if (!opts.html.empty()) {
      std::ostringstream html;
      render_perf_html(summaries, report, html);
      if (auto st = write_file_atomically(opts.html, html.str()); !st) return report_input_error(ctx, st.error());
    }
  }

  switch (opts.output.format()) {
    case OutputFormat::json: {
      nlohmann::json j = report;
      nlohmann::json res = nlohmann::json::array();
      for (const auto& a : analyses) res.push_back(run_json(a));
      nlohmann::json tj = nlohmann::json::array();
      for (const auto& t : topo)
        tj.push_back({{"host", t.host}, {"gpus", t.gpus.size()}, {"nics", t.nics.size()}, {"gdr", t.gdr ? nlohmann::json(*t.gdr) : nlohmann::json()},
                      {"nvlink_known", t.nvlink_known}, {"missing", t.missing}, {"fingerprint", t.fingerprint()}});
      j["perf"] = {{"results", res}, {"topology", tj}};
      if (slow) j["perf"]["fr"] = slow_comm_json(*slow);
      for (const auto& t : timing) j["perf"][t.source == "profiler rings" ? "rings" : "logs"] = timing_json(t);
      if (rdma) j["perf"]["rdma_counters"] = rdma_counter_json(*rdma);
      if (!opts.save_baseline.empty()) j["perf"]["saved_baseline"] = opts.save_baseline;
      ctx.out << json_text(std::move(j)) << '\n';
      break;
    }
    case OutputFormat::markdown:
      render_runs_markdown(analyses, ctx.out);
      render_markdown(report, ctx.out);
      break;
    case OutputFormat::text:
      render_runs_text(analyses, ctx.out);
      if (slow) {
        ctx.out << fmt::format("Flight recorder: {} rank dumps, {} collectives measured, {} communicators\n", dumps.size(),
                               slow->collectives, slow->comms.size());
        for (const auto& c : slow->comms)
          ctx.out << fmt::format("  pg {:<12} {:>3} ranks  wire {:>9.3f} ms  z {:>5.1f}{}\n", c.pg, c.ranks.size(), c.wire_ms, c.z,
                                 c.slow ? "  SLOW" : "");
        for (const auto& n : slow->notes) ctx.out << "  note: " << n << "\n";
        ctx.out << "\n";
      }
      for (const auto& t : timing) render_timing_text(t, ctx.out);
      render_text(report, ctx.out, TextStyle{want_color(1), ctx.global.verbose});
      break;
  }
  const bool problem = std::any_of(analyses.begin(), analyses.end(), [](const RunAnalysis& a) {
    return a.verdict.status == "below_expected" || a.verdict.status == "regression" || a.wrong_total > 0 ||
           a.run->out_of_bounds.value_or(0) > 0 || !a.run->failures.empty();
  }) || (slow && (!slow->culprits.empty() || std::any_of(slow->comms.begin(), slow->comms.end(), [](const CommStats& c) { return c.slow; }))) ||
                       std::any_of(timing.begin(), timing.end(), [](const TimingAnalysis& t) { return timing_problem(t); }) ||
                       (rdma && std::any_of(rdma->ports.begin(), rdma->ports.end(), [](const PortRate& p) { return p.congested; }));
  // insufficient_evidence is not a problem found: what could not be judged is
  // listed under unchecked, and the exit code says "partial" only for bad inputs.
  const bool cause_named =
      report.verdict.root_cause != kNoProblemFound && report.verdict.root_cause != kInsufficientEvidence;
  if (problem || cause_named) return kExitProblem;
  if (!bad.empty()) return kExitPartial;
  return kExitHealthy;
}

}  // namespace

void register_perf(CLI::App& app, CommandContext& ctx) {
  auto opts = std::make_shared<PerfOptions>();
  auto* sub = app.add_subcommand("perf", "nccl-tests / perftest results against the hardware's bandwidth and a baseline");
  sub->add_option("results", opts->inputs, "nccl-tests output (text or -J JSON), perftest output, or directories of them");
  sub->add_option("--fr", opts->fr, "Flight-recorder dumps (files or directories): slow link / NIC vs late-arriving rank");
  sub->add_option("--rings", opts->rings,
                  "Flight files of the ccdiag profiler plugin (ccdiag-nccl-*.fr, or directories of snapshots): slow link / NIC / rank");
  sub->add_option("--log", opts->logs,
                  "NCCL INFO logs with timestamps (NCCL_DEBUG_SUBSYS=INIT,COLL): ranks and hosts that arrive late");
  sub->add_option("--bundle", opts->bundles, "Bundle (dir or tarball) of a host the test ran on: its topology bounds the expected bandwidth");
  sub->add_option("--baseline", opts->baseline, "Compare with this baseline (written by --save-baseline)");
  sub->add_option("--save-baseline", opts->save_baseline, "Add these runs' plateaus to this baseline file (created if absent)");
  sub->add_option("--prom", opts->prom, "Also write the runs' metrics (plateau, expected, ratio, latency, #wrong, verdict) to this .prom file");
  sub->add_option("--html", opts->html, "Also write a self-contained HTML page with a busbw-vs-size chart per run to FILE");
  add_output_flags(sub, opts->output);
  sub->footer(
      "Examples:\n"
      "  ccdiag perf all_reduce_perf.txt --bundle gpu017-bundle/\n"
      "  ccdiag perf results/ --bundle gpu017-bundle/ --prom /var/lib/prometheus/node-exporter/ccdiag-perf.prom --html perf.html\n"
      "  ccdiag perf results/ --baseline perf-baseline.json --json\n"
      "  ccdiag perf ib_write_bw.txt --bundle gpu017-bundle/ --save-baseline perf-baseline.json\n"
      "  ccdiag perf --rings snapshots/ --log rank-logs/ --bundle gpu017-bundle/\n"
      "Exit: 0 ok, 1 problem (corruption, below expected, regression, test failure, a slow link,\n"
      "      communicator or channel, a late rank or host), 2 bad input\n"
      "      (or --prom not ending in .prom, or an output file that cannot be written),\n"
      "      3 some inputs unreadable (the rest judged)");
  sub->callback([opts, &ctx] { ctx.exit_code = run_perf(*opts, ctx); });
}

}  // namespace ccdiag
