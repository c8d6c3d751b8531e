// PCIe path probe (docs/probe.md, probe pcie). For every NVIDIA GPU (vendor
// 0x10de, class 0x0302xx/0x0300xx) and every RDMA NIC it walks the sysfs device
// path up to the root port and records, for each hop, the link speed/width,
// the AER counters and (as root) the ACS control bits from config space; plus
// the host's IOMMU state and GPU↔NIC affinity.
//
// Host paths read (through SysRoot): /sys/bus/pci/devices/*/{class,vendor,device,
// current_link_speed,max_link_speed,current_link_width,max_link_width,numa_node,
// local_cpulist,aer_dev_*,aer_rootport_total_err_*,config,iommu_group},
// /sys/class/infiniband/*/device, /sys/class/iommu/, /sys/kernel/iommu_groups/*/type,
// /proc/cmdline, /proc/driver/nvidia/gpus/*/information.
//
// Evidence (docs/probe.md documents every data field): pcie.link (one per GPU
// and NIC endpoint, with its path), pcie.aer (one per device on any path),
// pcie.acs (one per bridge on any path), host.iommu (one per host).
// Without CAP_SYS_ADMIN the kernel hands out only 64 bytes of config space:
// ACS is then `unavailable` ("unknown"), never reported healthy.
#pragma once

#include "collectors/collector.hpp"

namespace ccdiag {

CollectorOutput collect_pcie(const CollectContext& ctx);

}  // namespace ccdiag
