// Pure parsers for RDMA sysfs attributes and counters (the kernel's
// Documentation/ABI/stable/sysfs-class-infiniband). Total: bad input gives
// nullopt, never a throw.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ccdiag::rdma {

// ports/N/state "4: ACTIVE", phys_state "5: LinkUp", node_type "1: CA".
struct CodedName {
  int code = 0;
  std::string name;
};
std::optional<CodedName> parse_coded(std::string_view text);

// ports/N/rate: "400 Gb/sec (4X NDR)", "2.5 Gb/sec (1X SDR)", old "2.5 Gb/sec (1X)".
struct PortRate {
  double gbps = 0;      // total
  int lanes = 0;        // 1, 2, 4, 8, 12
  std::string speed;    // "NDR", "HDR", ... empty on old SDR output
};
std::optional<PortRate> parse_rate(std::string_view text);

// A counter file: plain decimal. Very old kernels print "N/A (no PMA)".
std::optional<uint64_t> parse_counter(std::string_view text);

// Delta between two samples. `wrap_bits` 32 for mlx5 q-counters (they wrap);
// 0 = 64-bit or saturating (a decrease means the counter was cleared: the
// delta is the new value).
uint64_t counter_delta(uint64_t t0, uint64_t t1, int wrap_bits);

// How a counter is read (docs/probe.md, Rules the probes apply: Counters).
enum class CounterClass {
  link_event,        // link_downed, link_error_recovery: any increase = a flap
  transport_fatal,   // *_retries_exceeded, *_cqe_error, remote access/invalid: any increase = QPs died
  signal,            // symbol_error, port_rcv_errors, local_link_integrity_errors, ...: threshold 10
  loss,              // local_ack_timeout_err, out_of_sequence, packet_seq_err, duplicate_request, ...
  congestion,        // CNP/ECN, port_xmit_wait: context
  data_words,        // port_xmit_data / port_rcv_data: 4-byte words
  other,
};
CounterClass classify_counter(std::string_view name);
std::string_view to_string(CounterClass c);
// Counters that are 32-bit and wrap (mlx5 q-counters in hw_counters/).
bool counter_wraps_32(std::string_view name, bool hw_counter);

}  // namespace ccdiag::rdma
