// ccdiag prom --out FILE [BUNDLE] : node_exporter textfile metrics from this
// host (collected live, bounded by --timeout) or from a bundle, written
// atomically (temporary file + rename) so a scrape never reads half a file.
#include <chrono>
#include <cmath>
#include <ctime>
#include <ostream>

#include "analysis/tree/decision_tree.hpp"
#include "bundle/bundle.hpp"
#include "cli/common.hpp"
#include "cli/live_bundle.hpp"
#include "fleet/atomic_file.hpp"
#include "fleet/prom.hpp"
#include "pipeline/ingest.hpp"
#include "report/prom_text.hpp"

namespace ccdiag {

namespace {

struct PromOptions {
  std::string out;
  std::string bundle;
};

int run_prom(const PromOptions& o, CommandContext& ctx) {
  const auto start = std::chrono::steady_clock::now();
  if (!prom_file_name_ok(o.out))
    return report_input_error(ctx, make_error("must end in .prom (node_exporter reads only *.prom files)", o.out));
  std::optional<LiveBundle> live;
  std::string path = o.bundle;
  if (path.empty()) {
    auto lb = collect_live_bundle(ctx.global);
    if (!lb) return report_input_error(ctx, lb.error());
    live = std::move(*lb);
    path = live->dir();
  }
  auto b = read_bundle(path);
  if (!b) return report_input_error(ctx, b.error());
  EvidenceSet set;
  std::vector<LogFile> logs;
  Status st = ingest_bundle(*b, set, logs);
  if (st && !logs.empty()) st = ingest_logs(logs, set);
  if (!st) return report_input_error(ctx, st.error());
  const Report report = decide(set);
  PromContext pc;
  pc.mode = live ? "live" : "bundle";
  pc.run_timestamp_s = static_cast<double>(std::time(nullptr));
  pc.run_duration_s = std::round(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() * 1000) / 1000;
  if (auto c = b->manifest.raw.find("collectors"); c != b->manifest.raw.end() && c->is_array())
    for (const auto& n : *c)
      if (n.is_string()) pc.collectors.push_back(n.get<std::string>());
  if (auto w = write_file_atomically(o.out, render_prom(report, set, pc)); !w) return report_input_error(ctx, w.error());
  ctx.err << "ccdiag: metrics written to " << o.out << '\n';
  return kExitHealthy;
}

}  // namespace

void register_prom(CLI::App& app, CommandContext& ctx) {
  auto opts = std::make_shared<PromOptions>();
  auto* sub = app.add_subcommand("prom", "Write node_exporter textfile metrics (Xid, NVLink, PCIe, IB, throttling, verdict)");
  sub->add_option("--out", opts->out, "The .prom file to write (atomically), e.g. /var/lib/prometheus/node-exporter/ccdiag.prom")
      ->required();
  sub->add_option("bundle", opts->bundle, "Read this bundle instead of collecting this host live");
  sub->footer(
      "Examples:\n"
      "  ccdiag prom --out /var/lib/prometheus/node-exporter/ccdiag.prom     # from cron or a systemd timer\n"
      "  ccdiag prom --out /tmp/ccdiag.prom bundles/gpu-node-017\n"
      "Exit: 0 written, 2 bad input or cannot write");
  sub->callback([opts, &ctx] { ctx.exit_code = run_prom(*opts, ctx); });
}

}  // namespace ccdiag
