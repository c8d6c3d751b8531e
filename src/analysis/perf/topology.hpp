// The hardware path NCCL uses, read from the evidence a bundle already holds
// (pcie.link, rdma.port, nvlink.link, host.peermem; docs/probe.md,
// docs/probe-gpu.md), and the bandwidth each part allows. Pure.
//
// Two figures per part: `nominal` (every link at its maximum width, speed and
// link count) and `present` (as trained now). Their difference names a
// degraded part before any benchmark runs (docs/perf.md "Expected bandwidth").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ccdiag/evidence.hpp"

namespace ccdiag::perf {

// PCIe bandwidth per direction in GB/s (10^9 bytes): GT/s x lanes x encoding / 8,
// encoding 8b/10b up to 5 GT/s and 128b/130b from 8 GT/s.
double pcie_gbs(double gts, int lanes);
// NVLink bandwidth per link and direction in GB/s by NVLink version (2-4: 25, 5: 50).
double nvlink_link_gbs(int version);
// IB/RoCE lane rate in Gb/s by the speed name sysfs prints (EDR 25, HDR 50, NDR 100, XDR 200).
std::optional<double> ib_lane_gbps(const std::string& speed);

struct PciePath {
  std::string bdf;
  double present_gbs = 0, nominal_gbs = 0;  // bottleneck hop of the path to the root port
  std::string worst_hop;                    // "0000:3b:00.0 x8 of x16 at 32 GT/s"
  bool downtrained = false;                 // present < nominal
};

struct GpuInfo {
  std::string bdf;
  int index = -1;
  PciePath pcie;
  std::string nearest_nic, nic_level;  // "mlx5_3", "PIX"
  int nvlinks_active = -1, nvlinks_total = -1, nvlink_version = 0;  // from nvlink.link evidence
  int pci_device = 0;          // PCI device id of the GPU (0x2330 = H100 SXM5)
  int model_links = 0, model_version = 0;  // NVLink links/version of that model (0 when not an SXM part we know)
};

struct NicInfo {
  std::string device;
  int port = 1;
  std::string state, link_layer, hca_type, speed;
  double rate_gbps = 0;          // as trained
  double nominal_rate_gbps = 0;  // lanes x lane rate of its speed, or the best port of the same HCA type on the host
  std::optional<PciePath> pcie;
  bool active() const { return state.find("ACTIVE") != std::string::npos; }
};

struct HostTopology {
  std::string host;
  std::vector<GpuInfo> gpus;
  std::vector<NicInfo> nics;
  std::optional<bool> gdr;      // host.peermem gdr_possible; unset when not collected
  bool nvlink_known = false;
  std::vector<std::string> missing;  // evidence kinds absent or unavailable ("nvlink.link")
  // Stable digest of the parts (GPU count, NVLink, NIC rates, PCIe widths) for baselines.
  std::string fingerprint() const;
};

// Builds one host's topology from its evidence (other hosts' items are ignored).
HostTopology topology_from_evidence(const std::vector<Evidence>& evidence, const std::string& host);

}  // namespace ccdiag::perf
