// Pure parsers for PCIe sysfs attributes and config space (the kernel's
// drivers/pci/pci-sysfs.c and drivers/pci/pcie/aer.c). Every function is total:
// bad input gives nullopt or an empty result, never a throw.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ccdiag::pcie {

// current_link_speed / max_link_speed: "32.0 GT/s PCIe", pre-5.7 "16 GT/s",
// "2.5 GT/s". Returns GT/s; nullopt for "Unknown" (link down) or garbage.
std::optional<double> parse_link_speed(std::string_view text);
// current_link_width / max_link_width: decimal lane count ("16"). 0 is a
// valid reading (link down) and is returned as 0.
std::optional<int> parse_link_width(std::string_view text);
// "0x030200" / "0x10de" -> value.
std::optional<uint32_t> parse_hex(std::string_view text);

// One aer_dev_{correctable,nonfatal,fatal} file. Every line is "<name> <count>";
// names differ across kernels ("RxErr" vs "Receiver Error", spaces allowed),
// so the count is the last token. TOTAL_ERR_* lines give `total`.
struct AerFile {
  std::vector<std::pair<std::string, int64_t>> counters;  // in file order, totals excluded
  std::optional<int64_t> total;
  size_t bad_lines = 0;
};
AerFile parse_aer_file(std::string_view text);

// PCIe port type from the PCI Express capability (bits 7:4 of +0x02).
enum class PortType { endpoint = 0, legacy_endpoint = 1, root_port = 4, upstream = 5, downstream = 6,
                      pcie_to_pci = 7, rc_integrated = 9, rc_event_collector = 10, other = 15 };
std::string_view to_string(PortType t);

// What config space says (the bytes of sysfs `config`).
struct ConfigSpace {
  size_t size = 0;                   // bytes read: 64 without CAP_SYS_ADMIN, 256 or 4096 as root
  bool all_ones = false;             // vendor/device read 0xffff: the device fell off the bus
  bool extended_visible = false;     // ≥ 4096 bytes: extended capabilities (ACS, AER) readable
  std::optional<PortType> port_type;
  std::optional<uint16_t> acs_cap;   // ACS Capability register, when the ACS capability exists
  std::optional<uint16_t> acs_ctl;   // ACS Control register
  bool acs_present = false;          // extended list walked and ACS found
};
ConfigSpace parse_config_space(std::string_view bytes);

// ACS bits in lspci order: SrcValid TransBlk ReqRedir CmpltRedir UpstreamFwd EgressCtrl DirectTrans.
inline constexpr const char* kAcsBitNames[7] = {"SrcValid", "TransBlk", "ReqRedir", "CmpltRedir",
                                                "UpstreamFwd", "EgressCtrl", "DirectTrans"};
inline constexpr uint16_t kAcsReqRedir = 1u << 2;
inline constexpr uint16_t kAcsCmpltRedir = 1u << 3;
// "SrcValid+ TransBlk- ReqRedir+ ..." as lspci -vvv prints it.
std::string acs_bits_string(uint16_t bits);

// A sysfs device link target ("../../../devices/pci0000:15/0000:15:01.0/0000:16:00.0")
// -> the BDFs from the root port down to the device itself. Empty when the
// target is not under devices/pci<domain>:<bus>.
std::vector<std::string> bdf_chain(std::string_view link_target);
bool looks_like_bdf(std::string_view s);  // "0000:3b:00.0"

// Kernel command-line IOMMU switches (/proc/cmdline).
struct IommuCmdline {
  std::string intel_iommu;   // "on", "off", "" (absent) ... last occurrence wins, like the kernel
  std::string amd_iommu;
  std::string iommu;         // "pt", "nopt", "off", "force", ...
  std::string passthrough;   // iommu.passthrough=0|1
  std::string acs_override;  // pcie_acs_override=
  bool pci_noaer = false;    // pci=noaer: AER counters are not kept
};
IommuCmdline parse_iommu_cmdline(std::string_view cmdline);

// NVML-like topology level of two devices from their BDF chains:
// "PIX" (same switch downstream port side), "PXB" (several bridges, no root
// complex), "PHB" (same root port / host bridge), "SYS" (different root
// complexes). NODE needs NUMA knowledge and is decided by the caller.
std::string topology_level(const std::vector<std::string>& a, const std::vector<std::string>& b);
// The bridges a peer-to-peer transfer between a and b crosses below their
// lowest common ancestor, where ACS redirect would send it upstream. Empty
// when they share no bridge (different root ports: the traffic crosses the
// root complex whatever ACS says).
std::vector<std::string> p2p_path_bridges(const std::vector<std::string>& a, const std::vector<std::string>& b);

}  // namespace ccdiag::pcie
