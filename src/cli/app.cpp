// The whole command line, defined once: main parses with it, and the
// build-time docs generator (tools/docgen) walks it to write the man pages and
// shell completions, so neither can drift from what the binary accepts.
#include "cli/app.hpp"

#include "ccdiag/version.hpp"
#include "sys/run_deadline.hpp"

namespace ccdiag {

void build_app(CLI::App& app, CommandContext& ctx) {
  app.set_version_flag("--version", version_string());
  app.require_subcommand(1);
  app.fallthrough();

  app.add_option("--root", ctx.global.root, "Read /proc, /sys and /dev under DIR (a captured or fixture tree)");
  app.add_option("--kernel-log", ctx.global.kernel_log, "Read the kernel log from FILE instead of /dev/kmsg");
  app.add_option("--timeout", ctx.global.timeout_s, "Bound on live probing, in seconds (default 10)")
      ->check(CLI::Range(0.1, 3600.0));
  bind_run_timeout(&ctx.global.timeout_s);  // read when a scan asks, after parsing
  app.add_flag("-v,--verbose", ctx.global.verbose, "Show every finding");

  register_diagnose(app, ctx);
  register_collect(app, ctx);
  register_info(app, ctx);
  register_logs(app, ctx);
  register_nccl(app, ctx);
  register_ranks(app, ctx);
  register_stacks(app, ctx);
  register_probe(app, ctx);
  register_probe_gpu(app.get_subcommand("probe"), ctx);
  register_analyze(app, ctx);
  register_fleet(app, ctx);
  register_prom(app, ctx);
  register_fr(app, ctx);
  register_perf(app, ctx);
  register_isolate(app, ctx);

  app.footer(
      "Examples:\n"
      "  ccdiag diagnose                          # what is wrong on this host, now\n"
      "  ccdiag diagnose node*/ --json            # post-mortem over bundles of many hosts\n"
      "  ccdiag diagnose --log rank*.log          # logs only\n"
      "  ccdiag collect                           # bundle into a new private directory\n"
      "\n"
      "Exit codes: 0 nothing found, 1 problem found, 2 usage or input error,\n"
      "            3 partial (some probes could not run), 4 internal error.");
}

}  // namespace ccdiag
