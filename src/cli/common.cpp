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

CLI::Validator untrusted_file_validator() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        auto f = UntrustedFile::open(path, path);
        return f ? std::string() : f.error().message;
      },
      "FILE");
}

int report_input_error(CommandContext& ctx, const Error& e) {
  ctx.err << "ccdiag: error: " << e.one_line() << '\n';
  return kExitUsage;
}

}  // namespace ccdiag
