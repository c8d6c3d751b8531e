// RDMA sysfs formats (the kernel's Documentation/ABI/stable/sysfs-class-infiniband) and the netlink
// QP parser on constructed buffers (include/uapi/rdma/rdma_netlink.h, drivers/infiniband/core/nldev.c).
#include <catch2/catch.hpp>

#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "collectors/rdma/rdma_parse.hpp"
#include "sys/rdma_netlink.hpp"

using namespace ccdiag;

TEST_CASE("port state, phys_state and rate as the kernel writes them") {
  const auto s = rdma::parse_coded("4: ACTIVE\n");
  REQUIRE(s);
  CHECK(s->code == 4);
  CHECK(s->name == "ACTIVE");
  CHECK(rdma::parse_coded("5: LinkUp")->name == "LinkUp");
  CHECK(rdma::parse_coded("0: <unknown>")->name == "<unknown>");
  CHECK_FALSE(rdma::parse_coded("ACTIVE"));
  const auto r = rdma::parse_rate("400 Gb/sec (4X NDR)\n");
  REQUIRE(r);
  CHECK(r->gbps == Approx(400));
  CHECK(r->lanes == 4);
  CHECK(r->speed == "NDR");
  CHECK(rdma::parse_rate("2.5 Gb/sec (1X SDR)")->gbps == Approx(2.5));
  const auto old_sdr = rdma::parse_rate("2.5 Gb/sec (1X)");  // old kernels print no speed word for SDR
  REQUIRE(old_sdr);
  CHECK(old_sdr->lanes == 1);
  CHECK(old_sdr->speed.empty());
  CHECK(rdma::parse_rate("25 Gb/sec (1X EDR)")->lanes == 1);
  CHECK_FALSE(rdma::parse_rate("fast"));
}

TEST_CASE("counters: decimal values, old 'N/A (no PMA)', 32-bit wrap of mlx5 q-counters") {
  CHECK(rdma::parse_counter("92837465123\n") == uint64_t{92837465123});
  CHECK_FALSE(rdma::parse_counter("N/A (no PMA)"));
  CHECK(rdma::counter_delta(10, 15, 0) == 5);
  CHECK(rdma::counter_delta(0xfffffff0ULL, 0x10, 32) == 0x20);
  CHECK(rdma::counter_delta(500, 3, 0) == 3);  // cleared between the samples
  CHECK(rdma::counter_wraps_32("local_ack_timeout_err", true));
  CHECK_FALSE(rdma::counter_wraps_32("np_cnp_sent", true));
  CHECK_FALSE(rdma::counter_wraps_32("symbol_error", false));
  CHECK(rdma::classify_counter("link_downed") == rdma::CounterClass::link_event);
  CHECK(rdma::classify_counter("req_transport_retries_exceeded") == rdma::CounterClass::transport_fatal);
  CHECK(rdma::classify_counter("port_xmit_data") == rdma::CounterClass::data_words);
  CHECK(rdma::classify_counter("out_of_sequence") == rdma::CounterClass::loss);
  CHECK(rdma::classify_counter("retry_exceeded_err") == rdma::CounterClass::transport_fatal);  // rxe's name
}

namespace {
// Builders for netlink bytes exactly as the kernel lays them out.
void put_attr(std::string& b, uint16_t type, const void* data, size_t len) {
  nlattr a{static_cast<uint16_t>(NLA_HDRLEN + len), type};
  b.append(reinterpret_cast<const char*>(&a), sizeof a);
  b.append(static_cast<const char*>(data), len);
  b.append(NLA_ALIGN(len) - len, '\0');
}
void put_u32(std::string& b, uint16_t type, uint32_t v) { put_attr(b, type, &v, 4); }
void put_u8(std::string& b, uint16_t type, uint8_t v) { put_attr(b, type, &v, 1); }
void put_str(std::string& b, uint16_t type, const std::string& s) { put_attr(b, type, s.c_str(), s.size() + 1); }
std::string nest(uint16_t type, const std::string& inner) {
  std::string b;
  put_attr(b, static_cast<uint16_t>(type | NLA_F_NESTED), inner.data(), inner.size());
  return b;
}
std::string msg(uint16_t type, const std::string& payload) {
  nlmsghdr h{};
  h.nlmsg_len = static_cast<uint32_t>(NLMSG_HDRLEN + payload.size());
  h.nlmsg_type = type;
  h.nlmsg_flags = NLM_F_MULTI;
  std::string b(reinterpret_cast<const char*>(&h), sizeof h);
  b += payload;
  b.append(NLMSG_ALIGN(b.size()) - b.size(), '\0');
  return b;
}
std::string qp_entry(uint32_t lqpn, std::optional<uint32_t> rqpn, uint8_t state, std::optional<uint32_t> pid,
                     const char* kern = nullptr) {
  std::string e;
  put_u32(e, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
  put_u32(e, RDMA_NLDEV_ATTR_RES_LQPN, lqpn);
  if (rqpn) put_u32(e, RDMA_NLDEV_ATTR_RES_RQPN, *rqpn);
  put_u32(e, RDMA_NLDEV_ATTR_RES_SQ_PSN, 1208);
  put_u8(e, RDMA_NLDEV_ATTR_RES_TYPE, rqpn ? 2 : 1);
  put_u8(e, RDMA_NLDEV_ATTR_RES_STATE, state);
  if (pid) put_u32(e, RDMA_NLDEV_ATTR_RES_PID, *pid);
  if (kern) put_str(e, RDMA_NLDEV_ATTR_RES_KERN_NAME, kern);
  return nest(RDMA_NLDEV_ATTR_RES_QP_ENTRY, e);
}
const uint16_t kGet = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET);
const uint16_t kQpGet = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_RES_QP_GET);
}  // namespace

