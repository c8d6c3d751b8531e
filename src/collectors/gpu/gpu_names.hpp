// Pure decoders for NVML values recorded in GPU evidence: bus ids, clocks-event
// (throttle) reason bits, fabric states, P2P status and topology levels
// (enum values from NVML's public header, nvml.h). Total: unknown values get a
// stable fallback name, never an exception.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ccdiag::gpu {

// NVML "00000000:18:00.0" / legacy "0000:18:00.0" / Xid-style "0000:18:00"
// -> sysfs form "0000:18:00.0" (4-digit domain, lower case). nullopt when the
// text is not a PCI address.
std::optional<std::string> normalize_bdf(std::string_view bus_id);

// Names of the set bits of nvmlClocksEventReasons, e.g. 0x41 ->
// ["gpu_idle", "hw_thermal_slowdown"]; unknown bits as "bit_0x...".
std::vector<std::string> clocks_event_names(uint64_t reasons);

// Bits that cut clocks hard enough to make a rank slow: HW slowdown (0x8),
// SW thermal (0x20), HW thermal (0x40), HW power brake (0x80).
inline constexpr uint64_t kSlowdownReasons = 0x8 | 0x20 | 0x40 | 0x80;

std::string fabric_state_name(int state);        // 0 not_supported .. 3 completed
std::string fabric_health_summary_name(int v);   // 0 not_applicable, 1 healthy, 2 unhealthy, 3 limited_capacity
std::string p2p_status_name(int status);          // 0 ok .. 6 unknown
std::string topology_level_name(int level);       // 0 internal, 10 PIX, 20 PXB, 30 PHB, 40 NODE, 50 SYS
std::string nvlink_remote_type_name(int type);    // 0 gpu, 1 ibmnpu, 2 switch, else unknown
std::string recovery_action_name(int action);     // 0 none, 1 gpu_reset, 2 node_reboot, 3 drain_p2p, 4 drain_and_reset

}  // namespace ccdiag::gpu
