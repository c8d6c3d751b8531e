// ccdiag collect [--out DIR] : this host's evidence as a bundle.
// ccdiag collect --tar [--base64] (or --out -) : the bundle as a tar.gz
// stream on stdout, for fan-out through pdsh / clush / srun / kubectl exec
// (bundle/bundle_tar.hpp); nothing is left on the host.
#include <unistd.h>

#include <ostream>

#include "bundle/bundle_tar.hpp"
#include "cli/common.hpp"
#include "cli/live_bundle.hpp"
#include "sys/temp_cleanup.hpp"

namespace ccdiag {

namespace {

struct CollectOptions {
  std::string out;
  std::vector<std::string> logs;
  bool tar = false;
  bool base64 = false;
};

int run_collect(const CollectOptions& opts, CommandContext& ctx) {
  const bool stream = opts.tar || opts.out == "-";
  // Without --out the bundle goes to a new private directory (mkdtemp under
  // $XDG_RUNTIME_DIR, $TMPDIR or /tmp): a predictable name in /tmp is one any
  // local user can plant first.
  std::string out = opts.out;
  if (!stream && out.empty()) {
    TerminationSignalsDeferred deferred;  // created and registered before a signal can end us
    auto dir = OutputDir::make_private("ccdiag-collect-");
    if (!dir) return report_input_error(ctx, dir.error());
    out = dir->path();
    // A collect killed half-way leaves no partial bundle behind; once
    // written, the bundle is the user's (unregistered below).
    register_temp_dir(out);
  }
  struct Keep {
    std::string path;
    ~Keep() {
      if (!path.empty()) unregister_temp_dir(path);
    }
  } keep{opts.out.empty() && !stream ? out : std::string()};
  if (opts.base64 && !stream)
    return report_input_error(ctx, make_error("--base64 needs --tar (or --out -)", "collect"));
  if (stream && ::isatty(1) && !opts.base64)
    return report_input_error(ctx, make_error("refusing to write a binary tar stream to a terminal", "stdout",
                                              "redirect stdout to a file, or add --base64"));
  auto lb = collect_live_bundle(ctx.global, stream ? std::string() : out, opts.logs, stream ? nullptr : &ctx.err);
  if (!lb) return report_input_error(ctx, lb.error());
  if (stream) {
    ctx.out.flush();
    // The top directory is the host name from the manifest, as `collect --out` would name it.
    std::string top = "bundle";
    if (auto b = read_bundle(lb->dir())) top = b->manifest.host;
    if (auto st = write_bundle_tar(lb->dir(), top, 1, opts.base64); !st) return report_input_error(ctx, st.error());
    if (lb->unchecked) ctx.err << "ccdiag: " << lb->unchecked << " probe(s) could not run; see evidence.json unchecked\n";
    return lb->unchecked ? kExitPartial : kExitHealthy;
  }
  if (opts.out.empty()) ctx.out << out << '\n';  // the chosen path, for scripts
  ctx.err << "ccdiag: bundle written to " << out;
  if (lb->unchecked) ctx.err << " (" << lb->unchecked << " probe(s) could not run; see evidence.json unchecked)";
  ctx.err << '\n';
  return lb->unchecked ? kExitPartial : kExitHealthy;
}

}  // namespace

void register_collect(CLI::App& app, CommandContext& ctx) {
  auto opts = std::make_shared<CollectOptions>();
  auto* sub = app.add_subcommand("collect", "Gather this host's evidence into a bundle directory (or a tar stream)");
  sub->add_option("--out", opts->out, "New bundle directory to write (refused if it exists non-empty, is a symlink or belongs to another user; default: a new private directory whose path is printed; '-': a tar.gz stream on stdout)");
  sub->add_option("--log", opts->logs, "A log file to include under raw/logs/ (repeatable)");
  sub->add_flag("--tar", opts->tar, "Write the bundle as a tar.gz stream to stdout (for fan-out)");
  sub->add_flag("--base64", opts->base64, "With --tar: base64 lines between BEGIN/END markers (for pdsh/clush)");
  sub->footer(
      "Examples:\n"
      "  ccdiag collect                       # prints the new private bundle directory\n"
      "  ccdiag collect --out ~/ccdiag-$(hostname)\n"
      "  ccdiag collect --out b --kernel-log /var/log/kern.log --log train.log\n"
      "  ssh node7 ccdiag collect --tar > node7.tar.gz\n"
      "  pdsh -w 'node[01-16]' ccdiag collect --tar --base64   # what `ccdiag fleet collect` runs\n"
      "Exit: 0 complete, 2 bad input, 3 partial (some probes timed out or could not run)");
  sub->callback([opts, &ctx] { ctx.exit_code = run_collect(*opts, ctx); });
}

}  // namespace ccdiag
