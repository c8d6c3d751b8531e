// The command lines `ccdiag fleet collect` runs, one launcher each (pure).
// ccdiag never opens its own SSH connections: the cluster's own engines do
// the fan-out, and their documented options carry the host list, fan-out
// width and timeouts (reference: perf-and-fleet.md §6–7).
//
// Every remote side runs the same command, bounded on the node itself by
// coreutils `timeout` (pdsh's -u kills only the local ssh; the remote command
// would keep running without it):
//   timeout -k 5 <S> <ccdiag> [remote args] collect --tar --base64
//
//   pdsh     pdsh -R <rcmd> -S -f <fanout> -t <connect> -u <S+15> -w ^<hostfile> <remote>
//            output lines "host: text"; errors "pdsh@local: host: text" on stderr
//   clush    clush -R <worker> -S -n -f <fanout> -t <connect> -u <S+15> --hostfile=<hostfile> '<remote>'
//            (clush joins its arguments into one command string: pass one quoted string)
//   srun     srun [--jobid=J] --overlap -N <n> --ntasks-per-node=1 -K0 --time=<min>
//                 -w <hostfile> -o <work>/%N.out -e <work>/%N.err <remote>
//            one output file per node (%N), written where srun runs
//   kubectl  kubectl exec -n <ns> <pod> [-c <container>] -- <remote>, one per pod,
//            <fanout> at a time (the xargs -P recipe, without xargs)
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ccdiag/result.hpp"

namespace ccdiag {

enum class Launcher { pdsh, clush, srun, kubectl };
std::optional<Launcher> parse_launcher(const std::string& name);
std::string_view to_string(Launcher l);

struct FleetPlan {
  Launcher launcher = Launcher::pdsh;
  std::vector<std::string> hosts;     // hosts (pods for kubectl)
  std::string hostfile;               // where the host list is written, one per line
  std::string work_dir;               // DIR/.fleet
  int fanout = 32;
  int per_host_timeout_s = 120;
  int connect_timeout_s = 10;
  std::string rcmd = "ssh";           // pdsh -R / clush -R
  std::string remote_ccdiag = "ccdiag";
  std::vector<std::string> remote_args;  // global options for the remote ccdiag, before `collect`
  std::string jobid;                  // srun
  std::string k8s_namespace = "default", container;  // kubectl
  std::string launcher_bin;           // override the launcher program (path); empty = its name
};

// The remote side: timeout -k 5 S ccdiag ARGS collect --tar --base64
std::vector<std::string> remote_command(const FleetPlan& p);

// The launcher's argv (for kubectl: the argv for one pod, `host`).
std::vector<std::string> launcher_argv(const FleetPlan& p, const std::string& host = {});

// How long to wait for the whole launcher run before killing it.
int launcher_deadline_s(const FleetPlan& p);

// POSIX shell quoting of one word (for clush's single command string and --dry-run output).
std::string shell_quote(const std::string& word);

// The argv of `kubectl get pods` that lists running pods of a label selector, one name a line.
std::vector<std::string> kubectl_list_pods_argv(const FleetPlan& p, const std::string& selector);

// Splits "host: text" (pdsh/clush line labels); false when the line has no label.
bool split_host_label(std::string_view line, std::string_view& host, std::string_view& text);

}  // namespace ccdiag
