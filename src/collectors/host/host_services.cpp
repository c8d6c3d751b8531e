#include "collectors/host/host_services.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <map>

#include "collectors/host/host_collectors.hpp"

namespace ccdiag {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// systemd's boolean spellings (parse_boolean in systemd's basic/parse-util.c).
std::optional<bool> systemd_bool(std::string_view v) {
  std::string s(v);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (s == "1" || s == "yes" || s == "y" || s == "true" || s == "t" || s == "on") return true;
  if (s == "0" || s == "no" || s == "n" || s == "false" || s == "f" || s == "off") return false;
  return std::nullopt;
}

// Lines of `text` without comments, one call per line.
template <class F>
void for_each_line(std::string_view text, F&& f) {
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    f(trim(text.substr(0, nl)));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

// Drop-in directories of logind.conf, most important first: a file name in
// an earlier directory masks the same name in later ones (systemd.syntax(7)).
constexpr const char* kLogindDropInDirs[] = {"/etc/systemd/logind.conf.d", "/run/systemd/logind.conf.d",
                                             "/usr/local/lib/systemd/logind.conf.d",
                                             "/usr/lib/systemd/logind.conf.d"};

bool is_loopback(const std::string& addr) {
  return addr.rfind("127.", 0) == 0 || addr == "::1" || addr.rfind("::ffff:127.", 0) == 0;
}

}  // namespace

RemoveIpcSetting remove_ipc_in(std::string_view conf_text) {
  RemoveIpcSetting out;
  bool in_login = false;
  for_each_line(conf_text, [&](std::string_view line) {
    if (line.empty() || line.front() == '#' || line.front() == ';') return;
    if (line.front() == '[') {
      in_login = line == "[Login]";
      return;
    }
    if (!in_login) return;
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos || trim(line.substr(0, eq)) != "RemoveIPC") return;
    const std::string_view value = trim(line.substr(eq + 1));
    out.present = true;
    // An empty assignment resets to the default; an unparsable one is
    // ignored by logind (it logs and keeps the previous value).
    if (value.empty()) out.value.reset();
    else if (auto b = systemd_bool(value)) out.value = b;
  });
  return out;
}

std::vector<std::string> hosts_file_addresses(std::string_view hosts_text, std::string_view name) {
  std::vector<std::string> out;
  for_each_line(hosts_text, [&](std::string_view line) {
    if (const size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    std::vector<std::string_view> words;
    size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      const size_t b = i;
      while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
      if (i > b) words.push_back(line.substr(b, i - b));
    }
    for (size_t k = 1; k < words.size(); ++k)
      if (words[k] == name) {
        out.emplace_back(words[0]);
        break;
      }
  });
  return out;
}

CollectorOutput collect_logind(const CollectContext& ctx) {
  CollectorOutput out;
  Evidence e = host_evidence(ctx, "host.logind", "/etc/systemd/logind.conf");
  // logind only runs on a systemd-booted host (sd_booted(3) checks this
  // directory); in a container without systemd nothing removes IPC.
  if (!ctx.root.exists("/run/systemd/system") && !ctx.root.exists("/etc/systemd/logind.conf")) {
    e.data = {{"remove_ipc", false}, {"set_by", "no systemd on this host"}, {"files", nlohmann::json::array()}};
    out.evidence.push_back(std::move(e));
    return out;
  }
  // systemd's compiled-in default is RemoveIPC=yes.
  bool value = true;
  std::string set_by = "systemd default";
  nlohmann::json files = nlohmann::json::array();
  auto apply = [&](const std::string& path) {
    auto text = ctx.root.read_file(path, 1 << 20);
    if (!text) return;
    files.push_back(path);
    const RemoveIpcSetting s = remove_ipc_in(*text);
    if (!s.present) return;
    value = s.value.value_or(true);
    set_by = path;
  };
  apply(ctx.root.exists("/etc/systemd/logind.conf") ? "/etc/systemd/logind.conf" : "/usr/lib/systemd/logind.conf");
  std::map<std::string, std::string> dropins;  // file name -> path of the winning directory
  for (const char* dir : kLogindDropInDirs) {
    auto names = ctx.root.list_dir(dir);
    if (!names) continue;
    for (const auto& n : *names)
      if (n.size() > 5 && n.compare(n.size() - 5, 5, ".conf") == 0) dropins.emplace(n, std::string(dir) + "/" + n);
  }
  for (const auto& [name, path] : dropins) apply(path);  // lexicographic by file name
  e.data = {{"remove_ipc", value}, {"set_by", set_by}, {"files", files}};
  e.provenance.excerpt = std::string("RemoveIPC=") + (value ? "yes" : "no") + " (" + set_by + ")";
  out.evidence.push_back(std::move(e));
  return out;
}

