#include "collectors/fr/dump.hpp"

#include <algorithm>
#include <charconv>
#include <functional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ccdiag::fr {

std::optional<std::pair<int, int>> parse_version(std::string_view v) {
  const auto dot = v.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 >= v.size()) return std::nullopt;
  int major = 0, minor = 0;
  auto r1 = std::from_chars(v.data(), v.data() + dot, major);
  auto r2 = std::from_chars(v.data() + dot + 1, v.data() + v.size(), minor);
  if (r1.ec != std::errc() || r1.ptr != v.data() + dot) return std::nullopt;
  if (r2.ec != std::errc() || r2.ptr != v.data() + v.size()) return std::nullopt;
  return std::make_pair(major, minor);
}

namespace {

// A double as an int64 without undefined behaviour for NaN or out-of-range
// values (hostile dumps): those read as 0.
int64_t to_i64(double x) {
  if (!(x > -9.2e18 && x < 9.2e18)) return 0;
  return static_cast<int64_t>(x);
}

// Uniform read-only views of a pickle value and a JSON value, so one decoder
// serves both formats.
struct PView {
  const PickleDoc* d = nullptr;
  const PValue* n = nullptr;
  bool ok() const { return n != nullptr; }
  bool is_dict() const { return n && n->type == PType::dict; }
  bool is_seq() const { return n && (n->type == PType::list || n->type == PType::tuple); }
  bool is_str() const { return n && n->type == PType::string; }
  bool is_int() const { return n && (n->type == PType::integer || n->type == PType::boolean); }
  bool is_num() const { return is_int() || (n && n->type == PType::floating); }
  bool is_null() const { return !n || n->type == PType::none; }
  PView get(std::string_view k) const { return PView{d, n ? d->get(*n, k) : nullptr}; }
  size_t size() const { return is_seq() ? d->kids(*n).size() : 0; }
  PView item(size_t i) const { return PView{d, &d->kids(*n)[i]}; }
  std::string_view str() const { return is_str() ? d->str(*n) : std::string_view(); }
  int64_t i64() const { return n->type == PType::floating ? to_i64(n->d()) : n->i; }
  double f64() const { return n->type == PType::floating ? n->d() : static_cast<double>(n->i); }
  bool truthy() const { return n && (n->type == PType::boolean || n->type == PType::integer) && n->i != 0; }
  // dict iteration
  size_t dict_size() const { return is_dict() ? d->kids(*n).size() / 2 : 0; }
  PView dict_key(size_t i) const { return PView{d, &d->kids(*n)[2 * i]}; }
  PView dict_val(size_t i) const { return PView{d, &d->kids(*n)[2 * i + 1]}; }
};

struct JView {
  const nlohmann::json* j = nullptr;
  bool ok() const { return j != nullptr; }
  bool is_dict() const { return j && j->is_object(); }
  bool is_seq() const { return j && j->is_array(); }
  bool is_str() const { return j && j->is_string(); }
  bool is_int() const { return j && (j->is_number_integer() || j->is_boolean()); }
  bool is_num() const { return j && (j->is_number() || j->is_boolean()); }
  bool is_null() const { return !j || j->is_null(); }
  JView get(std::string_view k) const {
    if (!is_dict()) return {};
    auto it = j->find(std::string(k));
    return it == j->end() ? JView{} : JView{&*it};
  }
  size_t size() const { return is_seq() ? j->size() : 0; }
  JView item(size_t i) const { return JView{&(*j)[i]}; }
  std::string_view str() const { return is_str() ? std::string_view(j->get_ref<const std::string&>()) : std::string_view(); }
  int64_t i64() const {
    if (j->is_boolean()) return j->get<bool>() ? 1 : 0;
    if (j->is_number_float()) return to_i64(j->get<double>());
    if (j->is_number_unsigned()) return static_cast<int64_t>(j->get<uint64_t>());
    return j->get<int64_t>();
  }
  double f64() const { return j->is_boolean() ? (j->get<bool>() ? 1.0 : 0.0) : j->get<double>(); }
  bool truthy() const { return j && ((j->is_boolean() && j->get<bool>()) || (j->is_number() && j->get<double>() != 0)); }
  size_t dict_size() const { return is_dict() ? j->size() : 0; }
  // JSON objects are iterated through items() in the decoder instead.
};

template <class V>
int64_t int_field(const V& v, std::string_view key, int64_t fallback) {
  V f = v.get(key);
  if (f.is_num()) return f.i64();
  if (f.is_str()) {  // fr_trace tests pass seq ids as strings
    int64_t out = 0;
    auto s = f.str();
    auto r = std::from_chars(s.data(), s.data() + s.size(), out);
    if (r.ec == std::errc() && r.ptr == s.data() + s.size()) return out;
  }
  return fallback;
}

// None and 0 both mean "not observed" (JSON dumps write 0).
template <class V>
int64_t time_field(const V& v, std::string_view key) {
  V f = v.get(key);
  if (!f.is_num()) return kNoTime;
  const int64_t t = f.i64();
  return t > 0 ? t : kNoTime;
}

// The shape hash is over the dims (FNV-1a), the same for pickle and JSON
// dumps, so ranks whose dumps come in different formats compare equal.
template <class V>
ShapeInfo shapes_of(const V& v) {
  ShapeInfo s;
  std::string text = "[";
  uint64_t h = 1469598103934665603ull;
  auto mixin = [&h](uint64_t x) { h = (h ^ x) * 1099511628211ull; };
  if (v.is_seq()) {
    s.count = static_cast<uint32_t>(v.size());
    for (size_t k = 0; k < v.size(); ++k) {
      V shp = v.item(k);
      if (k) text += ", ";
      text += '[';
      mixin(0xabcdefull);
      int64_t numel = 1;
      size_t dims = shp.is_seq() ? shp.size() : 0;
      for (size_t d = 0; d < dims; ++d) {
        V dim = shp.item(d);
        const int64_t x = dim.is_int() ? dim.i64() : 0;
        mixin(static_cast<uint64_t>(x));
        if (d) text += ", ";
        text += std::to_string(x);
        numel = (x > 0 && numel <= (int64_t{1} << 62) / x) ? numel * x : (x > 0 ? numel : 0);
      }
      text += ']';
      if (dims == 0) numel = 0;
      if (k == 0) {
        s.first_numel = numel;
        s.first_empty = dims == 0;
      }
      s.total_numel += numel;
    }
  }
  text += ']';
  s.hash = h;
  s.text = std::move(text);
  return s;
}

// dtypes: a list of names, or (in fr_trace's own tests) a bare string.
template <class V>
std::string dtypes_of(const V& v) {
  std::vector<std::string> names;
  if (v.is_str()) names.emplace_back(v.str());
  else if (v.is_seq())
    for (size_t k = 0; k < v.size(); ++k) {
      V x = v.item(k);
      if (x.is_str()) names.emplace_back(x.str());
      else if (x.is_num()) names.push_back(std::to_string(x.i64()));  // 2024 dumps wrote ScalarType ints
    }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::string out;
  for (const auto& n : names) {
    if (n.empty()) continue;
    if (!out.empty()) out += ',';
    out += n;
  }
  return out;
}

template <class V>
std::string stack_of(const V& frames) {
  std::string out;
  const size_t n = std::min<size_t>(frames.size(), 24);  // enough to show the call site
  for (size_t k = 0; k < n; ++k) {
    V f = frames.item(k);
    if (!f.is_dict()) continue;
    if (!out.empty()) out += '\n';
    out += std::string(f.get("name").str());
    out += " at ";
    out += std::string(f.get("filename").str());
    out += ':';
    V line = f.get("line");
    out += line.is_num() ? std::to_string(line.i64()) : std::string("?");
  }
  return out;
}

FrState state_of(std::string_view s) {
  if (s == "scheduled") return FrState::scheduled;
  if (s == "started") return FrState::started;
  if (s == "completed") return FrState::completed;
  return FrState::unknown;
}

template <class V>
void decode_entry(const V& e, RankDump& out) {
  FrEntry r;
  r.record_id = int_field(e, "record_id", static_cast<int64_t>(out.entries.size()));
  r.collective_seq = int_field(e, "collective_seq_id", 0);
  r.p2p_seq = int_field(e, "p2p_seq_id", 0);
  r.op_id = int_field(e, "op_id", 0);
  r.time_created_ns = time_field(e, "time_created_ns");
  r.time_started_ns = time_field(e, "time_discovered_started_ns");
  r.time_completed_ns = time_field(e, "time_discovered_completed_ns");
  V dur = e.get("duration_ms");
  if (dur.is_num()) r.duration_ms = static_cast<float>(dur.f64());
  V pg = e.get("process_group");
  std::string_view pg_name, pg_desc;
  if (pg.is_seq() && pg.size() >= 1) {
    pg_name = pg.item(0).str();
    if (pg.size() >= 2) pg_desc = pg.item(1).str();
  } else if (pg.is_str()) {
    pg_name = pg.str();
  }
  if (pg_name.empty()) {
    // No process_group: fall back to the local pg_id so entries still group.
    V pid = e.get("pg_id");
    static thread_local std::string tmp;
    tmp = pid.is_num() ? std::to_string(pid.i64()) : std::string("0");
    r.pg = out.intern_pg(tmp, pg_desc);
  } else {
    r.pg = out.intern_pg(pg_name, pg_desc);
    if (V pid = e.get("pg_id"); pid.is_num() && out.pgs[r.pg].local_id.empty()) out.pgs[r.pg].local_id = std::to_string(pid.i64());
  }
  r.name = out.intern_string(e.get("profiling_name").str());
  r.in_shapes = out.intern_shape(shapes_of(e.get("input_sizes")));
  r.out_shapes = out.intern_shape(shapes_of(e.get("output_sizes")));
  r.in_dtypes = out.intern_string(dtypes_of(e.get("input_dtypes")));
  r.out_dtypes = out.intern_string(dtypes_of(e.get("output_dtypes")));
  V frames = e.get("frames");
  if (frames.is_seq() && frames.size() > 0) r.stack = out.intern_stack(stack_of(frames));
  r.state = state_of(e.get("state").str());
  r.is_p2p = e.get("is_p2p").truthy();
  r.retired = e.get("retired").truthy();
  out.entries.push_back(r);
}

std::vector<int> parse_ranks_text(std::string_view s, bool& ok) {
  // "[0, 1, 2]" (a Python list's repr); also accepts "0,1,2".
  std::vector<int> out;
  ok = true;
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if ((c >= '0' && c <= '9') || c == '-') {
      int v = 0;
      auto r = std::from_chars(s.data() + i, s.data() + s.size(), v);
      if (r.ec != std::errc()) {
        ok = false;
        return out;
      }
      out.push_back(v);
      i = static_cast<size_t>(r.ptr - s.data());
    } else if (c == '[' || c == ']' || c == ',' || c == ' ' || c == '(' || c == ')') {
      ++i;
    } else {
      ok = false;
      return out;
    }
  }
  return out;
}

