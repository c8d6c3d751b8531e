// ccdiag fleet collect : run `ccdiag collect --tar --base64` on many hosts
// through the cluster's own launcher (pdsh, clush, srun, kubectl exec; see
// fleet/launchers.hpp for the exact command lines), unpack each host's
// bundle into DIR/<host>/, and write DIR/fleet.json (hosts asked, hosts that
// failed and why) for `ccdiag analyze DIR`. Hosts that fail are listed,
// never fatal.
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <ostream>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ccdiag/utf8.hpp"
#include "cli/common.hpp"
#include "ccdiag/version.hpp"
#include "fleet/atomic_file.hpp"
#include "fleet/gather.hpp"
#include "fleet/hostlist.hpp"
#include "fleet/launchers.hpp"
#include "sys/child_process.hpp"

namespace fs = std::filesystem;

namespace ccdiag {

namespace {

struct FleetOptions {
  std::string hosts, exclude, hostfile, out, launcher = "pdsh", remote_args, selector;
  FleetPlan plan;
  bool dry_run = false;
  OutputOptions output;
};

std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> w;
  std::istringstream in(s);
  std::string x;
  while (in >> x) w.push_back(x);
  return w;
}

std::string join_argv(const std::vector<std::string>& a) {
  std::string s;
  for (const auto& w : a) s += (s.empty() ? "" : " ") + shell_quote(w);
  return s;
}

Result<std::vector<std::string>> resolve_hosts(FleetOptions& o, CommandContext& ctx) {
  std::vector<std::string> hosts;
  if (!o.hosts.empty()) {
    auto h = expand_hostlist(o.hosts);
    if (!h) return make_error(h.error().message, "--hosts " + h.error().context);
    hosts = *h;
  }
  if (!o.hostfile.empty()) {
    std::ifstream in(o.hostfile);
    if (!in) return make_error("cannot read host file", o.hostfile);
    std::stringstream ss;
    ss << in.rdbuf();
    auto h = expand_hostlist_lines(ss.str());
    if (!h) return make_error(h.error().message, o.hostfile + ": " + h.error().context);
    hosts.insert(hosts.end(), h->begin(), h->end());
  }
  if (hosts.empty() && o.plan.launcher == Launcher::srun) {
    // Inside an allocation: every node of it (Slurm's compressed host list).
    if (const char* nl = std::getenv("SLURM_JOB_NODELIST")) {
      auto h = expand_hostlist(nl);
      if (!h) return make_error(h.error().message, "SLURM_JOB_NODELIST");
      hosts = *h;
    }
  }
  if (hosts.empty() && o.plan.launcher == Launcher::kubectl && !o.selector.empty()) {
    ChildSpec spec;
    spec.argv = kubectl_list_pods_argv(o.plan, o.selector);
    spec.deadline = std::chrono::seconds(60);
    std::vector<std::string> pods;
    std::string err;
    auto r = run_child(spec, [&](std::string_view l) { if (!l.empty()) pods.emplace_back(l); },
                       [&](std::string_view l) { err = std::string(l.substr(0, 300)); });
    if (!r) return r.error();
    if (r->exit_code != 0) return make_error("kubectl get pods failed: " + err, "--selector " + o.selector);
    for (const auto& p : pods)
      if (is_safe_host_name(p)) hosts.push_back(p);
    if (hosts.empty()) return make_error("no running pods match", "--selector " + o.selector);
  }
  if (!o.exclude.empty()) {
    auto x = expand_hostlist(o.exclude);
    if (!x) return make_error(x.error().message, "--exclude " + x.error().context);
    std::vector<std::string> kept;
    for (auto& h : hosts)
      if (std::find(x->begin(), x->end(), h) == x->end()) kept.push_back(std::move(h));
    hosts = std::move(kept);
  }
  (void)ctx;
  if (hosts.empty())
    return make_error("no hosts", "fleet collect",
                      o.plan.launcher == Launcher::kubectl ? "pass -w POD,... or --selector LABELS"
                                                           : "pass -w HOSTLIST or --hostfile FILE");
  return hosts;
}

// kubectl: one `kubectl exec` per pod, `fanout` at a time.
void run_kubectl(const FleetPlan& plan, Gatherer& g, std::vector<std::string>& launcher_errors) {
  std::mutex mu;
  size_t next = 0;
  auto worker = [&] {
    for (;;) {
      std::string pod;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (next >= plan.hosts.size()) return;
        pod = plan.hosts[next++];
      }
      ChildSpec spec;
      spec.argv = launcher_argv(plan, pod);
      spec.deadline = std::chrono::seconds(plan.per_host_timeout_s + plan.connect_timeout_s + 15);
      std::vector<std::string> out_lines;  // decoded under the lock, in order, per pod
      auto r = run_child(
          spec,
          [&](std::string_view l) {
            std::lock_guard<std::mutex> lock(mu);
            g.host_stdout(pod, l);
          },
          [&](std::string_view l) {
            std::lock_guard<std::mutex> lock(mu);
            g.host_stderr(pod, l);
          });
      std::lock_guard<std::mutex> lock(mu);
      if (!r) launcher_errors.push_back(r.error().one_line());
      else if (r->timed_out) g.host_stderr(pod, "kubectl exec timed out; killed");
      else if (r->exit_code != 0) g.host_stderr(pod, fmt::format("kubectl exec exited with {}", r->exit_code));
    }
  };
  std::vector<std::thread> threads;
  const size_t n = std::min<size_t>(std::max(1, plan.fanout), plan.hosts.size());
  for (size_t i = 0; i < n; ++i) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
}

