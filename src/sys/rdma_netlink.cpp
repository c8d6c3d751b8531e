#include "sys/rdma_netlink.hpp"

#include <linux/netlink.h>
#include <poll.h>
#include <rdma/rdma_netlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ccdiag {

// The numbers below are ABI; they were checked against iproute2's copy of the
// kernel's include/uapi/rdma/rdma_netlink.h. A build against a header that moved
// them must fail here, not decode garbage.
static_assert(NETLINK_RDMA == 20);
static_assert(RDMA_NL_NLDEV == 5);
static_assert(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET) == 5121);
static_assert(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_RES_QP_GET) == 5130);
static_assert(RDMA_NLDEV_ATTR_DEV_INDEX == 1 && RDMA_NLDEV_ATTR_DEV_NAME == 2 && RDMA_NLDEV_ATTR_PORT_INDEX == 3);
static_assert(RDMA_NLDEV_ATTR_RES_QP == 19 && RDMA_NLDEV_ATTR_RES_QP_ENTRY == 20);
static_assert(RDMA_NLDEV_ATTR_RES_LQPN == 21 && RDMA_NLDEV_ATTR_RES_RQPN == 22 && RDMA_NLDEV_ATTR_RES_RQ_PSN == 23 &&
              RDMA_NLDEV_ATTR_RES_SQ_PSN == 24 && RDMA_NLDEV_ATTR_RES_PATH_MIG_STATE == 25 &&
              RDMA_NLDEV_ATTR_RES_TYPE == 26 && RDMA_NLDEV_ATTR_RES_STATE == 27 && RDMA_NLDEV_ATTR_RES_PID == 28 &&
              RDMA_NLDEV_ATTR_RES_KERN_NAME == 29);
static_assert(RDMA_NLDEV_ATTR_RES_PDN == 60);

std::string_view rdma_qp_state_name(uint8_t s) {
  static constexpr std::string_view names[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};
  return s < 7 ? names[s] : "UNKNOWN";
}

std::string_view rdma_qp_type_name(uint8_t t) {
  switch (t) {
    case 0: return "SMI";
    case 1: return "GSI";
    case 2: return "RC";
    case 3: return "UC";
    case 4: return "UD";
    case 5: return "RAW_IPV6";
    case 6: return "RAW_ETHERTYPE";
    case 8: return "RAW_PACKET";
    case 9: return "XRC_INI";
    case 10: return "XRC_TGT";
    case 0xff: return "DRIVER";
    default: return "UNKNOWN";
  }
}

