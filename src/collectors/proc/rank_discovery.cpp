#include "collectors/proc/rank_discovery.hpp"

#include <cctype>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <map>
#include <set>

#include "ccdiag/signal_names.hpp"
#include "collectors/proc/proc_parse.hpp"

namespace ccdiag {

namespace {

std::optional<int> env_int(const nlohmann::json& env, const char* key) {
  if (!env.contains(key) || !env[key].is_string()) return std::nullopt;
  const std::string s = env[key].get<std::string>();
  int v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string argv0_basename(const std::string& cmdline) {
  std::string a0 = cmdline.substr(0, cmdline.find('\0'));
  const size_t slash = a0.rfind('/');
  return slash == std::string::npos ? a0 : a0.substr(slash + 1);
}

// Launcher from the parent: only a fixed set of names is reported, never the
// parent's arguments (they may hold secrets).
std::string launcher_of(const std::string& parent_comm, const std::string& parent_cmdline) {
  std::vector<std::string> args;
  size_t b = 0;
  while (b < parent_cmdline.size()) {
    size_t e = parent_cmdline.find('\0', b);
    if (e == std::string::npos) e = parent_cmdline.size();
    args.push_back(parent_cmdline.substr(b, e - b));
    b = e + 1;
  }
  for (size_t i = 0; i < args.size() && i < 4; ++i) {
    const std::string& a = args[i];
    const std::string base = a.substr(a.rfind('/') == std::string::npos ? 0 : a.rfind('/') + 1);
    if (base == "torchrun" || a == "torch.distributed.run") return "torchrun";
    if (a == "torch.distributed.launch") return "torch.distributed.launch";
    if (base == "deepspeed") return "deepspeed";
    if (base == "accelerate") return "accelerate";
  }
  for (const char* n : {"torchrun", "srun", "slurmstepd", "mpirun", "orted", "prted", "mpiexec", "deepspeed"})
    if (parent_comm == n) return n;
  return "";
}

}  // namespace

namespace {

// Rank identity from the launcher's variables (torchrun, Open MPI, Slurm).
void set_rank_fields(RankProcess& r) {
  r.rank = env_int(r.env, "RANK");
  if (!r.rank) r.rank = env_int(r.env, "OMPI_COMM_WORLD_RANK");
  if (!r.rank) r.rank = env_int(r.env, "SLURM_PROCID");
  r.local_rank = env_int(r.env, "LOCAL_RANK");
  if (!r.local_rank) r.local_rank = env_int(r.env, "OMPI_COMM_WORLD_LOCAL_RANK");
  if (!r.local_rank) r.local_rank = env_int(r.env, "SLURM_LOCALID");
  r.world_size = env_int(r.env, "WORLD_SIZE");
  if (!r.world_size) r.world_size = env_int(r.env, "OMPI_COMM_WORLD_SIZE");
  r.local_world_size = env_int(r.env, "LOCAL_WORLD_SIZE");
  if (!r.local_world_size) r.local_world_size = env_int(r.env, "OMPI_COMM_WORLD_LOCAL_SIZE");
}

}  // namespace

std::optional<RankProcess> read_process_environment(const SysRoot& root, int64_t pid) {
  auto env = root.read_file("/proc/" + std::to_string(pid) + "/environ", 1 << 20);
  if (!env) return std::nullopt;
  RankProcess r;
  r.pid = pid;
  r.env = filter_environment(parse_environ(*env));
  set_rank_fields(r);
  return r;
}

std::optional<RankProcess> read_process(const SysRoot& root, int64_t pid, bool* unreadable) {
  const std::string dir = "/proc/" + std::to_string(pid);
  auto stat_text = root.read_line(dir + "/stat");
  if (!stat_text) return std::nullopt;
  auto st = parse_proc_stat(*stat_text);
  if (!st) return std::nullopt;
  RankProcess r;
  r.pid = pid;
  r.comm = st->comm;
  r.state = st->state;
  r.ppid = st->ppid;
  r.threads = st->num_threads;
  // Kernel threads have no environment or maps (reading them fails with
  // ESRCH): there is nothing to read and nothing was denied.
  r.kernel_thread = (st->flags & kPfKthread) != 0 || pid == 2 || st->ppid == 2;
  if (r.kernel_thread) {
    if (unreadable) *unreadable = false;
    return r;
  }
  if (r.dead()) r.exit_status = st->exit_status;
  if (auto status = root.read_file(dir + "/status", 64 * 1024)) {
    const auto kv = parse_status(*status);
    if (auto t = status_value(kv, "Threads")) r.threads = std::atoll(t->c_str());
    if (auto tp = status_value(kv, "TracerPid"); tp && *tp != "0") r.tracer_pid = std::atoll(tp->c_str());
    // "Uid:\treal\teffective\tsaved\tfs": the real uid owns the process's IPC.
    if (auto uid = status_value(kv, "Uid"); uid && !uid->empty() && std::isdigit(static_cast<unsigned char>((*uid)[0])))
      r.uid = std::atoll(uid->c_str());
    if (auto ns = status_value(kv, "NSpid")) {
      const size_t sp = ns->find_last_of(" \t");
      std::string last = sp == std::string::npos ? *ns : ns->substr(sp + 1);
      if (last != std::to_string(pid)) r.nspid = last;
    }
  }
  if (auto cmd = root.read_file(dir + "/cmdline", 64 * 1024)) r.exe = argv0_basename(*cmd);
  bool denied = false;
  if (auto env = root.read_file(dir + "/environ", 1 << 20)) {
    r.env = filter_environment(parse_environ(*env));
  } else {
    denied = true;
  }
  if (auto maps = root.read_file(dir + "/maps", 16 << 20)) {
    const auto lib = mapped_libraries(parse_maps(*maps));
    r.nccl_path = lib.nccl_path;
    r.nccl_version = lib.nccl_version;
    r.torch_libs = lib.torch_libs;
    r.cuda_driver = lib.cuda_driver;
    r.python = lib.python || r.exe.rfind("python", 0) == 0;
  } else {
    denied = true;
  }
  if (auto fds = root.list_dir(dir + "/fd")) {
    for (const auto& fd : *fds) {
      auto target = root.read_link(dir + "/fd/" + fd);
      if (!target) continue;
      if (auto g = gpu_index_from_device_path(*target))
        if (std::find(r.gpus.begin(), r.gpus.end(), *g) == r.gpus.end()) r.gpus.push_back(*g);
    }
    std::sort(r.gpus.begin(), r.gpus.end());
  }
  const std::string pdir = "/proc/" + std::to_string(r.ppid);
  r.parent_comm = root.read_line(pdir + "/comm").value_or("");
  r.launcher = launcher_of(r.parent_comm, root.read_file(pdir + "/cmdline", 64 * 1024).value_or(""));
  set_rank_fields(r);
  // A zombie's environ and maps read empty (the kernel freed them): not denied.
  // A process that exited while it was read is gone, not denied either.
  if (denied && (r.dead() || !root.read_line(dir + "/stat"))) denied = false;
  if (unreadable) *unreadable = denied;
  return r;
}

std::string signal_name(int sig) {
  const char* name = linux_signal_name(sig);
  return *name ? name : "signal " + std::to_string(sig);
}

namespace {

bool looks_like_rank(const RankProcess& p) {
  const bool rank_env = p.env.contains("RANK") || p.env.contains("LOCAL_RANK") ||
                        p.env.contains("OMPI_COMM_WORLD_RANK") || p.env.contains("SLURM_PROCID");
  const bool framework = !p.nccl_path.empty() || !p.torch_libs.empty();
  // A launcher (torchrun itself) has RANK-free env but maps libtorch; a
  // plain srun step has SLURM_PROCID but no NCCL/torch: neither is a rank.
  // The launcher (torchrun) maps libtorch and often libnccl too, but holds
  // no GPU and has no RANK of its own: NCCL alone needs a GPU fd.
  return (!p.nccl_path.empty() && !p.gpus.empty()) || (rank_env && framework) ||
         (p.env.contains("RANK") && p.env.contains("WORLD_SIZE"));
}

// Dead ranks: zombies among the children of a process that started ranks (or
// of a launcher). Their number is the local rank their live siblings leave
// free, when that is unambiguous (as many zombies as free local ranks; the
// launcher starts local ranks in order, so pid order is local-rank order).
void add_dead_ranks(std::map<int64_t, RankProcess>& procs, const std::set<int64_t>& ranks, RankDiscovery& d) {
  std::map<int64_t, std::vector<int64_t>> zombies_of;  // parent -> zombie children
  // parent -> comms of its live rank children: a zombie sibling under a plain
  // shell is a dead rank only when it ran the same program (comm survives).
  std::map<int64_t, std::set<std::string>> rank_parents;
  for (int64_t pid : ranks) rank_parents[procs[pid].ppid].insert(procs[pid].comm);
  for (const auto& [pid, p] : procs) {
    if (!p.dead()) continue;
    const auto it = rank_parents.find(p.ppid);
    if (!p.launcher.empty() || (it != rank_parents.end() && it->second.count(p.comm))) zombies_of[p.ppid].push_back(pid);
  }
  for (auto& [parent, zs] : zombies_of) {
    std::sort(zs.begin(), zs.end());
    std::set<int> present;
    std::optional<int> lws, base, world;
    for (int64_t pid : ranks) {
      const auto& p = procs[pid];
      if (p.ppid != parent) continue;
      if (p.local_rank) present.insert(*p.local_rank);
      if (p.local_world_size) lws = p.local_world_size;
      if (p.rank && p.local_rank) base = *p.rank - *p.local_rank;
      if (p.world_size) world = p.world_size;
    }
    std::vector<int> missing;
    if (lws)
      for (int l = 0; l < *lws; ++l)
        if (!present.count(l)) missing.push_back(l);
    const bool infer = lws && base && missing.size() == zs.size();
    for (size_t i = 0; i < zs.size(); ++i) {
      RankProcess r = procs[zs[i]];
      if (infer) {
        r.local_rank = missing[i];
        r.rank = *base + missing[i];
        r.local_world_size = lws;
        r.world_size = world;
        r.rank_inferred = true;
      }
      d.ranks.push_back(std::move(r));
    }
  }
}

}  // namespace

RankDiscovery discover_ranks(const SysRoot& root) {
  RankDiscovery d;
  auto names = root.list_dir("/proc");
  if (!names) return d;
  std::map<int64_t, RankProcess> procs;
  std::set<int64_t> candidates;
  for (const auto& n : *names) {
    if (n.empty() || n.size() > 18 || n.find_first_not_of("0123456789") != std::string::npos) continue;
    bool denied = false;
    auto p = read_process(root, std::stoll(n), &denied);
    if (!p || p->kernel_thread) continue;  // vanished, or a kernel thread: nothing to say
    ++d.processes_scanned;
    if (denied) ++d.unreadable;
    if (looks_like_rank(*p)) candidates.insert(p->pid);
    procs.emplace(p->pid, std::move(*p));
  }
  // A candidate with a candidate ancestor of the same rank variables is that
  // rank's worker (a forked child inherits the environment unchanged). An
  // ancestor with other rank variables is a launcher (torchrun under srun has
  // SLURM_PROCID and maps libtorch, its workers have RANK): not an owner.
  auto same_rank_env = [&](const RankProcess& a, const RankProcess& b) {
    for (const char* k : {"RANK", "LOCAL_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"})
      if (a.env.contains(k) != b.env.contains(k) || (a.env.contains(k) && a.env[k] != b.env[k])) return false;
    return true;
  };
  std::set<int64_t> ranks;
  for (int64_t pid : candidates) {
    int64_t up = procs[pid].ppid;
    std::optional<int64_t> owner;
    for (int depth = 0; depth < 8 && up > 1; ++depth) {
      // Keep climbing: the outermost such candidate is the rank.
      if (candidates.count(up) && same_rank_env(procs[up], procs[pid])) owner = up;
      auto it = procs.find(up);
      if (it == procs.end()) break;
      up = it->second.ppid;
    }
    if (!owner) {
      ranks.insert(pid);
      continue;
    }
    const auto& w = procs[pid];
    procs[*owner].workers.push_back(RankProcess::Worker{w.pid, w.ppid, w.comm, w.state});
    ++d.workers;
  }
  // A "rank" without RANK/LOCAL_RANK whose children are ranks with them is
  // their launcher (torchrun's agent inside an srun step).
  std::set<int64_t> launchers;
  for (int64_t pid : ranks) {
    const auto& p = procs[pid];
    if (p.env.contains("RANK") || p.env.contains("LOCAL_RANK")) continue;
    for (int64_t c : ranks)
      if (procs[c].ppid == pid && (procs[c].env.contains("RANK") || procs[c].env.contains("LOCAL_RANK")))
        launchers.insert(pid);
  }
  for (int64_t pid : launchers) ranks.erase(pid);
  for (int64_t pid : ranks) d.ranks.push_back(procs[pid]);
  add_dead_ranks(procs, ranks, d);
  std::sort(d.ranks.begin(), d.ranks.end(), [](const RankProcess& a, const RankProcess& b) {
    const int ra = a.rank.value_or(1 << 30), rb = b.rank.value_or(1 << 30);
    return ra != rb ? ra < rb : a.pid < b.pid;
  });
  return d;
}

nlohmann::json to_json(const RankProcess& r) {
  auto opt = [](const std::optional<int>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::json j{{"pid", r.pid},
                   {"comm", r.comm},
                   {"exe", r.exe},
                   {"state", std::string(1, r.state)},
                   {"threads", r.threads},
                   {"ppid", r.ppid},
                   {"parent_comm", r.parent_comm},
                   {"launcher", r.launcher},
                   {"rank", opt(r.rank)},
                   {"local_rank", opt(r.local_rank)},
                   {"world_size", opt(r.world_size)},
                   {"local_world_size", opt(r.local_world_size)},
                   {"env", r.env},
                   {"nccl_library", r.nccl_path.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.nccl_path)},
                   {"nccl_version", r.nccl_version ? nlohmann::json(*r.nccl_version) : nlohmann::json(nullptr)},
                   {"torch_libraries", r.torch_libs},
                   {"cuda_driver_mapped", r.cuda_driver},
                   {"python", r.python},
                   {"gpus", r.gpus}};
  if (r.nspid) j["nspid"] = *r.nspid;
  if (r.tracer_pid) j["tracer_pid"] = *r.tracer_pid;
  if (r.uid) j["uid"] = *r.uid;
  j["alive"] = !r.dead();
  if (r.dead()) {
    // The wait status a zombie left: exit code << 8, or the terminating signal.
    if (r.exit_status) {
      const int sig = static_cast<int>(*r.exit_status & 0x7f);
      if (sig) j["signal"] = signal_name(sig);
      else j["exit_code"] = static_cast<int>((*r.exit_status >> 8) & 0xff);
    }
    if (r.rank_inferred) j["rank_inferred"] = true;
  }
  if (!r.workers.empty()) {
    nlohmann::json ws = nlohmann::json::array();
    for (const auto& w : r.workers)
      ws.push_back({{"pid", w.pid}, {"ppid", w.ppid}, {"comm", w.comm}, {"state", std::string(1, w.state)}});
    j["workers"] = std::move(ws);
  }
  return j;
}

}  // namespace ccdiag
