#include "collectors/stacks/line_memo.hpp"

#include <cstring>
#include <unordered_map>
#include <vector>

namespace ccdiag {

namespace {

constexpr uint32_t kMagic = 0x454e494c;  // "LINE"
constexpr uint32_t kNoLine = UINT32_MAX;

struct PayloadHeader {
  uint32_t magic;
  uint32_t version;
  uint32_t n_pcs;
  uint32_t names_size;
};

struct Row {
  uint64_t pc;
  uint32_t file;  // offset into the names blob, kNoLine for "no line info"
  int32_t line;
};
static_assert(sizeof(Row) == 16, "payload layout");

}  // namespace

std::optional<std::optional<FileLine>> LineMemo::find(uint64_t rel_pc) const {
  auto it = pcs_.find(rel_pc);
  if (it == pcs_.end()) return std::nullopt;
  return it->second;
}

bool LineMemo::put(uint64_t rel_pc, std::optional<FileLine> answer) {
  if (pcs_.size() >= kMaxPcs && !pcs_.count(rel_pc)) return false;
  pcs_[rel_pc] = std::move(answer);
  changed_ = true;
  return true;
}

std::string LineMemo::serialize() const {
  std::string names;
  std::unordered_map<std::string, uint32_t> at;
  std::vector<Row> rows;
  rows.reserve(pcs_.size());
  for (const auto& [pc, a] : pcs_) {
    Row r{pc, kNoLine, 0};
    if (a) {
      auto [it, fresh] = at.emplace(a->file, static_cast<uint32_t>(names.size()));
      if (fresh) names.append(a->file).push_back('\0');
      r.file = it->second;
      r.line = a->line;
    }
    rows.push_back(r);
  }
  PayloadHeader h{kMagic, kVersion, static_cast<uint32_t>(rows.size()), static_cast<uint32_t>(names.size())};
  std::string out(reinterpret_cast<const char*>(&h), sizeof h);
  out.append(reinterpret_cast<const char*>(rows.data()), rows.size() * sizeof(Row));
  out += names;
  return out;
}

Result<LineMemo> LineMemo::parse(std::string_view p) {
  auto bad = [](const char* why) { return make_error(std::string("line memo: ") + why, "symbol cache"); };
  PayloadHeader h;
  if (p.size() < sizeof h) return bad("truncated header");
  std::memcpy(&h, p.data(), sizeof h);
  if (h.magic != kMagic || h.version != kVersion) return bad("wrong magic or version");
  if (h.n_pcs > kMaxPcs) return bad("too many rows");
  if (sizeof h + uint64_t(h.n_pcs) * sizeof(Row) + h.names_size != p.size()) return bad("size does not match its counts");
  const std::string_view names = p.substr(sizeof h + size_t(h.n_pcs) * sizeof(Row));
  LineMemo m;
  uint64_t prev = 0;
  for (uint32_t i = 0; i < h.n_pcs; ++i) {
    Row r;
    std::memcpy(&r, p.data() + sizeof h + size_t(i) * sizeof r, sizeof r);
    if (i > 0 && r.pc <= prev) return bad("rows not sorted");
    prev = r.pc;
    if (r.file == kNoLine) {
      m.pcs_.emplace_hint(m.pcs_.end(), r.pc, std::nullopt);
      continue;
    }
    if (r.file >= names.size()) return bad("file offset out of range");
    const size_t nul = names.find('\0', r.file);
    if (nul == std::string_view::npos) return bad("file name not terminated");
    m.pcs_.emplace_hint(m.pcs_.end(), r.pc, FileLine{std::string(names.substr(r.file, nul - r.file)), r.line});
  }
  return m;
}

}  // namespace ccdiag
