#include "collectors/host/host_collectors.hpp"

#include <sys/statvfs.h>

#include <algorithm>
#include <chrono>
#include <ctime>

namespace ccdiag {

namespace {

std::string utc_now_iso() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}


// Where libnccl is installed by packages, CUDA and pip wheels (nvidia-nccl-cu12).
constexpr const char* kLibraryDirs[] = {
    "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
    "/usr/local/lib", "/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib",
    "/usr/local/cuda/targets/sbsa-linux/lib", "/opt/nccl/lib"};

}  // namespace

Evidence host_evidence(const CollectContext& ctx, const char* kind, const std::string& source) {
  Evidence e;
  e.kind = kind;
  e.subject.host = ctx.host;
  e.provenance.source = source;
  e.time = utc_now_iso();
  return e;
}

std::optional<std::string> nccl_version_from_soname(std::string_view name) {
  constexpr std::string_view prefix = "libnccl.so.";
  if (name.substr(0, prefix.size()) != prefix) return std::nullopt;
  std::string_view v = name.substr(prefix.size());
  // Needs major.minor.patch: libnccl.so.2 is only the SONAME link.
  if (std::count(v.begin(), v.end(), '.') < 2) return std::nullopt;
  if (v.find_first_not_of("0123456789.") != std::string_view::npos) return std::nullopt;
  return std::string(v);
}

std::optional<std::string> user_driver_version_from_soname(std::string_view name) {
  for (std::string_view prefix : {std::string_view("libcuda.so."), std::string_view("libnvidia-ml.so.")}) {
    if (name.substr(0, prefix.size()) != prefix) continue;
    std::string_view v = name.substr(prefix.size());
    // "550.54.15": libcuda.so.1 is only the SONAME link.
    if (std::count(v.begin(), v.end(), '.') < 1 || v.find_first_not_of("0123456789.") != std::string_view::npos)
      return std::nullopt;
    return std::string(v);
  }
  return std::nullopt;
}

std::optional<std::string> driver_version_from_proc(std::string_view text) {
  const size_t at = text.find("Kernel Module");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = text.substr(at + 13);
  const size_t b = rest.find_first_of("0123456789");
  if (b == std::string_view::npos) return std::nullopt;
  rest = rest.substr(b);
  const size_t e = rest.find_first_not_of("0123456789.");
  return std::string(rest.substr(0, e));
}

std::optional<int64_t> dev_shm_size_from_mounts(std::string_view mounts) {
  while (!mounts.empty()) {
    const size_t nl = mounts.find('\n');
    std::string_view line = mounts.substr(0, nl);
    mounts = nl == std::string_view::npos ? std::string_view{} : mounts.substr(nl + 1);
    // "<dev> <mountpoint> <fstype> <options> 0 0"
    const size_t s1 = line.find(' ');
    if (s1 == std::string_view::npos) continue;
    const size_t s2 = line.find(' ', s1 + 1);
    if (s2 == std::string_view::npos || line.substr(s1 + 1, s2 - s1 - 1) != "/dev/shm") continue;
    const size_t at = line.find("size=", s2);
    if (at == std::string_view::npos) return std::nullopt;
    std::string_view v = line.substr(at + 5);
    v = v.substr(0, v.find_first_of(", "));
    int64_t n = 0;
    size_t i = 0;
    for (; i < v.size() && v[i] >= '0' && v[i] <= '9'; ++i) n = n * 10 + (v[i] - '0');
    if (i == 0) return std::nullopt;
    const char unit = i < v.size() ? v[i] : '\0';
    if (unit == 'k' || unit == 'K') n <<= 10;
    else if (unit == 'm' || unit == 'M') n <<= 20;
    else if (unit == 'g' || unit == 'G') n <<= 30;
    return n;
  }
  return std::nullopt;
}

CollectorOutput collect_host_identity(const CollectContext& ctx) {
  CollectorOutput out;
  Evidence e = host_evidence(ctx, "host.identity", "/proc/sys/kernel");
  e.data["hostname"] = ctx.host;
  e.data["kernel"] = ctx.root.read_line("/proc/sys/kernel/osrelease").value_or("");
  e.data["boot_id"] = ctx.root.read_line("/proc/sys/kernel/random/boot_id").value_or("");
  e.data["proc_version"] = ctx.root.read_line("/proc/version").value_or("");
  e.data["cmdline"] = ctx.root.read_line("/proc/cmdline").value_or("");
  e.data["live"] = ctx.root.is_live();
  out.evidence.push_back(std::move(e));
  return out;
}

