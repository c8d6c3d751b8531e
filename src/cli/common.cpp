#include "cli/common.hpp"

#include "sys/untrusted_file.hpp"

#include <ostream>

namespace ccdiag {

void add_output_flags(CLI::App* sub, OutputOptions& opts, bool markdown) {
  auto* j = sub->add_flag("--json", opts.json, "Print JSON (stable schema, docs/schema/)");
  if (markdown) {
    auto* m = sub->add_flag("--markdown", opts.markdown, "Print a Markdown summary for a ticket");
    j->excludes(m);
  }
}

Status check_kernel_log_option(const GlobalOptions& g) {
  if (g.kernel_log.empty()) return Ok{};
  auto f = UntrustedFile::open(g.kernel_log, g.kernel_log);
  if (!f) return make_error(f.error().message, g.kernel_log, "check the path given to --kernel-log");
  return Ok{};
}

int report_input_error(CommandContext& ctx, const Error& e) {
  ctx.err << "ccdiag: error: " << e.one_line() << '\n';
  return kExitUsage;
}

}  // namespace ccdiag
