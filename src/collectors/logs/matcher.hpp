// Multi-pattern matcher over blocks of log lines.
//
// Chosen by measurement (bench/logs, docs/logs.md): Hyperscan scans a whole
// block against every signature at once as a prefilter, then RE2 confirms
// each candidate line and extracts the named fields. Without Hyperscan
// (non-x86 builds) RE2::Set prefilters line by line. std::regex was far too
// slow to consider.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ccdiag/prebuilt_database.hpp"
#include "ccdiag/result.hpp"
#include "collectors/logs/signature.hpp"

namespace ccdiag::logs {

struct Hit {
  size_t line_begin;  // offset of the line's first byte in the block
  size_t line_end;    // offset of its '\n' (or the block end)
  unsigned sig;       // index into the signature vector
};

class Matcher {
 public:
  // Compiles every signature; a pattern the engine rejects is an error naming the signature.
  static Result<std::unique_ptr<Matcher>> compile(const std::vector<Signature>& sigs);
  ~Matcher();

  // Candidate (line, signature) pairs in `block`, ordered by line then
  // signature; each pair at most once. Candidates are a superset of real
  // matches: confirm with RE2 before use.
  void scan(std::string_view block, std::vector<Hit>& hits) const;

  const char* engine() const;
  // Where the prefilter database came from: "prebuilt" (embedded at build
  // time), "cached" (the same signatures compiled earlier in this process:
  // analyze reads each bundle's logs with a new analyser) or "compiled".
  const char* prefilter_source() const { return source_; }

  // The prefilter database as bytes (hs_serialize_database), for embedding at
  // build time (tools/sigdb). An error without Hyperscan.
  Result<std::string> serialize() const;

 private:
  Matcher() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  const char* source_ = "compiled";
};

// The expression the prefilter compiles for a signature pattern: named groups
// made non-capturing, a leading '^' dropped, leading quantified elements
// ("\s*", an optional group) and trailing quantified elements, anchors and
// open-ended groups ("\S+", ".*$", "(?:\S+(?: pointer)?)") cut while at least
// 8 characters remain. Every cut keeps a superset of the pattern's matches:
// the prefilter only has to find the line; RE2 applies the exact pattern to
// the line's body. Cutting repeated tails also keeps Hyperscan from reporting
// one match per character of "\S+".
std::string prefilter_expression(const std::string& pattern);

// Identifies the prefilter database of `sigs`: the engine version, every
// prefilter expression and its flags. A prebuilt database is used only for
// signatures with the same key, so --signatures FILE (or a catalogue edited
// after the build) is always compiled afresh.
uint64_t prefilter_key(const std::vector<Signature>& sigs);

// A database compiled and serialized at build time and linked into the
// binary (tools/sigdb/gen_sigdb.cpp). Compiling the ~150 built-in patterns
// costs ~0.3 s, which every `logs` and `diagnose --log` would otherwise pay.
using PrebuiltPrefilter = PrebuiltDatabase;
// Registered once at start (main). Matcher::compile deserializes it when the
// key matches; Hyperscan refuses a database built for another CPU platform or
// engine version, and compile then falls back to compiling.
void set_prebuilt_prefilter(PrebuiltPrefilter db);
// Registers the database embedded in the binary; defined in the generated
// signature_db.cpp that only the ccdiag executable links.
void register_builtin_prefilter();



}  // namespace ccdiag::logs
