// PCIe sysfs/config-space parsers against the kernel's exact formats
// (drivers/pci/pci-sysfs.c, drivers/pci/pcie/aer.c).
#include <catch2/catch.hpp>

#include <cstring>

#include "collectors/pcie/pcie_parse.hpp"

using namespace ccdiag::pcie;

TEST_CASE("link speed: current kernels, pre-5.7 kernels, and a link that is down") {
  CHECK(parse_link_speed("32.0 GT/s PCIe\n") == Approx(32.0));
  CHECK(parse_link_speed("2.5 GT/s PCIe") == Approx(2.5));
  CHECK(parse_link_speed("16 GT/s\n") == Approx(16.0));      // kernels <= 5.6
  CHECK(parse_link_speed("8.0 GT/s") == Approx(8.0));
  CHECK_FALSE(parse_link_speed("Unknown\n"));                 // no link
  CHECK_FALSE(parse_link_speed(""));
  CHECK_FALSE(parse_link_speed("x.y GT/s"));
  CHECK_FALSE(parse_link_speed("1.2.3 GT/s"));
}

TEST_CASE("link width and hex attributes") {
  CHECK(parse_link_width("16\n") == 16);
  CHECK(parse_link_width("0") == 0);
  CHECK_FALSE(parse_link_width("x16"));
  CHECK(parse_hex("0x030200\n") == 0x030200u);
  CHECK(parse_hex("0x10de") == 0x10deu);
  CHECK_FALSE(parse_hex("0x"));
  CHECK_FALSE(parse_hex("0xzz"));
}

TEST_CASE("AER files in both naming eras; the count is the last token") {
  const auto now = parse_aer_file("RxErr 3\nBadTLP 1\nBadDLLP 0\nRollover 0\nTimeout 0\nNonFatalErr 0\n"
                                  "CorrIntErr 0\nHeaderOF 0\nTOTAL_ERR_COR 4\n");
  REQUIRE(now.counters.size() == 8);
  CHECK(now.counters[0] == std::make_pair(std::string("RxErr"), int64_t{3}));
  CHECK(now.total == 4);
  const auto old = parse_aer_file("Receiver Error 7\nBad TLP 0\nRELAY_NUM Rollover 0\nSurprise Down Error 1\n"
                                  "cor_bit[15] 2\nTOTAL_ERR_FATAL 1\n");
  REQUIRE(old.counters.size() == 5);
  CHECK(old.counters[0].first == "Receiver Error");
  CHECK(old.counters[3] == std::make_pair(std::string("Surprise Down Error"), int64_t{1}));
  CHECK(old.counters[4].first == "cor_bit[15]");
  CHECK(old.total == 1);
  const auto bad = parse_aer_file("garbage\nRxErr notanumber\nRxErr -1\n\nBadTLP 2\n");
  CHECK(bad.counters.size() == 1);
  CHECK(bad.bad_lines == 3);
}

namespace {
std::string config_with_acs(uint16_t ctl, size_t size = 4096, int port_type = 6) {
  std::string b(4096, '\0');
  auto put16 = [&](size_t off, uint16_t v) { std::memcpy(&b[off], &v, 2); };
  auto put32 = [&](size_t off, uint32_t v) { std::memcpy(&b[off], &v, 4); };
  put16(0, 0x1000);
  put16(2, 0xc030);
  put16(6, 0x0010);
  b[0x34] = 0x40;
  b[0x40] = 0x10;
  put16(0x42, static_cast<uint16_t>((port_type << 4) | 2));
  put32(0x100, 0x0001u | (2u << 16) | (0x148u << 20));  // AER, next ACS
  put32(0x148, 0x000du | (1u << 16));                   // ACS, last
  put16(0x14c, 0x005f);
  put16(0x14e, ctl);
  return b.substr(0, size);
}
}  // namespace

TEST_CASE("config space: ACS control bits found by walking the extended capabilities") {
  const auto cs = parse_config_space(config_with_acs(0x001f));
  CHECK(cs.extended_visible);
  CHECK(cs.acs_present);
  REQUIRE(cs.acs_ctl);
  CHECK((*cs.acs_ctl & kAcsReqRedir) != 0);
  CHECK((*cs.acs_ctl & kAcsCmpltRedir) != 0);
  CHECK(cs.port_type == PortType::downstream);
  CHECK(acs_bits_string(*cs.acs_ctl) == "SrcValid+ TransBlk+ ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-");
  CHECK(acs_bits_string(*cs.acs_cap) == "SrcValid+ TransBlk+ ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans+");
  const auto off = parse_config_space(config_with_acs(0));
  CHECK(off.acs_ctl == uint16_t{0});
}

TEST_CASE("config space: unprivileged 64-byte read cannot see ACS; a lost device reads all-ones") {
  const auto cs = parse_config_space(config_with_acs(0x001f, 64));
  CHECK_FALSE(cs.extended_visible);
  CHECK_FALSE(cs.acs_present);
  CHECK_FALSE(cs.acs_ctl);
  CHECK(parse_config_space(std::string(256, '\xff')).all_ones);
  // A capability list that loops must end, not spin.
  std::string loop = config_with_acs(0);
  const uint32_t self = 0x0001u | (0x100u << 20);
  std::memcpy(&loop[0x100], &self, 4);
  CHECK_FALSE(parse_config_space(loop).acs_present);
}

TEST_CASE("device path -> chain from the root port down; topology levels; ACS-relevant bridges") {
  const auto gpu = bdf_chain("../../../devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:00.0/0000:18:00.0");
  REQUIRE(gpu.size() == 4);
  CHECK(gpu.front() == "0000:15:01.0");
  CHECK(gpu.back() == "0000:18:00.0");
  const auto nic = bdf_chain("../../../devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:01.0/0000:19:00.0");
  const auto far = bdf_chain("../../../devices/pci0000:9a/0000:9a:01.0/0000:9b:00.0/0000:9c:00.0/0000:9d:00.0");
  CHECK(topology_level(gpu, nic) == "PIX");
  CHECK(topology_level(gpu, far) == "SYS");
  CHECK(p2p_path_bridges(gpu, nic) == std::vector<std::string>{"0000:17:00.0", "0000:17:01.0"});
  CHECK(p2p_path_bridges(gpu, far).empty());  // different root ports: the root complex routes it anyway
  CHECK(bdf_chain("../../devices/platform/foo").empty());
  CHECK(looks_like_bdf("0000:3b:00.0"));
  CHECK_FALSE(looks_like_bdf("0000:3b:00"));
}

TEST_CASE("kernel command line IOMMU switches, last one wins") {
  const auto c = parse_iommu_cmdline("BOOT_IMAGE=/vmlinuz ro intel_iommu=off intel_iommu=on iommu=pt pci=realloc,noaer\n");
  CHECK(c.intel_iommu == "on");
  CHECK(c.iommu == "pt");
  CHECK(c.pci_noaer);
  CHECK_FALSE(parse_iommu_cmdline("quiet splash").pci_noaer);
}
