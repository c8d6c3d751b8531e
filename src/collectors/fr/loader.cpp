#include "collectors/fr/loader.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cerrno>
#include <filesystem>
#include <map>
#include <thread>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

namespace fs = std::filesystem;

namespace ccdiag::fr {

namespace {

std::string_view strip_ext(std::string_view n) {
  for (std::string_view ext : {".pkl", ".pickle", ".json"})
    if (n.size() > ext.size() && n.substr(n.size() - ext.size()) == ext) return n.substr(0, n.size() - ext.size());
  return n;
}

bool is_json_name(std::string_view n) { return n.size() > 5 && n.substr(n.size() - 5) == ".json"; }

// The name without its trailing rank digits.
std::string stem_of(std::string_view base) {
  std::string_view n = strip_ext(base);
  size_t e = n.size();
  while (e > 0 && n[e - 1] >= '0' && n[e - 1] <= '9') --e;
  return std::string(n.substr(0, e));
}

bool is_sep(char c) { return c == '_' || c == '-' || c == '.' || c == '/'; }

void walk(const fs::path& dir, int depth, std::vector<fs::path>& out) {
  std::error_code ec;
  std::vector<fs::path> here;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    std::error_code ec2;
    const auto st = e.symlink_status(ec2);
    if (ec2) continue;
    if (fs::is_directory(st) && depth < 8) walk(e.path(), depth + 1, out);
    else if (fs::is_regular_file(st)) here.push_back(e.path());
  }
  std::sort(here.begin(), here.end());
  out.insert(out.end(), here.begin(), here.end());
}

}  // namespace

std::optional<int> rank_from_name(std::string_view base) {
  std::string_view n = strip_ext(base);
  size_t e = n.size();
  while (e > 0 && n[e - 1] >= '0' && n[e - 1] <= '9') --e;
  if (e == n.size() || n.size() - e > 9) return std::nullopt;
  int r = 0;
  std::from_chars(n.data() + e, n.data() + n.size(), r);
  return r;
}

Result<std::vector<DumpFile>> discover_dumps(const std::vector<std::string>& args, const LoadOptions& opts) {
  std::vector<DumpFile> files;
  for (const auto& a : args) {
    std::error_code ec;
    const auto st = fs::status(a, ec);
    if (ec || !fs::exists(st)) return make_error("no such file or directory", a);
    std::vector<fs::path> paths;
    const bool explicit_file = !fs::is_directory(st);
    if (explicit_file) paths.emplace_back(a);
    else walk(a, 0, paths);
    for (const auto& p : paths) {
      const std::string base = p.filename().string();
      if (!opts.prefix.empty() && base.rfind(opts.prefix, 0) != 0) {
        if (explicit_file) return make_error(fmt::format("name does not start with --prefix \"{}\"", opts.prefix), a);
        continue;
      }
      if (base.size() > 5 && base.substr(base.size() - 5) == ".pipe") continue;  // dump-request FIFO
      auto rank = rank_from_name(base);
      if (!rank) {
        if (explicit_file)
          return make_error("cannot tell the rank from the file name (expected <prefix><rank>, e.g. nccl_trace_rank_3)", a,
                            "rename it or pass --prefix");
        continue;
      }
      files.push_back(DumpFile{p.string(), p.string(), *rank, {}});
    }
  }
  // Hosts: what differs between stems once the common suffix and the common
  // prefix (up to its last separator) are removed.
  if (files.size() > 1) {
    std::vector<std::string> stems;
    for (const auto& f : files) stems.push_back(stem_of(fs::path(f.path).filename().string()));
    const bool all_same = std::all_of(stems.begin(), stems.end(), [&](const std::string& s) { return s == stems[0]; });
    if (!all_same) {
      size_t suf = stems[0].size();
      for (const auto& s : stems) {
        size_t k = 0;
        while (k < suf && k < s.size() && s[s.size() - 1 - k] == stems[0][stems[0].size() - 1 - k]) ++k;
        suf = k;
      }
      size_t pre = stems[0].size();
      for (const auto& s : stems) {
        size_t k = 0;
        while (k < pre && k < s.size() && s[k] == stems[0][k]) ++k;
        pre = k;
      }
      while (pre > 0 && !is_sep(stems[0][pre - 1])) --pre;
      for (size_t i = 0; i < files.size(); ++i) {
        const std::string& s = stems[i];
        if (pre + suf >= s.size()) continue;
        std::string h = s.substr(pre, s.size() - pre - suf);
        while (!h.empty() && is_sep(h.back())) h.pop_back();
        while (!h.empty() && is_sep(h.front())) h.erase(h.begin());
        files[i].host = h;
      }
    }
  }
  // One dump per rank: a pickle and its JSON twin keep the pickle (it has stacks).
  std::stable_sort(files.begin(), files.end(), [](const DumpFile& x, const DumpFile& y) { return x.rank < y.rank; });
  std::vector<DumpFile> unique;
  for (auto& f : files) {
    if (!unique.empty() && unique.back().rank == f.rank) {
      DumpFile& prev = unique.back();
      if (prev.path == f.path) continue;
      const bool pj = is_json_name(prev.path), fj = is_json_name(f.path);
      if (pj != fj && strip_ext(prev.path) == strip_ext(f.path)) {
        if (pj) prev = f;
        continue;
      }
      return make_error(fmt::format("two dumps for rank {}: {} and {}", f.rank, prev.shown, f.shown), f.shown,
                        "dumps from two jobs or two dump rounds are mixed; pass one set (or use --prefix)");
    }
    unique.push_back(std::move(f));
  }
  return unique;
}