int run_fleet_collect(FleetOptions& o, CommandContext& ctx) {
  auto l = parse_launcher(o.launcher);
  if (!l) return report_input_error(ctx, make_error("unknown launcher '" + o.launcher + "'", "--launcher", "use pdsh, clush, srun or kubectl"));
  FleetPlan& plan = o.plan;
  plan.launcher = *l;
  if (plan.rcmd.empty()) plan.rcmd = "ssh";
  plan.remote_args = split_words(o.remote_args);
  auto hosts = resolve_hosts(o, ctx);
  if (!hosts) return report_input_error(ctx, hosts.error());
  plan.hosts = *hosts;
  const fs::path out = fs::absolute(o.out);
  plan.work_dir = (out / ".fleet").string();
  plan.hostfile = (out / ".fleet" / "hosts").string();

  if (o.dry_run) {
    if (plan.launcher == Launcher::kubectl)
      for (const auto& h : plan.hosts) ctx.out << join_argv(launcher_argv(plan, h)) << '\n';
    else
      ctx.out << join_argv(launcher_argv(plan)) << '\n';
    return kExitHealthy;
  }
  const std::string bin = plan.launcher_bin.empty() ? std::string(to_string(plan.launcher)) : plan.launcher_bin;
  if (!program_exists(bin))
    return report_input_error(ctx, make_error("not found in PATH", bin, "install it, or choose another --launcher"));

  std::error_code ec;
  fs::create_directories(plan.work_dir, ec);
  if (ec) return report_input_error(ctx, make_error("cannot create: " + ec.message(), plan.work_dir));
  {
    std::string list;
    for (const auto& h : plan.hosts) list += h + "\n";
    if (auto st = write_file_atomically(plan.hostfile, list); !st) return report_input_error(ctx, st.error());
  }

  const auto start = std::chrono::steady_clock::now();
  Gatherer g(plan.work_dir, plan.hosts);
  std::vector<std::string> launcher_errors;
  std::optional<ChildResult> launcher_result;
  if (plan.launcher == Launcher::kubectl) {
    run_kubectl(plan, g, launcher_errors);
  } else {
    ChildSpec spec;
    spec.argv = launcher_argv(plan);
    spec.deadline = std::chrono::seconds(launcher_deadline_s(plan));
    if (plan.launcher == Launcher::pdsh && plan.rcmd == "ssh" && !std::getenv("PDSH_SSH_ARGS_APPEND"))
      spec.env.push_back({"PDSH_SSH_ARGS_APPEND", "-o BatchMode=yes"});  // never prompt for a password
    const bool labeled = plan.launcher != Launcher::srun;
    std::string srun_err;
    auto r = run_child(
        spec, [&](std::string_view line) { if (labeled) g.labeled_stdout(line); },
        [&](std::string_view line) {
          if (labeled) g.labeled_stderr(line);
          else srun_err = std::string(line.substr(0, 300));
        });
    if (!r) return report_input_error(ctx, r.error());
    launcher_result = *r;
    if (r->timed_out) launcher_errors.push_back(fmt::format("{} did not finish within {} s; killed", bin, launcher_deadline_s(plan)));
    if (plan.launcher == Launcher::srun) {
      // One output file per node (%N): decode each the same way.
      for (const auto& h : plan.hosts) {
        std::ifstream in(fs::path(plan.work_dir) / (h + ".out"));
        std::string line;
        while (std::getline(in, line)) g.host_stdout(h, line);
        std::ifstream err(fs::path(plan.work_dir) / (h + ".err"));
        while (std::getline(err, line)) g.host_stderr(h, line);
      }
      if (!srun_err.empty()) launcher_errors.push_back("srun: " + srun_err);
    }
  }
  auto outcomes = g.finish(out.string());
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  nlohmann::json rec;
  rec["format"] = "ccdiag-fleet";
  rec["ccdiag_version"] = version_string();
  rec["launcher"] = std::string(to_string(plan.launcher));
  rec["command"] = plan.launcher == Launcher::kubectl ? launcher_argv(plan, "<pod>") : launcher_argv(plan);
  rec["hosts"] = plan.hosts;
  rec["answered"] = nlohmann::json::array();
  rec["failed"] = nlohmann::json::array();
  rec["duration_s"] = std::round(secs * 100) / 100;
  rec["launcher_errors"] = launcher_errors;
  if (launcher_result) rec["launcher_exit_code"] = launcher_result->exit_code;
  size_t ok = 0;
  for (const auto& oc : outcomes) {
    if (oc.ok) {
      ++ok;
      rec["answered"].push_back(oc.host);
    } else {
      rec["failed"].push_back({{"host", oc.host}, {"reason", oc.reason}});
    }
  }
  if (auto st = write_file_atomically((out / "fleet.json").string(), json_text(rec) + "\n"); !st)
    return report_input_error(ctx, st.error());

  if (o.output.json) {
    ctx.out << json_text(std::move(rec)) << '\n';
  } else {
    ctx.out << fmt::format("fleet: {} of {} host(s) answered via {} in {:.1f} s; bundles in {}\n", ok, outcomes.size(),
                           to_string(plan.launcher), secs, out.string());
    for (const auto& oc : outcomes)
      if (!oc.ok) ctx.out << fmt::format("  failed {}: {}\n", oc.host, oc.reason);
    for (const auto& e : launcher_errors) ctx.out << "  launcher: " << e << '\n';
    ctx.out << "next: ccdiag analyze " << shell_quote(out.string()) << '\n';
  }
  return ok == outcomes.size() ? kExitHealthy : kExitPartial;
}

}  // namespace

