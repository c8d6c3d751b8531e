// logind.conf RemoveIPC= and /etc/hosts parsing (collectors/host/host_services).
#include <catch2/catch.hpp>

#include "collectors/host/host_services.hpp"

using namespace ccdiag;

TEST_CASE("RemoveIPC is read from the [Login] section only, last assignment wins", "[host][logind]") {
  CHECK_FALSE(remove_ipc_in("[Login]\n#RemoveIPC=yes\n").present);
  auto s = remove_ipc_in("[Login]\nKillUserProcesses=no\nRemoveIPC=no\n");
  CHECK(s.present);
  CHECK(s.value == std::optional<bool>(false));
  s = remove_ipc_in("[Login]\nRemoveIPC=no\nRemoveIPC = YES \n");
  CHECK(s.value == std::optional<bool>(true));
  // Another section's key of the same name is not logind's.
  CHECK_FALSE(remove_ipc_in("[Other]\nRemoveIPC=no\n").present);
  s = remove_ipc_in("[Other]\nRemoveIPC=yes\n[Login]\nRemoveIPC=off\r\n");
  CHECK(s.value == std::optional<bool>(false));
  // An empty value resets to the default (yes), an unparsable one is ignored.
  s = remove_ipc_in("[Login]\nRemoveIPC=no\nRemoveIPC=\n");
  CHECK(s.present);
  CHECK_FALSE(s.value.has_value());
  s = remove_ipc_in("[Login]\nRemoveIPC=no\nRemoveIPC=maybe\n");
  CHECK(s.value == std::optional<bool>(false));
}

TEST_CASE("/etc/hosts: addresses of a name or alias, in file order, comments ignored", "[host][resolve]") {
  const char* hosts =
      "127.0.0.1\tlocalhost\n"
      "# 10.0.0.9 node7\n"
      "127.0.1.1 node7.cluster node7  # Debian's installer line\n"
      "10.0.0.7 node7-ib node7\n"
      "::1 localhost ip6-localhost\n";
  CHECK(hosts_file_addresses(hosts, "node7") == std::vector<std::string>{"127.0.1.1", "10.0.0.7"});
  CHECK(hosts_file_addresses(hosts, "node7.cluster") == std::vector<std::string>{"127.0.1.1"});
  CHECK(hosts_file_addresses(hosts, "node").empty());
  CHECK(hosts_file_addresses(hosts, "localhost") == std::vector<std::string>{"127.0.0.1", "::1"});
}
