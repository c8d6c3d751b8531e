// Client of NCCL's RAS port (NCCL's src/ras/), the way `ncclras` talks:
//   connect (each numeric address in turn: 127.0.0.1 then ::1 for localhost)
//   -> "CLIENT PROTOCOL 2"  <- "SERVER PROTOCOL <n>"
//   -> "TIMEOUT <t>"        <- "OK"                      (per-leg gathering timeout)
//   -> "SET FORMAT json"    <- "OK" | "ERROR: Unknown command ..." (< 2.28.7: text)
//   -> "STATUS" / "VERBOSE STATUS"  <- report, then the server closes: read to EOF.
//
// Bounded: the whole query ends within `timeout_s` (connect, every line and
// the report share one deadline; the RAS leg timeout is chosen to fit in it).
// Outcomes are values: nothing listening anywhere -> unavailable; deadline
// -> timeout (with what arrived); not a RAS server, closed early -> error.
#pragma once

#include <string>
#include <vector>

#include "ccdiag/evidence.hpp"

namespace ccdiag::nccl {

inline constexpr int kRasDefaultPort = 28028;
inline constexpr int kRasClientProtocol = 2;

struct RasQueryOptions {
  std::string addr;        // HOST:PORT / [V6]:PORT; empty: $NCCL_RAS_ADDR, else localhost:28028
  double timeout_s = 10;   // whole query
  bool verbose = false;    // VERBOSE STATUS
  bool want_json = true;   // try SET FORMAT json first
};

struct RasQueryResult {
  Availability availability;           // ok | unavailable | timeout | error
  std::string address;                 // "127.0.0.1:28028" that answered (or last tried)
  std::vector<std::string> attempts;   // "127.0.0.1:28028: refused (Connection refused)"
  std::string server_protocol;         // the number after SERVER PROTOCOL
  std::string format;                  // "json" | "text"
  bool json_unsupported = false;       // SET FORMAT was refused (NCCL < 2.28.7)
  std::string reply;                   // the report as received (partial on timeout)
};

// The address to query when none is given: $NCCL_RAS_ADDR or localhost:28028.
std::string default_ras_addr();

RasQueryResult query_ras(const RasQueryOptions& opts);

}  // namespace ccdiag::nccl
