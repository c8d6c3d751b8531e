#include "collectors/pcie/pcie_parse.hpp"

#include "collectors/sysfs_number.hpp"

#include <algorithm>
#include <charconv>

namespace ccdiag::pcie {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

uint16_t le16(std::string_view b, size_t off) {
  return static_cast<uint16_t>(static_cast<uint8_t>(b[off]) | (static_cast<uint8_t>(b[off + 1]) << 8));
}
uint32_t le32(std::string_view b, size_t off) {
  return static_cast<uint32_t>(le16(b, off)) | (static_cast<uint32_t>(le16(b, off + 2)) << 16);
}

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

}  // namespace

std::optional<double> parse_link_speed(std::string_view text) {
  text = trim(text);
  const size_t gt = text.find("GT/s");
  if (gt == std::string_view::npos) return std::nullopt;  // "Unknown": link down
  std::string_view num = trim(text.substr(0, gt));
  if (num.empty() || num.size() > 8) return std::nullopt;
  const auto parsed = parse_sysfs_decimal(num);
  if (!parsed) return std::nullopt;
  const double v = *parsed;
  if (v <= 0 || v > 1024) return std::nullopt;
  return v;
}

std::optional<int> parse_link_width(std::string_view text) {
  text = trim(text);
  int v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || v < 0 || v > 64) return std::nullopt;
  return v;
}

std::optional<uint32_t> parse_hex(std::string_view text) {
  text = trim(text);
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) text.remove_prefix(2);
  if (text.empty() || text.size() > 8) return std::nullopt;
  uint32_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v, 16);
  if (ec != std::errc() || p != text.data() + text.size()) return std::nullopt;
  return v;
}

AerFile parse_aer_file(std::string_view text) {
  AerFile out;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    if (line.empty()) continue;
    const size_t sp = line.find_last_of(" \t");
    if (sp == std::string_view::npos) {
      ++out.bad_lines;
      continue;
    }
    std::string_view name = trim(line.substr(0, sp));
    std::string_view num = line.substr(sp + 1);
    int64_t v = 0;
    auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
    if (ec != std::errc() || p != num.data() + num.size() || name.empty() || v < 0) {
      ++out.bad_lines;
      continue;
    }
    if (name.substr(0, 10) == "TOTAL_ERR_") out.total = v;
    else out.counters.emplace_back(std::string(name), v);
  }
  return out;
}

std::string_view to_string(PortType t) {
  switch (t) {
    case PortType::endpoint: return "endpoint";
    case PortType::legacy_endpoint: return "legacy_endpoint";
    case PortType::root_port: return "root_port";
    case PortType::upstream: return "switch_upstream";
    case PortType::downstream: return "switch_downstream";
    case PortType::pcie_to_pci: return "pcie_to_pci_bridge";
    case PortType::rc_integrated: return "rc_integrated_endpoint";
    case PortType::rc_event_collector: return "rc_event_collector";
    case PortType::other: return "other";
  }
  return "other";
}

ConfigSpace parse_config_space(std::string_view b) {
  ConfigSpace cs;
  cs.size = b.size();
  if (b.size() < 4) return cs;
  if (le16(b, 0) == 0xffff) {
    cs.all_ones = true;  // no device answers: reads of a lost device complete with all-ones
    return cs;
  }
  cs.extended_visible = b.size() >= 4096;
  if (b.size() < 64) return cs;
  // Standard capability list (status bit 4 says it exists); the PCIe capability
  // lives beyond the 64 bytes unprivileged readers get, so port_type needs root.
  const uint16_t status = le16(b, 0x06);
  if (status & 0x10) {
    size_t ptr = static_cast<uint8_t>(b[0x34]) & ~3u;
    for (int guard = 0; ptr >= 0x40 && ptr + 4 <= b.size() && guard < 48; ++guard) {
      const uint8_t id = static_cast<uint8_t>(b[ptr]);
      if (id == 0x10) {
        const uint16_t caps = le16(b, ptr + 2);
        const int t = (caps >> 4) & 0xf;
        switch (t) {
          case 0: case 1: case 4: case 5: case 6: case 7: case 9: case 10: cs.port_type = static_cast<PortType>(t); break;
          default: cs.port_type = PortType::other;
        }
        break;
      }
      ptr = static_cast<uint8_t>(b[ptr + 1]) & ~3u;
    }
  }
  if (!cs.extended_visible) return cs;
  size_t off = 0x100;
  for (int guard = 0; off >= 0x100 && off + 8 <= b.size() && guard < 96; ++guard) {
    const uint32_t hdr = le32(b, off);
    if (hdr == 0 || hdr == 0xffffffffu) break;
    if ((hdr & 0xffff) == 0x000d) {  // ACS extended capability
      cs.acs_present = true;
      cs.acs_cap = le16(b, off + 4);
      cs.acs_ctl = le16(b, off + 6);
      break;
    }
    const size_t next = (hdr >> 20) & 0xffc;
    if (next <= off) break;  // the list only moves forward; a loop is corrupt data
    off = next;
  }
  return cs;
}

