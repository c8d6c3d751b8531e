#include "analysis/tree/literal_gate.hpp"

#include <atomic>
#include <mutex>
#include <string>

#ifdef CCDIAG_HAVE_HYPERSCAN
#include <hs/hs.h>
#endif

namespace ccdiag {

struct LiteralGate::Impl {
  size_t entries = 0;
  std::vector<uint64_t> always;              // entries tried on every line
  std::vector<std::vector<uint32_t>> owner;  // literal id -> entries it opens
  std::vector<std::string> literals;         // literal id -> text
  uint64_t compile_after = 0;
  uint64_t serial = 0;  // unique per gate: a freed database's address may come back
  std::atomic<uint64_t> calls{0};
  std::once_flag compiled;
  void compile();
#ifdef CCDIAG_HAVE_HYPERSCAN
  hs_database_t* db = nullptr;
  ~Impl() {
    if (db) hs_free_database(db);
  }
#endif
};

namespace {

void set_bit(std::vector<uint64_t>& bits, size_t i) { bits[i >> 6] |= uint64_t{1} << (i & 63); }

#ifdef CCDIAG_HAVE_HYPERSCAN
struct ScanState {
  const std::vector<std::vector<uint32_t>>* owner;
  std::vector<uint64_t>* bits;
};

int on_match(unsigned int id, unsigned long long, unsigned long long, unsigned int, void* ctx) {
  auto* st = static_cast<ScanState*>(ctx);
  for (uint32_t e : (*st->owner)[id]) set_bit(*st->bits, e);
  return 0;
}

// One scratch space per thread (the log facts of several files are extracted
// on worker threads), grown for every gate that thread uses.
// hs_alloc_scratch checks the whole database (a CRC over it) on every call,
// so it is called once per thread and gate, not per line: a scratch only
// grows, so once fitted to a database it stays valid for it.
struct ThreadScratch {
  hs_scratch_t* s = nullptr;
  std::vector<uint64_t> fitted;  // the gates (by serial, never reused) `s` was grown for
  ~ThreadScratch() {
    if (s) hs_free_scratch(s);
  }
};
#endif

}  // namespace

LiteralGate::LiteralGate(const std::vector<std::vector<std::string_view>>& needles, uint64_t compile_after)
    : impl_(std::make_unique<Impl>()) {
  impl_->entries = needles.size();
  impl_->compile_after = compile_after;
  static std::atomic<uint64_t> next_serial{1};
  impl_->serial = next_serial.fetch_add(1, std::memory_order_relaxed);
  const size_t words = (needles.size() + 63) / 64;
  impl_->always.assign(words, 0);
  auto& literals = impl_->literals;
  for (size_t i = 0; i < needles.size(); ++i) {
    bool always = needles[i].empty();
    for (std::string_view n : needles[i]) always = always || n.empty();
    if (always) {
      set_bit(impl_->always, i);
      continue;
    }
    for (std::string_view n : needles[i]) {
      literals.emplace_back(n);
      impl_->owner.push_back({static_cast<uint32_t>(i)});
    }
  }
}

void LiteralGate::Impl::compile() {
#ifdef CCDIAG_HAVE_HYPERSCAN
  if (!literals.empty()) {
    std::vector<const char*> exprs;
    std::vector<size_t> lens;
    std::vector<unsigned> flags(literals.size(), HS_FLAG_SINGLEMATCH), ids;
    for (size_t k = 0; k < literals.size(); ++k) {
      exprs.push_back(literals[k].data());
      lens.push_back(literals[k].size());
      ids.push_back(static_cast<unsigned>(k));
    }
    hs_compile_error_t* err = nullptr;
    if (hs_compile_lit_multi(exprs.data(), flags.data(), ids.data(), lens.data(), static_cast<unsigned>(exprs.size()),
                             HS_MODE_BLOCK, nullptr, &db, &err) != HS_SUCCESS) {
      if (err) hs_free_compile_error(err);
      db = nullptr;  // every entry is then tried
    }
  }
#endif
}

LiteralGate::~LiteralGate() = default;

void LiteralGate::candidates(std::string_view line, std::vector<uint64_t>& bits) const {
  const size_t words = impl_->always.size();
#ifdef CCDIAG_HAVE_HYPERSCAN
  // Only a caller that has passed call_once reads the database (call_once
  // orders its compilation before them).
  bool ready = false;
  if (impl_->calls.fetch_add(1, std::memory_order_relaxed) >= impl_->compile_after) {
    Impl* impl = impl_.get();
    std::call_once(impl_->compiled, [impl] { impl->compile(); });
    ready = impl_->db != nullptr;
  }
  if (ready) {
    thread_local ThreadScratch scratch;
    bool fitted = false;
    for (uint64_t g : scratch.fitted) fitted = fitted || g == impl_->serial;
    if (!fitted && hs_alloc_scratch(impl_->db, &scratch.s) == HS_SUCCESS) {
      scratch.fitted.push_back(impl_->serial);
      fitted = true;
    }
    if (fitted) {
      bits = impl_->always;
      ScanState st{&impl_->owner, &bits};
      if (hs_scan(impl_->db, line.data(), static_cast<unsigned>(line.size()), 0, scratch.s, on_match, &st) ==
          HS_SUCCESS)
        return;
    }
  }
#endif
  bits.assign(words, ~uint64_t{0});  // no gate: try everything
}

}  // namespace ccdiag
