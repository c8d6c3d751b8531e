#include "fleet/gather.hpp"

#include <filesystem>

#include "bundle/bundle.hpp"
#include "bundle/bundle_tar.hpp"
#include "fleet/launchers.hpp"

namespace fs = std::filesystem;

namespace ccdiag {

Gatherer::Gatherer(std::string work_dir, std::vector<std::string> hosts) : work_(std::move(work_dir)), hosts_(std::move(hosts)) {
  for (const auto& h : hosts_) stream(h);
}

Gatherer::Stream& Gatherer::stream(const std::string& host) {
  auto it = streams_.find(host);
  if (it != streams_.end()) return it->second;
  Stream& s = streams_[host];
  const std::string path = (fs::path(work_) / (host + ".tar.gz")).string();
  s.file = std::make_unique<std::ofstream>();
  auto* file = s.file.get();
  s.decoder = std::make_unique<ArmorDecoder>([file, path](std::string_view bytes) {
    if (!file->is_open()) file->open(path, std::ios::binary | std::ios::trunc);
    file->write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return static_cast<bool>(*file);
  });
  return s;
}

void Gatherer::host_stdout(const std::string& host, std::string_view text) {
  auto it = streams_.find(host);
  if (it == streams_.end()) {
    ++unlabeled_;
    return;
  }
  it->second.decoder->feed_line(text);
}

void Gatherer::host_stderr(const std::string& host, std::string_view text) {
  auto it = streams_.find(host);
  if (it == streams_.end()) {
    ++unlabeled_;
    return;
  }
  auto& tail = it->second.err_tail;
  tail.emplace_back(text.substr(0, 300));
  if (tail.size() > 3) tail.erase(tail.begin());
}

void Gatherer::labeled_stdout(std::string_view line) {
  std::string_view host, text;
  if (!split_host_label(line, host, text)) {
    ++unlabeled_;
    return;
  }
  host_stdout(std::string(host), text);
}

void Gatherer::labeled_stderr(std::string_view line) {
  // "pdsh@login1: node03: ssh exited with exit code 255" / "clush: node03: exited with exit code 3"
  std::string_view first, rest;
  if (!split_host_label(line, first, rest)) {
    ++unlabeled_;
    return;
  }
  if (first.rfind("pdsh@", 0) == 0 || first == "clush") {
    std::string_view host, text;
    if (split_host_label(rest, host, text) && streams_.count(std::string(host))) {
      host_stderr(std::string(host), text);
      return;
    }
    ++unlabeled_;
    return;
  }
  host_stderr(std::string(first), rest);
}

std::vector<HostOutcome> Gatherer::finish(const std::string& out_dir) {
  std::vector<HostOutcome> out;
  for (const auto& h : hosts_) {
    auto& s = streams_.at(h);
    if (s.file->is_open()) s.file->close();
    HostOutcome o{h, false, {}};
    std::string err;
    for (const auto& l : s.err_tail) err += (err.empty() ? "" : " | ") + l;
    const std::string problem = s.decoder->end_problem();
    const std::string tgz = (fs::path(work_) / (h + ".tar.gz")).string();
    if (!problem.empty()) {
      o.reason = problem + (err.empty() ? "" : "; stderr: " + err);
    } else {
      const fs::path dest = fs::path(out_dir) / h;
      std::error_code ec;
      if (fs::exists(dest / "manifest.json", ec)) fs::remove_all(dest, ec);  // a previous run's bundle
      if (auto st = extract_bundle_tar(tgz, dest.string()); !st) {
        o.reason = st.error().one_line();
      } else if (auto b = read_bundle(dest.string()); !b) {
        o.reason = "received bundle is not valid: " + b.error().one_line();
      } else {
        o.ok = true;
      }
    }
    std::error_code ec;
    fs::remove(tgz, ec);
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace ccdiag
