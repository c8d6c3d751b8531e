#include "analysis/tree/literal_gate.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "ccdiag/fnv1a.hpp"

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
  uint64_t key = 0;
  std::atomic<const char*> source{"none"};
  void compile();
#ifdef CCDIAG_HAVE_HYPERSCAN
  hs_database_t* db = nullptr;
  ~Impl() {
    if (db) hs_free_database(db);
  }
#endif
};

namespace {

// A number per database for the thread scratch spaces: unique, never reused.
uint64_t next_serial() {
  static std::atomic<uint64_t> serial{1};
  return serial.fetch_add(1, std::memory_order_relaxed);
}

void set_bit(std::vector<uint64_t>& bits, size_t i) { bits[i >> 6] |= uint64_t{1} << (i & 63); }

// The embedded databases (a handful: the sieve and the gates). Registered
// at start, before any thread reads them.
std::vector<PrebuiltLiterals>& prebuilt() {
  static std::vector<PrebuiltLiterals> dbs;
  return dbs;
}

#ifdef CCDIAG_HAVE_HYPERSCAN
// The embedded database of `key`, deserialized, or null.
hs_database_t* deserialize_prebuilt(uint64_t key) {
  if (key == 0) return nullptr;
  for (const auto& p : prebuilt()) {
    if (p.key != key || !p.data || !p.size) continue;
    hs_database_t* db = nullptr;
    if (hs_deserialize_database(reinterpret_cast<const char*>(p.data), p.size, &db) == HS_SUCCESS) return db;
  }
  return nullptr;
}

Result<std::string> serialize_db(const hs_database_t* db) {
  char* bytes = nullptr;
  size_t size = 0;
  if (!db || hs_serialize_database(db, &bytes, &size) != HS_SUCCESS)
    return make_error("cannot serialize a literal database");
  std::string out(bytes, size);
  std::free(bytes);  // Hyperscan's default allocator is malloc
  return out;
}
#endif

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
// on worker threads), grown for every database that thread uses.
// hs_alloc_scratch checks the whole database (a CRC over it) on every call,
// so it is called once per thread and database, not per line: a scratch only
// grows, so once fitted to a database it stays valid for it.
struct ThreadScratch {
  hs_scratch_t* s = nullptr;
  std::vector<uint64_t> fitted;  // the databases (by serial, never reused) `s` was grown for
  ~ThreadScratch() {
    if (s) hs_free_scratch(s);
  }
};

hs_scratch_t* scratch_for(const hs_database_t* db, uint64_t serial) {
  thread_local ThreadScratch scratch;
  for (uint64_t g : scratch.fitted)
    if (g == serial) return scratch.s;
  if (hs_alloc_scratch(db, &scratch.s) != HS_SUCCESS) return nullptr;
  scratch.fitted.push_back(serial);
  return scratch.s;
}
#endif

}  // namespace

LiteralGate::LiteralGate(const std::vector<std::vector<std::string_view>>& needles, uint64_t compile_after)
    : impl_(std::make_unique<Impl>()) {
  impl_->entries = needles.size();
  impl_->compile_after = compile_after;
  impl_->serial = next_serial();
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
#ifdef CCDIAG_HAVE_HYPERSCAN
  if (!literals.empty()) {
    Fnv1a64 key;
    key.add(hs_version());
    key.add("gate");
    for (size_t k = 0; k < literals.size(); ++k) {
      key.add(literals[k]);
      key.add(std::to_string(impl_->owner[k].front()));
    }
    impl_->key = key.value();
  }
#endif
}

void LiteralGate::Impl::compile() {
#ifdef CCDIAG_HAVE_HYPERSCAN
  if ((db = deserialize_prebuilt(key))) {
    source = "prebuilt";
    return;
  }
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
    } else {
      source = "compiled";
    }
  }
#endif
}

LiteralGate::~LiteralGate() = default;

uint64_t LiteralGate::key() const { return impl_->key; }

const char* LiteralGate::source() const { return impl_->source.load(); }

Result<std::string> LiteralGate::serialize() const {
#ifdef CCDIAG_HAVE_HYPERSCAN
  Impl* impl = impl_.get();
  std::call_once(impl_->compiled, [impl] { impl->compile(); });
  if (!impl_->db) return make_error("the literal gate has no database");
  return serialize_db(impl_->db);
#else
  return make_error("no literal gate database without Hyperscan");
#endif
}

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
    if (hs_scratch_t* scratch = scratch_for(impl_->db, impl_->serial)) {
      bits = impl_->always;
      ScanState st{&impl_->owner, &bits};
      if (hs_scan(impl_->db, line.data(), static_cast<unsigned>(line.size()), 0, scratch, on_match, &st) ==
          HS_SUCCESS)
        return;
    }
  }
#endif
  bits.assign(words, ~uint64_t{0});  // no gate: try everything
}