template <class V>
void decode_pg_config_item(std::string_view key, const V& val, RankDump& out) {
  PgConfig c;
  c.name = std::string(val.get("name").is_str() ? val.get("name").str() : key);
  c.desc = std::string(val.get("desc").str());
  V ranks = val.get("ranks");
  if (ranks.is_str()) {
    bool ok = false;
    c.ranks = parse_ranks_text(ranks.str(), ok);
    c.ranks_known = ok;
  } else if (ranks.is_seq()) {
    c.ranks_known = true;
    for (size_t k = 0; k < ranks.size(); ++k)
      if (ranks.item(k).is_num()) c.ranks.push_back(static_cast<int>(ranks.item(k).i64()));
  }
  out.pg_configs.push_back(std::move(c));
}

template <class V>
void decode_pg_status_item(std::string_view key, const V& val, RankDump& out) {
  PgStatus st;
  auto num = [&](const char* k, int64_t& dst) {
    V x = val.get(k);
    if (x.is_num()) dst = x.i64();
  };
  num("last_enqueued_collective", st.last_enqueued);
  num("last_started_collective", st.last_started);
  num("last_completed_collective", st.last_completed);
  out.pg_status[std::string(key)] = st;
}

Status check_version(const std::string& v, const std::string& file) {
  if (v.empty()) return Ok{};
  auto mv = parse_version(v);
  if (!mv) return make_error(fmt::format("unknown flight-recorder version \"{}\" (expected major.minor, e.g. 2.10)", v), file);
  if (mv->first != 2)
    return make_error(fmt::format("unsupported flight-recorder version {} (this reader knows 2.x)", v), file);
  return Ok{};
}

