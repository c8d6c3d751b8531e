// Fuzzes the RDMA netlink dump parser (device and QP replies) on raw bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sys/rdma_netlink.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ccdiag::RdmaNlParse out;
  ccdiag::parse_rdma_nl(std::string_view(reinterpret_cast<const char*>(data), size), out);
  for (const auto& q : out.qps) {
    if (q.state) (void)ccdiag::rdma_qp_state_name(*q.state);
    if (q.type) (void)ccdiag::rdma_qp_type_name(*q.type);
  }
  return 0;
}
