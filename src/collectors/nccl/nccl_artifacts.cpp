#include "collectors/nccl/nccl_artifacts.hpp"
#include "collectors/proc/rank_discovery.hpp"

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "collectors/nccl/flight_analysis.hpp"
#include "collectors/nccl/flight_recorder.hpp"
#include "collectors/nccl/ras_client.hpp"
#include "collectors/nccl/ras_findings.hpp"
#include "collectors/nccl/ras_status.hpp"

namespace fs = std::filesystem;

namespace ccdiag::nccl {

namespace {

constexpr double kPostMortemStuckAfterS = 3.0;
// Distinct RAS addresses named by the ranks that one collect asks (each gets a
// share of the budget).
constexpr size_t kMaxRasTargets = 4;

bool ends_with(const std::string& s, const char* suf) {
  const size_t n = std::char_traits<char>::length(suf);
  return s.size() >= n && s.compare(s.size() - n, n, suf) == 0;
}

Result<std::string> read_whole(const std::string& path, const std::string& shown, size_t max = 64u << 20) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error("cannot read", shown);
  std::string s;
  char buf[65536];
  while (in.read(buf, sizeof(buf)) || in.gcount() > 0) {
    s.append(buf, static_cast<size_t>(in.gcount()));
    if (s.size() > max) return make_error("file too large for an NCCL artefact", shown);
  }
  return s;
}

Evidence fr_evidence(const FrSnapshot& s, const std::string& shown, const std::string& host) {
  Evidence e;
  e.kind = "nccl.fr";
  e.subject.host = s.host.empty() ? host : s.host;
  e.subject.rank = s.rank;
  e.subject.pid = s.pid;
  e.subject.comm = comm_hex(s.comm_hash);
  e.provenance.source = shown;
  e.data = to_json(s);
  return e;
}

}  // namespace