struct LineSieve::Impl {
  bool usable = false;
  uint64_t serial = 0;
  uint64_t key = 0;
  const char* source = "none";
  std::vector<uint8_t> bit;  // literal id -> its set's bit
#ifdef CCDIAG_HAVE_HYPERSCAN
  hs_database_t* db = nullptr;
  ~Impl() {
    if (db) hs_free_database(db);
  }
#endif
};

void add_prebuilt_literals(PrebuiltLiterals db) { prebuilt().push_back(db); }

void clear_prebuilt_literals() { prebuilt().clear(); }

LineSieve::LineSieve(const std::vector<LineLiterals>& sets) : impl_(std::make_unique<Impl>()) {
  impl_->serial = next_serial();
#ifdef CCDIAG_HAVE_HYPERSCAN
  if (sets.size() > 8) return;
  std::vector<const char*> exprs;
  std::vector<size_t> lens;
  std::vector<unsigned> flags, ids;
  Fnv1a64 key;
  key.add(hs_version());
  // An empty literal occurs in every line; one spanning a newline in none
  // (the lines are tested one at a time): neither can be sieved.
  auto add = [&](std::string_view lit, unsigned flag, uint8_t bit) {
    if (lit.empty() || lit.find('\n') != std::string_view::npos) return false;
    exprs.push_back(lit.data());
    lens.push_back(lit.size());
    flags.push_back(flag);
    ids.push_back(static_cast<unsigned>(ids.size()));
    impl_->bit.push_back(bit);
    key.add(lit);
    key.add(std::to_string(flag) + "/" + std::to_string(bit));
    return true;
  };
  for (size_t i = 0; i < sets.size(); ++i) {
    if (!sets[i].complete) return;
    const auto bit = static_cast<uint8_t>(1u << i);
    for (std::string_view l : sets[i].exact)
      if (!add(l, 0, bit)) return;
    for (std::string_view l : sets[i].folded)
      if (!add(l, HS_FLAG_CASELESS, bit)) return;
  }
  if (exprs.empty()) return;
  impl_->key = key.value();
  if ((impl_->db = deserialize_prebuilt(impl_->key))) {
    impl_->source = "prebuilt";
    impl_->usable = true;
    return;
  }
  hs_compile_error_t* err = nullptr;
  if (hs_compile_lit_multi(exprs.data(), flags.data(), ids.data(), lens.data(), static_cast<unsigned>(exprs.size()),
                           HS_MODE_BLOCK, nullptr, &impl_->db, &err) != HS_SUCCESS) {
    if (err) hs_free_compile_error(err);
    impl_->db = nullptr;
    return;
  }
  impl_->source = "compiled";
  impl_->usable = true;
#else
  (void)sets;
#endif
}

uint64_t LineSieve::key() const { return impl_->usable ? impl_->key : 0; }

const char* LineSieve::source() const { return impl_->source; }

Result<std::string> LineSieve::serialize() const {
#ifdef CCDIAG_HAVE_HYPERSCAN
  if (!impl_->usable) return make_error("the line sieve has no database");
  return serialize_db(impl_->db);
#else
  return make_error("no line sieve database without Hyperscan");
#endif
}

LineSieve::~LineSieve() = default;

#ifdef CCDIAG_HAVE_HYPERSCAN
namespace {
// Matches come in order of their end offset; a literal holds no newline, so
// the line a match ends in holds all of it.
struct SieveState {
  const std::vector<size_t>* newlines;
  const std::vector<uint8_t>* bit;
  size_t line = 0;
  std::vector<uint8_t>* marks;
};

int on_sieve_match(unsigned int id, unsigned long long, unsigned long long to, unsigned int, void* ctx) {
  auto* st = static_cast<SieveState*>(ctx);
  const auto& nl = *st->newlines;
  while (st->line < nl.size() && nl[st->line] < to) ++st->line;
  (*st->marks)[st->line] |= (*st->bit)[id];
  return 0;
}
}  // namespace
#endif

bool LineSieve::mark_lines(std::string_view block, std::vector<uint8_t>& marks) const {
#ifdef CCDIAG_HAVE_HYPERSCAN
  if (!impl_->usable || block.size() > 0xffffffffu) return false;
  hs_scratch_t* scratch = scratch_for(impl_->db, impl_->serial);
  if (!scratch) return false;
  thread_local std::vector<size_t> newlines;
  newlines.clear();
  const char* const end = block.data() + block.size();
  for (const char* p = block.data(); const void* q = std::memchr(p, '\n', static_cast<size_t>(end - p));) {
    const char* at = static_cast<const char*>(q);
    newlines.push_back(static_cast<size_t>(at - block.data()));
    p = at + 1;
  }
  const bool unterminated = !block.empty() && block.back() != '\n';
  marks.assign(newlines.size() + (unterminated ? 1 : 0), 0);
  if (marks.empty()) return true;
  SieveState st{&newlines, &impl_->bit, 0, &marks};
  return hs_scan(impl_->db, block.data(), static_cast<unsigned>(block.size()), 0, scratch, on_sieve_match, &st) ==
         HS_SUCCESS;
#else
  (void)block;
  (void)marks;
  return false;
#endif
}

}  // namespace ccdiag
