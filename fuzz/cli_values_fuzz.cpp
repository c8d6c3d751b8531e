// Fuzzes the parsers of values a user (or a script fed by others) passes on
// the command line and that ccdiag then trusts: --since, host lists
// (-w node[001-128]), and the redaction and JSON-depth checks applied to
// untrusted text. Invariants: no crash, no UB (UBSan), and the depth check
// agrees with the parser (anything it lets through parses without
// exhausting the stack).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "collectors/kernel/kernel_log_window.hpp"
#include "fleet/hostlist.hpp"
#include "sys/redact.hpp"
#include "sys/untrusted_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ccdiag;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto s = parse_since(text, 1764480000)) {
    // Every accepted --since is a time at or after the epoch, and scaling it
    // to µs (the window's unit) must stay in range.
    if (*s < 0 || *s > (int64_t(1) << 36)) __builtin_trap();
  }
  (void)parse_since(text, 0);
  (void)expand_hostlist(std::string(text.substr(0, 256)));
  (void)secret_name(text.substr(0, 128));
  (void)secret_value(text);
  if (redact_env_value("NCCL_X", text) != text && redact_env_value("NCCL_X", text) != kRedactedValue) __builtin_trap();
  auto j = parse_untrusted_json(text, "fuzz.json");
  if (j) (void)j->dump();  // a copy/serialisation of whatever passed the depth check
  return 0;
}
