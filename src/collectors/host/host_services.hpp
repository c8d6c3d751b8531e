// Host services that break distributed jobs from outside the job, read through
// SysRoot (nothing is changed):
//   logind   host.logind   {remove_ipc, set_by, files}
//            RemoveIPC= from /etc/systemd/logind.conf and its drop-ins, in
//            systemd's order; systemd's built-in default is yes, which unlinks
//            a regular user's POSIX shared memory (NCCL's /dev/shm segments)
//            when that user's last login session ends.
//   resolve  host.resolve  {name, addr, addrs, source}
//            what the host name resolves to: getaddrinfo on the live host (the
//            call Gloo and c10d make), /etc/hosts under --root; a loopback
//            address makes other nodes dial themselves.
//   net      net.link      {netdev, operstate, carrier, mtu, speed_mbps, virtual}
//            per network interface from /sys/class/net.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/collector.hpp"

namespace ccdiag {

CollectorOutput collect_logind(const CollectContext& ctx);
CollectorOutput collect_resolve(const CollectContext& ctx);
CollectorOutput collect_net_links(const CollectContext& ctx);

// Exposed for unit tests.
// The value of RemoveIPC= in the [Login] section of one logind.conf text
// (the last assignment wins; an empty value resets to the default).
struct RemoveIpcSetting {
  bool present = false;
  std::optional<bool> value;  // nullopt with present: reset to the default
};
RemoveIpcSetting remove_ipc_in(std::string_view conf_text);
// Addresses of `name` in an /etc/hosts text, in file order (aliases count).
std::vector<std::string> hosts_file_addresses(std::string_view hosts_text, std::string_view name);

}  // namespace ccdiag
