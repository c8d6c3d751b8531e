// Fuzzes the PCIe sysfs / config-space parsers: config bytes, AER files, link
// attributes, device-link targets, the kernel command line.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "collectors/pcie/pcie_parse.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  using namespace ccdiag::pcie;
  const auto cs = parse_config_space(text);
  if (cs.acs_ctl) (void)acs_bits_string(*cs.acs_ctl);
  (void)parse_aer_file(text);
  (void)parse_link_speed(text);
  (void)parse_link_width(text);
  (void)parse_hex(text);
  const auto chain = bdf_chain(text);
  (void)topology_level(chain, bdf_chain(text.substr(text.size() / 2)));
  (void)p2p_path_bridges(chain, bdf_chain(text.substr(text.size() / 3)));
  (void)parse_iommu_cmdline(text);
  return 0;
}
