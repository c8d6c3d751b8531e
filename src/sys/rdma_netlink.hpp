// RDMA netlink (NETLINK_RDMA, client RDMA_NL_NLDEV): list every device, then
// dump each device's queue pairs with RDMA_NLDEV_CMD_RES_QP_GET — what
// `rdma res show qp` prints, without iproute2 (the kernel's include/uapi/rdma/rdma_netlink.h;
// fields per QP: fill_res_qp_entry in drivers/infiniband/core/nldev.c).
//
// The parser is pure and works on byte buffers (unit-tested with messages
// built in the test, fuzzed); the socket half only sends requests and feeds
// the replies to it. Listing QPs needs no capability.
// Failure modes: socket() fails with EPROTONOSUPPORT when ib_core is not
// loaded -> `subsystem_absent` (a clean "unavailable", not an error); other
// errors are returned as Error. Every receive is bounded by the deadline.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ccdiag/result.hpp"

namespace ccdiag {

struct RdmaNlDevice {
  uint32_t index = 0;
  std::string name;
};

struct RdmaNlQp {
  uint32_t dev_index = 0;
  std::string dev_name;
  std::optional<uint32_t> port;      // absent right after create
  uint32_t lqpn = 0;
  std::optional<uint32_t> rqpn;      // RC/UC only
  std::optional<uint32_t> sq_psn;
  std::optional<uint32_t> rq_psn;
  std::optional<uint8_t> type;       // ib_qp_type: 2 RC, 3 UC, 4 UD, ...
  std::optional<uint8_t> state;      // 0 RESET 1 INIT 2 RTR 3 RTS 4 SQD 5 SQE 6 ERR
  std::optional<uint8_t> path_mig_state;
  std::optional<uint32_t> pid;       // user QPs; a thread id possibly (map via Tgid)
  std::string kern_name;             // kernel-owned QPs
  std::optional<uint32_t> pdn;
};

std::string_view rdma_qp_state_name(uint8_t state);  // "RTS", "ERR", ... "UNKNOWN"
std::string_view rdma_qp_type_name(uint8_t type);    // "RC", "UD", ... "UNKNOWN"

// Everything found in a buffer of one or more netlink messages.
struct RdmaNlParse {
  std::vector<RdmaNlDevice> devices;  // from CMD_GET replies
  std::vector<RdmaNlQp> qps;          // from CMD_RES_QP_GET replies
  bool done = false;                  // NLMSG_DONE seen
  std::optional<int> error;           // NLMSG_ERROR with a non-zero code (positive errno)
  size_t bad = 0;                     // truncated or malformed messages / attributes skipped
};
void parse_rdma_nl(std::string_view bytes, RdmaNlParse& out);

struct RdmaQpDump {
  bool subsystem_absent = false;      // NETLINK_RDMA not supported (no ib_core)
  std::vector<RdmaNlDevice> devices;
  std::vector<RdmaNlQp> qps;
  size_t bad = 0;
};
// Live: CMD_GET dump, then one CMD_RES_QP_GET dump per device.
Result<RdmaQpDump> dump_rdma_qps(std::chrono::milliseconds deadline);

}  // namespace ccdiag
