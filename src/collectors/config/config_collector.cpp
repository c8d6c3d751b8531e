#include "collectors/config/config_collector.hpp"

#include <charconv>

#include "collectors/config/rank_procs.hpp"

namespace ccdiag {

namespace {

using nlohmann::json;

Evidence make(const CollectContext& ctx, const char* kind, const std::string& source) {
  Evidence e;
  e.kind = kind;
  e.subject.host = ctx.host;
  e.provenance.source = source;
  return e;
}

std::optional<uint64_t> limit_value(std::string_view tok, bool& ok) {
  if (tok == "unlimited") return std::nullopt;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
  if (ec != std::errc() || p != tok.data() + tok.size()) ok = false;
  return v;
}

json limit_json(const std::optional<uint64_t>& v) { return v ? json(*v) : json("unlimited"); }

bool module_loaded(const std::string& modules, std::string_view name) {
  // /proc/modules: "<name> <size> <refs> <deps> <state> <addr>" per line.
  size_t at = 0;
  while ((at = modules.find(name, at)) != std::string::npos) {
    const bool line_start = at == 0 || modules[at - 1] == '\n';
    const size_t end = at + name.size();
    if (line_start && end < modules.size() && modules[end] == ' ') return true;
    at = end;
  }
  return false;
}

}  // namespace

std::optional<MemlockLimit> parse_memlock_limit(std::string_view limits) {
  const size_t at = limits.find("Max locked memory");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = limits.substr(at + 17);
  rest = rest.substr(0, rest.find('\n'));
  std::string_view toks[2];
  for (auto& t : toks) {
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    const size_t sp = rest.find(' ');
    t = rest.substr(0, sp);
    rest = sp == std::string_view::npos ? std::string_view{} : rest.substr(sp);
    if (t.empty()) return std::nullopt;
  }
  bool ok = true;
  MemlockLimit m{limit_value(toks[0], ok), limit_value(toks[1], ok)};
  if (!ok) return std::nullopt;
  return m;
}

std::optional<std::pair<int, int>> kernel_major_minor(std::string_view r) {
  int major = 0, minor = 0;
  auto [p, ec] = std::from_chars(r.data(), r.data() + r.size(), major);
  if (ec != std::errc() || p == r.data() + r.size() || *p != '.') return std::nullopt;
  auto [q, ec2] = std::from_chars(p + 1, r.data() + r.size(), minor);
  if (ec2 != std::errc() || q == p + 1) return std::nullopt;
  return std::make_pair(major, minor);
}

CollectorOutput collect_host_config(const CollectContext& ctx) {
  CollectorOutput out;
  const SysRoot& root = ctx.root;

  // memlock of every rank process.
  const RankScan scan = find_rank_processes(root);
  if (scan.ranks.empty()) {
    Evidence e = make(ctx, "host.memlock", "/proc/*/limits");
    e.availability = Availability::unavailable(
        "no training-rank process found (no process with RANK/LOCAL_RANK in its environment" +
        std::string(scan.unreadable ? "; " + std::to_string(scan.unreadable) + " environments unreadable" : "") + ")");
    out.evidence.push_back(std::move(e));
    out.unchecked.push_back(Unchecked{"memlock limit of the ranks", UncheckedState::skipped, "no training-rank process on this host"});
  }
  for (const auto& r : scan.ranks) {
    const std::string path = "/proc/" + std::to_string(r.pid) + "/limits";
    Evidence e = make(ctx, "host.memlock", path);
    e.subject.pid = r.pid;
    if (r.rank) e.subject.rank = *r.rank;
    e.data["pid"] = r.pid;
    e.data["comm"] = r.comm;
    if (r.rank) e.data["rank"] = *r.rank;
    if (r.local_rank) e.data["local_rank"] = *r.local_rank;
    auto text = root.read_file(path, 16384);
    std::optional<MemlockLimit> m;
    if (text) m = parse_memlock_limit(*text);
    if (!m) {
      e.availability = Availability::unavailable(text ? "no 'Max locked memory' row" : text.error().one_line());
    } else {
      e.data["soft"] = limit_json(m->soft);
      e.data["hard"] = limit_json(m->hard);
      e.provenance.excerpt = "Max locked memory " + e.data["soft"].dump() + " " + e.data["hard"].dump();
    }
    out.evidence.push_back(std::move(e));
  }

  // GPUDirect RDMA: the peer-memory module or the DMA-BUF path.
  size_t gpus = 0, nvswitches = 0;
  if (auto devs = root.list_dir("/sys/bus/pci/devices")) {
    for (const auto& d : *devs) {
      const auto vendor = root.read_line("/sys/bus/pci/devices/" + d + "/vendor").value_or("");
      if (vendor != "0x10de") continue;
      const auto cls = root.read_line("/sys/bus/pci/devices/" + d + "/class").value_or("");
      if (cls.rfind("0x0302", 0) == 0 || cls.rfind("0x0300", 0) == 0) ++gpus;
      else if (cls.rfind("0x0680", 0) == 0) ++nvswitches;  // NVSwitch on HGX boards
    }
  }
  size_t rdma_devices = 0;
  if (auto ib = root.list_dir("/sys/class/infiniband")) rdma_devices = ib->size();
  {
    Evidence e = make(ctx, "host.peermem", "/sys/module/nvidia_peermem, /sys/kernel/mm/memory_peers, /proc/modules");
    const std::string modules = root.read_file("/proc/modules", 1 << 20).value_or("");
    const bool peermem = root.exists("/sys/module/nvidia_peermem") || module_loaded(modules, "nvidia_peermem");
    const bool legacy = root.exists("/sys/kernel/mm/memory_peers/nv_mem/version") ||
                        root.exists("/sys/kernel/mm/memory_peers/nv_mem_nc/version") || module_loaded(modules, "nv_peer_mem");
    e.data["nvidia_peermem"] = peermem;
    if (auto v = root.read_line("/sys/module/nvidia_peermem/version")) e.data["nvidia_peermem_version"] = *v;
    if (auto v = root.read_line("/sys/module/nvidia_peermem/initstate")) e.data["nvidia_peermem_initstate"] = *v;
    e.data["nv_peer_mem_legacy"] = legacy;
    const std::string release = root.read_line("/proc/sys/kernel/osrelease").value_or("");
    const auto mm = kernel_major_minor(release);
    const bool kernel_dmabuf = mm && (mm->first > 5 || (mm->first == 5 && mm->second >= 12));
    const std::string drv = root.read_line("/proc/driver/nvidia/version").value_or("");
    const bool open_modules = drv.find("Open Kernel Module") != std::string::npos;
    e.data["kernel_release"] = release;
    e.data["dmabuf_kernel"] = kernel_dmabuf;
    e.data["nvidia_open_kernel_module"] = open_modules;
    // NCCL's own test (ibv_reg_dmabuf_mr with fd -1) needs a verbs context; the
    // static prerequisites are what can be read without one.
    e.data["dmabuf_possible"] = kernel_dmabuf && open_modules;
    e.data["gdr_possible"] = peermem || legacy || (kernel_dmabuf && open_modules);
    e.data["nvidia_gpus"] = gpus;
    e.data["rdma_devices"] = rdma_devices;
    out.evidence.push_back(std::move(e));
  }

  // Fabric manager on NVSwitch systems.
  {
    Evidence e = make(ctx, "host.fabric_manager", "/dev/nvidia-nvswitchctl, /proc/*/comm");
    const bool ctl = root.exists("/dev/nvidia-nvswitchctl");
    e.data["nvswitch_pci_devices"] = nvswitches;
    e.data["nvswitchctl"] = ctl;
    const bool nvswitch = nvswitches > 0 || ctl;
    e.data["nvswitch_system"] = nvswitch;
    std::optional<int64_t> fm_pid;
    if (auto procs = root.list_dir("/proc")) {
      for (const auto& p : *procs) {
        if (p.find_first_not_of("0123456789") != std::string::npos) continue;
        if (root.read_line("/proc/" + p + "/comm").value_or("") == "nv-fabricmanage") {  // comm is cut at 15 chars
          fm_pid = std::stoll(p);
          break;
        }
      }
    }
    e.data["fabric_manager_running"] = fm_pid.has_value();
    if (fm_pid) e.data["fabric_manager_pid"] = *fm_pid;
    out.evidence.push_back(std::move(e));
  }
  return out;
}

}  // namespace ccdiag
