#include "collectors/perf/nccl_coll_log.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>

#include "ccdiag/line_prefix.hpp"
#include "ccdiag/nccl_coll_line.hpp"
#include "collectors/logs/topology.hpp"

namespace ccdiag::perf {

namespace {

// The token after "<key> " in s (up to the next space), or empty.
std::string_view after(std::string_view s, std::string_view key) {
  size_t at = 0;
  while ((at = s.find(key, at)) != std::string_view::npos) {
    // Whole word only: "comm" must not match inside "commId".
    const bool start_ok = at == 0 || s[at - 1] == ' ' || s[at - 1] == '[';
    const size_t v = at + key.size();
    if (start_ok && v < s.size() && s[v] == ' ') {
      const size_t e = s.find(' ', v + 1);
      return s.substr(v + 1, (e == std::string_view::npos ? s.size() : e) - v - 1);
    }
    at = v;
  }
  return {};
}

template <typename T>
std::optional<T> num(std::string_view s, int base = 10) {
  if (base == 16 && s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  T v{};
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

struct CommRef {
  std::string id;
  int rank = -1, nranks = 0;
  std::optional<int> cuda_dev;
  std::string busid;
};

struct CommCursor {
  uint64_t op_count = ~0ull;
  uint64_t ordinal = 0;
};

struct ProcessState {
  std::map<std::string, CommRef> comms;         // comm pointer -> communicator
  std::map<int, int> by_size;                   // nranks -> communicators of that size seen (fallback id)
  std::map<std::string, CommCursor> cursor;     // comm pointer -> last opCount and ops in it
};

int frac_digits(std::string_view ts) {
  const size_t colon = ts.rfind(':');
  if (colon == std::string_view::npos) return 0;
  size_t i = colon + 1;
  while (i < ts.size() && std::isdigit(static_cast<unsigned char>(ts[i]))) ++i;
  if (i >= ts.size() || (ts[i] != '.' && ts[i] != ',')) return 0;
  int n = 0;
  for (++i; i < ts.size() && std::isdigit(static_cast<unsigned char>(ts[i])); ++i) ++n;
  return n;
}

}  // namespace

void read_coll_log(std::string_view text, const std::string& source, CollLog& log) {
  CollLogFile file;
  file.source = source;
  std::map<std::string, ProcessState> procs;  // host:pid
  std::string scratch;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find("NCCL INFO ") == std::string_view::npos) continue;
    if (line.find('\x1b') != std::string_view::npos) {
      scratch.assign(line);
      logs::strip_ansi(scratch);
      line = scratch;
    }
    const auto p = logs::parse_line_prefix(line);
    if (p.host.empty() || !p.pid || p.level != "INFO") continue;
    const size_t at = p.body.find("NCCL INFO ");
    if (at == std::string_view::npos) continue;
    const std::string_view msg = p.body.substr(at + 10);
    RankProcess proc{std::string(p.host), *p.pid, p.dev, ""};
    auto& st = procs[proc.key()];

    if (msg.find("- Init COMPLETE") != std::string_view::npos || msg.find("- Init START") != std::string_view::npos) {
      const auto ptr = after(msg, "comm");
      const auto rank = num<int>(after(msg, "rank")), nranks = num<int>(after(msg, "nranks"));
      if (ptr.empty() || !rank || !nranks) continue;
      auto it = st.comms.find(std::string(ptr));
      if (it == st.comms.end()) {
        CommRef c;
        c.rank = *rank;
        c.nranks = *nranks;
        c.cuda_dev = num<int>(after(msg, "cudaDev"));
        if (const auto b = after(msg, "busId"); !b.empty()) c.busid = logs::busid_to_bdf(std::string(b));
        const auto id = after(msg, "commId");
        // Without a commId (older NCCL) communicators are created in the same order on every rank.
        c.id = !id.empty() ? std::string(id) : "nranks" + std::to_string(*nranks) + "#" + std::to_string(st.by_size[*nranks]++);
        st.comms.emplace(std::string(ptr), c);
        st.cursor.erase(std::string(ptr));  // a reused pointer starts a new communicator
      }
      continue;
    }

    const auto call = logs::parse_nccl_coll_line(msg);
    // Point-to-point calls have no cross-rank arrival to compare.
    if (!call || call->func == "Send" || call->func == "Recv" || call->count < 0 || call->op_count < 0) continue;
    const uint64_t op_count = static_cast<uint64_t>(call->op_count);
    const std::string_view ptr = call->comm;
    CollTiming c;
    c.proc = proc;
    c.func = std::string(call->func);
    c.count = static_cast<uint64_t>(call->count);
    c.dtype = std::to_string(call->datatype);
    c.source = source;
    if (auto it = st.comms.find(std::string(ptr)); it != st.comms.end()) {
      c.comm = it->second.id;
      c.comm_rank = it->second.rank;
      c.nranks = it->second.nranks;
      if (it->second.cuda_dev) c.proc.cuda_dev = it->second.cuda_dev;
      c.proc.busid = it->second.busid;
    } else {
      // No init line in this log (cut, or NCCL_DEBUG_SUBSYS without INIT): not matchable across ranks.
      continue;
    }
    ++file.coll_lines;
    auto& cur = st.cursor[std::string(ptr)];
    if (cur.op_count != op_count) cur = CommCursor{op_count, 0};
    // The n-th op of one launch (a group shares the opCount) on every rank.
    c.seq = (op_count << 16) | (cur.ordinal++ & 0xffff);
    if (p.time_kind == logs::TimeKind::wall) {
      c.arrive_ns = static_cast<int64_t>(std::llround(p.time_key * 1e9));
      ++file.timed;
      const int d = frac_digits(p.timestamp);
      file.frac_digits = file.frac_digits < 0 ? d : std::min(file.frac_digits, d);
    }
    log.timings.colls.push_back(std::move(c));
  }
  if (file.frac_digits >= 0) {
    const double res = std::pow(10.0, 3 - std::min(file.frac_digits, 9));
    log.resolution_ms = std::max(log.resolution_ms, res);
  }
  log.files.push_back(file);
}

}  // namespace ccdiag::perf
