#include "fleet/launchers.hpp"

#include <algorithm>

namespace ccdiag {

std::optional<Launcher> parse_launcher(const std::string& n) {
  if (n == "pdsh") return Launcher::pdsh;
  if (n == "clush") return Launcher::clush;
  if (n == "srun" || n == "slurm") return Launcher::srun;
  if (n == "kubectl" || n == "k8s") return Launcher::kubectl;
  return std::nullopt;
}

std::string_view to_string(Launcher l) {
  switch (l) {
    case Launcher::pdsh: return "pdsh";
    case Launcher::clush: return "clush";
    case Launcher::srun: return "srun";
    case Launcher::kubectl: return "kubectl";
  }
  return "pdsh";
}

std::string shell_quote(const std::string& w) {
  if (!w.empty() && std::all_of(w.begin(), w.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("@%+=:,./_-^[]").find(c) != std::string_view::npos;
      }))
    return w;
  std::string q = "'";
  for (char c : w) {
    if (c == '\'') q += "'\\''";
    else q.push_back(c);
  }
  return q + "'";
}

std::vector<std::string> remote_command(const FleetPlan& p) {
  std::vector<std::string> r = {"timeout", "-k", "5", std::to_string(p.per_host_timeout_s), p.remote_ccdiag};
  r.insert(r.end(), p.remote_args.begin(), p.remote_args.end());
  for (const char* a : {"collect", "--tar", "--base64"}) r.emplace_back(a);
  return r;
}

int launcher_deadline_s(const FleetPlan& p) {
  const int n = std::max<int>(1, static_cast<int>(p.hosts.size()));
  const int waves = (n + std::max(1, p.fanout) - 1) / std::max(1, p.fanout);
  return waves * (p.per_host_timeout_s + p.connect_timeout_s + 15) + 30;
}

std::vector<std::string> launcher_argv(const FleetPlan& p, const std::string& host) {
  const std::string bin = p.launcher_bin.empty() ? std::string(to_string(p.launcher)) : p.launcher_bin;
  const auto remote = remote_command(p);
  const std::string cmd_timeout = std::to_string(p.per_host_timeout_s + 15);
  std::vector<std::string> a{bin};
  switch (p.launcher) {
    case Launcher::pdsh:
      a.insert(a.end(), {"-R", p.rcmd, "-S", "-f", std::to_string(p.fanout), "-t", std::to_string(p.connect_timeout_s), "-u",
                         cmd_timeout, "-w", "^" + p.hostfile});
      a.insert(a.end(), remote.begin(), remote.end());
      break;
    case Launcher::clush: {
      a.insert(a.end(), {"-R", p.rcmd, "-S", "-n", "-f", std::to_string(p.fanout), "-t", std::to_string(p.connect_timeout_s),
                         "-u", cmd_timeout, "--hostfile=" + p.hostfile});
      std::string joined;
      for (const auto& w : remote) joined += (joined.empty() ? "" : " ") + shell_quote(w);
      a.push_back(joined);
      break;
    }
    case Launcher::srun: {
      if (!p.jobid.empty()) a.push_back("--jobid=" + p.jobid);
      const int minutes = (p.per_host_timeout_s + 15 + 59) / 60 + 1;
      a.insert(a.end(), {"--overlap", "-N", std::to_string(p.hosts.size()), "--ntasks-per-node=1", "-K0",
                         "--time=" + std::to_string(minutes), "-w", p.hostfile, "-o", p.work_dir + "/%N.out", "-e",
                         p.work_dir + "/%N.err"});
      a.insert(a.end(), remote.begin(), remote.end());
      break;
    }
    case Launcher::kubectl:
      a.insert(a.end(), {"exec", "-n", p.k8s_namespace, host});
      if (!p.container.empty()) a.insert(a.end(), {"-c", p.container});
      a.push_back("--");
      a.insert(a.end(), remote.begin(), remote.end());
      break;
  }
  return a;
}

std::vector<std::string> kubectl_list_pods_argv(const FleetPlan& p, const std::string& selector) {
  const std::string bin = p.launcher_bin.empty() ? "kubectl" : p.launcher_bin;
  return {bin, "get", "pods", "-n", p.k8s_namespace, "-l", selector, "--field-selector=status.phase=Running",
          "-o", "jsonpath={range .items[*]}{.metadata.name}{\"\\n\"}{end}"};
}

bool split_host_label(std::string_view line, std::string_view& host, std::string_view& text) {
  const size_t colon = line.find(": ");
  if (colon == std::string_view::npos || colon == 0 || colon > 253) return false;
  host = line.substr(0, colon);
  if (host.find(' ') != std::string_view::npos) return false;
  text = line.substr(colon + 2);
  return true;
}

}  // namespace ccdiag
