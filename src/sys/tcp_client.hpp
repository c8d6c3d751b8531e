// A TCP client where every operation has a deadline (ccdiag must never
// hang). Used to talk to NCCL's RAS port; nothing here knows RAS.
//
// All calls take an absolute steady_clock deadline. Sockets are non-blocking
// and every wait is a poll() bounded by the time left, so a listener that
// accepts and then never answers, a half-open connection, or a peer that
// trickles bytes cannot stall the caller past the deadline.
//
// Failure modes are values: TcpStatus::refused (nothing listens: "unavailable"),
// timeout, closed (peer closed before the expected data), error (errno text).
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace ccdiag {

using SteadyTime = std::chrono::steady_clock::time_point;

enum class TcpStatus { ok, refused, timeout, closed, error };
std::string_view to_string(TcpStatus s);

struct TcpResult {
  TcpStatus status = TcpStatus::ok;
  std::string detail;  // errno text or what timed out
  bool ok() const { return status == TcpStatus::ok; }
};

// "host:port", "[v6addr]:port", "v6addr" (no port) or "host" -> host, port.
// Returns false when the port is not a number in 1..65535.
bool split_host_port(const std::string& addr, int default_port, std::string& host, int& port);

class TcpConnection {
 public:
  TcpConnection() = default;
  ~TcpConnection();
  TcpConnection(const TcpConnection&) = delete;
  TcpConnection& operator=(const TcpConnection&) = delete;
  TcpConnection(TcpConnection&& o) noexcept;
  TcpConnection& operator=(TcpConnection&& o) noexcept;

  // Connects to a numeric IPv4/IPv6 address (no name resolution: that could
  // block in the resolver without a deadline).
  TcpResult connect(const std::string& numeric_host, int port, SteadyTime deadline);
  TcpResult send_all(const std::string& data, SteadyTime deadline);
  // One line without the "\n" (and a trailing "\r"). At most `max_len` bytes.
  TcpResult read_line(std::string& line, SteadyTime deadline, size_t max_len = 4096);
  // Everything until the peer closes, at most `max_bytes` (then error).
  // On timeout `out` holds what arrived so far.
  TcpResult read_to_eof(std::string& out, SteadyTime deadline, size_t max_bytes = 64u << 20);
  void close();
  bool is_open() const { return fd_ >= 0; }

 private:
  TcpResult wait(short events, SteadyTime deadline, const char* what);
  int fd_ = -1;
  std::string pending_;  // bytes read past the last line
};

// Numeric addresses for a host name, IPv4 first. "localhost" gives 127.0.0.1
// and ::1 without asking the resolver; numeric input is returned as is; other
// names are resolved with getaddrinfo (AI_ADDRCONFIG) — callers that must not
// block should pass numbers.
std::vector<std::string> resolve_numeric(const std::string& host);

}  // namespace ccdiag
