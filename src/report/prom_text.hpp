// The Prometheus text exposition format as node_exporter's textfile collector
// reads it (docs/prometheus.md "Format rules followed"), shared by every
// producer of a .prom file (`ccdiag prom`, `ccdiag perf --prom`) so the rules
// live in one place: "# HELP" and "# TYPE" once per name before its samples,
// samples of a name contiguous and sorted (deterministic output), label values
// escaped (\\, \", \n), no timestamps (node_exporter drops a whole file that
// has one), last line ends in "\n". Pure: builds text; the caller writes it
// with write_file_atomically (fleet/atomic_file.hpp).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ccdiag {

using PromLabels = std::vector<std::pair<std::string, std::string>>;

class PromText {
 public:
  // One sample of `name`; the same labels again replace the value, or add to
  // it with `add` (counters summed over evidence items).
  void set(const std::string& name, const char* type, const char* help, const PromLabels& labels, double v, bool add = false);
  std::string text() const;

 private:
  struct Family {
    std::string help, type;
    std::map<std::string, double> samples;  // rendered labels -> value
  };
  std::map<std::string, Family> fams_;
};

// Label value escaping of the text exposition format.
std::string prom_escape_label(std::string_view v);

// node_exporter reads only files whose name ends in ".prom": anything else
// would be written and silently never scraped.
bool prom_file_name_ok(std::string_view path);

// The help text of ccdiag_run_timestamp_seconds: one metric name written by
// several producers (told apart by `mode`) must carry one help text, or
// node_exporter rejects the scrape.
inline constexpr const char* kRunTimestampHelp = "End of the last ccdiag run that wrote this file, Unix time.";

}  // namespace ccdiag
