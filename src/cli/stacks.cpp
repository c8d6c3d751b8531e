// ccdiag stacks PID...|--ranks : native stacks of every thread, thread roles,
// a one-line activity per process and the cross-rank census (docs/stacks.md).
//
// Each process is captured in its own forked child (sys/probe_runner.hpp): the
// child is the tracer, detaches before it returns, and its exit releases any
// thread that could not be stopped (D state). The parent SIGKILLs a child that
// overruns its deadline; the kernel then detaches everything.
#include <algorithm>
#include <cstdlib>
#include <ostream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/census/census.hpp"
#include "analysis/parallel/dims.hpp"
#include "ccdiag/pretty_json.hpp"
#include "ccdiag/rank_job.hpp"
#include "ccdiag/utf8.hpp"
#include "cli/common.hpp"
#include "collectors/collector.hpp"
#include "collectors/proc/rank_discovery.hpp"
#include "collectors/proc/thread_progress.hpp"
#include "collectors/stacks/stacks.hpp"
#include "sys/object_cache.hpp"
#include "sys/probe_runner.hpp"

namespace ccdiag {

namespace {

struct StacksCliOptions {
  std::vector<int64_t> pids;
  bool ranks = false;
  bool no_lines = false;
  bool all_lines = false;
  int deadline_ms = 200;
  std::string symbol_cache;  // --symbol-cache DIR
  bool no_symbol_cache = false;
  OutputOptions output;
};

// --symbol-cache, else CCDIAG_SYMBOL_CACHE, else the per-user default; "" when
// disabled or refused (the warning says why: a capture never fails over it).
std::string symbol_cache_dir(const StacksCliOptions& opts, std::ostream& err) {
  if (opts.no_symbol_cache) return "";
  std::string dir = opts.symbol_cache;
  if (dir.empty())
    if (const char* e = std::getenv("CCDIAG_SYMBOL_CACHE"); e && *e) dir = e;
  if (dir == "off" || dir == "none") return "";
  if (dir.empty()) dir = default_object_cache_dir();
  if (dir.empty()) return "";
  auto c = ObjectCache::open(dir);
  if (!c) {
    err << "ccdiag: warning: symbol cache not used: " << c.error().one_line() << '\n';
    return "";
  }
  return c->dir();
}

void print_text(std::ostream& out, const std::vector<ProcessStacks>& procs, const Census& census) {
  for (const auto& p : procs) {
    out << fmt::format("pid {}{} ({}): {} threads, paused {:.1f} ms — {}\n", p.pid,
                       p.rank ? fmt::format(" rank {}", *p.rank) : "", p.comm, p.threads.size(), p.pause_ms,
                       p.activity);
    if (p.progress)
      out << fmt::format("  main thread before the capture: woke {} times in {:.0f} ms, {:.0f} ms CPU\n",
                         p.progress->wakeups, p.progress->window_ms, p.progress->cpu_ms);
    if (!p.python_error.empty()) out << "  ! Python frames unavailable: " << p.python_error << '\n';
    for (const auto& pr : p.problems) out << "  ! " << pr << '\n';
    for (const auto& t : p.threads) {
      // The threading name when Python has one, with the native (comm) name.
      const std::string name = t.py_name.empty() || t.py_name == t.name
                                   ? fmt::format("\"{}\"", t.name)
                                   : fmt::format("\"{}\" (native \"{}\")", t.py_name, t.name);
      out << fmt::format("  thread {} {} [{}] {} {}{}{}\n", t.tid, name, t.role, t.state, t.blocked_in,
                         t.capture == "stopped" || t.capture.empty() ? "" : " (" + t.capture + ")",
                         t.holds_gil ? " [holds GIL]" : "");
      if (t.c10d)
        out << fmt::format(
            "    c10d {} on {}{}\n", t.c10d->op, group_label(t.c10d->process_group, t.c10d->pg_desc),
            t.c10d->ranks.empty() ? "" : fmt::format(" ranks {}", fmt::join(t.c10d->ranks, ",")));
      int i = 0;
      for (const auto& f : t.frames) {
        if (f.kind == "python") {
          out << fmt::format("    #{:<2} {:>18} {} ({}:{})\n", i++, "[python]", f.function,
                             f.file.value_or("?"), f.line ? std::to_string(*f.line) : "???");
          continue;
        }
        out << fmt::format("    #{:<2} 0x{:016x} {}", i++, f.pc, f.function.empty() ? "??" : f.function);
        if (!f.module.empty()) out << " (" << f.module << ")";
        if (f.file) out << " at " << *f.file << ":" << f.line.value_or(0);
        out << '\n';
      }
      if (!t.unwind_error.empty()) out << "    (stack ends: " << t.unwind_error << ")\n";
      for (const auto& k : t.kernel_stack) out << "    [kernel] " << k << '\n';
    }
    out << '\n';
  }
  if (procs.size() > 1) {
    out << "census:\n";
    for (const auto& line : census.lines) out << "  " << line << '\n';
    // A running job's snapshot looks like a hang: say it moved.
    for (const auto& f : census.findings)
      if (f.id == "stacks.ranks_progressing") out << "  " << f.summary << '\n';
  }
}

// Ranks of different jobs on this host are counted apart (census.cpp); the
// census lines of each job are prefixed with it, and its findings carry it.
Census census_of(const std::vector<ProcessStacks>& procs, const std::map<int64_t, RankProcess>& rank_of) {
  std::map<std::string, std::vector<ProcessStacks>> by_job;
  for (const auto& p : procs) {
    const auto it = rank_of.find(p.pid);
    by_job[it == rank_of.end() ? std::string() : rank_job_key(it->second.env)].push_back(p);
  }
  if (by_job.size() <= 1) return run_census(procs);
  Census census;
  for (auto& [job, ps] : by_job) {
    Census c = run_census(ps);
    for (auto& line : c.lines)
      census.lines.push_back("job " + (job.empty() ? std::string("?") : job) + ": " + line);
    for (auto& f : c.findings) {
      f.fields["job"] = job;
      census.findings.push_back(std::move(f));
    }
    for (auto& g : c.groups) census.groups.push_back(std::move(g));
    for (auto& o : c.odd) census.odd.push_back(std::move(o));
  }
  return census;
}

// The command's whole output: `procs_json` is `procs` as JSON (kept as the
// capture produced it rather than converted back: 100 threads' frames cost ms).
std::string render(bool json, const std::string& host, nlohmann::json errors, nlohmann::json procs_json,
                   const std::vector<ProcessStacks>& procs, const Census& census) {
  if (json) {
    nlohmann::json j{
        {"schema_version", 1}, {"host", host}, {"errors", std::move(errors)}, {"census", to_json(census)}};
    j["processes"] = std::move(procs_json);  // moved, not copied by an initializer list
    return json_text(std::move(j)) + '\n';
  }
  std::ostringstream out;
  print_text(out, procs, census);
  return out.str();
}

// render()'s JSON for one process, written from the typed capture without a
// nlohmann tree of its frames (PrettyJson: the same bytes, ~2 ms less on a
// 100-thread rank). A unit test holds the two equal.
std::string render_one_json(const std::string& host, const ProcessStacks& p, const Census& census) {
  std::string out;
  out.reserve(64 << 10);
  PrettyJson w(out);
  w.begin_object();
  w.key("census");
  w.value(to_json(census));
  w.key("errors");
  w.begin_array();
  w.end_array();
  w.key("host");
  w.string(host);
  w.key("processes");
  w.begin_array();
  write_json(w, p);
  w.end_array();
  w.key("schema_version");
  w.integer(1);
  w.end_object();
  out += '\n';
  return out;
}

int run_stacks(const StacksCliOptions& opts, CommandContext& ctx) {
  const SysRoot root = ctx.global.sysroot();
  if (!root.is_live()) {
    return report_input_error(ctx, make_error("stacks attach to live processes; --root trees have none",
                                              "--root", "use `ccdiag ranks --root` for a captured tree"));
  }
  std::vector<int64_t> pids = opts.pids;
  std::map<int64_t, RankProcess> rank_of;
  if (opts.ranks) {
    for (auto& r : discover_ranks(root).ranks) {
      pids.push_back(r.pid);
      rank_of[r.pid] = r;
    }
    if (pids.empty()) {
      ctx.err << "ccdiag: no training ranks found on this host (see `ccdiag ranks`)\n";
      if (opts.output.json)
        ctx.out << json_text(nlohmann::json{{"schema_version", 1},
                                            {"processes", nlohmann::json::array()},
                                            {"errors", nlohmann::json::array()},
                                            {"census", nlohmann::json::object()}})
                << '\n';
      return kExitHealthy;
    }
  }
  if (pids.empty()) return report_input_error(ctx, make_error("give PIDs or --ranks", "stacks"));
  // A pid given twice (or also found by --ranks) is captured once: two
  // tracers cannot seize the same threads.
  {
    std::vector<int64_t> uniq;
    for (int64_t pid : pids)
      if (std::find(uniq.begin(), uniq.end(), pid) == uniq.end()) uniq.push_back(pid);
    pids = std::move(uniq);
  }
  // Explicit pids: their rank, when their environment names one.
  for (int64_t pid : opts.pids)
    if (!rank_of.count(pid))
      if (auto r = read_process_environment(root, pid); r && r->rank) rank_of[pid] = *r;
  for (int64_t pid : pids)
    if (pid <= 0 || !root.exists("/proc/" + std::to_string(pid) + "/stat"))
      return report_input_error(ctx, make_error("no such process", "pid " + std::to_string(pid)));

  StacksOptions so;
  so.file_lines = !opts.no_lines;
  so.runtime_lines = opts.all_lines;
  so.capture.stop_deadline = std::chrono::milliseconds(opts.deadline_ms);
  so.symbol_cache_dir = symbol_cache_dir(opts, ctx.err);
  const std::string host = read_hostname(root);

  // Several processes: whether each main thread is moving, read before the
  // stops (a stop counts as a wake-up), so the census can tell a running job
  // from a hung one. One process (the bench's case) pays nothing.
  const auto progress = pids.size() >= 2
                            ? measure_main_thread_progress(root, pids, std::chrono::milliseconds(250))
                            : std::map<int64_t, ThreadProgress>{};
  std::vector<ProbeSpec> specs;
  // One process (a single pid, the on-call's usual call): the capture child
  // writes the whole output itself, so the result is not built as JSON, parsed
  // back and dumped again in the parent (~7 ms of a ~25 ms capture). Several
  // processes need the parent's census over all of them.
  const bool child_renders = pids.size() == 1;
  if (child_renders) {
    const int64_t pid = pids.front();
    const bool json = opts.output.json;
    ProbeSpec spec{"stacks " + std::to_string(pid),
                   std::chrono::milliseconds(static_cast<int64_t>(ctx.global.timeout_s * 1000)),
                   {}};
    // The output behind one byte: 'P' when some thread could not be captured (exit 3), else 'C'.
    spec.text_probe = [pid, json, &root, &so, &host, &rank_of]() -> Result<std::string> {
      auto r = collect_process_stacks(root, pid, so);
      if (!r) return r.error();
      std::vector<ProcessStacks> procs;
      procs.push_back(std::move(*r));
      ProcessStacks& p = procs.front();
      p.host = host;
      if (auto it = rank_of.find(pid); it != rank_of.end()) p.rank = it->second.rank;
      const char state = p.problems.empty() ? 'C' : 'P';
      if (json) return state + render_one_json(host, p, census_of(procs, rank_of));
      return state + render(false, host, nlohmann::json::array(), nlohmann::json::array(), procs,
                            census_of(procs, rank_of));
    };
    specs.push_back(std::move(spec));
  }
  for (int64_t pid : child_renders ? std::vector<int64_t>{} : pids) {
    specs.push_back(ProbeSpec{"stacks " + std::to_string(pid),
                              std::chrono::milliseconds(static_cast<int64_t>(ctx.global.timeout_s * 1000)),
                              [pid, &root, &so] {
                                auto r = collect_process_stacks(root, pid, so);
                                if (!r) return nlohmann::json{{"error", r.error().one_line()}};
                                // Built in place: an initializer list would copy every frame.
                                nlohmann::json j;
                                j["process"] = *r;
                                return j;
                              }});
  }
  // One child per process, all at once: N ranks take about as long as one.
  auto outcomes = run_probes_isolated(specs);
  if (child_renders && outcomes.front().availability.is_ok() && !outcomes.front().text.empty()) {
    const std::string& t = outcomes.front().text;
    ctx.out.write(t.data() + 1, static_cast<std::streamsize>(t.size() - 1));
    return t.front() == 'P' ? kExitPartial : kExitHealthy;
  }
  std::vector<ProcessStacks> procs;
  // The children's JSON, printed as it came (plus host and rank) rather than
  // rebuilt from `procs`: converting 100 threads' frames back costs ms.
  nlohmann::json procs_json = nlohmann::json::array();
  nlohmann::json errors = nlohmann::json::array();
  for (size_t i = 0; i < pids.size(); ++i) {
    const auto& o = outcomes[i];
    std::string err;
    if (!o.availability.is_ok())
      err = fmt::format("pid {}: capture {}: {}", pids[i], to_string(o.availability.state),
                        o.availability.reason);
    else if (o.value.contains("error"))
      err = o.value["error"].get<std::string>();
    if (!err.empty()) {
      errors.push_back({{"pid", pids[i]}, {"error", err}});
      ctx.err << "ccdiag: error: " << err << '\n';
      continue;
    }
    nlohmann::json& pj = outcomes[i].value["process"];
    ProcessStacks p = pj.get<ProcessStacks>();
    p.host = host;
    pj["host"] = host;
    if (auto it = progress.find(p.pid); it != progress.end()) {
      p.progress = it->second;
      pj["progress"] = it->second;
    }
    if (auto it = rank_of.find(p.pid); it != rank_of.end()) {
      p.rank = it->second.rank;
      pj["rank"] = p.rank ? nlohmann::json(*p.rank) : nlohmann::json(nullptr);
    }
    procs.push_back(std::move(p));
    procs_json.push_back(std::move(pj));
  }
  ctx.out << render(opts.output.json, host, errors, std::move(procs_json), procs, census_of(procs, rank_of));
  if (procs.empty()) return kExitUsage;
  bool partial = !errors.empty();
  for (const auto& p : procs) partial |= !p.problems.empty();
  return partial ? kExitPartial : kExitHealthy;
}

}  // namespace

void register_stacks(CLI::App& app, CommandContext& ctx) {
  auto opts = std::make_shared<StacksCliOptions>();
  auto* sub =
      app.add_subcommand("stacks", "Native stacks of every thread of live processes (or of every rank)");
  sub->add_option("pids", opts->pids, "Process ids to capture");
  sub->add_flag("--ranks", opts->ranks, "Capture every training rank found on this host");
  sub->add_flag("--no-lines", opts->no_lines, "Skip file:line lookup (faster on big libraries)");
  sub->add_flag("--all-lines", opts->all_lines,
                "file:line also for libc/ld.so/libstdc++ frames (loads their separate debuginfo: slower)");
  sub->add_option("--stop-deadline-ms", opts->deadline_ms,
                  "Longest wait for all threads to stop (default 200)")
      ->check(CLI::Range(1, 10000));
  sub->add_option(
      "--symbol-cache", opts->symbol_cache,
      "Symbol cache directory (default $XDG_CACHE_HOME/ccdiag or ~/.cache/ccdiag; root: root's own; "
      "env CCDIAG_SYMBOL_CACHE)");
  sub->add_flag("--no-symbol-cache", opts->no_symbol_cache, "Neither read nor write the symbol cache");
  add_output_flags(sub, opts->output, false);
  sub->footer(
      "Examples:\n"
      "  ccdiag stacks 4242                # every thread of pid 4242\n"
      "  ccdiag stacks --ranks --json      # every rank on this host, with the census\n"
      "Each target is stopped for a few ms (PTRACE_SEIZE + PTRACE_INTERRUPT, never SIGSTOP) and never left "
      "stopped.\n"
      "Exit: 0 captured, 2 bad input or nothing could be captured (permissions: see the hint), 3 partial");
  sub->callback([opts, &ctx] { ctx.exit_code = run_stacks(*opts, ctx); });
}

}  // namespace ccdiag