std::string base64_encode(std::string_view in) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (uint32_t(uint8_t(in[i])) << 16) | (uint32_t(uint8_t(in[i + 1])) << 8) | uint8_t(in[i + 2]);
    out += t[v >> 18];
    out += t[(v >> 12) & 63];
    out += t[(v >> 6) & 63];
    out += t[v & 63];
  }
  if (i < in.size()) {
    uint32_t v = uint32_t(uint8_t(in[i])) << 16;
    if (i + 1 < in.size()) v |= uint32_t(uint8_t(in[i + 1])) << 8;
    out += t[v >> 18];
    out += t[(v >> 12) & 63];
    out += i + 1 < in.size() ? t[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

bool base64_decode(std::string_view in, std::string& out) {
  out.clear();
  uint32_t acc = 0;
  int bits = 0;
  size_t n = 0;
  for (char c : in) {
    int v;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    else if (c >= '0' && c <= '9') v = c - '0' + 52;
    else if (c == '+') v = 62;
    else if (c == '/') v = 63;
    else continue;  // '=', newlines
    ++n;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  return n % 4 != 1;
}

uint64_t iso_utc_to_ns(const std::string& iso) {
  std::tm tm{};
  int y, mo, d, h, mi, s;
  if (std::sscanf(iso.c_str(), "%d-%d-%dT%d:%d:%d", &y, &mo, &d, &h, &mi, &s) != 6) return 0;
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  time_t t = timegm(&tm);
  if (t <= 0) return 0;
  return static_cast<uint64_t>(t) * 1000000000ull;
}

Status ingest_nccl_raw(const NcclRawFiles& b, EvidenceSet& set) {
  std::vector<FrSnapshot> snaps;
  for (const auto& rel : b.raw_files) {
    if (rel.rfind("raw/nccl/", 0) != 0) continue;
    const std::string path = (fs::path(b.dir) / rel).string();
    const std::string shown = b.host + ":" + rel;
    auto bytes = read_whole(path, b.input + "/" + rel);
    if (!bytes) return bytes.error();
    if (ends_with(rel, ".fr") || ends_with(rel, ".fr.b64")) {
      std::string raw;
      if (ends_with(rel, ".b64")) {
        if (!base64_decode(*bytes, raw)) {
          set.unchecked.push_back(Unchecked{"NCCL flight recorder " + shown, UncheckedState::error, "bad base64"});
          continue;
        }
      } else {
        raw = std::move(*bytes);
      }
      auto snap = parse_flight_file(raw, shown);
      if (!snap) {
        set.unchecked.push_back(Unchecked{"NCCL flight recorder " + shown, UncheckedState::error, snap.error().message});
        continue;
      }
      set.evidence.push_back(fr_evidence(*snap, shown, b.host));
      snaps.push_back(std::move(*snap));
      continue;
    }
    auto status = parse_ras_reply(*bytes);
    if (!status.recognised) {
      set.unchecked.push_back(Unchecked{"NCCL RAS reply " + shown, UncheckedState::error, "not a RAS STATUS report"});
      continue;
    }
    auto derived = ras_to_evidence(status, shown, b.host);
    set.evidence.push_back(std::move(derived.evidence));
    for (auto& f : derived.findings) set.findings.push_back(std::move(f));
  }
  if (!snaps.empty()) {
    uint64_t now = iso_utc_to_ns(b.time);
    if (now == 0)
      for (const auto& s : snaps) now = std::max(now, s.heartbeat_ns);
    auto analyses = analyze_flight(snaps, now, kPostMortemStuckAfterS);
    for (auto& f : flight_findings(analyses, b.input)) set.findings.push_back(std::move(f));
  }
  return Ok{};
}

CollectorOutput collect_nccl(const CollectContext& ctx) {
  CollectorOutput out;
  // Flight-recorder files: copied whole, so diagnose re-derives everything.
  const std::string dir = default_flight_dir(ctx.root.prefix());
  for (const auto& path : list_flight_files(dir)) {
    auto bytes = read_whole(path, path, 1u << 20);
    if (!bytes) continue;
    out.raw.emplace_back("nccl/fr/" + fs::path(path).filename().string() + ".b64", base64_encode(*bytes));
  }
  // RAS: only on the live host (a --root tree has no sockets).
  if (!ctx.root.is_live()) return out;
  // Which RAS ports to ask. ccdiag's own $NCCL_RAS_ADDR names one. Otherwise
  // the ranks' own NCCL_RAS_ADDR (allowlisted in their environment): a job
  // may have moved the port, and two jobs on one host answer on two ports. A
  // rank without it (or no rank found) listens on the default port.
  struct Target {
    std::string addr;  // "" = default_ras_addr()
    bool expected;     // a rank named it: silence there is a gap, not an answer
  };
  std::vector<Target> targets;
  if (std::getenv("NCCL_RAS_ADDR")) {
    targets.push_back({"", true});
  } else {
    bool some_rank_on_default = false;
    const auto ranks = discover_ranks(ctx.root).ranks;
    for (const auto& r : ranks) {
      if (!r.env.contains("NCCL_RAS_ADDR") || !r.env["NCCL_RAS_ADDR"].is_string()) {
        some_rank_on_default = true;
        continue;
      }
      const auto a = r.env["NCCL_RAS_ADDR"].get<std::string>();
      const bool seen = std::any_of(targets.begin(), targets.end(), [&](const Target& t) { return t.addr == a; });
      if (!seen && targets.size() < kMaxRasTargets) targets.push_back({a, true});
    }
    if (ranks.empty() || some_rank_on_default) targets.push_back({"", false});
  }
  const bool flight_files = !out.raw.empty();
  int saved = 0;
  for (size_t i = 0; i < targets.size(); ++i) {
    RasQueryOptions q;
    q.addr = targets[i].addr;
    // A share of what is left of this collector's budget (at most 3.5 s a
    // port): a RAS port that never answers must not take the flight-recorder
    // rings read above, or the other ports, down with it.
    const double left = ctx.deadline == std::chrono::steady_clock::time_point::max()
                            ? 7.0
                            : std::chrono::duration<double>(ctx.deadline - std::chrono::steady_clock::now()).count();
    q.timeout_s = std::clamp(left * 0.6 / static_cast<double>(targets.size() - i), 0.05, 3.5);
    auto r = query_ras(q);
    // Only a recognised report is kept: a garbage reply is not evidence, and
    // collector output travels as JSON (text must be valid UTF-8).
    if (!r.reply.empty() && parse_ras_reply(r.reply).recognised) {
      const std::string ext = r.format == "json" ? ".json" : ".txt";
      out.raw.emplace_back(saved == 0 ? "nccl/ras-status" + ext : fmt::format("nccl/ras-status-{}{}", saved, ext),
                           r.reply);
      ++saved;
    }
    if (r.availability.is_ok()) continue;
    // Nothing listening on a host with no sign of an NCCL job is an answer
    // (evidence "unavailable"), not a gap in the diagnosis; it is a gap when
    // the job is known to be there (flight-recorder files, a RAS address set)
    // or when RAS misbehaved (timeout, error).
    const bool expected = flight_files || targets[i].expected;
    if (expected || r.availability.state != AvailabilityState::unavailable)
      out.unchecked.push_back(Unchecked{"NCCL RAS", unchecked_state_of(r.availability.state),
                                        r.availability.reason});
    Evidence e;
    e.kind = "nccl.ras";
    e.subject.host = ctx.host;
    e.provenance.source = r.address;
    e.availability = r.availability;
    e.data = {{"attempts", r.attempts}};
    out.evidence.push_back(std::move(e));
  }
  return out;
}

}  // namespace ccdiag::nccl