namespace {

constexpr size_t align4(size_t n) { return (n + 3) & ~size_t{3}; }

struct Attr {
  uint16_t type;
  std::string_view payload;
};

// Walks a run of netlink attributes; calls f for each well-formed one. Returns
// false when the run is malformed (the rest is skipped).
template <class F>
bool for_each_attr(std::string_view b, F&& f) {
  while (b.size() >= 4) {
    uint16_t len, type;
    std::memcpy(&len, b.data(), 2);
    std::memcpy(&type, b.data() + 2, 2);
    if (len < 4 || len > b.size()) return false;
    f(Attr{static_cast<uint16_t>(type & NLA_TYPE_MASK), b.substr(4, len - 4)});
    const size_t step = align4(len);
    if (step >= b.size()) return true;
    b.remove_prefix(step);
  }
  return b.empty();
}

std::optional<uint32_t> u32(std::string_view p) {
  if (p.size() < 4) return std::nullopt;
  uint32_t v;
  std::memcpy(&v, p.data(), 4);
  return v;
}
std::optional<uint8_t> u8(std::string_view p) {
  if (p.empty()) return std::nullopt;
  return static_cast<uint8_t>(p[0]);
}
std::string str(std::string_view p) {
  const size_t z = p.find('\0');
  return std::string(p.substr(0, z));
}

void parse_qp_entry(std::string_view b, uint32_t dev_index, const std::string& dev_name, RdmaNlParse& out) {
  RdmaNlQp qp;
  qp.dev_index = dev_index;
  qp.dev_name = dev_name;
  bool have_lqpn = false;
  const bool ok = for_each_attr(b, [&](const Attr& a) {
    switch (a.type) {
      case RDMA_NLDEV_ATTR_PORT_INDEX: qp.port = u32(a.payload); break;
      case RDMA_NLDEV_ATTR_RES_LQPN:
        if (auto v = u32(a.payload)) qp.lqpn = *v, have_lqpn = true;
        break;
      case RDMA_NLDEV_ATTR_RES_RQPN: qp.rqpn = u32(a.payload); break;
      case RDMA_NLDEV_ATTR_RES_RQ_PSN: qp.rq_psn = u32(a.payload); break;
      case RDMA_NLDEV_ATTR_RES_SQ_PSN: qp.sq_psn = u32(a.payload); break;
      case RDMA_NLDEV_ATTR_RES_PATH_MIG_STATE: qp.path_mig_state = u8(a.payload); break;
      case RDMA_NLDEV_ATTR_RES_TYPE: qp.type = u8(a.payload); break;
      case RDMA_NLDEV_ATTR_RES_STATE: qp.state = u8(a.payload); break;
      case RDMA_NLDEV_ATTR_RES_PID: qp.pid = u32(a.payload); break;
      case RDMA_NLDEV_ATTR_RES_KERN_NAME: qp.kern_name = str(a.payload); break;
      case RDMA_NLDEV_ATTR_RES_PDN: qp.pdn = u32(a.payload); break;
      default: break;  // driver nests and newer attributes
    }
  });
  if (!ok || !have_lqpn) {
    ++out.bad;
    return;
  }
  out.qps.push_back(std::move(qp));
}

void parse_payload(uint16_t msg_type, std::string_view attrs, RdmaNlParse& out) {
  uint32_t dev_index = 0;
  std::string dev_name;
  std::string_view qp_table;
  bool have_index = false, have_table = false;
  const bool ok = for_each_attr(attrs, [&](const Attr& a) {
    if (a.type == RDMA_NLDEV_ATTR_DEV_INDEX) {
      if (auto v = u32(a.payload)) dev_index = *v, have_index = true;
    } else if (a.type == RDMA_NLDEV_ATTR_DEV_NAME) {
      dev_name = str(a.payload);
    } else if (a.type == RDMA_NLDEV_ATTR_RES_QP) {
      qp_table = a.payload, have_table = true;
    }
  });
  if (!ok) ++out.bad;
  if (msg_type == RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET)) {
    if (have_index) out.devices.push_back(RdmaNlDevice{dev_index, dev_name});
    else ++out.bad;
  } else if (msg_type == RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_RES_QP_GET) && have_table) {
    const bool tok = for_each_attr(qp_table, [&](const Attr& a) {
      if (a.type == RDMA_NLDEV_ATTR_RES_QP_ENTRY) parse_qp_entry(a.payload, dev_index, dev_name, out);
    });
    if (!tok) ++out.bad;
  }
}

}  // namespace

void parse_rdma_nl(std::string_view b, RdmaNlParse& out) {
  while (b.size() >= sizeof(nlmsghdr)) {
    nlmsghdr h;
    std::memcpy(&h, b.data(), sizeof h);
    if (h.nlmsg_len < sizeof(nlmsghdr) || h.nlmsg_len > b.size()) {
      ++out.bad;  // truncated: the rest of the buffer cannot be framed
      return;
    }
    const std::string_view body = b.substr(sizeof(nlmsghdr), h.nlmsg_len - sizeof(nlmsghdr));
    if (h.nlmsg_type == NLMSG_DONE) {
      out.done = true;
    } else if (h.nlmsg_type == NLMSG_ERROR) {
      if (body.size() >= 4) {
        int32_t code;
        std::memcpy(&code, body.data(), 4);
        // The kernel sends -errno; anything else (found by fuzzing: INT_MIN,
        // whose negation overflows) is a malformed message, not an errno.
        if (code < 0 && code > -4096) out.error = -code;
        else if (code != 0) out.error = EPROTO, ++out.bad;
      } else {
        ++out.bad;
      }
    } else if (h.nlmsg_type >= NLMSG_MIN_TYPE) {
      parse_payload(h.nlmsg_type, body, out);
    }
    const size_t step = NLMSG_ALIGN(h.nlmsg_len);
    if (step >= b.size()) return;
    b.remove_prefix(step);
  }
  if (!b.empty()) ++out.bad;
}

