// ccdiag probe pcie|rdma|kernel|config : one hardware-path probe of this host
// (or of a --root tree), its evidence, the findings derived from it and a
// verdict over them. The same collectors run inside `collect`/`diagnose`.
#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <ostream>

#include "ccdiag/utf8.hpp"
#include "analysis/tree/decision_tree.hpp"
#include "cli/common.hpp"
#include "collectors/config/config_collector.hpp"
#include "collectors/hw/hw_findings.hpp"
#include "collectors/kernel/kernel_log.hpp"
#include "collectors/kernel/kernel_log_collector.hpp"
#include "collectors/kernel/kernel_log_window.hpp"
#include "collectors/pcie/pcie_collector.hpp"
#include "collectors/rdma/rdma_collector.hpp"
#include "ccdiag/version.hpp"
#include "report/render.hpp"
#include "sys/probe_runner.hpp"

namespace ccdiag {

namespace {

struct ProbeOptions {
  std::string what;
  OutputOptions output;
  double interval_s = 1.0;
  std::string since;
};

void print_evidence_text(const EvidenceSet& set, std::ostream& out) {
  out << "\nEvidence (" << set.evidence.size() << " items):\n";
  for (const auto& e : set.evidence) {
    std::string who = e.subject.gpu ? "gpu " + *e.subject.gpu
                      : e.subject.nic ? *e.subject.nic + (e.subject.port ? "/" + std::to_string(*e.subject.port) : "")
                      : e.subject.pid ? "pid " + std::to_string(*e.subject.pid)
                                      : "";
    std::string line;
    const auto& d = e.data;
    if (!e.availability.is_ok()) {
      line = std::string(to_string(e.availability.state)) + ": " + e.availability.reason;
    } else if (e.kind == "pcie.link") {
      const auto path = d.value("path", nlohmann::json::array());
      if (!path.empty()) {
        const auto& h = path[0];
        line = fmt::format("{} x{}/x{} {}/{}", d.value("role", ""), h.value("current_link_width", 0),
                           h.value("max_link_width", 0), h.value("current_link_speed_raw", "?"),
                           h.value("max_link_speed_raw", "?"));
        if (d.contains("gpu_index")) line += fmt::format(", index {}", d["gpu_index"].get<int>());
        if (d.contains("nearest_nic")) line += ", nearest NIC " + d["nearest_nic"].value("nic", "") + " (" +
                                               d["nearest_nic"].value("level", "") + ")";
        line += fmt::format(", {} hops to root port {}", path.size(), d.value("root_port", "?"));
      }
    } else if (e.kind == "pcie.acs") {
      line = d.contains("acs_ctl_text") ? "ACSCtl: " + d.value("acs_ctl_text", "")
                                        : (d.value("acs_capability", true) ? "" : "no ACS capability");
    } else if (e.kind == "rdma.port") {
      line = fmt::format("{} / {} / {} / {}", d.value("state_raw", "?"), d.value("phys_state_raw", "?"),
                         d.value("rate", "?"), d.value("link_layer", "?"));
    } else if (e.kind == "rdma.counters") {
      size_t grown = 0;
      for (const char* g : {"counters", "hw_counters"}) {
        const nlohmann::json group = d.value(g, nlohmann::json::object());  // items() must not outlive it
        for (const auto& [k, v] : group.items())
          if (v.value("delta", int64_t{0}) > 0) ++grown;
      }
      line = fmt::format("{} counters changed over {:g} s", grown, d.value("interval_s", 0.0));
    } else if (e.kind == "net.netdev") {
      line = fmt::format("{} mtu {} carrier_changes {}", d.value("operstate", "?"), d.value("mtu", 0),
                         d.value("carrier_changes", int64_t{0}));
    } else if (e.kind == "rdma.qp") {
      line = fmt::format("{} QPs {}", d.value("count", 0), d.value("by_state", nlohmann::json::object()).dump());
    } else {
      std::string s = d.dump();
      line = s.size() > 160 ? s.substr(0, 157) + "..." : s;
    }
    out << fmt::format("  {:<16} {:<22} {}\n", e.kind, who, line);
  }
}

int run_probe(const ProbeOptions& opts, CommandContext& ctx) {
  CollectContext cc;
  cc.root = ctx.global.sysroot();
  cc.kernel_log_file = ctx.global.kernel_log_file();
  cc.host = read_hostname(cc.root);
  if (!cc.root.is_live() && !cc.root.exists("/"))
    return report_input_error(ctx, make_error("no such directory", ctx.global.root, "--root takes a captured or fixture tree"));

  if (auto st = check_kernel_log_option(ctx.global); !st) return report_input_error(ctx, st.error());
  KernelLogOptions kopts;
  if (!opts.since.empty()) {
    const auto since = parse_since(opts.since, static_cast<int64_t>(std::time(nullptr)));
    if (!since)
      return report_input_error(ctx, make_error("bad --since value '" + opts.since + "'", "--since",
                                                "use 10m, 2h, 1d, @EPOCH or 2026-11-30T05:00:00Z"));
    kopts.since_epoch_s = *since;
  }
  RdmaProbeOptions ropts;
  ropts.interval = std::chrono::milliseconds(static_cast<int64_t>(opts.interval_s * 1000));

  std::function<CollectorOutput()> collect;
  if (opts.what == "pcie") collect = [&] { return collect_pcie(cc); };
  else if (opts.what == "config") collect = [&] { return collect_host_config(cc); };
  else if (opts.what == "kernel") collect = [&] { return collect_kernel_log(cc, kopts); };
  else collect = [&] { return collect_rdma(cc, ropts); };
  // README: every probe is bounded by --timeout. The budget is exactly that
  // (no floor above it); a probe that needs longer is reported as timed out.
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(ctx.global.timeout_s * 1000));
  if (opts.what == "rdma" && ropts.interval >= timeout)
    return report_input_error(ctx, make_error("--interval must be shorter than --timeout", "probe rdma",
                                              "the two counter samples are taken within --timeout"));
  // The probe runs in a child under the deadline, like every collector in `collect`.
  cc.deadline = std::chrono::steady_clock::now() + timeout;
  const ProbeOutcome o = run_probe_isolated(opts.what, timeout, [&] { return to_json(collect()); });

