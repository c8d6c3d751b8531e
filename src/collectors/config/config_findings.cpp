#include "collectors/config/config_findings.hpp"

#include <fmt/format.h>

namespace ccdiag {

namespace {

Finding base(const Evidence& e, const char* id, Severity sev, std::string summary) {
  return finding_from(e, id, Layer::system_config, sev, std::move(summary));
}

std::string human_bytes(uint64_t b) {
  if (b >= (1ULL << 30)) return fmt::format("{} GiB", b >> 30);
  if (b >= (1ULL << 20)) return fmt::format("{} MiB", b >> 20);
  return fmt::format("{} KiB", b >> 10);
}

}  // namespace

std::vector<Finding> config_findings(const std::vector<Evidence>& evidence) {
  std::vector<Finding> out;
  // Verbs pin NCCL's buffers; the usual 64 KiB / 8 MiB defaults make
  // ibv_reg_mr fail with ENOMEM at init. Below 1 GiB is too low for a GPU job.
  constexpr uint64_t kMemlockNeeded = 1ULL << 30;
  // The limit only matters where verbs are used: with no RDMA NIC on the host
  // (NCCL uses sockets, SHM and P2P) a low memlock is harmless context.
  bool rdma_seen = false, rdma_absent = false;
  for (const auto& e : evidence) {
    if (e.kind == "rdma.port" && e.availability.is_ok()) rdma_seen = true;
    if (e.kind == "host.peermem" && e.availability.is_ok() && e.data.contains("rdma_devices") &&
        e.data["rdma_devices"].is_number_integer() && e.data["rdma_devices"].get<int>() == 0)
      rdma_absent = true;
  }
  const bool memlock_irrelevant = rdma_absent && !rdma_seen;
  for (const auto& e : evidence) {
    if (!e.availability.is_ok()) continue;
    if (e.kind == "host.memlock") {
      const auto it = e.data.find("soft");
      if (it == e.data.end() || !it->is_number_unsigned()) continue;  // "unlimited"
      const uint64_t soft = it->get<uint64_t>();
      if (soft >= kMemlockNeeded) continue;
      Finding f = base(e, "host.memlock_low", Severity::error,
                       fmt::format("pid {}{} can lock only {} of memory (RLIMIT_MEMLOCK): RDMA memory registration fails",
                                   e.data.value("pid", int64_t{0}),
                                   e.data.contains("rank") ? fmt::format(" (rank {})", e.data["rank"].get<int>()) : "",
                                   human_bytes(soft)));
      f.fields = {{"soft", soft}, {"hard", e.data.value("hard", nlohmann::json())},
                  {"fix", "ulimit -l unlimited (docker: --ulimit memlock=-1:-1; systemd: LimitMEMLOCK=infinity)"}};
      // Below 64 MiB registration of NCCL's buffers fails for certain; below 1 GiB it may.
      f.supports = {{"memlock_limit_too_low", soft < (64ULL << 20) ? 100.0 : 10.0}};
      if (memlock_irrelevant) {
        f.role = FindingRole::context;
        f.severity = Severity::info;
        f.supports.clear();
        f.summary += " (no RDMA NIC on this host: harmless here)";
      }
      out.push_back(std::move(f));
    } else if (e.kind == "host.peermem") {
      if (e.data.value("nvidia_gpus", 0) == 0 || e.data.value("rdma_devices", 0) == 0) continue;
      if (e.data.value("gdr_possible", true)) continue;
      Finding f = base(e, "host.peermem_missing", Severity::warning,
                       "GPUs and RDMA NICs present but no GPUDirect RDMA path: nvidia_peermem not loaded and no "
                       "DMA-BUF support (kernel < 5.12 or proprietary kernel modules); NCCL stages through host memory");
      f.fields = {{"kernel_release", e.data.value("kernel_release", "")},
                  {"fix", "modprobe nvidia_peermem (or use the open kernel modules on kernel >= 5.12 for DMA-BUF)"}};
      f.supports = {{"gpudirect_rdma_module_missing", 80.0}};  // measured absence of every GDR path
      out.push_back(std::move(f));
    } else if (e.kind == "host.fabric_manager") {
      if (!e.data.value("nvswitch_system", false) || e.data.value("fabric_manager_running", false)) continue;
      Finding f = base(e, "host.fabric_manager_not_running", Severity::error,
                       fmt::format("NVSwitch system ({} NVSwitch device(s)) but nv-fabricmanager is not running: the GPU "
                                   "fabric never initialises (CUDA error 802, no NVLink P2P)",
                                   e.data.value("nvswitch_pci_devices", 0)));
      f.fields = {{"fix", "systemctl start nvidia-fabricmanager; check /var/log/fabricmanager.log"}};
      f.supports = {{"fabric_manager_not_running", 100.0}};  // the fabric cannot come up without it
      out.push_back(std::move(f));
    }
  }
  return out;
}

}  // namespace ccdiag