void register_fleet(CLI::App& app, CommandContext& ctx) {
  auto opts = std::make_shared<FleetOptions>();
  auto* fleet = app.add_subcommand("fleet", "Run ccdiag on many hosts through pdsh, clush, srun or kubectl");
  fleet->require_subcommand(1);
  auto* sub = fleet->add_subcommand("collect", "Collect a bundle on every host into DIR/<host>/ (then: ccdiag analyze DIR)");
  sub->add_option("-w,--hosts", opts->hosts, "Host list: node[001-128],gpu7 (pods for kubectl)");
  sub->add_option("--hostfile", opts->hostfile, "File with one host list per line");
  sub->add_option("-x,--exclude", opts->exclude, "Hosts to leave out (host list)");
  sub->add_option("--out", opts->out, "Directory for the bundles (DIR/<host>/) and DIR/fleet.json")->required();
  sub->add_option("--launcher", opts->launcher, "pdsh (default), clush, srun or kubectl");
  sub->add_option("--fanout", opts->plan.fanout, "Hosts at a time (pdsh/clush -f; kubectl processes; default 32)")
      ->check(CLI::Range(1, 4096));
  sub->add_option("--per-host-timeout", opts->plan.per_host_timeout_s, "Seconds one host's collect may take (default 120)")
      ->check(CLI::Range(1, 86400));
  sub->add_option("--connect-timeout", opts->plan.connect_timeout_s, "Seconds to connect (pdsh/clush -t; default 10)")
      ->check(CLI::Range(1, 3600));
  sub->add_option("--rcmd", opts->plan.rcmd, "pdsh rcmd module / clush worker: ssh (default), exec, rsh");
  sub->add_option("--remote-ccdiag", opts->plan.remote_ccdiag, "ccdiag on the hosts (default: ccdiag in PATH)");
  sub->add_option("--remote-args", opts->remote_args, "Global options for the remote ccdiag, e.g. '--timeout 20'");
  sub->add_option("--jobid", opts->plan.jobid, "srun: the running job to attach to (--overlap)");
  sub->add_option("--namespace,-n", opts->plan.k8s_namespace, "kubectl: namespace (default: default)");
  sub->add_option("--selector,-l", opts->selector, "kubectl: label selector of the job's pods");
  sub->add_option("--container,-c", opts->plan.container, "kubectl: container to exec in");
  sub->add_option("--launcher-path", opts->plan.launcher_bin, "Path of the launcher program (default: its name in PATH)");
  sub->add_flag("--dry-run", opts->dry_run, "Print the launcher command line(s) and exit");
  sub->add_flag("--json", opts->output.json, "Print DIR/fleet.json on stdout");
  sub->footer(
      "Examples:\n"
      "  ccdiag fleet collect -w 'gpu[001-512]' --out /tmp/inc42 --fanout 64 --per-host-timeout 60\n"
      "  ccdiag fleet collect --launcher clush -w @sj:8812 --out /tmp/inc42\n"
      "  ccdiag fleet collect --launcher srun --jobid 8812 --out /shared/inc42\n"
      "  ccdiag fleet collect --launcher kubectl -n train -l training.kubeflow.org/job-name=llm -c trainer --out inc42\n"
      "  ccdiag analyze /tmp/inc42 --html /tmp/inc42.html\n"
      "Exit: 0 every host answered, 2 bad arguments or launcher missing, 3 some hosts did not answer (listed)");
  sub->callback([opts, &ctx] { ctx.exit_code = run_fleet_collect(*opts, ctx); });
}

}  // namespace ccdiag