  EvidenceSet set;
  set.add_host(cc.host);
  set.inputs.push_back(cc.root.is_live() ? "live:" + cc.host : ctx.global.root);
  if (!o.availability.is_ok()) {
    set.unchecked.push_back(Unchecked{"probe " + opts.what, unchecked_state_of(o.availability.state),
                                                                o.availability.reason});
  } else {
    CollectorOutput out = collector_output_from_json(o.value);
    for (auto& e : out.evidence) {
      if (!e.subject.host) e.subject.host = cc.host;
      set.evidence.push_back(std::move(e));
    }
    set.unchecked = std::move(out.unchecked);
    for (const auto& [path, text] : out.raw) {
      if (path != "kernel.log") continue;
      std::string source = "kernel log";
      for (const auto& e : set.evidence)
        if (e.kind == "kernel.source") source = e.provenance.source;
      auto parsed = parse_kernel_log(text, source, cc.host);
      set.append(std::move(parsed.set));
    }
  }
  add_hardware_findings(set);
  Report report = decide(set);
  report.inputs = set.inputs;

  switch (opts.output.format()) {
    case OutputFormat::json: {
      nlohmann::json j = report;
      j["probe"] = opts.what;
      j["evidence"] = set.evidence;
      ctx.out << json_text(std::move(j)) << '\n';
      break;
    }
    case OutputFormat::markdown: render_markdown(report, ctx.out); break;
    case OutputFormat::text:
      render_text(report, ctx.out, TextStyle{want_color(1), ctx.global.verbose});
      print_evidence_text(set, ctx.out);
      break;
  }
  if (report.verdict.root_cause != kNoProblemFound) return kExitProblem;
  // Hardware that is not there (skipped) leaves nothing to check; a probe
  // that could not look (unavailable, unknown, timeout, error) makes the answer partial.
  for (const auto& u : report.unchecked)
    if (u.state != UncheckedState::skipped) return kExitPartial;
  return kExitHealthy;
}

}  // namespace

void register_probe(CLI::App& app, CommandContext& ctx) {
  auto* sub = app.add_subcommand("probe", "Host and hardware probes: pcie, rdma, kernel, config, gpu, nvlink, p2p");
  sub->require_subcommand(1);
  sub->footer(
      "Examples:\n"
      "  ccdiag probe pcie                      # GPU/NIC links, AER, ACS (as root), IOMMU\n"
      "  ccdiag probe rdma --interval 5 --json  # ports, counter deltas over 5 s, QPs\n"
      "  ccdiag probe kernel --since 2h         # Xid / SXid / AER lines of the last two hours\n"
      "  ccdiag --root tests/fixtures/sysroots/acs-enabled-on-switch probe pcie\n"
      "Exit: 0 nothing found, 1 problem found, 2 bad input, 3 partial (something could not be read),\n"
      "      4 internal error. Absent hardware (no RDMA subsystem, no GPU) is 'skipped', not partial.");
  const std::pair<const char*, const char*> kinds[] = {
      {"pcie", "GPU and NIC PCIe links, AER counters, ACS on bridges (needs root), IOMMU"},
      {"rdma", "RDMA ports, GIDs, counters sampled twice, netdevs, queue pairs"},
      {"kernel", "Kernel log: Xid, SXid, AER, mlx5, OOM killer, hung tasks"},
      {"config", "Host config: memlock of ranks, GPUDirect RDMA, fabric manager"}};
  for (const auto& [name, desc] : kinds) {
    auto opts = std::make_shared<ProbeOptions>();
    opts->what = name;
    auto* p = sub->add_subcommand(name, desc);
    if (std::string(name) == "rdma")
      p->add_option("--interval", opts->interval_s, "Seconds between the two counter samples (default 1)")
          ->check(CLI::Range(0.0, 60.0));
    if (std::string(name) == "kernel")
      p->add_option("--since", opts->since, "Only records since T (10m, 2h, 1d, @EPOCH, 2026-11-30T05:00:00Z)");
    add_output_flags(p, opts->output);
    p->callback([opts, &ctx] { ctx.exit_code = run_probe(*opts, ctx); });
  }
}

}  // namespace ccdiag
