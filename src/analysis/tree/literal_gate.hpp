// Which entries of a table of line tests can match a line at all.
//
// The log facts and cues test a few hundred table entries (signals, text
// cues) against every line of a log. Each entry needs one of a few literals
// before anything else about it can hold ("any" needles, or the first of its
// "all" needles). The gate puts every such literal into one Hyperscan literal
// database and scans the line once: an entry is tried only when one of its
// literals occurs. Exact by construction (an entry skipped here would have
// failed its own test); without Hyperscan every entry is tried.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ccdiag/prebuilt_database.hpp"
#include "ccdiag/result.hpp"

namespace ccdiag {

// A literal database that can be compiled at build time and embedded in the
// binary (tools/sigdb/gen_sigdb.cpp): the line sieve and the gates below.
class LiteralDatabase {
 public:
  virtual ~LiteralDatabase() = default;
  // Identifies the database: the engine version and every literal with its
  // flags and owner. 0 where there is no database to embed.
  virtual uint64_t key() const = 0;
  // The database's bytes (compiling it first if need be).
  virtual Result<std::string> serialize() const = 0;
};

// Databases compiled and serialized at build time and linked into the binary,
// registered once at start (main). A database whose key matches one is
// deserialized instead of compiled; Hyperscan refuses bytes built for another
// engine version or CPU platform, and the database is then compiled as before.
using PrebuiltLiterals = PrebuiltDatabase;
void add_prebuilt_literals(PrebuiltLiterals db);
// Forgets every registration (tests).
void clear_prebuilt_literals();

class LiteralGate : public LiteralDatabase {
 public:
  // needles[i]: the literals one of which entry i needs; an empty list (or one
  // holding an empty literal) means entry i is always tried. Compiling the
  // database costs a few milliseconds, more than a small log's whole read, so
  // it is compiled on the compile_after-th line; before, every entry is tried.
  explicit LiteralGate(const std::vector<std::vector<std::string_view>>& needles, uint64_t compile_after = 4096);
  ~LiteralGate();
  LiteralGate(const LiteralGate&) = delete;
  LiteralGate& operator=(const LiteralGate&) = delete;

  // The entries worth trying on `line`, as a bit set (bit i: entry i). Safe
  // to call from several threads at once (one scratch space per thread).
  void candidates(std::string_view line, std::vector<uint64_t>& bits) const;

  static bool test(const std::vector<uint64_t>& bits, size_t i) { return (bits[i >> 6] >> (i & 63)) & 1; }

  uint64_t key() const override;
  // Where the database came from once made: "prebuilt", "compiled", or "none" (not yet, or none to make).
  const char* source() const;
  Result<std::string> serialize() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Literals a line must contain for some test to hold on it: `exact` as
// written, `folded` in any ASCII case. `complete` is false where some test
// needs no literal at all (then no line may be skipped).
struct LineLiterals {
  std::vector<std::string_view> exact;
  std::vector<std::string_view> folded;
  bool complete = true;
};

// Which lines of a block contain literals of which sets, in one scan of the
// whole block: the lines of a large log that none of the tests can hold on
// (the plain progress lines of a training job, ~95% of it) are then skipped
// without being looked at one by one. Exact: a line is reported without a
// set's bit only if no literal of that set occurs in it.
class LineSieve : public LiteralDatabase {
 public:
  // Up to 8 sets; set i is bit (1 << i) of a line's mark. Takes the database
  // registered with add_prebuilt_literals when its key is this sieve's, else
  // compiles one (~80 ms for the log facts' ~700 literals, more than a small
  // log's whole diagnosis).
  explicit LineSieve(const std::vector<LineLiterals>& sets);
  ~LineSieve();
  LineSieve(const LineSieve&) = delete;
  LineSieve& operator=(const LineSieve&) = delete;

  uint64_t key() const override;
  // Where the database came from: "prebuilt", "compiled" or "none".
  const char* source() const;
  Result<std::string> serialize() const override;

  // marks[k]: the bits of the sets a literal of which the k-th line of
  // `block` holds (lines end at '\n'; a last line may lack one). False where
  // it cannot tell (no Hyperscan, an incomplete set, a failed scan): every
  // line is then to be read whole. Safe to call from several threads at once.
  bool mark_lines(std::string_view block, std::vector<uint8_t>& marks) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ccdiag
