// ccdiag ranks : the training ranks on this host (or a --root tree), from /proc
// (docs/ranks.md). Environment is allowlisted and credential-like values are
// redacted before anything is printed.
#include <ostream>

#include <fmt/format.h>

#include "ccdiag/utf8.hpp"
#include "cli/common.hpp"
#include "collectors/collector.hpp"
#include "collectors/proc/rank_discovery.hpp"

namespace ccdiag {

namespace {

struct RanksOptions {
  OutputOptions output;
};

std::string opt_int(const std::optional<int>& v) { return v ? std::to_string(*v) : "-"; }

int run_ranks(const RanksOptions& opts, CommandContext& ctx) {
  const SysRoot root = ctx.global.sysroot();
  if (!root.exists("/proc"))
    return report_input_error(ctx, make_error("no /proc in this tree", root.path("/proc"), "--root must hold a proc/ directory"));
  const auto d = discover_ranks(root);
  const std::string host = read_hostname(root);
  if (opts.output.json) {
    nlohmann::json ranks = nlohmann::json::array();
    for (const auto& r : d.ranks) ranks.push_back(to_json(r));
    nlohmann::json j{{"schema_version", 1},
                     {"host", host},
                     {"ranks", ranks},
                     {"processes_scanned", d.processes_scanned},
                     {"unreadable", d.unreadable}};
    ctx.out << json_text(std::move(j)) << '\n';
  } else {
    if (d.ranks.empty()) {
      ctx.out << "no training ranks found on " << host << " (" << d.processes_scanned << " processes scanned)\n";
    } else {
      ctx.out << fmt::format("{:>8} {:>5} {:>5} {:>5} {:<6} {:>4} {:>7} {:<10} {:<12} {}\n", "PID", "RANK", "LOCAL",
                             "WORLD", "GPU", "ST", "THREADS", "NCCL", "LAUNCHER", "COMM");
      for (const auto& r : d.ranks) {
        std::string gpus;
        for (int g : r.gpus) gpus += (gpus.empty() ? "" : ",") + std::to_string(g);
        ctx.out << fmt::format("{:>8} {:>5} {:>5} {:>5} {:<6} {:>4} {:>7} {:<10} {:<12} {}\n", r.pid, opt_int(r.rank),
                               opt_int(r.local_rank), opt_int(r.world_size), gpus.empty() ? "-" : gpus,
                               std::string(1, r.state), r.threads,
                               r.nccl_version ? *r.nccl_version : (r.nccl_path.empty() ? "-" : "?"),
                               r.launcher.empty() ? "-" : r.launcher, r.comm);
        if (r.dead()) {
          const auto j = to_json(r);
          ctx.out << "         dead rank: "
                  << (j.contains("signal") ? "killed by " + j["signal"].get<std::string>()
                      : j.contains("exit_code") ? "exited with code " + j["exit_code"].dump()
                                                : std::string("exited"))
                  << (r.rank_inferred ? " (rank inferred from its siblings)" : "") << "\n";
        }
        for (const auto& w : r.workers)
          ctx.out << fmt::format("         worker {} ({}, {}) of rank {}\n", w.pid, w.comm, std::string(1, w.state),
                                 opt_int(r.rank));
      }
    }
    if (d.unreadable)
      ctx.err << "ccdiag: " << d.unreadable
              << " process(es) could not be read (environ/maps need root or CAP_SYS_PTRACE)\n";
  }
  return d.unreadable ? kExitPartial : kExitHealthy;
}

}  // namespace

void register_ranks(CLI::App& app, CommandContext& ctx) {
  auto opts = std::make_shared<RanksOptions>();
  auto* sub = app.add_subcommand("ranks", "Training ranks on this host: rank, GPU, NCCL version, launcher");
  add_output_flags(sub, opts->output, false);
  sub->footer(
      "Examples:\n"
      "  ccdiag ranks\n"
      "  ccdiag ranks --json --root tests/fixtures/sysroots/ranks-torchrun-4gpu\n"
      "Exit: 0 listed, 2 bad --root, 3 some processes could not be read (permissions)");
  sub->callback([opts, &ctx] { ctx.exit_code = run_ranks(*opts, ctx); });
}

}  // namespace ccdiag