// Fast path for pickles. PyTorch memoises strings by value, so every key,
// profiling name, dtype and state string is one node referenced by index from
// every entry, and frame dicts are shared by identity: decoded values are
// cached per node index, and most entries cost a few table lookups.
enum Field : int8_t {
  kUnknownField = -1, kRecordId, kCollSeq, kP2pSeq, kOpId, kCreated, kStarted, kCompleted, kDuration, kPg, kPgId,
  kName, kInSizes, kOutSizes, kInDtypes, kOutDtypes, kFrames, kState, kIsP2p, kRetired, kNumFields
};

Field field_of(std::string_view k) {
  static const std::pair<std::string_view, Field> table[] = {
      {"record_id", kRecordId}, {"collective_seq_id", kCollSeq}, {"p2p_seq_id", kP2pSeq}, {"op_id", kOpId},
      {"time_created_ns", kCreated}, {"time_discovered_started_ns", kStarted},
      {"time_discovered_completed_ns", kCompleted}, {"duration_ms", kDuration}, {"process_group", kPg},
      {"pg_id", kPgId}, {"profiling_name", kName}, {"input_sizes", kInSizes}, {"output_sizes", kOutSizes},
      {"input_dtypes", kInDtypes}, {"output_dtypes", kOutDtypes}, {"frames", kFrames}, {"state", kState},
      {"is_p2p", kIsP2p}, {"retired", kRetired}};
  for (const auto& [n, f] : table)
    if (n == k) return f;
  return kUnknownField;
}

