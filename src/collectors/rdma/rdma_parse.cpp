#include "collectors/rdma/rdma_parse.hpp"

#include "collectors/sysfs_number.hpp"

#include <charconv>

namespace ccdiag::rdma {

namespace {
std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}
}  // namespace

std::optional<CodedName> parse_coded(std::string_view text) {
  text = trim(text);
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  int code = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + colon, code);
  if (ec != std::errc() || p != text.data() + colon) return std::nullopt;
  return CodedName{code, std::string(trim(text.substr(colon + 1)))};
}

std::optional<PortRate> parse_rate(std::string_view text) {
  text = trim(text);
  const size_t gb = text.find(" Gb/sec");
  if (gb == std::string_view::npos || gb == 0) return std::nullopt;
  PortRate r;
  std::string_view num = text.substr(0, gb);
  const auto parsed = parse_sysfs_decimal(num);
  if (!parsed) return std::nullopt;
  const double v = *parsed;
  r.gbps = v;
  const size_t open = text.find('(', gb), x = text.find('X', gb);
  if (open != std::string_view::npos && x != std::string_view::npos && x > open) {
    int lanes = 0;
    auto [p, ec] = std::from_chars(text.data() + open + 1, text.data() + x, lanes);
    if (ec == std::errc() && p == text.data() + x) r.lanes = lanes;
    const size_t close = text.find(')', x);
    if (close != std::string_view::npos) r.speed = std::string(trim(text.substr(x + 1, close - x - 1)));
  }
  return r;
}

std::optional<uint64_t> parse_counter(std::string_view text) {
  text = trim(text);
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || p != text.data() + text.size()) return std::nullopt;
  return v;
}

uint64_t counter_delta(uint64_t t0, uint64_t t1, int wrap_bits) {
  if (t1 >= t0) return t1 - t0;
  if (wrap_bits == 32 && t0 <= 0xffffffffULL && t1 <= 0xffffffffULL) return (0x100000000ULL - t0) + t1;
  return t1;  // cleared between the samples (rdma statistic / perfquery -R)
}

CounterClass classify_counter(std::string_view n) {
  static constexpr std::string_view link[] = {"link_downed", "link_error_recovery"};
  static constexpr std::string_view fatal[] = {
      "req_transport_retries_exceeded", "req_rnr_retries_exceeded", "req_cqe_error", "resp_cqe_error",
      "req_remote_access_errors", "resp_remote_access_errors", "req_remote_invalid_request",
      "resp_local_length_error", "retry_exceeded_err", "retry_rnr_exceeded_err", "completer_retry_err"};
  static constexpr std::string_view signal[] = {
      "symbol_error", "port_rcv_errors", "local_link_integrity_errors", "excessive_buffer_overrun_errors",
      "port_rcv_remote_physical_errors", "rx_icrc_encapsulated", "port_xmit_discards", "VL15_dropped"};
  static constexpr std::string_view loss[] = {
      "local_ack_timeout_err", "out_of_sequence", "packet_seq_err", "duplicate_request", "implied_nak_seq_err",
      "out_of_seq_request", "rcvd_seq_err", "rnr_nak_retry_err", "out_of_buffer", "roce_adp_retrans",
      "roce_adp_retrans_to", "roce_slow_restart"};
  static constexpr std::string_view cong[] = {"rp_cnp_handled", "rp_cnp_ignored", "np_cnp_sent",
                                              "np_ecn_marked_roce_packets", "port_xmit_wait", "cc_rx_ce_pkts",
                                              "cc_rx_cnp_pkts", "cc_tx_cnp_pkts"};
  for (auto s : link) if (n == s) return CounterClass::link_event;
  for (auto s : fatal) if (n == s) return CounterClass::transport_fatal;
  for (auto s : signal) if (n == s) return CounterClass::signal;
  for (auto s : loss) if (n == s) return CounterClass::loss;
  for (auto s : cong) if (n == s) return CounterClass::congestion;
  if (n == "port_xmit_data" || n == "port_rcv_data") return CounterClass::data_words;
  return CounterClass::other;
}

std::string_view to_string(CounterClass c) {
  switch (c) {
    case CounterClass::link_event: return "link_event";
    case CounterClass::transport_fatal: return "transport_fatal";
    case CounterClass::signal: return "signal";
    case CounterClass::loss: return "loss";
    case CounterClass::congestion: return "congestion";
    case CounterClass::data_words: return "data_words";
    case CounterClass::other: return "other";
  }
  return "other";
}

bool counter_wraps_32(std::string_view name, bool hw_counter) {
  // mlx5 q-counters are 32-bit in firmware; the congestion counters are 64-bit.
  if (!hw_counter) return false;
  const auto c = classify_counter(name);
  return c != CounterClass::congestion && name.substr(0, 5) != "rdma_";
}

}  // namespace ccdiag::rdma
