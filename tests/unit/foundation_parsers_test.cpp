// Pure parsers of the foundation: Xid lines, kernel log formats, host facts.
#include <catch2/catch.hpp>

#include "collectors/host/host_collectors.hpp"
#include "collectors/kernel/kernel_log.hpp"
#include "collectors/kernel/xid.hpp"

using namespace ccdiag;

TEST_CASE("Xid lines in every driver format") {
  auto a = parse_xid_line("NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.");
  REQUIRE(a);
  CHECK(a->xid == 79);
  CHECK(a->pci == "0000:3b:00");
  CHECK(a->pid == 1234);
  CHECK(a->process_name == "python");
  CHECK(a->message == "GPU has fallen off the bus.");

  auto mig = parse_xid_line("[ 812.1] NVRM: Xid (PCI:0000:c1:00 GPU-I:05 GPU-CI:01): 31, pid=77, name=train, Ch 00000008");
  REQUIRE(mig);
  CHECK(mig->xid == 31);
  CHECK(mig->gpu_instance == 5);
  CHECK(mig->compute_instance == 1);

  auto unknown = parse_xid_line("NVRM: Xid (PCI:0000:90:00): 45, pid='<unknown>', name=<unknown>, Ch 00000010");
  REQUIRE(unknown);
  CHECK_FALSE(unknown->pid.has_value());
  CHECK(unknown->process_name.empty());

  auto old = parse_xid_line("NVRM: Xid (0000:03:00): 14, Channel 00000001");
  REQUIRE(old);
  CHECK(old->xid == 14);
  CHECK(old->message == "Channel 00000001");

  // The code is after the parenthesis, never the digits of the PCI address.
  auto legacy = parse_xid_line("NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off the bus.");
  REQUIRE(legacy);
  CHECK(legacy->xid == 79);

  // A masked or cut address (as pasted in issue threads) keeps the code; the GPU is unknown.
  auto masked = parse_xid_line("kernel: NVRM: Xid (PCI:...): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 11 (0x00000000)");
  REQUIRE(masked);
  CHECK(masked->xid == 145);
  CHECK(masked->pci.empty());
  CHECK(parse_xid_line("NVRM: Xid (PCI:zz): 79, x")->pci.empty());
  CHECK_FALSE(parse_xid_line("NVRM: Xid (PCI:0000:3b:00) 79"));
  CHECK_FALSE(parse_xid_line("NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15"));
  CHECK_FALSE(parse_xid_line("NVRM: Xid (PCI:0000:3b:00): , pid=1"));
}

TEST_CASE("fell off the bus lines give the BDF with function") {
  CHECK(parse_fell_off_bus_line("NVRM: GPU 0000:2b:00.0: GPU has fallen off the bus.") == "0000:2b:00.0");
  CHECK(parse_fell_off_bus_line("NVRM: GPU at 0000:02:00.0 has fallen off the bus.") == "0000:02:00.0");
  CHECK_FALSE(parse_fell_off_bus_line("NVRM: GPU at PCI:0000:2b:00: GPU-0b11d014"));
}

TEST_CASE("Xid catalogue covers at least 40 codes with actions") {
  CHECK(xid_catalogue_size() >= 40);
  const XidInfo* x79 = find_xid(79);
  REQUIRE(x79);
  CHECK(std::string(x79->catalogue_cause) == "gpu_fell_off_bus");
  CHECK(find_xid(48)->weight > find_xid(63)->weight);  // DBE is decisive, a remap record is not
  CHECK(find_xid(99999) == nullptr);
}

TEST_CASE("kernel log lines in kmsg, dmesg and journal JSON formats") {
  CHECK(kernel_line_message("4,1731,8123617543,-;NVRM: Xid (PCI:0000:3b:00): 79, x") == "NVRM: Xid (PCI:0000:3b:00): 79, x");
  CHECK(kernel_line_message("4,1731,8123617543,-,caller=T123;hello") == "hello");
  CHECK(kernel_line_message("[ 8123.617543] hello") == "hello");
  CHECK(kernel_line_message(R"({"MESSAGE":"hello","PRIORITY":"4"})") == "hello");
  CHECK(kernel_line_message(R"({"MESSAGE":[104,105]})") == "hi");
  bool bad = false;
  kernel_line_message(R"({"MESSAGE":)", &bad);
  CHECK(bad);
}

TEST_CASE("parse_kernel_log turns Xids into findings that support catalogue causes") {
  const std::string log =
      "6,1,0,-;Linux version 6.8.0\n"
      "4,1737,8123617562,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=48213, name=python, GPU has fallen off the bus.\n"
      "{broken json\n";
  auto p = parse_kernel_log(log, "node:raw/kernel.log", "node");
  REQUIRE(p.set.findings.size() == 1);
  const auto& f = p.set.findings[0];
  CHECK(f.id == "kernel.xid");
  CHECK(f.subject.gpu == "0000:3b:00.0");
  CHECK(f.subject.host == "node");
  CHECK(f.provenance.at(0).line == 2);
  REQUIRE(f.supports.size() == 1);
  CHECK(f.supports[0].cause == "gpu_fell_off_bus");
  CHECK(p.skipped == 1);
}

TEST_CASE("host facts: NCCL version from file names, driver version, /dev/shm size") {
  CHECK(nccl_version_from_soname("libnccl.so.2.28.9") == "2.28.9");
  CHECK_FALSE(nccl_version_from_soname("libnccl.so.2"));
  CHECK_FALSE(nccl_version_from_soname("libnccl-net.so"));
  CHECK(driver_version_from_proc("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\nGCC version: gcc") == "550.54.15");
  CHECK(dev_shm_size_from_mounts("shm /dev/shm tmpfs rw,nosuid,nodev,noexec,relatime,size=65536k,inode64 0 0\n") == 64LL << 20);
  CHECK_FALSE(dev_shm_size_from_mounts("tmpfs /dev/shm tmpfs rw,nosuid,nodev,inode64 0 0\n"));
  CHECK_FALSE(dev_shm_size_from_mounts("tmpfs /run tmpfs rw,size=65536k 0 0\n"));
}
