// ccdiag isolate HOSTS [--results DIR] [--rails N] [--mode pairs|bisect] ...:
// prints the next round of a group-testing plan that finds the slow host or
// NIC (docs/isolate.md). Stateless: each call replays the plan from the result
// files in --results DIR (one nccl-tests output per test, named <test id>.txt).
//
// Exit: 0 a round to run (or not reproduced), 1 culprit named, 2 bad input,
// 3 inconclusive (the plan cannot narrow further).
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ccdiag/utf8.hpp"
#include "analysis/isolate/planner.hpp"
#include "analysis/perf/perf_analysis.hpp"
#include "cli/common.hpp"
#include "collectors/perf/perf_results.hpp"
#include "fleet/hostlist.hpp"

namespace ccdiag {

namespace {

namespace fs = std::filesystem;

struct IsolateOptions {
  std::string hosts, good, nics, results;
  isolate::Options plan;
  OutputOptions output;
};

// A test passes when its busbw plateau reaches the floor; a result that names a
// test failure, has no table or cannot be read is a failed test (a crash or a
// timeout is a failure of that host set).
std::optional<bool> read_outcome(const std::string& dir, const isolate::Test& t, double floor, std::vector<std::string>& log) {
  for (const char* ext : {".txt", ".json", ".log"}) {
    const std::string path = dir + "/" + t.id + ext;
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) continue;
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    auto run = perf::parse_results(ss.str(), path);
    if (!run) {
      log.push_back(fmt::format("{}: fail ({})", t.id, run.error().message));
      return false;
    }
    const auto a = perf::measure(*run);
    const bool pass = a.plateau && *a.plateau >= floor && run->failures.empty() && a.wrong_total == 0;
    log.push_back(fmt::format("{}: {} (plateau {} GB/s, floor {:g})", t.id, pass ? "pass" : "fail",
                              a.plateau ? fmt::format("{:.1f}", *a.plateau) : "none", floor));
    return pass;
  }
  return std::nullopt;
}

int run_isolate(IsolateOptions& o, CommandContext& ctx) {
  auto hosts = expand_hostlist(o.hosts);
  if (!hosts) return report_input_error(ctx, hosts.error());
  for (const auto& h : *hosts)
    if (!is_safe_host_name(h)) return report_input_error(ctx, make_error("unsafe host name '" + h + "'", "HOSTS"));
  if (hosts->size() < 2) return report_input_error(ctx, make_error("at least two hosts are needed", "HOSTS"));
  o.plan.hosts = *hosts;
  if (!o.good.empty()) {
    auto g = expand_hostlist(o.good);
    if (!g) return report_input_error(ctx, g.error());
    o.plan.good = *g;
  }
  if (!o.nics.empty()) {
    std::stringstream ss(o.nics);
    std::string n;
    while (std::getline(ss, n, ','))
      if (!n.empty()) o.plan.nics.push_back(n);
  }
  if (o.plan.mode != "pairs" && o.plan.mode != "bisect")
    return report_input_error(ctx, make_error("unknown --mode '" + o.plan.mode + "'", "--mode", "pairs or bisect"));
  if (o.plan.launcher != "srun" && o.plan.launcher != "mpirun")
    return report_input_error(ctx, make_error("unknown --launcher '" + o.plan.launcher + "'", "--launcher", "srun or mpirun"));
  std::vector<std::string> log;
  if (!o.results.empty()) {
    std::error_code ec;
    if (!fs::is_directory(o.results, ec)) return report_input_error(ctx, make_error("not a directory", o.results));
    o.plan.results_dir = o.results;
  }
  const double floor = o.plan.floor_gbs;
  const std::string dir = o.results;
  const isolate::Plan plan = isolate::advance(o.plan, [&](const isolate::Test& t) -> std::optional<bool> {
    if (dir.empty()) return std::nullopt;
    return read_outcome(dir, t, floor, log);
  });
  const auto& c = plan.conclusion;
  if (o.output.format() == OutputFormat::json) {
    nlohmann::json rounds = nlohmann::json::array();
    for (const auto& r : plan.rounds) {
      nlohmann::json tests = nlohmann::json::array();
      for (size_t i = 0; i < r.tests.size(); ++i) {
        const auto& t = r.tests[i];
        const auto oc = i < r.outcome.size() ? r.outcome[i] : std::nullopt;
        tests.push_back({{"id", t.id}, {"hosts", t.hosts}, {"rail", t.rail}, {"command", isolate::command_for(o.plan, t)},
                         {"outcome", oc ? (*oc ? "pass" : "fail") : "pending"}});
      }
      rounds.push_back({{"number", r.number}, {"name", r.name}, {"purpose", r.purpose}, {"tests", tests}});
    }
    nlohmann::json j = {{"hosts", o.plan.hosts.size()},
                        {"mode", o.plan.mode},
                        {"rails", o.plan.rails},
                        {"floor_gbs", o.plan.floor_gbs},
                        {"rounds", rounds},
                        {"decisions", plan.decisions},
                        {"results_read", log},
                        {"round_bound", 2 * isolate::ceil_log2(o.plan.hosts.size()) + 2},
                        {"conclusion", {{"kind", c.kind}, {"hosts", c.hosts}, {"rail", c.rail}, {"summary", c.summary}}}};
    ctx.out << json_text(std::move(j)) << '\n';
  } else {
    const bool md = o.output.format() == OutputFormat::markdown;
    ctx.out << (md ? "## Isolation plan\n\n" : "")
            << fmt::format("{} hosts, {} rails, mode {}, pass floor {:g} GB/s busbw per rail\n", o.plan.hosts.size(), o.plan.rails,
                           o.plan.mode, o.plan.floor_gbs);
    for (const auto& d : plan.decisions) ctx.out << (md ? "- " : "  ") << d << "\n";
    if (c.kind == "pending") {
      const auto& r = plan.rounds.back();
      ctx.out << fmt::format("\n{}Round {} ({}): {}\n", md ? "### " : "", r.number, r.name, r.purpose);
      ctx.out << fmt::format("{}mkdir -p {}\n", md ? "```sh\n" : "", o.plan.results_dir);
      for (const auto& t : r.tests) ctx.out << isolate::command_for(o.plan, t) << " &\n";
      ctx.out << "wait\n" << (md ? "```\n" : "");
      ctx.out << fmt::format("\nThen: ccdiag isolate '{}' --results {}{}\n", o.hosts, o.plan.results_dir,
                             o.plan.mode == "pairs" ? "" : " --mode " + o.plan.mode);
    } else {
      ctx.out << fmt::format("\n{}Conclusion: {}\n  {}\n", md ? "**" : "", c.kind + (md ? "**" : ""), c.summary);
      ctx.out << fmt::format("  rounds run: {} (bound 2*ceil(log2 n)+2 = {})\n", plan.rounds.size(),
                             2 * isolate::ceil_log2(o.plan.hosts.size()) + 2);
    }
  }
  if (c.kind == "culprit_host" || c.kind == "culprit_nic" || c.kind == "culprit_link" || c.kind == "several") return kExitProblem;
  if (c.kind == "inconclusive") return kExitPartial;
  return kExitHealthy;
}

}  // namespace