class PickleEntryDecoder {
 public:
  // Caches are plain arrays indexed by string occurrence id (PValue::ref):
  // a memoised key or name is decoded once per dump, not once per entry.
  PickleEntryDecoder(const PickleDoc& d, RankDump& out)
      : d_(d), out_(out), fields_(d.string_ids, kUnseen), strs_(d.string_ids, kNoIndex), dtypes_(d.string_ids, kNoIndex) {}

  void decode(const PValue& e) {
    const PValue* f[kNumFields] = {};
    const auto kv = d_.kids(e);
    for (size_t k = 0; k + 1 < kv.size(); k += 2) {
      const Field id = field(kv[k]);
      if (id != kUnknownField) f[id] = &kv[k + 1];
    }
    FrEntry r;
    r.record_id = num(f[kRecordId], static_cast<int64_t>(out_.entries.size()));
    r.collective_seq = num(f[kCollSeq], 0);
    r.p2p_seq = num(f[kP2pSeq], 0);
    r.op_id = num(f[kOpId], 0);
    r.time_created_ns = time(f[kCreated]);
    r.time_started_ns = time(f[kStarted]);
    r.time_completed_ns = time(f[kCompleted]);
    if (f[kDuration] && (f[kDuration]->type == PType::floating || f[kDuration]->type == PType::integer))
      r.duration_ms = static_cast<float>(f[kDuration]->type == PType::floating ? f[kDuration]->d() : static_cast<double>(f[kDuration]->i));
    r.pg = pg(f[kPg], f[kPgId]);
    if (f[kPgId] && f[kPgId]->type == PType::integer && r.pg < out_.pgs.size() && out_.pgs[r.pg].local_id.empty())
      out_.pgs[r.pg].local_id = std::to_string(f[kPgId]->i);
    r.name = str_id(f[kName]);
    r.in_shapes = shape_id(f[kInSizes]);
    r.out_shapes = shape_id(f[kOutSizes]);
    r.in_dtypes = dtype_id(f[kInDtypes]);
    r.out_dtypes = dtype_id(f[kOutDtypes]);
    if (f[kFrames] && f[kFrames]->type == PType::list && !d_.kids(*f[kFrames]).empty()) r.stack = stack_id(*f[kFrames]);
    r.state = f[kState] && f[kState]->type == PType::string ? state_of(d_.str(*f[kState])) : FrState::unknown;
    r.is_p2p = truthy(f[kIsP2p]);
    r.retired = truthy(f[kRetired]);
    out_.entries.push_back(r);
  }

