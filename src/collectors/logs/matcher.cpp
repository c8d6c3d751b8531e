#include "collectors/logs/matcher.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>

#include "ccdiag/fnv1a.hpp"

#ifdef CCDIAG_HAVE_HYPERSCAN
#include <hs/hs.h>
#else
#include <re2/set.h>
#endif
#include <re2/re2.h>

namespace ccdiag::logs {

namespace {

// One top-level element of a regular expression: [begin, end) including its
// quantifier, if any.
struct Element {
  size_t begin, end;
  size_t body_end;       // end of the element without its quantifier
  bool quantified;       // followed by * + ? or {m,n}
  bool alternation;      // a top-level '|'
  bool group;            // ( ... )
  bool zero_width;       // $ \b \B
  bool ascii = true;     // no byte >= 0x80 (a quantifier would apply to a whole UTF-8 character)
};

// End of the element starting at r[i] (no quantifier); npos when malformed.
size_t element_end(std::string_view r, size_t i) {
  const size_t n = r.size();
  if (r[i] == '\\') {
    if (i + 1 >= n) return std::string_view::npos;
    const char c = r[i + 1];
    if ((c == 'x' || c == 'p' || c == 'P') && i + 2 < n && r[i + 2] == '{') {
      const size_t close = r.find('}', i + 3);
      return close == std::string_view::npos ? close : close + 1;
    }
    if (c == 'x') return std::min(n, i + 4);
    if (c == 'p' || c == 'P') return std::min(n, i + 3);
    return i + 2;
  }
  if (r[i] == '[') {
    size_t k = i + 1;
    if (k < n && r[k] == '^') ++k;
    if (k < n && r[k] == ']') ++k;  // a leading ']' is literal
    while (k < n && r[k] != ']') {
      if (r[k] == '\\') k += 2;
      else if (r[k] == '[' && k + 1 < n && r[k + 1] == ':') {
        const size_t close = r.find(":]", k + 2);
        if (close == std::string_view::npos) return close;
        k = close + 2;
      } else ++k;
    }
    return k < n ? k + 1 : std::string_view::npos;
  }
  if (r[i] == '(') {
    int depth = 0;
    for (size_t k = i; k < n; ++k) {
      if (r[k] == '\\') {
        ++k;
      } else if (r[k] == '[') {
        const size_t e = element_end(r, k);
        if (e == std::string_view::npos) return e;
        k = e - 1;
      } else if (r[k] == '(') {
        ++depth;
      } else if (r[k] == ')' && --depth == 0) {
        return k + 1;
      }
    }
    return std::string_view::npos;
  }
  return i + 1;
}

// Splits `r` into top-level elements; nullopt when it cannot (then it is left alone).
std::optional<std::vector<Element>> split(std::string_view r) {
  std::vector<Element> out;
  size_t i = 0;
  while (i < r.size()) {
    Element e{};
    e.begin = i;
    e.alternation = r[i] == '|';
    e.group = r[i] == '(';
    e.zero_width = r[i] == '$' || (r[i] == '\\' && i + 1 < r.size() && (r[i + 1] == 'b' || r[i + 1] == 'B'));
    const size_t end = element_end(r, i);
    if (end == std::string_view::npos || end > r.size()) return std::nullopt;
    for (size_t k = i; k < end; ++k)
      if (static_cast<unsigned char>(r[k]) >= 0x80) e.ascii = false;
    e.body_end = end;
    size_t k = end;
    if (!e.alternation && k < r.size()) {
      if (r[k] == '*' || r[k] == '+' || r[k] == '?') {
        ++k;
      } else if (r[k] == '{') {
        size_t m = k + 1;
        while (m < r.size() && (std::isdigit(static_cast<unsigned char>(r[m])) || r[m] == ',')) ++m;
        if (m < r.size() && r[m] == '}' && m > k + 1) k = m + 1;
      }
      if (k > end && k < r.size() && (r[k] == '?' || r[k] == '+')) ++k;  // lazy / possessive
    }
    e.quantified = k > end;
    e.end = k;
    out.push_back(e);
    i = k;
  }
  return out;
}

constexpr size_t kMinPrefilter = 8;  // never cut an expression below this many characters

// Drops trailing elements that only extend a match that has already been
// found: quantified items, anchors, and groups whose own tail strips away.
// Each cut keeps the expression a superset of the pattern's matches, and a
// repeated tail such as "\S+" would otherwise report one match per character.
std::string strip_tail(std::string r, size_t min_len) {
  for (;;) {
    auto els = split(r);
    if (!els || els->empty()) return r;
    const Element& last = els->back();
    const bool after_bar = els->size() >= 2 && (*els)[els->size() - 2].alternation;
    if (after_bar || !last.ascii || last.alternation) return r;
    std::string shorter;
    if (last.quantified || last.zero_width) {
      shorter = r.substr(0, last.begin);
    } else if (last.group) {
      // Opener: "(" or "(?flags:"; "(?i)" and other non-capturing forms without ':' are left alone.
      size_t inner = last.begin + 1;
      if (inner < r.size() && r[inner] == '?') {
        const size_t colon = r.find(':', inner);
        if (colon == std::string::npos || colon >= last.body_end) return r;
        for (size_t k = inner + 1; k < colon; ++k)
          if (!std::isalpha(static_cast<unsigned char>(r[k])) && r[k] != '-') return r;
        inner = colon + 1;
      }
      const std::string body = r.substr(inner, last.body_end - 1 - inner);
      const std::string stripped = strip_tail(body, 0);
      if (stripped == body) return r;
      shorter = r.substr(0, last.begin);
      if (!stripped.empty()) shorter += r.substr(last.begin, inner - last.begin) + stripped + ")";
    } else {
      return r;
    }
    if (shorter.size() < min_len) return r;
    if (!shorter.empty() && (shorter.back() == '|' || shorter.back() == '(')) return r;
    r = std::move(shorter);
  }
}

// Drops leading quantified elements: the prefilter needs no match start, and a
// leading "\s*" or optional group makes every position a possible start.
std::string strip_head(std::string r) {
  for (;;) {
    auto els = split(r);
    if (!els || els->size() < 2) return r;
    const Element& first = els->front();
    if (!first.quantified || !first.ascii || (*els)[1].alternation) return r;
    std::string shorter = r.substr(first.end);
    if (shorter.size() < kMinPrefilter) return r;
    r = std::move(shorter);
  }
}

// Literals nearly every line of the logs read here carries: NCCL's debug
// prefix and the "[rank3]:" tag torchrun puts in front of every line. As an
// expression's first literal, Hyperscan enters the rest of the expression (an
// NFA) on every line of an NCCL_DEBUG log: one signature that begins with
// "NCCL INFO " was 40% of the scan of a COLL log. Dropping a leading element of
// a concatenation keeps the expression a superset of the pattern's matches
// (RE2 decides), and a later, rarer literal becomes the entry.
constexpr std::string_view kUbiquitousHeads[] = {"NCCL INFO ", "rank"};

std::string strip_ubiquitous_head(std::string r) {
  for (std::string_view head : kUbiquitousHeads) {
    if (r.compare(0, head.size(), head) != 0) continue;
    const auto els = split(r);
    if (!els) return r;
    for (const Element& e : *els)
      if (e.alternation) return r;  // a top-level '|': a suffix is not a superset
    // The head's own characters must be plain elements (not the start of "rank+" or "rank{2}").
    for (const Element& e : *els) {
      if (e.begin >= head.size()) break;
      if (e.quantified || e.group || e.end > head.size()) return r;
    }
    std::string rest = strip_head(r.substr(head.size()));
    return rest.size() >= kMinPrefilter ? rest : r;
  }
  return r;
}

}  // namespace

std::string prefilter_expression(const std::string& pattern) {
  std::string out;
  out.reserve(pattern.size());
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern.compare(i, 4, "(?P<") == 0 && (i == 0 || pattern[i - 1] != '\\')) {
      const size_t close = pattern.find('>', i);
      if (close != std::string::npos) {
        out += "(?:";
        i = close;
        continue;
      }
    }
    out += pattern[i];
  }
  if (!out.empty() && out.front() == '^') out.erase(0, 1);
  return strip_ubiquitous_head(strip_head(strip_tail(std::move(out), kMinPrefilter)));
}