namespace {

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// One dump request and its multi-part reply, until NLMSG_DONE or an error.
Status dump(int fd, uint16_t type, std::optional<uint32_t> dev_index, uint32_t seq,
            std::chrono::steady_clock::time_point end, RdmaNlParse& out) {
  alignas(nlmsghdr) char req[NLMSG_SPACE(8)] = {};
  auto* h = reinterpret_cast<nlmsghdr*>(req);
  h->nlmsg_len = NLMSG_LENGTH(0);
  h->nlmsg_type = type;
  h->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  h->nlmsg_seq = seq;
  if (dev_index) {
    auto* a = reinterpret_cast<nlattr*>(req + NLMSG_LENGTH(0));
    a->nla_type = RDMA_NLDEV_ATTR_DEV_INDEX;
    a->nla_len = NLA_HDRLEN + 4;
    std::memcpy(reinterpret_cast<char*>(a) + NLA_HDRLEN, &*dev_index, 4);
    h->nlmsg_len = NLMSG_LENGTH(NLA_ALIGN(a->nla_len));
  }
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(fd, req, h->nlmsg_len, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0)
    return make_error(std::string("sendto: ") + std::strerror(errno), "NETLINK_RDMA");
  std::string buf(1 << 16, '\0');
  RdmaNlParse part;
  while (!part.done && !part.error) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
    if (left.count() <= 0) return make_error("no complete reply before the deadline", "NETLINK_RDMA");
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return make_error("no complete reply before the deadline", "NETLINK_RDMA");
    const ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return make_error(std::string("recv: ") + std::strerror(errno), "NETLINK_RDMA");
    }
    parse_rdma_nl(std::string_view(buf.data(), static_cast<size_t>(n)), part);
  }
  out.devices.insert(out.devices.end(), part.devices.begin(), part.devices.end());
  out.qps.insert(out.qps.end(), part.qps.begin(), part.qps.end());
  out.bad += part.bad;
  if (part.error) return make_error(std::string("kernel answered ") + std::strerror(*part.error), "NETLINK_RDMA");
  return Ok{};
}

}  // namespace

Result<RdmaQpDump> dump_rdma_qps(std::chrono::milliseconds deadline) {
  RdmaQpDump res;
  const auto end = std::chrono::steady_clock::now() + deadline;
  const int raw = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
  if (raw < 0) {
    if (errno == EPROTONOSUPPORT || errno == EAFNOSUPPORT) {
      res.subsystem_absent = true;  // ib_core not loaded: there is no RDMA subsystem
      return res;
    }
    return make_error(std::string("socket(NETLINK_RDMA): ") + std::strerror(errno), "NETLINK_RDMA");
  }
  Fd fd(raw);
  sockaddr_nl local{};
  local.nl_family = AF_NETLINK;
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&local), sizeof local) < 0)
    return make_error(std::string("bind: ") + std::strerror(errno), "NETLINK_RDMA");
  RdmaNlParse all;
  if (auto st = dump(fd.get(), RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET), std::nullopt, 1, end, all); !st)
    return st.error();
  uint32_t seq = 2;
  for (const auto& d : all.devices) {
    RdmaNlParse qps;
    if (auto st = dump(fd.get(), RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_RES_QP_GET), d.index, seq++, end, qps); !st)
      return st.error();
    res.qps.insert(res.qps.end(), qps.qps.begin(), qps.qps.end());
    res.bad += qps.bad;
  }
  res.devices = all.devices;
  res.bad += all.bad;
  return res;
}

}  // namespace ccdiag
