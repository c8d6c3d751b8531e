// Layout keys, version strings and the shipped table (layout.hpp).
#include "collectors/nccl/attach/layout.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ccdiag::nccl::attach {

// data/nccl-layouts.json, embedded at build time (tools/nccl-layout/embed.cmake
// writes the definition into the build tree).
extern const char* const kNcclLayoutsJson;

const std::vector<std::string>& layout_field_keys() {
  static const std::vector<std::string> keys = [] {
    // Struct members in the order layout.hpp documents them.
    static const std::pair<const char*, std::vector<const char*>> groups[] = {
        {"ncclComm",
         {"sizeof", "startMagic", "endMagic", "magic", "commHash", "rank", "nRanks", "cudaDev", "busId", "opCount",
          "collOpCount", "nChannels", "proxyState", "initState", "seqNumber", "channels", "sharedRes", "abortFlag",
          "asyncResult", "destroyFlag", "finalizeCalled"}},
        {"ncclChannel", {"sizeof", "peers", "id"}},
        {"ncclChannelPeer", {"sizeof", "send", "recv"}},
        {"ncclConnector", {"sizeof", "connected", "transportResources", "conn"}},
        {"ncclConnInfo", {"sizeof", "tail", "head", "connFifo", "step"}},
        {"ncclSharedResources", {"owner", "peers", "collOpCount", "proxyState"}},
        {"ncclProxyState", {"tpRank", "tpnRanks", "thread", "progressState"}},
        {"ncclProxyProgressState", {"thread", "active"}},
        {"ncclProxyArgs",
         {"sizeof", "subs", "progress", "nsubs", "done", "opCount", "pattern", "protocol", "state", "next",
          "nextPeer"}},
        {"ncclProxySubArgs",
         {"sizeof", "connection", "channelId", "nsteps", "nbytes", "peer", "base", "posted", "received", "flushed",
          "transmitted", "done", "end"}},
        {"ncclProxyConnection", {"send", "transport"}},
        {"const",
         {"MAXCHANNELS", "NCCL_PROXY_MAX_SUBS", "NCCL_STEPS", "NCCL_NUM_FUNCTIONS", "ncclPatternSend",
          "ncclPatternRecv"}},
    };
    std::vector<std::string> out;
    for (const auto& [st, members] : groups)
      for (const char* m : members) out.push_back(std::string(st) + "." + m);
    return out;
  }();
  return keys;
}

std::string NcclVersion::str() const { return fmt::format("{}.{}.{}", major, minor, patch); }

namespace {

// Reads 1..4 decimal digits at `pos` (bounded so junk cannot overflow an int).
std::optional<int> read_number(std::string_view s, size_t& pos) {
  size_t start = pos;
  int v = 0;
  while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos])) && pos - start < 5) {
    v = v * 10 + (s[pos] - '0');
    ++pos;
  }
  if (pos == start || pos - start > 4) return std::nullopt;
  if (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) return std::nullopt;
  return v;
}

// "X.Y.Z" at `pos`; advances `pos` past it.
bool read_triple(std::string_view s, size_t& pos, int& a, int& b, int& c) {
  auto x = read_number(s, pos);
  if (!x || pos >= s.size() || s[pos] != '.') return false;
  ++pos;
  auto y = read_number(s, pos);
  if (!y || pos >= s.size() || s[pos] != '.') return false;
  ++pos;
  auto z = read_number(s, pos);
  if (!z) return false;
  a = *x, b = *y, c = *z;
  return true;
}

}  // namespace

std::optional<NcclVersion> parse_nccl_version_string(std::string_view text) {
  static constexpr std::string_view kTag = "NCCL version ";
  // A library's .rodata also holds format strings ("NCCL version %s"): keep
  // looking past an occurrence that is not followed by a version.
  for (size_t at = text.find(kTag); at != std::string_view::npos; at = text.find(kTag, at + 1)) {
    size_t pos = at + kTag.size();
    NcclVersion v;
    if (!read_triple(text, pos, v.major, v.minor, v.patch)) continue;
    static constexpr std::string_view kCuda = "+cuda";
    if (text.substr(pos, kCuda.size()) == kCuda) {
      size_t p = pos + kCuda.size();
      auto cmaj = read_number(text, p);
      if (cmaj && p < text.size() && text[p] == '.') {
        ++p;
        if (auto cmin = read_number(text, p)) v.cuda_major = *cmaj, v.cuda_minor = *cmin;
      }
    }
    return v;
  }
  return std::nullopt;
}

namespace {

// One row of the embedded table; rows that do not have the expected shape are
// dropped (the unit tests check that none is).
std::optional<NcclLayout> row_from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("fields") || !j["fields"].is_object() || !j.contains("versions") ||
      !j["versions"].is_array())
    return std::nullopt;
  NcclLayout l;
  l.source = "table";
  l.label = j.value("label", std::string());
  l.arch = j.value("arch", std::string("x86_64"));
  l.cuda_ge_11_3 = j.value("cuda_ge_11_3", true);
  for (const auto& v : j["versions"])
    if (v.is_string()) l.versions.push_back(v.get<std::string>());
  for (const auto& [k, v] : j["fields"].items())
    if (v.is_number_integer()) l.fields[k] = v.get<int64_t>();
  return l;
}

}  // namespace

const std::vector<NcclLayout>& layout_table() {
  static const std::vector<NcclLayout> table = [] {
    std::vector<NcclLayout> rows;
    auto doc = nlohmann::json::parse(kNcclLayoutsJson, nullptr, /*allow_exceptions=*/false);
    if (!doc.is_object() || !doc.contains("rows") || !doc["rows"].is_array()) return rows;
    for (const auto& r : doc["rows"])
      if (auto l = row_from_json(r)) rows.push_back(std::move(*l));
    return rows;
  }();
  return table;
}

std::optional<NcclLayout> table_layout(const NcclVersion& v, std::string_view arch) {
  const std::string want = v.str();
  for (const auto& row : layout_table()) {
    if (row.arch != arch || row.cuda_ge_11_3 != v.cuda_ge_11_3()) continue;
    if (std::find(row.versions.begin(), row.versions.end(), want) != row.versions.end()) return row;
  }
  return std::nullopt;
}

std::vector<NcclLayout> layouts_for_comm_size(int64_t comm_size) {
  std::vector<NcclLayout> out;
  for (const auto& row : layout_table()) {
    // Only rows with the magic pair (2.21.5+) can be fingerprinted by its distance.
    if (row.arch != "x86_64" || !row.has("ncclComm.endMagic")) continue;
    if (row.get("ncclComm.sizeof") != comm_size) continue;
    NcclLayout l = row;
    l.source = "magic-distance";
    out.push_back(std::move(l));
  }
  return out;
}

}  // namespace ccdiag::nccl::attach