namespace {

PrebuiltPrefilter g_prebuilt;

}  // namespace

void set_prebuilt_prefilter(PrebuiltPrefilter db) { g_prebuilt = db; }

#ifdef CCDIAG_HAVE_HYPERSCAN

namespace {

// PREFILTER: accept every RE2 construct (approximated); RE2 decides.
constexpr unsigned kPrefilterFlags = HS_FLAG_MULTILINE | HS_FLAG_PREFILTER | HS_FLAG_ALLOWEMPTY;

struct DbFree {
  void operator()(hs_database_t* db) const { hs_free_database(db); }
};
using SharedDb = std::shared_ptr<hs_database_t>;

// Databases already built in this process, by prefilter key: a database is
// read-only once built and Hyperscan allows concurrent scans of it (each
// scanner brings its own scratch), so `analyze` over 1,000 bundles builds it once.
std::mutex g_cache_mu;
// Never destroyed: freeing the databases at exit would walk a heap a large
// log's evidence filled (malloc_consolidate) for nothing.
std::map<uint64_t, SharedDb>& db_cache() {
  static auto& cache = *new std::map<uint64_t, SharedDb>;
  return cache;
}

SharedDb deserialize_prebuilt(uint64_t key) {
  if (!g_prebuilt.data || g_prebuilt.size == 0 || g_prebuilt.key != key) return nullptr;
  hs_database_t* db = nullptr;
  // Fails on another engine version or a CPU the database was not built for.
  if (hs_deserialize_database(reinterpret_cast<const char*>(g_prebuilt.data), g_prebuilt.size, &db) != HS_SUCCESS)
    return nullptr;
  return SharedDb(db, DbFree{});
}

}  // namespace