TEST_CASE("netlink: device dump and QP dump across messages, ending with NLMSG_DONE") {
  std::string p0, p1;
  put_u32(p0, RDMA_NLDEV_ATTR_DEV_INDEX, 0);
  put_str(p0, RDMA_NLDEV_ATTR_DEV_NAME, "mlx5_0");
  put_u32(p1, RDMA_NLDEV_ATTR_DEV_INDEX, 1);
  put_str(p1, RDMA_NLDEV_ATTR_DEV_NAME, "mlx5_1");
  RdmaNlParse devs;
  parse_rdma_nl(msg(kGet, p0) + msg(kGet, p1) + msg(NLMSG_DONE, std::string(4, '\0')), devs);
  CHECK(devs.done);
  REQUIRE(devs.devices.size() == 2);
  CHECK(devs.devices[1].name == "mlx5_1");
  CHECK(devs.devices[1].index == 1);

  // A large QP table continues in the next message.
  std::string q1, q2;
  put_u32(q1, RDMA_NLDEV_ATTR_DEV_INDEX, 0);
  put_str(q1, RDMA_NLDEV_ATTR_DEV_NAME, "mlx5_0");
  q2 = q1;
  q1 += nest(RDMA_NLDEV_ATTR_RES_QP, qp_entry(1153, 2310, 3, 48212) + qp_entry(1, std::nullopt, 3, std::nullopt, "ib_core"));
  q2 += nest(RDMA_NLDEV_ATTR_RES_QP, qp_entry(1154, 2311, 6, 48212) + qp_entry(1400, 1400, 3, 48212));
  RdmaNlParse qps;
  parse_rdma_nl(msg(kQpGet, q1) + msg(kQpGet, q2) + msg(NLMSG_DONE, std::string(4, '\0')), qps);
  CHECK(qps.done);
  CHECK(qps.bad == 0);
  REQUIRE(qps.qps.size() == 4);
  CHECK(qps.qps[0].lqpn == 1153);
  CHECK(qps.qps[0].rqpn == 2310u);
  CHECK(rdma_qp_state_name(*qps.qps[0].state) == "RTS");
  CHECK(qps.qps[0].pid == 48212u);
  CHECK(qps.qps[0].dev_name == "mlx5_0");
  CHECK(qps.qps[1].kern_name == "ib_core");
  CHECK_FALSE(qps.qps[1].pid);
  CHECK(rdma_qp_type_name(*qps.qps[1].type) == "GSI");
  CHECK(rdma_qp_state_name(*qps.qps[2].state) == "ERR");
  CHECK(qps.qps[3].rqpn == qps.qps[3].lqpn);  // NCCL's self-connected flush QP
}

TEST_CASE("netlink: kernel error, truncated message and malformed attributes are counted, never fatal") {
  int32_t err = -EINVAL;
  std::string payload(reinterpret_cast<const char*>(&err), 4);
  payload.append(sizeof(nlmsghdr), '\0');
  RdmaNlParse e;
  parse_rdma_nl(msg(NLMSG_ERROR, payload), e);
  CHECK(e.error == EINVAL);
  int32_t weird = INT32_MIN;  // not an errno: must not be negated (fuzzer find)
  std::string wp(reinterpret_cast<const char*>(&weird), 4);
  wp.append(sizeof(nlmsghdr), '\0');
  RdmaNlParse w;
  parse_rdma_nl(msg(NLMSG_ERROR, wp), w);
  CHECK(w.error == EPROTO);
  CHECK(w.bad == 1);

  std::string q;
  put_u32(q, RDMA_NLDEV_ATTR_DEV_INDEX, 0);
  q += nest(RDMA_NLDEV_ATTR_RES_QP, qp_entry(7, 8, 3, 1));
  std::string whole = msg(kQpGet, q);
  RdmaNlParse t;
  parse_rdma_nl(std::string_view(whole).substr(0, whole.size() - 9), t);  // cut mid-attribute
  CHECK(t.qps.empty());
  CHECK(t.bad >= 1);

  // An attribute whose length runs past its message.
  std::string bad_attr;
  put_u32(bad_attr, RDMA_NLDEV_ATTR_DEV_INDEX, 0);
  uint16_t huge = 200;
  std::memcpy(&bad_attr[0], &huge, 2);
  RdmaNlParse m;
  parse_rdma_nl(msg(kGet, bad_attr), m);
  CHECK(m.devices.empty());
  CHECK(m.bad >= 1);
  // An entry without its local QP number is skipped.
  std::string nolqpn;
  put_u8(nolqpn, RDMA_NLDEV_ATTR_RES_STATE, 3);
  std::string q3;
  put_u32(q3, RDMA_NLDEV_ATTR_DEV_INDEX, 0);
  q3 += nest(RDMA_NLDEV_ATTR_RES_QP, nest(RDMA_NLDEV_ATTR_RES_QP_ENTRY, nolqpn));
  RdmaNlParse n;
  parse_rdma_nl(msg(kQpGet, q3), n);
  CHECK(n.qps.empty());
  CHECK(n.bad == 1);
}

TEST_CASE("netlink live: on a host without ib_core the dump is a clean 'absent', not an error") {
  auto r = dump_rdma_qps(std::chrono::milliseconds(2000));
  REQUIRE(r.ok());  // either absent, or a real list: never an error on a sane host
  if (r->subsystem_absent) CHECK(r->qps.empty());
}