void register_isolate(CLI::App& app, CommandContext& ctx) {
  auto o = std::make_shared<IsolateOptions>();
  auto* sub = app.add_subcommand("isolate", "Plan the fewest nccl-tests runs that find the slow host or NIC among HOSTS");
  sub->add_option("hosts", o->hosts, "Suspect hosts, host-list syntax (gpu[001-064])")->required();
  sub->add_option("--results", o->results, "Directory with the result of each test run so far (<test id>.txt)");
  sub->add_option("--good", o->good, "Known-good hosts to pair suspects with");
  sub->add_option("--rails", o->plan.rails, "GPU/NIC rails per host (default 8)")->check(CLI::Range(1, 64));
  sub->add_option("--nics", o->nics, "NIC of each rail, comma-separated (default mlx5_0,mlx5_1,...)");
  sub->add_option("--mode", o->plan.mode, "pairs (default: 3 rounds, many concurrent tests) or bisect (log2 n rounds, 2 tests each)");
  sub->add_option("--launcher", o->plan.launcher, "srun (default) or mpirun");
  sub->add_option("--floor", o->plan.floor_gbs, "Pass floor, GB/s busbw per rail (default 43: one NDR NIC)")->check(CLI::Range(0.001, 10000.0));
  sub->add_option("--binary", o->plan.binary, "nccl-tests binary (default all_reduce_perf; all_reduce_perf_mpi in NGC images)");
  sub->add_option("--size", o->plan.size, "Message size of every test (default 4G)");
  sub->add_option("--test-timeout", o->plan.test_timeout_s, "nccl-tests -T seconds (default 180)")->check(CLI::Range(10, 3600));
  add_output_flags(sub, o->output);
  sub->footer(
      "Examples:\n"
      "  ccdiag isolate 'gpu[001-064]'                          # round 1 commands\n"
      "  ccdiag isolate 'gpu[001-064]' --results isolate-results  # the next round, or the culprit\n"
      "  ccdiag isolate 'gpu[001-016]' --mode bisect --launcher mpirun --nics mlx5_0,mlx5_3,mlx5_4,mlx5_5\n"
      "Exit: 0 next round printed (or not reproduced), 1 culprit named, 2 bad input, 3 inconclusive");
  sub->callback([o, &ctx] { ctx.exit_code = run_isolate(*o, ctx); });
}

}  // namespace ccdiag
