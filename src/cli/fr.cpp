// ccdiag fr DIR|FILE... [--prefix P] [--json|--markdown]: cross-rank analysis
// of PyTorch flight-recorder dumps (docs/fr.md, docs/schema/fr.schema.json).
//
// Exit: 0 no problem, 1 problem found, 2 bad input (nothing usable, mixed
// jobs, unknown file), 3 some dumps could not be read and the rest was
// analysed (each bad file is named on stderr).
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ccdiag/utf8.hpp"
#include "analysis/cross_rank/fr_analysis.hpp"
#include "analysis/cross_rank/fr_findings.hpp"
#include "analysis/tree/decision_tree.hpp"
#include "cli/common.hpp"
#include "collectors/fr/loader.hpp"
#include "pipeline/ingest_fr.hpp"
#include "report/progress.hpp"
#include "report/render.hpp"

namespace ccdiag {

namespace {

struct FrOptions {
  std::vector<std::string> inputs;
  std::string prefix;
  unsigned threads = 0;
  OutputOptions output;
};

std::string rank_list(const std::vector<int>& r) {
  std::string s;
  for (size_t i = 0; i < r.size(); ++i) {
    if (i == 24) {
      s += fmt::format(", ... ({} ranks)", r.size());
      break;
    }
    if (i) s += ", ";
    s += std::to_string(r[i]);
  }
  return s;
}

void render_text_fr(const fr::FrAnalysis& a, const Report& report, std::ostream& out) {
  out << fmt::format("Flight recorder: {} rank dumps, {} entries, {} process groups, {} collectives checked\n\n", a.ranks,
                     a.entries, a.groups, a.collectives_checked);
  if (a.findings.empty()) out << "No cross-rank problem found in the dumps.\n";
  for (const auto& f : a.findings) {
    out << fmt::format("[{}] {}{}\n", f.kind, f.caused_by ? "(consequence) " : "", f.summary);
    if (!f.ranks.empty()) out << "    culprit ranks: " << rank_list(f.ranks) << "\n";
    if (!f.stack.empty()) {
      out << fmt::format("    call site (rank {}):\n", f.stack_rank);
      size_t start = 0, lines = 0;
      while (start < f.stack.size() && lines < 8) {
        const size_t nl = f.stack.find('\n', start);
        out << "      " << f.stack.substr(start, nl == std::string::npos ? std::string::npos : nl - start) << "\n";
        ++lines;
        if (nl == std::string::npos) break;
        start = nl + 1;
      }
    }
    if (f.details.contains("tail_seqs") && f.details["tail_seqs"].get<int64_t>() > 0)
      out << fmt::format("    {} later seq(s) of this group are consequences and not reported\n",
                         f.details["tail_seqs"].get<int64_t>());
  }
  for (const auto& n : a.notes) out << "note: " << n << "\n";
  const auto& v = report.verdict;
  out << "\nVerdict: " << v.root_cause;
  if (v.layer) out << " (" << to_string(*v.layer) << ")";
  out << fmt::format(", confidence {:.2f}", v.confidence);
  if (!v.culprit.empty()) out << ", culprit " << v.culprit.describe();
  out << "\n  " << v.summary << "\n";
  for (const auto& s : report.next_steps) {
    out << "  next: " << s.action;
    if (!s.command.empty()) out << ": " << s.command;
    out << "\n";
  }
  for (const auto& u : report.unchecked) out << "  unchecked: " << u.what << ": " << to_string(u.state) << ": " << u.reason << "\n";
}

void render_markdown_fr(const fr::FrAnalysis& a, const Report& report, std::ostream& out) {
  const auto& v = report.verdict;
  out << "## Flight-recorder analysis\n\n";
  out << fmt::format("**Verdict:** `{}`{} — confidence {:.2f}", v.root_cause,
                     v.layer ? fmt::format(" ({})", to_string(*v.layer)) : std::string(), v.confidence);
  if (!v.culprit.empty()) out << ", culprit " << v.culprit.describe();
  out << "\n\n" << v.summary << "\n\n";
  out << fmt::format("{} rank dumps, {} entries, {} process groups, {} collectives checked.\n\n", a.ranks, a.entries,
                     a.groups, a.collectives_checked);
  if (!a.findings.empty()) {
    out << "| kind | process group | seq | culprit ranks | summary |\n|---|---|---|---|---|\n";
    for (const auto& f : a.findings)
      out << fmt::format("| {}{} | {} | {} | {} | {} |\n", f.kind, f.caused_by ? " (consequence)" : "", f.process_group,
                         f.seq ? std::to_string(*f.seq) : "", rank_list(f.ranks), f.summary);
    for (const auto& f : a.findings)
      if (!f.stack.empty() && !f.caused_by) {
        out << fmt::format("\nCall site of `{}` (rank {}):\n\n```\n{}\n```\n", f.kind, f.stack_rank, f.stack);
        break;
      }
  }
  if (!report.next_steps.empty()) {
    out << "\n**Next steps**\n\n";
    for (const auto& s : report.next_steps)
      out << "- " << s.action << (s.command.empty() ? "" : ": `" + s.command + "`") << "\n";
  }
}

int run_fr(const FrOptions& opts, CommandContext& ctx) {
  fr::LoadOptions lo{opts.prefix, opts.threads};
  auto files = fr::discover_dumps(opts.inputs, lo);
  if (!files) return report_input_error(ctx, files.error());
  if (files->empty())
    return report_input_error(
        ctx, make_error(opts.prefix.empty() ? "no flight-recorder dumps found (names must end in the rank, e.g. nccl_trace_rank_3)"
                                            : fmt::format("no file name starts with --prefix \"{}\"", opts.prefix),
                        opts.inputs.front()));
  ProgressLine progress(ctx.err, opts.output.format() != OutputFormat::json && files->size() > 1);
  progress.show(fmt::format("fr: reading {} dumps ...", files->size()), true);
  auto loaded = fr::load_dumps(*files, lo);
  progress.clear();
  for (const auto& e : loaded.bad) ctx.err << "ccdiag: error: " << e.one_line() << '\n';
  if (loaded.dumps.empty()) return kExitUsage;
  if (auto e = fr::check_same_job(loaded.dumps)) return report_input_error(ctx, *e);

  const auto analysis = fr::analyze_fr(loaded.dumps);
  EvidenceSet set;
  for (const auto& f : *files) set.inputs.push_back(f.shown);
  for (const auto& d : loaded.dumps) set.add_host(d.host);
  auto findings = fr::to_findings(analysis, loaded.dumps);
  set.findings = findings;
  // A clean analysis may be reported healthy only when it compared something.
  add_fr_check(analysis, loaded.dumps.size(), files->front().shown, set);
  for (const auto& e : loaded.bad) set.unchecked.push_back(Unchecked{e.context, UncheckedState::error, e.message});
  Report report = decide(std::move(set));
  // Dumps of a CPU backend (gloo) only: no GPU, NVLink or RDMA step is a
  // next step for them (a catalogue cause's generic steps may name one).
  const bool cpu_only = std::all_of(loaded.dumps.begin(), loaded.dumps.end(),
                                    [](const fr::RankDump& d) { return !d.backend.empty() && !fr::device_backend(d.backend); });
  if (cpu_only)
    std::erase_if(report.next_steps, [](const NextStep& n) {
      for (const char* w : {"GPU", "gpu", "nvidia-smi", "NVLink", "RDMA", "_perf", "ibstat", "NCCL_"})
        if (n.action.find(w) != std::string::npos || n.command.find(w) != std::string::npos) return true;
      return false;
    });

  switch (opts.output.format()) {
    case OutputFormat::json: {
      nlohmann::json j = report;
      nlohmann::json arr = nlohmann::json::array();
      for (size_t i = 0; i < analysis.findings.size(); ++i) arr.push_back(fr::fr_finding_json(analysis.findings[i], findings[i]));
      j["findings"] = std::move(arr);
      j["fr"] = {{"ranks", analysis.ranks},
                 {"entries", analysis.entries},
                 {"process_groups", analysis.groups},
                 {"collectives_checked", analysis.collectives_checked},
                 {"notes", analysis.notes}};
      ctx.out << json_text(std::move(j)) << '\n';
      break;
    }
    case OutputFormat::markdown: render_markdown_fr(analysis, report, ctx.out); break;
    case OutputFormat::text: render_text_fr(analysis, report, ctx.out); break;
  }
  if (!loaded.bad.empty()) return kExitPartial;
  const bool problem = std::any_of(analysis.findings.begin(), analysis.findings.end(),
                                   [](const fr::FrFinding& f) { return f.severity == "error" || f.severity == "critical"; });
  if (!problem && report.verdict.root_cause == kInsufficientEvidence) return kExitPartial;  // nothing to compare
  return problem || report.verdict.root_cause != kNoProblemFound ? kExitProblem : kExitHealthy;
}

}  // namespace

void register_fr(CLI::App& app, CommandContext& ctx) {
  auto opts = std::make_shared<FrOptions>();
  auto* sub = app.add_subcommand("fr", "Cross-rank analysis of PyTorch flight-recorder dumps");
  sub->add_option("inputs", opts->inputs, "Dump files or directories of dumps (pickle or JSON)")->required();
  sub->add_option("--prefix", opts->prefix, "Only read files whose name starts with this (e.g. nccl_trace_rank_)");
  sub->add_option("--threads", opts->threads, "Files decoded in parallel (default: all cores)");
  add_output_flags(sub, opts->output);
  sub->footer(
      "Examples:\n"
      "  ccdiag fr ~/.cache/torch/                          # every <prefix><rank> file below\n"
      "  ccdiag fr dumps/ --prefix nccl_trace_rank_ --json\n"
      "  ccdiag fr node*/comm_lib_trace_rank_* --markdown\n"
      "Exit: 0 no problem, 1 problem found, 2 bad input, 3 some dumps unreadable (rest analysed)");
  sub->callback([opts, &ctx] { ctx.exit_code = run_fr(*opts, ctx); });
}

}  // namespace ccdiag
