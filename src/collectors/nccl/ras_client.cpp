#include "collectors/nccl/ras_client.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "sys/tcp_client.hpp"

namespace ccdiag::nccl {

namespace {

using Clock = std::chrono::steady_clock;

std::string show(const std::string& host, int port) {
  return host.find(':') != std::string::npos ? fmt::format("[{}]:{}", host, port) : fmt::format("{}:{}", host, port);
}

SteadyTime min_time(SteadyTime a, SteadyTime b) { return a < b ? a : b; }

// One conversation with one address. Returns false when the address should
// be skipped (refused) so the next one is tried.
bool converse(const std::string& host, int port, const RasQueryOptions& o, SteadyTime deadline,
              RasQueryResult& r) {
  const std::string where = show(host, port);
  r.address = where;
  TcpConnection conn;
  // Like ncclras: a listener that does not accept within ~1 s is busy or
  // stuck; give the other address a chance.
  auto c = conn.connect(host, port, min_time(deadline, Clock::now() + std::chrono::seconds(2)));
  if (!c.ok()) {
    r.attempts.push_back(fmt::format("{}: {} ({})", where, to_string(c.status), c.detail));
    if (c.status == TcpStatus::refused) {
      r.availability = Availability::unavailable("nothing listens at " + where);
      return false;
    }
    r.availability = c.status == TcpStatus::timeout ? Availability::timeout("connect to " + where + " timed out")
                                                    : Availability::error("connect to " + where + ": " + c.detail);
    return Clock::now() < deadline ? false : true;
  }
  auto fail = [&](const TcpResult& t, const std::string& during) {
    r.attempts.push_back(fmt::format("{}: {} during {} ({})", where, to_string(t.status), during, t.detail));
    if (t.status == TcpStatus::timeout)
      r.availability = Availability::timeout(fmt::format("RAS at {} did not answer {} in time", where, during));
    else if (t.status == TcpStatus::closed)
      r.availability = Availability::error(fmt::format("RAS at {} closed the connection during {}", where, during));
    else
      r.availability = Availability::error(fmt::format("RAS at {}: {} during {}", where, t.detail, during));
    return true;
  };
  std::string line;
  auto t = conn.send_all(fmt::format("CLIENT PROTOCOL {}\n", kRasClientProtocol), deadline);
  if (!t.ok()) return fail(t, "the handshake");
  t = conn.read_line(line, deadline, 1024);
  if (!t.ok() && !(t.status == TcpStatus::closed && !line.empty())) return fail(t, "the handshake");
  if (line.rfind("SERVER PROTOCOL ", 0) != 0) {
    std::string shown = line.substr(0, 60);
    for (auto& ch : shown)
      if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) >= 0x7f) ch = '?';
    r.attempts.push_back(fmt::format("{}: not a RAS server (handshake reply '{}')", where, shown));
    r.availability = Availability::error(fmt::format("{} is not an NCCL RAS server (handshake reply '{}')", where, shown));
    return true;
  }
  r.server_protocol = line.substr(16);
  // The RAS gathering takes up to leg + 5 s: pick the leg so the reply fits
  // in what is left of our deadline (ncclras: 1 + leg + 5).
  double left = std::chrono::duration<double>(deadline - Clock::now()).count();
  int leg = static_cast<int>(std::floor(std::max(1.0, std::min(5.0, left - 6.0))));
  t = conn.send_all(fmt::format("TIMEOUT {}\n", leg), deadline);
  if (!t.ok()) return fail(t, "TIMEOUT");
  t = conn.read_line(line, deadline, 1024);
  if (!t.ok()) return fail(t, "TIMEOUT");
  // "ERROR: Invalid timeout value" is harmless: the server keeps its default.
  r.format = "text";
  if (o.want_json) {
    t = conn.send_all("SET FORMAT json\n", deadline);
    if (!t.ok()) return fail(t, "SET FORMAT");
    t = conn.read_line(line, deadline, 1024);
    if (!t.ok()) return fail(t, "SET FORMAT");
    if (line == "OK") r.format = "json";
    else r.json_unsupported = true;  // "ERROR: Unknown command set format json" before 2.28.7
  }
  t = conn.send_all(o.verbose ? "VERBOSE STATUS\n" : "STATUS\n", deadline);
  if (!t.ok()) return fail(t, "STATUS");
  t = conn.read_to_eof(r.reply, deadline);
  if (!t.ok()) return fail(t, "the STATUS report");
  if (r.reply.empty()) {
    r.attempts.push_back(where + ": closed without a report");
    r.availability = Availability::error(fmt::format("RAS at {} closed the connection without a report", where));
    return true;
  }
  r.availability = Availability::ok();
  return true;
}

}  // namespace

std::string default_ras_addr() {
  const char* e = std::getenv("NCCL_RAS_ADDR");
  if (e && *e) return e;
  return fmt::format("localhost:{}", kRasDefaultPort);
}

RasQueryResult query_ras(const RasQueryOptions& o) {
  RasQueryResult r;
  const auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(o.timeout_s * 1000));
  const std::string addr = o.addr.empty() ? default_ras_addr() : o.addr;
  std::string host;
  int port = kRasDefaultPort;
  if (!split_host_port(addr, kRasDefaultPort, host, port)) {
    r.availability = Availability::error("bad RAS address '" + addr + "' (want HOST:PORT or [IPV6]:PORT)");
    return r;
  }
  auto addrs = resolve_numeric(host);
  if (addrs.empty()) {
    r.availability = Availability::unavailable("cannot resolve " + host);
    return r;
  }
  Availability first_failure;
  bool have_failure = false;
  for (const auto& a : addrs) {
    if (Clock::now() >= deadline) break;
    if (converse(a, port, o, deadline, r)) return r;
    // Remember a real failure (timeout/error) over a plain refusal.
    if (!have_failure || (first_failure.state == AvailabilityState::unavailable &&
                          r.availability.state != AvailabilityState::unavailable)) {
      first_failure = r.availability;
      have_failure = true;
    }
  }
  if (have_failure) r.availability = first_failure;
  if (r.availability.state == AvailabilityState::unavailable) {
    std::string tried;
    for (const auto& a : addrs) tried += (tried.empty() ? "" : ", ") + show(a, port);
    r.availability = Availability::unavailable("no NCCL RAS server listening at " + tried);
  } else if (r.availability.is_ok()) {
    r.availability = Availability::timeout("RAS query did not finish within --timeout");
  }
  return r;
}

}  // namespace ccdiag::nccl
