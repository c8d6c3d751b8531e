#include "cli/live_bundle.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "collectors/collector.hpp"
#include "report/progress.hpp"
#include "ccdiag/version.hpp"
#include "sys/temp_cleanup.hpp"
#include "sys/untrusted_file.hpp"

namespace ccdiag {

namespace {
// A log put into a bundle: its newest 256 MiB (the end is where a job failed).
constexpr uint64_t kMaxBundledLogBytes = 256ULL << 20;
}  // namespace

Result<LiveBundle> collect_live_bundle(const GlobalOptions& g, const std::string& out_dir,
                                       const std::vector<std::string>& extra_logs, std::ostream* progress) {
  LiveBundle lb;
  if (auto st = check_kernel_log_option(g); !st) return st.error();
  // Read the user's logs first: a bad path is an input error before any probing.
  std::vector<std::pair<std::string, std::string>> logs;
  for (const auto& path : extra_logs) {
    // The bounded reader: a FIFO, device or symlink is refused (a planted
    // link would copy a root-only file into the bundle); a huge log keeps
    // its newest part, where a failure is.
    auto text = read_untrusted_tail(path, kMaxBundledLogBytes, path);
    if (!text) return make_error(text.error().message, path, "check the path given to --log");
    if (text->cut)
      std::cerr << "ccdiag: " << path << ": " << (text->file_bytes >> 20) << " MiB; only the newest "
                << (kMaxBundledLogBytes >> 20) << " MiB go into the bundle\n";
    // Two logs may share a file name (rank0/train.log, rank1/train.log):
    // number the later ones, since nothing in a bundle is overwritten.
    const std::string base = "logs/" + std::filesystem::path(path).filename().string();
    std::string name = base;
    for (int n = 2; std::any_of(logs.begin(), logs.end(), [&](const auto& l) { return l.first == name; }); ++n)
      name = base + "." + std::to_string(n);
    logs.emplace_back(name, std::move(text->text));
  }

  // A private unpredictable directory unless the user named one; either way
  // every file is created with O_EXCL|O_NOFOLLOW (sys/output_dir.hpp).
  Result<OutputDir> dir = make_error("not created");
  {
    // A temporary bundle is registered for removal before any signal can end us.
    TerminationSignalsDeferred deferred;
    dir = out_dir.empty() ? OutputDir::make_private("ccdiag-live-") : OutputDir::open_fresh(out_dir);
    if (!dir) return dir.error();
    if (out_dir.empty()) lb.temp = std::make_shared<TempDir>(dir->path());
  }
  if (!out_dir.empty()) lb.out_dir = out_dir;

  CollectContext cc;
  cc.root = g.sysroot();
  cc.kernel_log_file = g.kernel_log_file();
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(g.timeout_s * 1000));
  ProgressLine line(progress ? *progress : std::cerr, progress != nullptr);
  ProbeWaitCallback on_wait;
  if (line.enabled())
    on_wait = [&line](const std::vector<std::string>& running, std::chrono::milliseconds left) {
      std::string names;
      for (const auto& n : running) names += (names.empty() ? "" : " ") + n;
      line.show(fmt::format("collecting: deadline in {:.1f} s, {} running: {}",
                            static_cast<double>(left.count()) / 1000.0, running.size(), names));
    };
  CollectResult res = collect_host(cc, timeout, on_wait);
  line.clear();

  BundleWriteRequest req;
  req.manifest.ccdiag_version = version_string();
  req.manifest.host = res.host;
  req.manifest.kernel = res.kernel;
  {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    req.manifest.time = buf;
  }
  nlohmann::json collectors = nlohmann::json::array();
  for (const auto& c : all_collectors()) collectors.push_back(c.name);
  req.manifest.raw = {{"collectors", collectors}, {"root", g.root.empty() ? "/" : "<fixture>"}};
  req.evidence = std::move(res.evidence);
  req.unchecked = res.unchecked;
  req.raw = std::move(res.raw);
  for (auto& l : logs) req.raw.push_back(std::move(l));
  lb.unchecked = res.unchecked.size();
  if (auto st = write_bundle(*dir, req); !st) return st.error();
  return lb;
}

}  // namespace ccdiag