CollectorOutput collect_resolve(const CollectContext& ctx) {
  CollectorOutput out;
  Evidence e = host_evidence(ctx, "host.resolve", ctx.root.is_live() ? "getaddrinfo" : "/etc/hosts");
  const std::string name = ctx.host;
  if (name.empty()) {
    e.availability = Availability::unavailable("host name unknown");
    out.evidence.push_back(std::move(e));
    return out;
  }
  std::vector<std::string> addrs;
  if (ctx.root.is_live()) {
    // The resolver Gloo and c10d use (nsswitch order, DNS, nss-myhostname).
    // Runs in the collector's child under its deadline: DNS may hang.
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    const int rc = ::getaddrinfo(name.c_str(), nullptr, &hints, &res);
    if (rc != 0) {
      e.availability = Availability::ok();
      e.data = {{"name", name}, {"addr", ""}, {"addrs", nlohmann::json::array()}, {"error", gai_strerror(rc)}};
      out.evidence.push_back(std::move(e));
      return out;
    }
    for (addrinfo* p = res; p; p = p->ai_next) {
      char buf[INET6_ADDRSTRLEN] = {};
      const void* a = p->ai_family == AF_INET ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(p->ai_addr)->sin_addr)
                                              : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(p->ai_addr)->sin6_addr);
      if (::inet_ntop(p->ai_family, a, buf, sizeof buf) &&
          std::find(addrs.begin(), addrs.end(), buf) == addrs.end())
        addrs.emplace_back(buf);
    }
    ::freeaddrinfo(res);
  } else {
    // A captured tree has no resolver: /etc/hosts is what decides for the
    // common case (nsswitch "files" first, Debian's 127.0.1.1 line).
    auto hosts = ctx.root.read_file("/etc/hosts");
    if (!hosts) {
      e.availability = Availability::unavailable(hosts.error().one_line());
      out.evidence.push_back(std::move(e));
      return out;
    }
    addrs = hosts_file_addresses(*hosts, name);
    if (addrs.empty()) {
      e.availability = Availability::unavailable("host name not in /etc/hosts; DNS cannot be asked under --root");
      out.evidence.push_back(std::move(e));
      return out;
    }
  }
  const std::string first = addrs.empty() ? "" : addrs.front();
  e.data = {{"name", name}, {"addr", first}, {"addrs", addrs}, {"loopback", !first.empty() && is_loopback(first)}};
  e.provenance.excerpt = name + " -> " + first;
  out.evidence.push_back(std::move(e));
  return out;
}

CollectorOutput collect_net_links(const CollectContext& ctx) {
  CollectorOutput out;
  auto names = ctx.root.list_dir("/sys/class/net");
  if (!names) {
    Evidence e = host_evidence(ctx, "net.link", "/sys/class/net");
    e.availability = Availability::unavailable(names.error().one_line());
    out.evidence.push_back(std::move(e));
    return out;
  }
  std::sort(names->begin(), names->end());
  for (const auto& n : *names) {
    const std::string dir = "/sys/class/net/" + n;
    Evidence e = host_evidence(ctx, "net.link", dir);
    e.subject.nic = n;
    auto num = [&](const char* attr) -> nlohmann::json {
      // `speed` and `carrier` fail with EINVAL on a down link: that is a
      // state, not an error, so it reads as null.
      auto v = ctx.root.read_line(dir + "/" + attr);
      if (!v) return nullptr;
      try {
        return std::stoll(*v);
      } catch (...) {
        return nullptr;
      }
    };
    auto text = [&](const char* attr) -> std::string {
      auto v = ctx.root.read_line(dir + "/" + attr);
      return v ? std::string(trim(*v)) : std::string();
    };
    nlohmann::json speed = num("speed");
    if (speed.is_number_integer() && speed.get<int64_t>() < 0) speed = nullptr;  // -1: unknown
    auto link = ctx.root.read_link(dir);
    const bool is_virtual = link && link->find("/devices/virtual/") != std::string::npos;
    e.data = {{"netdev", n},           {"operstate", text("operstate")}, {"carrier", num("carrier")},
              {"mtu", num("mtu")},     {"speed_mbps", speed},            {"virtual", is_virtual},
              {"address", text("address")}};
    e.provenance.excerpt = n + " " + e.data["operstate"].get<std::string>() + " mtu " +
                           (e.data["mtu"].is_null() ? std::string("?") : e.data["mtu"].dump());
    out.evidence.push_back(std::move(e));
  }
  return out;
}

}  // namespace ccdiag
