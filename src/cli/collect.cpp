// ccdiag collect --out DIR : this host's evidence as a bundle.
#include <ostream>

#include "cli/common.hpp"
#include "cli/live_bundle.hpp"

namespace ccdiag {

namespace {

struct CollectOptions {
  std::string out;
  std::vector<std::string> logs;
};

int run_collect(const CollectOptions& opts, CommandContext& ctx) {
  auto lb = collect_live_bundle(ctx.global, opts.out, opts.logs);
  if (!lb) return report_input_error(ctx, lb.error());
  ctx.err << "ccdiag: bundle written to " << opts.out;
  if (lb->unchecked) ctx.err << " (" << lb->unchecked << " probe(s) could not run; see evidence.json unchecked)";
  ctx.err << '\n';
  return lb->unchecked ? kExitPartial : kExitHealthy;
}

}  // namespace

void register_collect(CLI::App& app, CommandContext& ctx) {
  auto opts = std::make_shared<CollectOptions>();
  auto* sub = app.add_subcommand("collect", "Gather this host's evidence into a bundle directory");
  sub->add_option("--out", opts->out, "Bundle directory to write")->required();
  sub->add_option("--log", opts->logs, "A log file to include under raw/logs/ (repeatable)");
  sub->footer(
      "Examples:\n"
      "  ccdiag collect --out /tmp/ccdiag-$(hostname)\n"
      "  ccdiag collect --out b --kernel-log /var/log/kern.log --log train.log\n"
      "Exit: 0 complete, 2 bad input, 3 partial (some probes timed out or could not run)");
  sub->callback([opts, &ctx] { ctx.exit_code = run_collect(*opts, ctx); });
}

}  // namespace ccdiag