uint64_t prefilter_key(const std::vector<Signature>& sigs) {
  Fnv1a64 h;
  h.add(hs_version());
  h.add(std::to_string(kPrefilterFlags));
  for (const auto& s : sigs) h.add(prefilter_expression(s.pattern));
  return h.value();
}

struct Matcher::Impl {
  SharedDb db;
  hs_scratch_t* scratch = nullptr;
  size_t nsigs = 0;
  ~Impl() {
    if (scratch) hs_free_scratch(scratch);
  }
};

Result<std::unique_ptr<Matcher>> Matcher::compile(const std::vector<Signature>& sigs) {
  auto m = std::unique_ptr<Matcher>(new Matcher());
  m->impl_ = std::make_unique<Impl>();
  m->impl_->nsigs = sigs.size();
  if (sigs.empty()) return m;
  const uint64_t key = prefilter_key(sigs);
  {
    std::lock_guard<std::mutex> lock(g_cache_mu);
    auto it = db_cache().find(key);
    if (it != db_cache().end()) {
      m->impl_->db = it->second;
      m->source_ = "cached";
    } else if ((m->impl_->db = deserialize_prebuilt(key))) {
      m->source_ = "prebuilt";
    }
  }
  if (!m->impl_->db) {
    std::vector<std::string> exprs;
    std::vector<const char*> ptrs;
    std::vector<unsigned> flags, ids;
    for (size_t i = 0; i < sigs.size(); ++i) exprs.push_back(prefilter_expression(sigs[i].pattern));
    for (size_t i = 0; i < sigs.size(); ++i) {
      ptrs.push_back(exprs[i].c_str());
      flags.push_back(kPrefilterFlags);
      ids.push_back(static_cast<unsigned>(i));
    }
    hs_database_t* db = nullptr;
    hs_compile_error_t* err = nullptr;
    if (hs_compile_multi(ptrs.data(), flags.data(), ids.data(), static_cast<unsigned>(ptrs.size()), HS_MODE_BLOCK,
                         nullptr, &db, &err) != HS_SUCCESS) {
      std::string msg = err && err->message ? err->message : "unknown error";
      std::string which = err && err->expression >= 0 ? sigs[static_cast<size_t>(err->expression)].id : "";
      hs_free_compile_error(err);
      return make_error("signature " + which + ": pattern rejected by Hyperscan: " + msg);
    }
    m->impl_->db = SharedDb(db, DbFree{});
    m->source_ = "compiled";
  }
  {
    std::lock_guard<std::mutex> lock(g_cache_mu);
    db_cache().emplace(key, m->impl_->db);
  }
  if (hs_alloc_scratch(m->impl_->db.get(), &m->impl_->scratch) != HS_SUCCESS)
    return make_error("Hyperscan: cannot allocate scratch space");
  return m;
}

Result<std::string> Matcher::serialize() const {
  if (!impl_->db) return make_error("no prefilter database (no signatures)");
  char* bytes = nullptr;
  size_t size = 0;
  if (hs_serialize_database(impl_->db.get(), &bytes, &size) != HS_SUCCESS)
    return make_error("Hyperscan: cannot serialize the signature database");
  std::string out(bytes, size);
  std::free(bytes);  // hs_serialize_database allocates with the misc allocator (malloc by default)
  return out;
}

