// ccdiag nccl attach PID...|--ranks|--core FILE : communicator and proxy state
// read out of a stock NCCL, from outside the process (docs/nccl-attach.md).
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "ccdiag/utf8.hpp"
#include "sys/run_deadline.hpp"
#include "sys/untrusted_file.hpp"
#include "cli/common.hpp"
#include "collectors/collector.hpp"
#include "collectors/nccl/attach/attach.hpp"
#include "collectors/nccl/attach/attach_analysis.hpp"
#include "collectors/proc/rank_discovery.hpp"
#include "sys/probe_runner.hpp"

namespace ccdiag {

namespace {

struct AttachCliOptions {
  std::vector<std::string> pids;
  std::vector<std::string> cores;
  std::vector<std::string> inputs;  // earlier `nccl attach --json` outputs (other hosts)
  bool ranks = false;
  std::string nccl_lib;
  std::string layout = "auto";
  int samples = 2;
  double interval_s = 0.5;
  OutputOptions output;
};

std::string sub_line(const nccl::attach::ProxyOp& o, const nccl::attach::ProxySub& s) {
  return fmt::format("ch{} {} {:>4} {} nsteps {} posted {} received {} transmitted {} done {}{}", s.channel,
                     s.direction.empty() ? "?" : s.direction, s.direction == "send" ? "to" : "from", s.peer, s.nsteps,
                     s.posted, s.received, s.transmitted, s.done,
                     s.moving ? (*s.moving ? " [moving]" : " [not moving]") : "") +
         fmt::format("  {}{}", std::string(1, s.state), o.p2p ? " p2p" : "");
}

void print_process(std::ostream& out, const nccl::attach::ProcessAttach& p) {
  out << fmt::format("{}{}: ", p.source, p.command.empty() ? "" : " (" + p.command + ")");
  if (p.status == "no_nccl") {
    out << "no NCCL: " << p.reason << '\n';
    return;
  }
  if (p.status == "wrong_library" || (p.status == "unreadable" && p.library.empty())) {
    out << p.status << ": " << p.reason << '\n';
    return;
  }
  out << fmt::format("{} {}{} [layout {}{}]\n", p.version_string.empty() ? "NCCL (version unknown)" : p.version_string,
                     p.library, p.static_link ? " (statically linked)" : "", p.layout_source.empty() ? "none" : p.layout_source,
                     p.layout_label.empty() || p.layout_label == p.layout_source ? "" : " " + p.layout_label);
  out << fmt::format("  scanned {} MiB of heap in {:.0f} ms: {} communicator(s)\n", p.scan.bytes_scanned >> 20, p.scan.ms,
                     p.comms.size());
  if (p.status != "ok") out << "  " << p.status << ": " << p.reason << '\n';
  for (const auto& n : p.notes) out << "  note: " << n << '\n';
  static const char* funcs[] = {"Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"};
  for (const auto& c : p.comms) {
    out << fmt::format("  comm {} rank {}/{} cudaDev {} busId {} init {}{}\n", c.hash_hex(), c.rank, c.nranks,
                       c.cuda_dev, c.bus_id.empty() ? "?" : c.bus_id, nccl::attach::nccl_result_name(c.init_state),
                       c.consistent ? "" : " (read while changing)");
    std::string counts;
    for (size_t f = 0; f < c.seq_numbers.size() && f < 5; ++f) counts += fmt::format(" {} {}", funcs[f], c.seq_numbers[f]);
    if (c.coll_op_count) counts += fmt::format(" | proxy collectives {}", *c.coll_op_count);
    if (!counts.empty()) out << "    issued:" << counts << '\n';
    if (c.async_result && *c.async_result) out << "    async error: " << nccl::attach::nccl_result_name(*c.async_result) << '\n';
    if (c.abort_flag && *c.abort_flag) out << "    abort flag raised\n";
    out << fmt::format("    {} channel(s); proxy {}; in RAS list: {}\n", c.n_channels,
                       c.proxy_present ? "running" : "not started",
                       c.in_ras_list ? (*c.in_ras_list ? "yes" : "no") : "unknown");
    for (const auto& o : c.proxy_ops) {
      out << fmt::format("    proxy op {} #{} ({}), {} sub(s)\n", o.p2p ? "p2p" : "collective", o.index,
                         o.pattern_name, o.subs.size());
      for (const auto& s : o.subs) out << "      " << sub_line(o, s) << '\n';
    }
    for (const auto& n : c.notes) out << "    note: " << n << '\n';
  }
}

// An earlier --json output (another host's): bounded like any untrusted input.
Result<std::string> slurp(const std::string& path) { return read_untrusted(path, 256ULL << 20, path); }

int run_attach(const AttachCliOptions& opts, CommandContext& ctx) {
  const SysRoot root = ctx.global.sysroot();
  const std::string host = read_hostname(root);
  nccl::attach::AttachOptions ao;
  ao.layout = opts.layout;
  ao.nccl_lib = opts.nccl_lib;
  ao.samples = opts.samples;
  ao.interval_s = opts.interval_s;
  ao.host = host;
  if (!opts.nccl_lib.empty() && !std::filesystem::is_regular_file(opts.nccl_lib))
    return report_input_error(ctx, make_error("no such library file", "--nccl-lib " + opts.nccl_lib));

  std::vector<int64_t> pids;
  for (const auto& s : opts.pids) {
    char* end = nullptr;
    long v = std::strtol(s.c_str(), &end, 10);
    if (s.empty() || *end || v <= 0) return report_input_error(ctx, make_error("not a process id", s));
    if (!root.exists("/proc/" + s + "/stat")) return report_input_error(ctx, make_error("no such process", "pid " + s));
    pids.push_back(v);
  }
  if (opts.ranks) {
    for (const auto& r : discover_ranks(root).ranks)
      if (!r.nccl_path.empty() && std::find(pids.begin(), pids.end(), r.pid) == pids.end()) pids.push_back(r.pid);
  }

  std::vector<nccl::attach::ProcessAttach> procs;
  nlohmann::json errors = nlohmann::json::array();
  bool partial = false;
  // Earlier outputs (other hosts): joined by commHash with what is read here.
  for (const auto& f : opts.inputs) {
    auto text = slurp(f);
    if (!text) return report_input_error(ctx, text.error());
    auto parsed = parse_untrusted_json(*text, f);
    if (!parsed) return report_input_error(ctx, parsed.error());
    const nlohmann::json& j = *parsed;
    if (!j.is_object() || !j.contains("processes") || !j["processes"].is_array())
      return report_input_error(ctx, make_error("not the JSON output of `ccdiag nccl attach --json`", f));
    for (const auto& pj : j["processes"]) procs.push_back(nccl::attach::process_attach_from_json(pj));
  }
  for (const auto& core : opts.cores) {
    auto t = nccl::attach::open_core_target(core);
    if (!t) return report_input_error(ctx, t.error());
    auto o = ao;
    o.host = "";
    // A core is a file anyone could have crafted (one PT_LOAD of 2^50 bytes,
    // 65535 program headers): its scans stop at the run's deadline.
    o.limits.deadline = run_deadline();
    procs.push_back(nccl::attach::attach_target(*t, o));
  }
  // Live: each process is read in a forked child under --timeout (a target in
  // D state with its mm lock held would block process_vm_readv).
  const auto deadline = std::chrono::milliseconds(static_cast<int64_t>(ctx.global.timeout_s * 1000));
  std::vector<ProbeSpec> specs;
  for (int64_t pid : pids) {
    specs.push_back(ProbeSpec{"nccl attach " + std::to_string(pid), deadline, [pid, &root, ao, deadline] {
                                auto t = nccl::attach::open_live_target(root, static_cast<pid_t>(pid));
                                if (!t) return nlohmann::json{{"error", t.error().one_line()}};
                                auto o = ao;
                                // Leave time for the second sample and the reply.
                                o.limits.deadline = std::chrono::steady_clock::now() + deadline / 2;
                                return nlohmann::json{{"process", nccl::attach::to_json(nccl::attach::attach_target(*t, o))}};
                              }});
  }
  const auto outcomes = run_probes_isolated(specs);
  for (size_t i = 0; i < pids.size(); ++i) {
    const auto& o = outcomes[i];
    std::string err;
    if (!o.availability.is_ok())
      err = fmt::format("pid {}: {}: {}", pids[i], to_string(o.availability.state), o.availability.reason);
    else if (o.value.contains("error"))
      err = o.value["error"].get<std::string>();
    if (!err.empty()) {
      partial = true;
      errors.push_back({{"pid", pids[i]}, {"error", err}});
      ctx.err << "ccdiag: error: " << err << '\n';
      continue;
    }
    procs.push_back(nccl::attach::process_attach_from_json(o.value["process"]));
  }
  for (const auto& p : procs)
    if (p.incomplete || (p.status != "ok" && p.status != "no_nccl" && p.status != "no_comm")) partial = true;

  const auto analyses = nccl::attach::analyze_attach(procs);
  const auto findings = nccl::attach::attach_findings(analyses);
  bool stuck = false;
  for (const auto& a : analyses) stuck |= a.verdict != "healthy";

  if (opts.output.json) {
    nlohmann::json jp = nlohmann::json::array(), jc = nlohmann::json::array(), jf = nlohmann::json::array();
    for (const auto& p : procs) jp.push_back(nccl::attach::to_json(p));
    for (const auto& a : analyses) jc.push_back(nccl::attach::to_json(a));
    for (const auto& f : findings) {
      nlohmann::json j;
      to_json(j, f);
      jf.push_back(std::move(j));
    }
    ctx.out << json_text(nlohmann::json{{"schema_version", kSchemaVersion}, {"host", host},       {"processes", jp},
                              {"comms", jc},                      {"findings", jf},     {"errors", errors}})
            << '\n';
  } else {
    if (procs.empty() && errors.empty()) ctx.out << "no process to read (give PIDs, --ranks or --core)\n";
    for (const auto& p : procs) print_process(ctx.out, p);
    for (const auto& a : analyses) {
      ctx.out << fmt::format("\ncomm 0x{:016x} ({} ranks, {} read): ", a.comm_hash, a.nranks,
                             a.nranks - a.not_seen);
      if (a.verdict == "healthy") ctx.out << "nothing stuck\n";
      else ctx.out << fmt::format("STUCK ({}, layer {})\n  {}\n", a.verdict, a.layer, a.summary);
      std::string unseen;  // ranks not read: one line, not one row each
      for (const auto& r : a.ranks) {
        if (r.where == "not_seen") {
          unseen += (unseen.empty() ? "" : ",") + std::to_string(r.rank);
          continue;
        }
        ctx.out << fmt::format("  rank {:>4}  {:<16} {}\n", r.rank, r.where, r.detail);
      }
      if (a.not_seen > 0)
        ctx.out << fmt::format("  {} rank(s) not read{}{}\n", a.not_seen, unseen.empty() ? "" : ": ", unseen);
    }
    if (!findings.empty()) {
      ctx.out << "\nFindings\n";
      for (const auto& f : findings)
        ctx.out << fmt::format("  [{}] {} ({}, {}): {}\n", to_string(f.severity), f.id, to_string(f.role),
                               to_string(f.layer), f.summary);
    }
  }
  if (stuck) return kExitProblem;
  return partial ? kExitPartial : kExitHealthy;
}

}  // namespace

void register_nccl_attach(CLI::App* nccl, CommandContext& ctx) {
  auto o = std::make_shared<AttachCliOptions>();
  auto* sub = nccl->add_subcommand("attach", "Read communicator and proxy state out of a stock NCCL (live or core)");
  sub->add_option("pids", o->pids, "Process ids of ranks");
  sub->add_flag("--ranks", o->ranks, "Every process on this host with libnccl mapped");
  // One value per flag: `--core FILE 1234` must not read the pid as a second core.
  sub->add_option("--core", o->cores, "A core file of a rank (repeatable)")->allow_extra_args(false);
  sub->add_option("--input", o->inputs, "JSON output of an earlier `nccl attach --json` (other hosts; repeatable)")
      ->allow_extra_args(false);
  sub->add_option("--nccl-lib", o->nccl_lib, "Library file to read versions/DWARF from (a core from another host); refused unless its build-id is the mapped one");
  sub->add_option("--layout", o->layout, "Where offsets come from: auto (DWARF, else table), dwarf, table")
      ->check(CLI::IsMember({"auto", "dwarf", "table"}));
  sub->add_option("--samples", o->samples, "Reads of each live process, to see which steps move (default 2; 1 = one snapshot)")
      ->check(CLI::Range(1, 10));
  sub->add_option("--interval", o->interval_s, "Seconds between samples (default 0.5)")->check(CLI::Range(0.01, 60.0));
  add_output_flags(sub, o->output, false);
  sub->footer(
      "Exit codes: 0 nothing stuck (or no NCCL in the targets), 1 a communicator is stuck,\n"
      "            2 bad input (no such pid, not a core file), 3 a target could not be read or a\n"
      "            communicator may be there but could not be decoded (docs/nccl-attach.md).\n");
  sub->callback([o, &ctx] {
    if (o->pids.empty() && !o->ranks && o->cores.empty() && o->inputs.empty()) {
      ctx.exit_code = report_input_error(ctx, make_error("give PIDs, --ranks, --core FILE or --input FILE", "nccl attach"));
      return;
    }
    ctx.exit_code = run_attach(*o, ctx);
  });
}

}  // namespace ccdiag