 private:
  static constexpr int8_t kUnseen = -2;
  const PickleDoc& d_;
  RankDump& out_;
  std::vector<int8_t> fields_;    // per string occurrence: Field, kUnseen
  std::vector<uint32_t> strs_;    // per string occurrence: RankDump::strings index
  std::vector<uint32_t> dtypes_;  // per string occurrence: the one-dtype list of that name
  std::unordered_map<uint64_t, uint32_t> pgs_;        // (name occurrence, desc occurrence) -> pg
  std::unordered_map<std::string, uint32_t> stacks_;  // frame container ids -> stack
  std::string key_;                                   // reused lookup key

  Field field(const PValue& key) {
    if (key.type != PType::string) return kUnknownField;
    int8_t& c = fields_[key.ref];
    if (c == kUnseen) c = field_of(d_.str(key));
    return static_cast<Field>(c);
  }
  static bool truthy(const PValue* n) { return n && (n->type == PType::boolean || n->type == PType::integer) && n->i != 0; }
  int64_t num(const PValue* n, int64_t fallback) const {
    if (!n) return fallback;
    if (n->type == PType::integer || n->type == PType::boolean) return n->i;
    if (n->type == PType::floating) return to_i64(n->d());
    if (n->type == PType::string) {
      int64_t v = 0;
      const std::string_view s = d_.str(*n);
      auto r = std::from_chars(s.data(), s.data() + s.size(), v);
      if (r.ec == std::errc() && r.ptr == s.data() + s.size()) return v;
    }
    return fallback;
  }
  int64_t time(const PValue* n) const {
    if (!n || (n->type != PType::integer && n->type != PType::floating)) return kNoTime;
    const int64_t t = num(n, kNoTime);
    return t > 0 ? t : kNoTime;
  }
  uint32_t str_id(const PValue* n) {
    if (!n || n->type != PType::string) return out_.intern_string("");
    uint32_t& c = strs_[n->ref];
    if (c == kNoIndex) c = out_.intern_string(d_.str(*n));
    return c;
  }
  uint32_t pg(const PValue* n, const PValue* pg_id) {
    if (n && (n->type == PType::tuple || n->type == PType::list) && !d_.kids(*n).empty()) {
      const auto kv = d_.kids(*n);
      const std::string_view name = d_.str(kv[0]);  // "" when not a string
      const std::string_view desc = kv.size() > 1 ? d_.str(kv[1]) : std::string_view();
      // A tuple per entry, but its strings are memoised: key by their occurrences.
      const bool cacheable = kv[0].type == PType::string && (kv.size() < 2 || kv[1].type == PType::string);
      if (!cacheable) return out_.intern_pg(name, desc);
      const uint64_t key = (uint64_t{kv[0].ref} << 32) | (kv.size() > 1 ? kv[1].ref : 0xffffffffu);
      auto it = pgs_.find(key);
      if (it != pgs_.end()) return it->second;
      const uint32_t id = out_.intern_pg(name, desc);
      pgs_.emplace(key, id);
      return id;
    }
    if (n && n->type == PType::string) return out_.intern_pg(d_.str(*n), "");
    return out_.intern_pg(pg_id && pg_id->type == PType::integer ? std::to_string(pg_id->i) : std::string("0"), "");
  }
  uint32_t shape_id(const PValue* n) {
    // Hash the dims without building text; text only for a new shape. Must
    // agree with shapes_of() (the JSON path hashes the same way).
    uint64_t h = 1469598103934665603ull;
    auto mixin = [&h](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
    if (n && (n->type == PType::list || n->type == PType::tuple)) {
      for (const PValue& shp : d_.kids(*n)) {
        mixin(0xabcdefull);
        if (shp.type == PType::list || shp.type == PType::tuple)
          for (const PValue& dim : d_.kids(shp)) {
            const int64_t x = (dim.type == PType::integer || dim.type == PType::boolean) ? dim.i : 0;
            mixin(static_cast<uint64_t>(x));
          }
      }
    }
    auto it = out_.shape_index_.find(h);
    if (it != out_.shape_index_.end()) return it->second;
    return out_.intern_shape(shapes_of(PView{&d_, n}));
  }
  uint32_t dtype_id(const PValue* n) {
    if (!n) return out_.intern_string("");
    if (n->type == PType::list) {
      const auto kv = d_.kids(*n);
      if (kv.size() == 1 && kv[0].type == PType::string) {
        // The common case: one tensor; key by its memoised string.
        uint32_t& c = dtypes_[kv[0].ref];
        if (c == kNoIndex) c = out_.intern_string(dtypes_of(PView{&d_, n}));
        return c;
      }
    }
    return out_.intern_string(dtypes_of(PView{&d_, n}));
  }
  uint32_t stack_id(const PValue& frames) {
    // Frame dicts are memoised by identity: the container ids name the stack.
    // Only what stack_of() reads is keyed (the first 24 items).
    const auto kv = d_.kids(frames);
    const size_t n = std::min<size_t>(kv.size(), 24);
    key_.clear();
    for (size_t k = 0; k < n; ++k) {
      const uint32_t id = kv[k].type == PType::dict ? kv[k].ref : 0xffffffffu;
      key_.append(reinterpret_cast<const char*>(&id), sizeof id);
    }
    auto it = stacks_.find(key_);
    if (it != stacks_.end()) return it->second;
    const uint32_t id = out_.intern_stack(stack_of(PView{&d_, &frames}));
    stacks_.emplace(key_, id);
    return id;
  }
};

}  // namespace

