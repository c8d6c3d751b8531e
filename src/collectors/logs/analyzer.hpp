// Log analysis: many files (or one with interleaved ranks) -> findings,
// per-process NCCL topology evidence, the first failure and its cascades.
//
// Memory is bounded: files are streamed block by block (LogReader), and
// matches are aggregated per (signature, actor) keeping the first line and a
// count, so a 1 GB log costs one block plus the aggregates.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ccdiag/evidence.hpp"
#include "ccdiag/finding.hpp"
#include "ccdiag/result.hpp"
#include "collectors/logs/signature.hpp"

namespace ccdiag::logs {

struct LogInput {
  std::string path;   // file, or "-" for stdin
  std::string shown;  // name used in provenance
  std::string host;   // host it came from, when known (bundle host)
};

struct LogStats {
  size_t files = 0;
  size_t bytes = 0;
  size_t lines = 0;
  size_t matched_lines = 0;   // lines where a signature matched
  size_t overlong_lines = 0;  // lines cut because they exceeded the block
  size_t signatures = 0;
  std::string engine;
  std::string prefilter;  // "prebuilt", "cached" or "compiled" (Matcher::prefilter_source)
};

struct LogAnalysis {
  std::vector<Finding> findings;   // first failure first, then by time/order
  std::vector<Evidence> evidence;  // nccl.topology / nccl.version / log.summary
  LogStats stats;
  std::optional<size_t> first_failure;  // index into findings of the failure that came first
};

class LogAnalyzer {
 public:
  static Result<std::unique_ptr<LogAnalyzer>> create(std::vector<Signature> signatures);
  ~LogAnalyzer();

  // Streams one file; errors (cannot open, binary data) name the file.
  // `tap`, when given, sees every block of whole lines as read (decompressed
  // for .gz), so another line reader shares this one read of the file.
  Status add_file(const LogInput& input, const std::function<void(std::string_view)>& tap = {});
  // Analyses text already in memory (kernel log decoded by the caller, tests).
  void add_text(std::string_view text, const std::string& shown, const std::string& host);
  // Cross-rank analysis; call once after the inputs.
  LogAnalysis finish();
  // Forgets every input (keeps the compiled signatures) for a new analysis.
  void reset();

 private:
  LogAnalyzer();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Expands FILE|DIR|- arguments: directories are walked recursively (regular
// files, sorted, hidden entries skipped). A missing path is an error.
Result<std::vector<LogInput>> expand_log_paths(const std::vector<std::string>& args, const std::string& host = {});

// "{name}" placeholders filled from fields (missing -> "?").
std::string render_summary(const std::string& tmpl, const nlohmann::json& fields);

}  // namespace ccdiag::logs