namespace {
struct ScanCtx {
  std::string_view block;
  std::vector<Hit>* hits;
  std::vector<size_t>* last_line;  // per signature: line_begin+1 of its last hit (0 = none)
  // The line of the previous callback: Hyperscan reports every end offset of
  // a match (and of each pattern), so most callbacks land on the line before.
  size_t cur_begin = 0, cur_end = 0;
  bool have_cur = false;
};

int on_match(unsigned id, unsigned long long /*from*/, unsigned long long to, unsigned /*flags*/, void* p) {
  auto* c = static_cast<ScanCtx*>(p);
  const size_t end = std::min<size_t>(static_cast<size_t>(to), c->block.size());
  const char* base = c->block.data();
  // The line holding the match end (a match ending right at '\n' belongs to
  // the line before): the line after the last '\n' in [0, q).
  const size_t q = end > 0 && base[end - 1] == '\n' ? end - 1 : end;
  if (!c->have_cur || q < c->cur_begin || q > c->cur_end) {
    const void* nl = q > 0 ? memrchr(base, '\n', q) : nullptr;
    c->cur_begin = nl ? static_cast<size_t>(static_cast<const char*>(nl) - base) + 1 : 0;
    const void* nl2 = std::memchr(base + c->cur_begin, '\n', c->block.size() - c->cur_begin);
    c->cur_end = nl2 ? static_cast<size_t>(static_cast<const char*>(nl2) - base) : c->block.size();
    c->have_cur = true;
  }
  size_t& last = (*c->last_line)[id];
  if (last == c->cur_begin + 1) return 0;
  last = c->cur_begin + 1;
  c->hits->push_back(Hit{c->cur_begin, c->cur_end, id});
  return 0;
}
}  // namespace

void Matcher::scan(std::string_view block, std::vector<Hit>& hits) const {
  hits.clear();
  if (!impl_->db || block.empty()) return;
  std::vector<size_t> last(impl_->nsigs, 0);
  ScanCtx ctx{block, &hits, &last};
  hs_scan(impl_->db.get(), block.data(), static_cast<unsigned>(block.size()), 0, impl_->scratch, on_match, &ctx);
  std::sort(hits.begin(), hits.end(), [](const Hit& a, const Hit& b) {
    return a.line_begin != b.line_begin ? a.line_begin < b.line_begin : a.sig < b.sig;
  });
  hits.erase(std::unique(hits.begin(), hits.end(),
                         [](const Hit& a, const Hit& b) { return a.line_begin == b.line_begin && a.sig == b.sig; }),
             hits.end());
}

const char* Matcher::engine() const { return "hyperscan+re2"; }

#else  // RE2::Set fallback

struct Matcher::Impl {
  std::unique_ptr<RE2::Set> set;
};

Result<std::unique_ptr<Matcher>> Matcher::compile(const std::vector<Signature>& sigs) {
  RE2::Options o;
  o.set_log_errors(false);
  auto m = std::unique_ptr<Matcher>(new Matcher());
  m->impl_ = std::make_unique<Impl>();
  m->impl_->set = std::make_unique<RE2::Set>(o, RE2::UNANCHORED);
  for (const auto& s : sigs) {
    std::string err;
    if (m->impl_->set->Add(prefilter_expression(s.pattern), &err) < 0)
      return make_error("signature " + s.id + ": bad pattern: " + err);
  }
  if (!m->impl_->set->Compile()) return make_error("RE2::Set: out of memory compiling signatures");
  return m;
}

void Matcher::scan(std::string_view block, std::vector<Hit>& hits) const {
  hits.clear();
  std::vector<int> ids;
  size_t pos = 0;
  while (pos < block.size()) {
    const void* nl = std::memchr(block.data() + pos, '\n', block.size() - pos);
    const size_t end = nl ? static_cast<size_t>(static_cast<const char*>(nl) - block.data()) : block.size();
    ids.clear();
    if (impl_->set->Match(re2::StringPiece(block.data() + pos, end - pos), &ids)) {
      std::sort(ids.begin(), ids.end());
      for (int id : ids) hits.push_back(Hit{pos, end, static_cast<unsigned>(id)});
    }
    pos = end + 1;
  }
}

const char* Matcher::engine() const { return "re2-set"; }

uint64_t prefilter_key(const std::vector<Signature>& sigs) {
  Fnv1a64 h;
  h.add("re2-set");
  for (const auto& s : sigs) h.add(prefilter_expression(s.pattern));
  return h.value();
}

Result<std::string> Matcher::serialize() const { return make_error("no prebuilt database without Hyperscan"); }

#endif

Matcher::~Matcher() = default;

}  // namespace ccdiag::logs
