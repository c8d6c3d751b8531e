#include "collectors/kernel/xid.hpp"

#include <cctype>
#include <charconv>

namespace ccdiag {

namespace {

bool is_hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

std::optional<int64_t> to_int(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p == s.data()) return std::nullopt;
  return v;
}

void trim(std::string_view& s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
}

// Matches "dddd:bb:dd" hex at the start of s.
bool match_pci3(std::string_view s) {
  if (s.size() < 10) return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9})
    if (!is_hex(s[i])) return false;
  return s[4] == ':' && s[7] == ':';
}

}  // namespace

std::optional<XidEvent> parse_xid_line(std::string_view line) {
  const size_t at = line.find("NVRM: Xid (");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(at + 11);
  const size_t close = rest.find(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view inside = rest.substr(0, close);
  if (inside.substr(0, 4) == "PCI:") inside.remove_prefix(4);
  XidEvent ev;
  // A pasted line often has its address cut or masked ("(PCI:...)"): the
  // code still says what failed, the GPU is then unknown.
  if (match_pci3(inside)) {
    ev.pci = std::string(inside.substr(0, 10));
    for (char& c : ev.pci) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (auto gi = inside.find("GPU-I:"); gi != std::string_view::npos) {
    std::string_view g = inside.substr(gi + 6);
    ev.gpu_instance = static_cast<int>(to_int(g.substr(0, g.find_first_not_of("0123456789"))).value_or(0));
  }
  if (auto ci = inside.find("GPU-CI:"); ci != std::string_view::npos) {
    std::string_view g = inside.substr(ci + 7);
    ev.compute_instance = static_cast<int>(to_int(g.substr(0, g.find_first_not_of("0123456789"))).value_or(0));
  }
  // The code is the number after "): " — never the first digits after "Xid".
  rest = rest.substr(close + 1);
  if (rest.substr(0, 2) != ": ") return std::nullopt;
  rest.remove_prefix(2);
  const size_t end = rest.find_first_not_of("0123456789");
  auto code = to_int(rest.substr(0, end));
  if (!code || *code <= 0 || *code > 100000) return std::nullopt;
  ev.xid = static_cast<int>(*code);
  rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end);
  if (!rest.empty() && rest.front() == ',') rest.remove_prefix(1);
  trim(rest);
  if (rest.substr(0, 4) == "pid=") {
    std::string_view v = rest.substr(4);
    const size_t comma = v.find(',');
    std::string_view pid = v.substr(0, comma);
    if (auto p = to_int(pid)) ev.pid = *p;
    rest = comma == std::string_view::npos ? std::string_view{} : v.substr(comma + 1);
    trim(rest);
  }
  if (rest.substr(0, 5) == "name=") {
    std::string_view v = rest.substr(5);
    const size_t comma = v.find(',');
    std::string_view name = v.substr(0, comma);
    if (name != "<unknown>") ev.process_name = std::string(name);
    rest = comma == std::string_view::npos ? std::string_view{} : v.substr(comma + 1);
    trim(rest);
  }
  ev.message = std::string(rest);
  return ev;
}

std::optional<std::string> parse_fell_off_bus_line(std::string_view line) {
  if (line.find("has fallen off the bus") == std::string_view::npos) return std::nullopt;
  for (std::string_view marker : {std::string_view("NVRM: GPU at "), std::string_view("NVRM: GPU ")}) {
    const size_t at = line.find(marker);
    if (at == std::string_view::npos) continue;
    std::string_view bdf = line.substr(at + marker.size());
    if (bdf.substr(0, 4) == "PCI:") bdf.remove_prefix(4);
    if (bdf.size() >= 12 && match_pci3(bdf) && bdf[10] == '.' && std::isdigit(static_cast<unsigned char>(bdf[11])))
      return std::string(bdf.substr(0, 12));
  }
  return std::nullopt;
}

namespace {
// Meaning, likely cause and action from NVIDIA's Xid catalogue
// (docs.nvidia.com/deploy/xid-errors); the cause id and weight are ccdiag's:
// how strongly the Xid alone points at it.
constexpr XidInfo kXids[] = {
    {8, "FIFO idle timeout: GPU stopped processing", "driver or application hang", "restart app; repeated: reset GPU", "gpu_hung_kernel", 8},
    {13, "Graphics engine exception (SM warp/global exception)", "mostly application (kernel bug, out-of-bounds)", "restart app; if it follows the GPU: DCGM diag", "gpu_hung_kernel", 3},
    {31, "GPU memory page fault (MMU fault)", "application illegal address, or driver", "restart app; repeated on one GPU: investigate", "gpu_hung_kernel", 3},
    {32, "PBDMA error: corrupted push buffer stream", "driver, system memory or PCIe quality", "restart app; check AER on the path", "pcie_link_degraded", 3},
    {38, "FECS unimplemented firmware method", "driver/firmware", "informational; update driver", "", 1},
    {43, "Reset-channel verification error", "follow-up of an application fault", "ignore alone; follow the primary Xid", "", 1},
    {45, "Preemptive cleanup after previous errors", "consequence of another Xid or a killed process", "follow the other Xids; alone on NVSwitch: fabric manager", "", 1},
    {46, "GPU timeout: GPU stopped processing", "driver or hardware hang", "reset GPU; drain", "gpu_hung_kernel", 20},
    {48, "Double-bit (uncorrectable) ECC error", "GPU memory hardware", "drain; reset GPU; repeated: RMA", "gpu_ecc_or_memory_fault", 50},
    {54, "Auxiliary power not connected", "power cabling", "drain and fix power", "gpu_fell_off_bus", 5},
    {61, "PMU breakpoint / micro-controller warning", "firmware or hardware", "informational; watch for Xid 62", "", 1},
    {62, "PMU halt: internal micro-controller halted", "firmware, hardware or thermal", "reset GPU", "gpu_hung_kernel", 20},
    {63, "Row remapping / page retirement recorded", "degraded memory cell (handled)", "reset GPU to activate the remap; count per GPU", "gpu_ecc_or_memory_fault", 3},
    {64, "Row remapping / page retirement failure", "GPU memory hardware", "drain and reset; recurring: RMA", "gpu_ecc_or_memory_fault", 40},
    {68, "NVDEC0 exception", "video engine", "irrelevant to NCCL unless repeated", "", 1},
    {69, "Graphics engine class error", "application or driver", "restart app", "gpu_hung_kernel", 2},
    {74, "NVLink error", "NVLink link, connector, NVSwitch port or peer GPU", "drain; reset GPU/fabric; check NVLink counters and SXids", "gpu_xid_nvlink_fault", 50},
    {79, "GPU has fallen off the bus", "PCIe link loss: hardware, power, thermal, riser/slot", "drain and reboot the node; hardware ticket if repeated", "gpu_fell_off_bus", 200},
    {92, "Excessive single-bit ECC error rate", "GPU memory degrading", "warn; trend it", "gpu_ecc_or_memory_fault", 2},
    {94, "Contained memory error", "GPU memory error, contained", "restart app; GPU stays usable", "gpu_ecc_or_memory_fault", 20},
    {95, "Uncontained memory error", "GPU memory error, not containable", "drain and reset GPU", "gpu_ecc_or_memory_fault", 60},
    {109, "Context-switch timeout", "non-preemptible kernel, driver or hardware", "reset GPU; if one app every time: app", "gpu_hung_kernel", 15},
    {110, "Security fault error", "firmware or driver", "reset GPU", "gpu_hung_kernel", 10},
    {119, "GSP RPC timeout", "GSP firmware/driver, occasionally hardware", "reset GPU; frequent: driver update", "gpu_hung_kernel", 30},
    {120, "GSP error (GSP kernel exception)", "GSP firmware/driver", "reset GPU", "gpu_hung_kernel", 30},
    {121, "C2C link error (corrected)", "Grace-Hopper chip-to-chip link", "informational unless repeated", "", 1},
    {122, "SPI PMU RPC read failure", "firmware/hardware", "informational", "", 1},
    {123, "SPI PMU RPC write failure", "firmware/hardware", "informational", "", 1},
    {136, "NVLink ALI training failed", "NVLink signal integrity", "reset GPU; repeated: hardware", "nvlink_down_or_degraded", 30},
    {137, "NVLink privilege error (FLA)", "application or peer using an invalid fabric address", "follow the application", "", 1},
    {140, "Unrecovered ECC error escaped containment", "GPU memory hardware", "drain and reset", "gpu_ecc_or_memory_fault", 60},
    {143, "GPU initialization error", "hardware or driver at init", "reset; persistent: RMA", "gpu_fell_off_bus", 10},
    {144, "NVLink5 SAW error", "NVLink5 hardware", "decode sub-code; fatal: drain/reset", "gpu_xid_nvlink_fault", 20},
    {145, "NVLink5 RLW error", "NVLink5 hardware", "decode sub-code; fatal: drain/reset", "gpu_xid_nvlink_fault", 20},
    {146, "NVLink5 TLW error", "NVLink5 hardware", "decode sub-code; fatal: drain/reset", "gpu_xid_nvlink_fault", 20},
    {147, "NVLink5 TREX error", "NVLink5 hardware", "decode sub-code; fatal: drain/reset", "gpu_xid_nvlink_fault", 20},
    {148, "NVLink5 NVLPW_CTRL error", "NVLink5 hardware", "decode sub-code; fatal: drain/reset", "gpu_xid_nvlink_fault", 20},
    {149, "NVLink5 NETIR error", "NVLink5 hardware", "decode sub-code; fatal: drain/reset", "gpu_xid_nvlink_fault", 20},
    {150, "NVLink5 MSE error", "NVLink5 hardware", "decode sub-code; fatal: drain/reset", "gpu_xid_nvlink_fault", 20},
    {154, "GPU recovery action changed", "follows a preceding Xid; carries the action", "do the named action", "", 1},
    {155, "NVLink software-defined error", "software", "reset GPU", "gpu_xid_nvlink_fault", 5},
    {156, "Resource retirement event", "hardware resource retired", "reset to activate", "gpu_ecc_or_memory_fault", 3},
    {157, "Resource retirement failure", "hardware", "ticket", "gpu_ecc_or_memory_fault", 20},
    {158, "GPU fatal timeout", "hardware or driver", "reset GPU", "gpu_hung_kernel", 30},
    {159, "CHI non-data error", "coherent fabric / UVM", "investigate", "", 1},
    {167, "PCIe fatal timeout", "PCIe", "drain", "gpu_fell_off_bus", 50},
    {171, "Uncorrectable DRAM error", "HBM hardware", "treat as Xid 48", "gpu_ecc_or_memory_fault", 50},
    {172, "Uncorrectable SRAM error", "on-chip SRAM hardware", "treat as Xid 48", "gpu_ecc_or_memory_fault", 50},
};
}  // namespace

const XidInfo* find_xid(int xid) {
  for (const auto& x : kXids)
    if (x.xid == xid) return &x;
  return nullptr;
}

size_t xid_catalogue_size() { return sizeof kXids / sizeof kXids[0]; }

}  // namespace ccdiag