Result<RankDump> decode_pickle_dump(const PickleDoc& doc, const std::string& file) {
  RankDump out;
  out.file = file;
  PView root{&doc, &doc.root};
  PView entries;
  if (root.is_seq()) {
    entries = root;  // Oct 2023: a bare list of entries
  } else if (root.is_dict()) {
    PView v = root.get("version");
    if (v.ok() && !v.is_str()) return make_error("\"version\" is not a string", file);
    out.version = std::string(v.str());
    if (auto st = check_version(out.version, file); !st) return st.error();
    PView clv = root.get("comm_lib_version");
    if (!clv.ok()) clv = root.get("nccl_version");
    out.comm_lib_version = std::string(clv.str());
    PView cfg = root.get("pg_config");
    for (size_t k = 0; k < cfg.dict_size(); ++k)
      if (cfg.dict_val(k).is_dict()) decode_pg_config_item(cfg.dict_key(k).str(), cfg.dict_val(k), out);
    PView pst = root.get("pg_status");
    for (size_t k = 0; k < pst.dict_size(); ++k)
      if (pst.dict_val(k).is_dict()) decode_pg_status_item(pst.dict_key(k).str(), pst.dict_val(k), out);
    entries = root.get("entries");
    out.has_entries_key = entries.ok();
    if (entries.ok() && !entries.is_seq()) return make_error("\"entries\" is not a list", file);
  } else {
    return make_error("not a flight-recorder dump (top level is neither a dict nor a list)", file);
  }
  out.entries.reserve(entries.size());
  PickleEntryDecoder dec(doc, out);
  for (size_t k = 0; k < entries.size(); ++k) {
    PView e = entries.item(k);
    if (e.is_dict()) dec.decode(*e.n);
  }
  apply_backend_semantics(out);
  return out;
}

Result<RankDump> decode_json_dump(const nlohmann::json& doc, const std::string& file) {
  RankDump out;
  out.file = file;
  JView root{&doc};
  if (!root.is_dict()) return make_error("not a flight-recorder dump (JSON top level is not an object)", file);
  JView v = root.get("version");
  if (v.ok() && !v.is_str()) return make_error("\"version\" is not a string", file);
  out.version = std::string(v.str());
  if (auto st = check_version(out.version, file); !st) return st.error();
  JView clv = root.get("comm_lib_version");
  if (!clv.ok()) clv = root.get("nccl_version");
  out.comm_lib_version = std::string(clv.str());
  JView cfg = root.get("pg_config");
  if (cfg.is_dict())
    for (const auto& [k, val] : cfg.j->items())
      if (val.is_object()) decode_pg_config_item(k, JView{&val}, out);
  JView pst = root.get("pg_status");
  if (pst.is_dict())
    for (const auto& [k, val] : pst.j->items())
      if (val.is_object()) decode_pg_status_item(k, JView{&val}, out);
  JView entries = root.get("entries");
  out.has_entries_key = entries.ok();
  if (entries.ok() && !entries.is_seq()) return make_error("\"entries\" is not a list", file);
  for (size_t k = 0; k < entries.size(); ++k) {
    JView e = entries.item(k);
    if (e.is_dict()) decode_entry(e, out);
  }
  // JSON keys are sorted, not in record order: restore record order.
  std::stable_sort(out.entries.begin(), out.entries.end(),
                   [](const FrEntry& a, const FrEntry& b) { return a.record_id < b.record_id; });
  apply_backend_semantics(out);
  return out;
}