std::string acs_bits_string(uint16_t bits) {
  std::string s;
  for (int i = 0; i < 7; ++i) {
    if (i) s.push_back(' ');
    s += kAcsBitNames[i];
    s.push_back((bits >> i) & 1 ? '+' : '-');
  }
  return s;
}

bool looks_like_bdf(std::string_view s) {
  // dddd:bb:dd.f
  if (s.size() != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.') return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9})
    if (!is_hex(s[i])) return false;
  return s[11] >= '0' && s[11] <= '7';
}

std::vector<std::string> bdf_chain(std::string_view target) {
  std::vector<std::string> out;
  const size_t at = target.find("devices/pci");
  if (at == std::string_view::npos) return out;
  std::string_view rest = target.substr(at + 8);
  const size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return out;
  rest = rest.substr(slash + 1);  // skip pciDDDD:BB (the host bridge)
  while (!rest.empty()) {
    const size_t s = rest.find('/');
    std::string_view part = rest.substr(0, s);
    rest = s == std::string_view::npos ? std::string_view{} : rest.substr(s + 1);
    if (looks_like_bdf(part)) out.emplace_back(part);
    else if (!part.empty()) break;  // a non-device directory ends the chain (e.g. "infiniband")
  }
  return out;
}

IommuCmdline parse_iommu_cmdline(std::string_view cmdline) {
  IommuCmdline c;
  while (!cmdline.empty()) {
    const size_t sp = cmdline.find_first_of(" \t\n");
    std::string_view tok = cmdline.substr(0, sp);
    cmdline = sp == std::string_view::npos ? std::string_view{} : cmdline.substr(sp + 1);
    const size_t eq = tok.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view key = tok.substr(0, eq), val = tok.substr(eq + 1);
    if (key == "intel_iommu") c.intel_iommu = std::string(val);
    else if (key == "amd_iommu") c.amd_iommu = std::string(val);
    else if (key == "iommu") c.iommu = std::string(val);
    else if (key == "iommu.passthrough") c.passthrough = std::string(val);
    else if (key == "pcie_acs_override") c.acs_override = std::string(val);
    else if (key == "pci") {
      // pci= takes a comma-separated list
      if (("," + std::string(val) + ",").find(",noaer,") != std::string::npos) c.pci_noaer = true;
    }
  }
  return c;
}

namespace {
size_t common_prefix(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}
}  // namespace

std::string topology_level(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.empty() || b.empty()) return "SYS";
  const size_t n = common_prefix(a, b);
  if (n == 0) {
    // Different root ports: same host bridge (domain:bus) is PHB, else SYS.
    return a[0].substr(0, 7) == b[0].substr(0, 7) ? "PHB" : "SYS";
  }
  // Common ancestors [0, n): the root port, then switch ports. Only the root
  // port in common -> PHB; the divergence right under one switch -> PIX.
  if (n == 1) return "PHB";
  const size_t below_a = a.size() - n, below_b = b.size() - n;
  return (below_a <= 2 && below_b <= 2) ? "PIX" : "PXB";
}

std::vector<std::string> p2p_path_bridges(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<std::string> out;
  const size_t n = common_prefix(a, b);
  // Devices under different root ports always meet in the root complex: ACS
  // cannot redirect traffic that already goes up, so no bridge matters there.
  if (n == 0) return out;
  // Below the common ancestor, every bridge (all but the endpoint) can redirect.
  for (const auto* chain : {&a, &b})
    for (size_t i = n; i + 1 < chain->size(); ++i)
      if (std::find(out.begin(), out.end(), (*chain)[i]) == out.end()) out.push_back((*chain)[i]);
  return out;
}

}  // namespace ccdiag::pcie
