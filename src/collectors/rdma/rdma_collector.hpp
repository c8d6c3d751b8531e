// RDMA probe (docs/probe.md, probe rdma): every device under
// /sys/class/infiniband, each port's state, phys_state, rate, link_layer, LIDs
// and GID table (type and netdev per slot; empty slots fail with EINVAL and are
// skipped), `counters/` and `hw_counters/` sampled twice `interval` apart, the
// netdevs of each port (operstate, mtu, carrier, carrier_changes), and the
// queue pairs from RDMA netlink attributed to processes (Tgid) and ranks.
//
// Host paths read (through SysRoot): /sys/class/infiniband/<dev>/{device,fw_ver,
// hca_type,node_guid,ports/<p>/{state,phys_state,rate,link_layer,lid,sm_lid,gids/*,
// gid_attrs/{types,ndevs}/*,counters/*,hw_counters/*}}, /sys/class/net/<if>/{operstate,
// mtu,carrier,carrier_changes,speed}, /proc/<pid>/status.
//
// Fixtures (--root): the second counter sample is read from <root>/t1/<same path>
// when that tree exists (no sleep; the interval is taken as given), and QPs from
// <root>/rdma-res-qp.json (the output of `rdma -j res show qp`), since neither a
// clock nor a netlink socket lives in a directory.
//
// Evidence: rdma.port, rdma.counters (per port), net.netdev (per netdev), rdma.qp
// (one per host). No RDMA subsystem -> rdma.port `unavailable` and "skipped" in
// unchecked, never an error.
#pragma once

#include <chrono>

#include "collectors/collector.hpp"

namespace ccdiag {

struct RdmaProbeOptions {
  std::chrono::milliseconds interval{1000};  // between the two counter samples
  std::chrono::milliseconds netlink_deadline{2000};
};

CollectorOutput collect_rdma(const CollectContext& ctx, const RdmaProbeOptions& opts = {});

}  // namespace ccdiag