void apply_backend_semantics(RankDump& d) {
  // Backend: the prefix most entries' profiling names carry.
  std::unordered_map<std::string, size_t> votes;
  for (const auto& e : d.entries) {
    const std::string& name = d.str(e.name);
    const size_t colon = name.find(':');
    if (colon != std::string::npos && colon > 0) ++votes[name.substr(0, colon)];
  }
  size_t best = 0;
  for (const auto& [b, n] : votes)
    if (n > best) d.backend = b, best = n;
  // torch 2.15 gloo: one config under key '' with name ''. With the
  // default group alone it is that group's; once sub-groups exist it holds
  // some other group's ranks ("[0, 1]" on rank 3 of a job with {0,1} and
  // {2,3}): then it names no group, and members come from the entries.
  bool named_default = false, only_default = true;
  for (const auto& c : d.pg_configs)
    if (c.name == "0") named_default = true;
  for (const auto& p : d.pgs)
    if (p.name != "0") only_default = false;
  for (auto& c : d.pg_configs)
    if (c.name.empty() && !named_default) {
      if (only_default) c.name = "0";
      else c.ranks_known = false;
    }
  if (d.backend.empty() || device_backend(d.backend)) return;
  // A CPU backend records no device progress: every entry stays "scheduled".
  // What completed is what pg_status says completed; without pg_status, an
  // entry the recorder retired with no timeout is done. Entries of a group
  // pg_status does not cover keep "scheduled".
  for (auto& e : d.entries) {
    if (e.state != FrState::scheduled && e.state != FrState::unknown) continue;
    if (e.pg >= d.pgs.size()) continue;
    // pg_status is keyed by the process's own group index (the entries'
    // pg_id), which is the group name only for the default group.
    auto it = d.pg_status.end();
    it = d.pg_status.find(d.pgs[e.pg].local_id.empty() ? d.pgs[e.pg].name : d.pgs[e.pg].local_id);
    bool done = false;
    if (it != d.pg_status.end()) {
      const int64_t seq = e.is_p2p ? -1 : e.collective_seq;
      done = seq >= 0 && it->second.last_completed >= 0 && seq <= it->second.last_completed;
    } else {
      done = false;
    }
    if (done) {
      e.state = FrState::completed;
      ++d.states_derived;
    }
  }
}

Result<RankDump> decode_dump_bytes(std::string_view bytes, const std::string& file, PickleDoc* scratch) {
  size_t i = 0;
  while (i < bytes.size() && (bytes[i] == ' ' || bytes[i] == '\n' || bytes[i] == '\r' || bytes[i] == '\t')) ++i;
  if (i < bytes.size() && bytes[i] == '{') {
    // nlohmann's parser is recursive: bound nesting before handing it the text.
    int depth = 0, max_depth = 0;
    bool in_str = false, esc = false;
    for (size_t k = i; k < bytes.size(); ++k) {
      const char c = bytes[k];
      if (in_str) {
        if (esc) esc = false;
        else if (c == '\\') esc = true;
        else if (c == '"') in_str = false;
        continue;
      }
      if (c == '"') in_str = true;
      else if (c == '{' || c == '[') max_depth = std::max(max_depth, ++depth);
      else if (c == '}' || c == ']') --depth;
    }
    if (max_depth > kMaxDepth) return make_error(fmt::format("JSON nesting deeper than {}", kMaxDepth), file);
    auto j = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, false);
    if (j.is_discarded()) return make_error("malformed JSON flight-recorder dump", file);
    return decode_json_dump(j, file);
  }
  PickleDoc local;
  PickleDoc& doc = scratch ? *scratch : local;
  if (auto st = parse_pickle_into(bytes, doc); !st) return make_error("bad pickle: " + st.error().message, file);
  return decode_pickle_dump(doc, file);
}

}  // namespace ccdiag::fr
