// Fuzzes the RDMA sysfs and host-config parsers: port state/rate, counters,
// /proc/<pid>/limits, environ, status, the --since window over a kernel log.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "collectors/config/config_collector.hpp"
#include "collectors/config/rank_procs.hpp"
#include "collectors/hw/hw_findings.hpp"
#include "collectors/kernel/kernel_log_window.hpp"
#include "collectors/rdma/rdma_parse.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)ccdiag::rdma::parse_coded(text);
  (void)ccdiag::rdma::parse_rate(text);
  if (auto v = ccdiag::rdma::parse_counter(text)) (void)ccdiag::rdma::counter_delta(*v, size, 32);
  (void)ccdiag::rdma::classify_counter(text);
  (void)ccdiag::parse_memlock_limit(text);
  (void)ccdiag::kernel_major_minor(text);
  ccdiag::ConfigRankProcess p;
  (void)ccdiag::rank_from_environ(text, p);
  (void)ccdiag::tgid_from_status(text);
  (void)ccdiag::normalize_bdf(text);
  (void)ccdiag::parse_since(text, 1764480000);
  (void)ccdiag::boot_time_from_proc_stat(text);
  (void)ccdiag::filter_kernel_log_since(text, 1764480000, 1764475200);
  return 0;
}
