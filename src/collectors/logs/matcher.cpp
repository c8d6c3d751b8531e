#include "collectors/logs/matcher.hpp"

#include <algorithm>
#include <cstring>

#ifdef CCDIAG_HAVE_HYPERSCAN
#include <hs/hs.h>
#else
#include <re2/set.h>
#endif
#include <re2/re2.h>

namespace ccdiag::logs {

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
  // Trailing anchors and catch-alls only multiply prefilter callbacks.
  for (bool changed = true; changed;) {
    changed = false;
    for (const char* tail : {"$", "\\s*", " *", ".*", "(?:.*)", "(?:\\.\\.\\.)?", "(?:.+)", ".+"}) {
      const size_t n = std::strlen(tail);
      if (out.size() > n + 8 && out.compare(out.size() - n, n, tail) == 0 &&
          (out.size() == n || out[out.size() - n - 1] != '\\')) {
        out.resize(out.size() - n);
        changed = true;
      }
    }
  }
  return out;
}

#ifdef CCDIAG_HAVE_HYPERSCAN

struct Matcher::Impl {
  hs_database_t* db = nullptr;
  hs_scratch_t* scratch = nullptr;
  size_t nsigs = 0;
  ~Impl() {
    if (scratch) hs_free_scratch(scratch);
    if (db) hs_free_database(db);
  }
};

Result<std::unique_ptr<Matcher>> Matcher::compile(const std::vector<Signature>& sigs) {
  std::vector<std::string> exprs;
  std::vector<const char*> ptrs;
  std::vector<unsigned> flags, ids;
  for (size_t i = 0; i < sigs.size(); ++i) exprs.push_back(prefilter_expression(sigs[i].pattern));
  for (size_t i = 0; i < sigs.size(); ++i) {
    ptrs.push_back(exprs[i].c_str());
    // PREFILTER: accept every RE2 construct (approximated); RE2 decides.
    flags.push_back(HS_FLAG_MULTILINE | HS_FLAG_PREFILTER | HS_FLAG_ALLOWEMPTY);
    ids.push_back(static_cast<unsigned>(i));
  }
  auto m = std::unique_ptr<Matcher>(new Matcher());
  m->impl_ = std::make_unique<Impl>();
  m->impl_->nsigs = sigs.size();
  if (sigs.empty()) return m;
  hs_compile_error_t* err = nullptr;
  if (hs_compile_multi(ptrs.data(), flags.data(), ids.data(), static_cast<unsigned>(ptrs.size()), HS_MODE_BLOCK,
                       nullptr, &m->impl_->db, &err) != HS_SUCCESS) {
    std::string msg = err && err->message ? err->message : "unknown error";
    std::string which = err && err->expression >= 0 ? sigs[static_cast<size_t>(err->expression)].id : "";
    hs_free_compile_error(err);
    return make_error("signature " + which + ": pattern rejected by Hyperscan: " + msg);
  }
  if (hs_alloc_scratch(m->impl_->db, &m->impl_->scratch) != HS_SUCCESS)
    return make_error("Hyperscan: cannot allocate scratch space");
  return m;
}

namespace {
struct ScanCtx {
  std::string_view block;
  std::vector<Hit>* hits;
  std::vector<size_t>* last_line;  // per signature: line_begin+1 of its last hit (0 = none)
};

int on_match(unsigned id, unsigned long long /*from*/, unsigned long long to, unsigned /*flags*/, void* p) {
  auto* c = static_cast<ScanCtx*>(p);
  const size_t end = std::min<size_t>(static_cast<size_t>(to), c->block.size());
  // The line holding the match end (a match ending right at '\n' belongs to the line before).
  const char* base = c->block.data();
  size_t begin = 0;
  if (end > 0) {
    const void* nl = memrchr(base, '\n', end > 0 ? end - (base[end - 1] == '\n' ? 1 : 0) : 0);
    begin = nl ? static_cast<size_t>(static_cast<const char*>(nl) - base) + 1 : 0;
  }
  size_t& last = (*c->last_line)[id];
  if (last == begin + 1) return 0;
  last = begin + 1;
  const void* nl2 = std::memchr(base + begin, '\n', c->block.size() - begin);
  const size_t line_end = nl2 ? static_cast<size_t>(static_cast<const char*>(nl2) - base) : c->block.size();
  c->hits->push_back(Hit{begin, line_end, id});
  return 0;
}
}  // namespace

void Matcher::scan(std::string_view block, std::vector<Hit>& hits) const {
  hits.clear();
  if (!impl_->db || block.empty()) return;
  std::vector<size_t> last(impl_->nsigs, 0);
  ScanCtx ctx{block, &hits, &last};
  hs_scan(impl_->db, block.data(), static_cast<unsigned>(block.size()), 0, impl_->scratch, on_match, &ctx);
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

#endif

Matcher::~Matcher() = default;

}  // namespace ccdiag::logs
