// Pure NVML decoders: bus ids, clocks-event bits, enum names.
#include <catch2/catch.hpp>

#include "collectors/gpu/gpu_names.hpp"

using namespace ccdiag::gpu;

TEST_CASE("NVML, legacy and Xid bus ids normalise to the sysfs BDF") {
  CHECK(normalize_bdf("00000000:18:00.0") == "0000:18:00.0");  // nvmlPciInfo_t.busId
  CHECK(normalize_bdf("0000:9A:00.0") == "0000:9a:00.0");      // busIdLegacy, upper case
  CHECK(normalize_bdf("0000:3b:00") == "0000:3b:00.0");        // Xid lines drop the function
  CHECK(normalize_bdf("00000001:DB:1F.7") == "0001:db:1f.7");
  CHECK_FALSE(normalize_bdf("GPU-5f0a1c2e"));
  CHECK_FALSE(normalize_bdf(""));
  CHECK_FALSE(normalize_bdf("0000:18"));
  CHECK_FALSE(normalize_bdf("0000:180:00.0"));
  CHECK_FALSE(normalize_bdf("000100000:18:00.0"));
  CHECK_FALSE(normalize_bdf("00010000:18:00.0"));  // domain beyond 16 bits
  CHECK_FALSE(normalize_bdf("zz:18:00.0"));
}

TEST_CASE("clocks-event reason bits are named, unknown bits kept") {
  CHECK(clocks_event_names(0).empty());
  CHECK(clocks_event_names(0x1) == std::vector<std::string>{"gpu_idle"});
  CHECK(clocks_event_names(0x60) == std::vector<std::string>{"sw_thermal_slowdown", "hw_thermal_slowdown"});
  CHECK(clocks_event_names(0x80 | 0x400) == std::vector<std::string>{"hw_power_brake_slowdown", "bit_0x400"});
  CHECK((kSlowdownReasons & 0x1) == 0);   // idle is not a slowdown
  CHECK((kSlowdownReasons & 0x4) == 0);   // a power cap alone is normal under load
  CHECK((kSlowdownReasons & 0x40) != 0);
}

TEST_CASE("enum names are stable and total") {
  CHECK(fabric_state_name(1) == "not_started");
  CHECK(fabric_state_name(3) == "completed");
  CHECK(fabric_state_name(9) == "state_9");
  CHECK(p2p_status_name(3) == "ioh_topology_not_supported");
  CHECK(topology_level_name(20) == "PXB");
  CHECK(topology_level_name(50) == "SYS");
  CHECK(nvlink_remote_type_name(2) == "switch");
  CHECK(nvlink_remote_type_name(0xff) == "unknown");
  CHECK(recovery_action_name(0) == "none");
  CHECK(recovery_action_name(2) == "node_reboot");
  CHECK(fabric_health_summary_name(2) == "unhealthy");
}