CollectorOutput collect_versions(const CollectContext& ctx) {
  CollectorOutput out;
  Evidence e = host_evidence(ctx, "host.versions", "library directories, /proc/driver/nvidia/version");
  std::vector<std::string> nccl_found;
  for (const char* dir : kLibraryDirs) {
    auto names = ctx.root.list_dir(dir);
    if (!names) continue;
    for (const auto& n : *names)
      if (auto v = nccl_version_from_soname(n)) nccl_found.push_back(std::string(dir) + "/" + n);
  }
  std::string nccl;
  for (const auto& p : nccl_found) {
    auto v = nccl_version_from_soname(p.substr(p.rfind('/') + 1));
    if (v && (nccl.empty() || *v > nccl)) nccl = *v;  // lexical is fine for a display default
  }
  e.data["nccl_version"] = nccl;
  e.data["nccl_libraries"] = nccl_found;
  // The user-space driver: libcuda.so.<driver version> and
  // libnvidia-ml.so.<driver version> ship with the driver package and must
  // match the kernel module (a container image with another driver's
  // libraries makes every CUDA/NVML call fail).
  std::vector<std::string> user_libs;
  std::string user_driver;
  for (const char* dir : kLibraryDirs) {
    auto names = ctx.root.list_dir(dir);
    if (!names) continue;
    for (const auto& n : *names)
      if (auto v = user_driver_version_from_soname(n)) {
        user_libs.push_back(std::string(dir) + "/" + n);
        // Files of two versions (a stale copy) without a libcuda.so.1 link
        // to say which one loads: no version rather than a guess.
        if (user_driver.empty()) user_driver = *v;
        else if (user_driver != *v) user_driver = "?";
      }
  }
  if (user_driver == "?") user_driver.clear();
  // What the loader opens: the target of libcuda.so.1 when it is a link.
  for (const char* dir : kLibraryDirs) {
    auto target = ctx.root.read_link(std::string(dir) + "/libcuda.so.1");
    if (!target) continue;
    if (auto v = user_driver_version_from_soname(target->substr(target->rfind('/') + 1))) {
      user_driver = *v;
      break;
    }
  }
  if (!user_driver.empty()) {
    e.data["user_driver_version"] = user_driver;
    e.data["user_driver_libraries"] = user_libs;
  }
  if (auto cuda = ctx.root.read_file("/usr/local/cuda/version.json", 64 * 1024)) {
    auto j = nlohmann::json::parse(*cuda, nullptr, false);
    if (!j.is_discarded() && j.contains("cuda") && j["cuda"].contains("version"))
      e.data["cuda_toolkit_version"] = j["cuda"]["version"];
  }
  if (auto drv = ctx.root.read_file("/proc/driver/nvidia/version", 64 * 1024)) {
    if (auto v = driver_version_from_proc(*drv)) e.data["driver_version"] = *v;
    out.raw.emplace_back("proc/driver-nvidia-version", *drv);
  } else {
    e.data["driver_version"] = nullptr;
    out.unchecked.push_back(Unchecked{"GPU driver version", UncheckedState::skipped, "/proc/driver/nvidia/version not present (no NVIDIA driver loaded)"});
  }
  out.evidence.push_back(std::move(e));
  return out;
}

CollectorOutput collect_dev_shm(const CollectContext& ctx) {
  CollectorOutput out;
  Evidence e = host_evidence(ctx, "host.dev_shm", "/proc/mounts");
  auto mounts = ctx.root.read_file("/proc/mounts");
  if (!mounts) {
    e.availability = Availability::unavailable(mounts.error().one_line());
    out.evidence.push_back(std::move(e));
    return out;
  }
  if (auto size = dev_shm_size_from_mounts(*mounts)) {
    e.data["size_bytes"] = *size;
    e.data["from"] = "mount option size=";
  } else if (ctx.root.is_live()) {
    // No size= option: tmpfs default (half of RAM); ask the filesystem.
    struct statvfs st{};
    if (::statvfs("/dev/shm", &st) == 0) {
      e.data["size_bytes"] = static_cast<int64_t>(st.f_blocks) * static_cast<int64_t>(st.f_frsize);
      e.data["from"] = "statvfs";
    } else {
      e.availability = Availability::unavailable("/dev/shm is not mounted");
    }
  } else {
    e.availability = Availability::unavailable("/dev/shm has no size= option in the captured mounts");
  }
  out.evidence.push_back(std::move(e));
  return out;
}

}  // namespace ccdiag
