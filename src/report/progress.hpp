// A progress line on stderr for work that takes long (analyze over many
// bundles, logs over large inputs, fr over many dumps, live diagnose waiting
// on its probes): one line rewritten in place, at most ten times a second,
// and only when stderr is a terminal and the output is not JSON, so pipes,
// runbooks and tickets never see it. Cleared when done.
#pragma once

#include <chrono>
#include <ostream>
#include <string>

namespace ccdiag {

class ProgressLine {
 public:
  // Shown only when `wanted` (not --json) and stderr is a TTY.
  ProgressLine(std::ostream& err, bool wanted);
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  ~ProgressLine();

  bool enabled() const { return on_; }
  // Rewrites the line (throttled; `force` skips the throttle).
  void show(const std::string& text, bool force = false);
  // Removes the line.
  void clear();

 private:
  std::ostream& err_;
  bool on_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_{};
};

// "[#######       ] 412/4096"
std::string progress_bar(size_t done, size_t total, size_t width = 30);

}  // namespace ccdiag
