#include "cli/perf_timing.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "collectors/nccl/flight_recorder.hpp"
#include "collectors/perf/nccl_coll_log.hpp"
#include "collectors/perf/ring_timing.hpp"

namespace ccdiag {

namespace {

namespace fs = std::filesystem;

constexpr uintmax_t kMaxLogBytes = 256u << 20;

bool flight_name(const std::string& name) {
  auto ends = [&](const char* suf) {
    const std::string s(suf);
    return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
  };
  return name.rfind("ccdiag-nccl-", 0) == 0 && (ends(".fr") || ends(".fr.b64"));
}

Result<std::string> read_log(const std::string& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) return make_error("cannot read: " + ec.message(), path);
  if (size > kMaxLogBytes) return make_error("larger than 256 MiB: give the part of the log around the slow period", path);
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error("cannot open", path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

Result<perf::TimingAnalysis> load_ring_timings(const std::vector<std::string>& args, std::vector<Error>& bad) {
  std::vector<std::string> files;
  for (const auto& a : args) {
    std::error_code ec;
    if (fs::is_directory(a, ec)) {
      // Snapshots are directories of copies taken seconds apart: look three levels down, no symlinks.
      std::vector<std::string> found;
      for (auto it = fs::recursive_directory_iterator(a, fs::directory_options::none, ec); !ec && it != fs::recursive_directory_iterator();
           it.increment(ec)) {
        if (it.depth() >= 3) it.disable_recursion_pending();
        if (it->is_regular_file(ec) && !it->is_symlink(ec) && flight_name(it->path().filename().string())) found.push_back(it->path().string());
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::exists(a, ec)) {
      files.push_back(a);
    } else {
      return make_error("no such file or directory", a);
    }
  }
  if (files.empty())
    return make_error("no profiler flight files (ccdiag-nccl-*.fr)", args.empty() ? "--rings" : args.front(),
                      "run the job with NCCL_PROFILER_PLUGIN=ccdiag and copy $CCDIAG_NCCL_DIR (default /dev/shm) a few times");
  perf::TimingSet ts;
  size_t read = 0;
  for (const auto& f : files) {
    auto s = nccl::read_flight_file(f);
    if (!s) {
      bad.push_back(s.error());
      continue;
    }
    ++read;
    perf::add_ring_timings(*s, ts);
  }
  if (read == 0) return make_error("no readable profiler flight file", files.front());
  return perf::analyze_timings(ts, "profiler rings", perf::kRingClockTickMs);
}

Result<perf::TimingAnalysis> load_log_timings(const std::vector<std::string>& args, std::vector<Error>& bad) {
  std::vector<std::string> files;
  for (const auto& a : args) {
    std::error_code ec;
    if (fs::is_directory(a, ec)) {
      std::vector<std::string> found;
      for (const auto& e : fs::directory_iterator(a, ec))
        if (e.is_regular_file(ec) && !e.is_symlink(ec)) found.push_back(e.path().string());
      std::sort(found.begin(), found.end());
      if (found.empty()) return make_error("directory has no files", a);
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::exists(a, ec)) {
      files.push_back(a);
    } else {
      return make_error("no such file or directory", a);
    }
  }
  perf::CollLog log;
  size_t usable = 0;
  for (const auto& f : files) {
    auto text = read_log(f);
    if (!text) {
      bad.push_back(text.error());
      continue;
    }
    perf::read_coll_log(*text, f, log);
    const auto& info = log.files.back();
    if (info.coll_lines == 0)
      bad.push_back(make_error("no NCCL COLL lines with their communicator's init line", f,
                               "run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL"));
    else if (info.timed == 0)
      bad.push_back(make_error("NCCL COLL lines carry no wall-clock timestamp", f,
                               "NCCL >= 2.26: NCCL_DEBUG_TIMESTAMP_LEVELS=INFO NCCL_DEBUG_TIMESTAMP_FORMAT='[%F %T.%6f] '"));
    else
      ++usable;
  }
  if (usable == 0)
    return make_error("no log with timestamped NCCL COLL lines", files.empty() ? "--log" : files.front(),
                      "run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL NCCL_DEBUG_TIMESTAMP_LEVELS=INFO");
  return perf::analyze_timings(log.timings, "NCCL INFO logs", log.resolution_ms);
}

void render_timing_text(const perf::TimingAnalysis& a, std::ostream& out) {
  const auto& s = a.skew;
  out << fmt::format("{}: {} collectives matched across ranks ({} with completion times), {} proxy ops, {} communicator shapes\n",
                     a.source, s.collectives, s.timed, a.channels.samples, s.comms.size());
  for (const auto& c : s.comms)
    if (c.collectives > 0)
      out << fmt::format("  comm {:<18} {:<13} x{:<10} {:>3} ranks  wire {:>9.3f} ms  z {:>5.1f}{}\n", c.comm, c.func, c.count,
                         c.members.size(), c.wire_ms, c.z, c.slow ? "  SLOW" : "");
  for (const auto& c : a.channels.channels)
    if (c.slow) out << fmt::format("  comm {} channel {:>2}: x{:.2f} the other channels ({:.1f} ms over {} ops)  SLOW\n", c.comm, c.channel, c.ratio, c.median_ms, c.ops);
  for (const auto& l : s.late)
    out << fmt::format("  late: {} median {:.1f} ms behind, late in {:.0f} % of {} collectives\n", l.member, l.median_lag_ms,
                       l.fraction_late * 100, l.collectives);
  for (const auto& n : a.notes) out << "  note: " << n << "\n";
  out << "\n";
}

}  // namespace ccdiag
