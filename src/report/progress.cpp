#include "report/progress.hpp"

#include <unistd.h>

namespace ccdiag {

ProgressLine::ProgressLine(std::ostream& err, bool wanted) : err_(err), on_(wanted && ::isatty(2) == 1) {}

ProgressLine::~ProgressLine() { clear(); }

void ProgressLine::show(const std::string& text, bool force) {
  if (!on_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && shown_ && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  shown_ = true;
  // Cut to a conservative terminal width: a wrapped line cannot be rewritten.
  err_ << "\r\033[K" << (text.size() > 100 ? text.substr(0, 100) : text) << std::flush;
}

void ProgressLine::clear() {
  if (!on_ || !shown_) return;
  err_ << "\r\033[K" << std::flush;
  shown_ = false;
}

std::string progress_bar(size_t done, size_t total, size_t width) {
  const size_t fill = total ? std::min(width, done * width / total) : width;
  return "[" + std::string(fill, '#') + std::string(width - fill, ' ') + "] " + std::to_string(done) + "/" +
         std::to_string(total);
}

}  // namespace ccdiag
