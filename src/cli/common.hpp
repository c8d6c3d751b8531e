// What every subcommand shares: the global options, the streams, the exit code.
// Options structs are plain data; each subcommand file registers itself with
// register_<name>() and runs with run_<name>(opts, ctx).
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "ccdiag/exit_codes.hpp"
#include "ccdiag/result.hpp"
#include "ccdiag/sysroot.hpp"

namespace ccdiag {

struct GlobalOptions {
  std::string root;          // --root DIR: prefix for /proc, /sys, /dev
  std::string kernel_log;    // --kernel-log FILE: instead of /dev/kmsg
  double timeout_s = 10.0;   // --timeout SECONDS: wall-clock bound for live probes
  bool verbose = false;

  SysRoot sysroot() const { return root.empty() ? SysRoot() : SysRoot(root); }
  std::optional<std::string> kernel_log_file() const {
    return kernel_log.empty() ? std::nullopt : std::optional<std::string>(kernel_log);
  }
};

enum class OutputFormat { text, json, markdown };

struct OutputOptions {
  bool json = false;
  bool markdown = false;
  OutputFormat format() const { return json ? OutputFormat::json : markdown ? OutputFormat::markdown : OutputFormat::text; }
};

struct CommandContext {
  GlobalOptions global;
  std::ostream& out;
  std::ostream& err;
  int exit_code = kExitHealthy;
};

// Adds --json and --markdown (mutually exclusive) to a subcommand.
void add_output_flags(CLI::App* sub, OutputOptions& opts, bool markdown = true);

// --kernel-log, checked before anything runs: the bounded reader's rules
// (sys/untrusted_file.hpp) refuse a FIFO, device, socket, directory or
// symlink as an input error (exit 2) instead of a collector blocking on it.
Status check_kernel_log_option(const GlobalOptions& g);

// Prints "ccdiag: error: <one line>" and returns kExitUsage.
int report_input_error(CommandContext& ctx, const Error& e);

void register_diagnose(CLI::App& app, CommandContext& ctx);
void register_nccl_attach(CLI::App* nccl, CommandContext& ctx);  // under `nccl`
void register_collect(CLI::App& app, CommandContext& ctx);
void register_info(CLI::App& app, CommandContext& ctx);
void register_logs(CLI::App& app, CommandContext& ctx);
void register_nccl(CLI::App& app, CommandContext& ctx);
void register_ranks(CLI::App& app, CommandContext& ctx);
void register_stacks(CLI::App& app, CommandContext& ctx);
void register_probe(CLI::App& app, CommandContext& ctx);
// Adds `gpu`, `nvlink` and `p2p` under an existing `probe` subcommand (cli/probe_gpu.cpp).
void register_probe_gpu(CLI::App* probe, CommandContext& ctx);
void register_analyze(CLI::App& app, CommandContext& ctx);
void register_fleet(CLI::App& app, CommandContext& ctx);
void register_prom(CLI::App& app, CommandContext& ctx);
void register_fr(CLI::App& app, CommandContext& ctx);
void register_perf(CLI::App& app, CommandContext& ctx);
void register_isolate(CLI::App& app, CommandContext& ctx);

}  // namespace ccdiag
