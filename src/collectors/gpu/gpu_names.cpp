#include "collectors/gpu/gpu_names.hpp"

#include <cctype>

#include <fmt/format.h>

namespace ccdiag::gpu {

namespace {
bool all_hex(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}
}  // namespace

std::optional<std::string> normalize_bdf(std::string_view s) {
  // domain:bus:device[.function]; the domain is 4 or 8 hex digits.
  const auto c1 = s.find(':');
  if (c1 == std::string_view::npos) return std::nullopt;
  const auto c2 = s.find(':', c1 + 1);
  if (c2 == std::string_view::npos) return std::nullopt;
  std::string_view domain = s.substr(0, c1), bus = s.substr(c1 + 1, c2 - c1 - 1), rest = s.substr(c2 + 1);
  std::string_view dev = rest, fn = "0";
  if (const auto dot = rest.find('.'); dot != std::string_view::npos) {
    dev = rest.substr(0, dot);
    fn = rest.substr(dot + 1);
  }
  if (!all_hex(domain) || domain.size() > 8 || !all_hex(bus) || bus.size() > 2 || !all_hex(dev) || dev.size() > 2 ||
      !all_hex(fn) || fn.size() > 1)
    return std::nullopt;
  const unsigned long d = std::stoul(std::string(domain), nullptr, 16);
  if (d > 0xffff) return std::nullopt;
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", d, std::stoul(std::string(bus), nullptr, 16),
                     std::stoul(std::string(dev), nullptr, 16), std::stoul(std::string(fn), nullptr, 16));
}

std::vector<std::string> clocks_event_names(uint64_t reasons) {
  static const std::pair<uint64_t, const char*> bits[] = {
      {0x1, "gpu_idle"},           {0x2, "applications_clocks_setting"}, {0x4, "sw_power_cap"},
      {0x8, "hw_slowdown"},        {0x10, "sync_boost"},                 {0x20, "sw_thermal_slowdown"},
      {0x40, "hw_thermal_slowdown"}, {0x80, "hw_power_brake_slowdown"},  {0x100, "display_clock_setting"}};
  std::vector<std::string> out;
  uint64_t known = 0;
  for (const auto& [bit, name] : bits) {
    known |= bit;
    if (reasons & bit) out.emplace_back(name);
  }
  for (int i = 0; i < 64; ++i) {
    const uint64_t bit = uint64_t{1} << i;
    if ((reasons & bit) && !(known & bit)) out.push_back(fmt::format("bit_0x{:x}", bit));
  }
  return out;
}

std::string fabric_state_name(int state) {
  switch (state) {
    case 0: return "not_supported";
    case 1: return "not_started";
    case 2: return "in_progress";
    case 3: return "completed";
    default: return "state_" + std::to_string(state);
  }
}

std::string fabric_health_summary_name(int v) {
  switch (v) {
    case 0: return "not_applicable";
    case 1: return "healthy";
    case 2: return "unhealthy";
    case 3: return "limited_capacity";
    default: return "summary_" + std::to_string(v);
  }
}

std::string p2p_status_name(int status) {
  switch (status) {
    case 0: return "ok";
    case 1: return "chipset_not_supported";
    case 2: return "gpu_not_supported";
    case 3: return "ioh_topology_not_supported";
    case 4: return "disabled_by_regkey";
    case 5: return "not_supported";
    case 6: return "unknown";
    default: return "status_" + std::to_string(status);
  }
}

std::string topology_level_name(int level) {
  switch (level) {
    case 0: return "internal";
    case 10: return "PIX";
    case 20: return "PXB";
    case 30: return "PHB";
    case 40: return "NODE";
    case 50: return "SYS";
    default: return "level_" + std::to_string(level);
  }
}

std::string nvlink_remote_type_name(int type) {
  switch (type) {
    case 0: return "gpu";
    case 1: return "ibmnpu";
    case 2: return "switch";
    default: return "unknown";
  }
}

std::string recovery_action_name(int action) {
  switch (action) {
    case 0: return "none";
    case 1: return "gpu_reset";
    case 2: return "node_reboot";
    case 3: return "drain_p2p";
    case 4: return "drain_and_reset";
    case 5: return "recover_imex_domain";
    default: return "action_" + std::to_string(action);
  }
}

}  // namespace ccdiag::gpu