namespace {

// A read-only view of a whole file: mmap'd (no copy; the page cache backs
// it) or, where mmap is refused, read into memory. Non-regular files (FIFOs,
// devices) are refused before any read so they cannot block or stream forever.
class FileBytes {
 public:
  ~FileBytes() {
    if (map_) ::munmap(map_, size_);
  }
  Status open(const std::string& path, const std::string& shown) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return make_error("cannot open", shown);
    struct stat st{};
    Status r = Ok{};
    if (::fstat(fd, &st) != 0) r = make_error("cannot read", shown);
    else if (!S_ISREG(st.st_mode)) r = make_error("not a regular file", shown);
    else if (static_cast<uint64_t>(st.st_size) > kMaxDumpBytes)
      r = make_error(fmt::format("{} bytes: larger than any flight-recorder dump ({} max)", st.st_size, kMaxDumpBytes), shown);
    else if (st.st_size > 0) {
      size_ = static_cast<size_t>(st.st_size);
      void* m = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
      if (m != MAP_FAILED) {
        map_ = m;
      } else {
        buf_.resize(size_);
        size_t got = 0;
        while (got < size_) {
          const ssize_t n = ::read(fd, buf_.data() + got, size_ - got);
          if (n < 0 && errno == EINTR) continue;
          if (n <= 0) break;
          got += static_cast<size_t>(n);
        }
        if (got != size_) r = make_error("read failed", shown);
      }
    }
    ::close(fd);
    return r;
  }
  std::string_view bytes() const {
    if (map_) return {static_cast<const char*>(map_), size_};
    return {buf_.data(), buf_.size()};
  }

 private:
  void* map_ = nullptr;
  size_t size_ = 0;
  std::string buf_;
};

Result<RankDump> load_one(const DumpFile& f, PickleDoc* scratch) {
  FileBytes fb;
  if (auto st = fb.open(f.path, f.shown); !st) return st.error();
  auto d = decode_dump_bytes(fb.bytes(), f.shown, scratch);
  if (!d) return d.error();
  d->rank = f.rank;
  d->host = f.host;
  return d;
}

}  // namespace

Result<RankDump> load_dump_file(const DumpFile& f) { return load_one(f, nullptr); }

LoadResult load_dumps(const std::vector<DumpFile>& files, const LoadOptions& opts) {
  LoadResult out;
  std::vector<std::optional<Result<RankDump>>> slots(files.size());
  unsigned n = opts.threads ? opts.threads : std::max(1u, std::thread::hardware_concurrency());
  n = std::min<unsigned>(n, static_cast<unsigned>(std::max<size_t>(1, files.size())));
  std::atomic<size_t> next{0};
  auto worker = [&] {
    PickleDoc scratch;  // parse buffers reused across this thread's files
    for (size_t i = next++; i < files.size(); i = next++) slots[i].emplace(load_one(files[i], &scratch));
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < n; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  for (auto& s : slots) {
    if (s->ok()) out.dumps.push_back(std::move(s->value()));
    else out.bad.push_back(s->error());
  }
  std::sort(out.dumps.begin(), out.dumps.end(), [](const RankDump& a, const RankDump& b) { return a.rank < b.rank; });
  return out;
}

}  // namespace ccdiag::fr
