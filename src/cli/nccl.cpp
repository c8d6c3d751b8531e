// ccdiag nccl ras|dump|attach : NCCL communicator and proxy state.
//   attach (cli/nccl_attach.cpp) reads a stock NCCL out of a live rank or a core.
//   ras   queries NCCL's RAS port (or parses saved `ncclras` output) and says
//         which ranks are missing, dead, erroring or behind.
//   dump  reads the flight-recorder files of libnccl-profiler-ccdiag.so and
//         says which op each rank is in and which channel/peer/step it waits on.
// Docs: docs/nccl.md.
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "ccdiag/utf8.hpp"
#include "sys/untrusted_file.hpp"
#include "ccdiag/report.hpp"
#include "cli/common.hpp"
#include "collectors/nccl/flight_analysis.hpp"
#include "collectors/nccl/flight_recorder.hpp"
#include "collectors/nccl/ras_client.hpp"
#include "collectors/nccl/ras_findings.hpp"
#include "collectors/nccl/ras_status.hpp"
#include "sys/tcp_client.hpp"

namespace fs = std::filesystem;

namespace ccdiag {

namespace {

struct RasOptions {
  std::string addr;
  std::vector<std::string> files;
  bool verbose_status = false;
  bool text_format = false;
  OutputOptions output;
};

struct DumpOptions {
  std::vector<std::string> targets;
  bool ranks = false;
  bool raw = false;
  double stuck_after_s = 3.0;
  OutputOptions output;
};

bool has_primary(const std::vector<Finding>& fs) {
  for (const auto& f : fs)
    if (f.role == FindingRole::primary) return true;
  return false;
}

nlohmann::json findings_json(const std::vector<Finding>& fs) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& f : fs) {
    nlohmann::json j;
    to_json(j, f);
    a.push_back(std::move(j));
  }
  return a;
}

void print_findings(std::ostream& out, const std::vector<Finding>& fs) {
  if (fs.empty()) return;
  out << "\nFindings\n";
  for (const auto& f : fs)
    out << fmt::format("  [{}] {} ({}, {}): {}\n", to_string(f.severity), f.id, to_string(f.role),
                       to_string(f.layer), f.summary);
}

void print_ras_text(std::ostream& out, const nccl::RasStatus& s, const std::string& source) {
  out << "NCCL RAS status from " << source << " (" << s.format << ")\n";
  if (!s.nccl_version.empty()) out << "  NCCL " << s.nccl_version;
  if (s.cuda_runtime >= 0) out << ", CUDA runtime " << s.cuda_runtime << ", driver " << s.cuda_driver;
  if (!s.nccl_version.empty() || s.cuda_runtime >= 0) out << '\n';
  if (s.nodes >= 0)
    out << fmt::format("  job: {} node(s), {} process(es), {} GPU(s)\n", s.nodes, s.processes, s.gpus);
  if (s.collection_time_s >= 0) out << fmt::format("  gathered in {:.3f}s", s.collection_time_s);
  if (s.timeouts > 0) out << fmt::format(", {} timeout(s)", s.timeouts);
  if (s.collection_time_s >= 0 || s.timeouts > 0) out << '\n';
  for (const auto& g : s.groups)
    out << fmt::format("  group {}: {} comm(s) of {} ranks on {} node(s), {} [{}]\n", g.group, g.comms,
                       g.ranks_per_comm, g.nodes_per_comm, g.status, g.errors);
  if (s.format == "json") out << fmt::format("  {} communicator(s)\n", s.comms.size());
  for (const auto& c : s.comms) {
    if (c.flags.empty()) continue;
    std::string flags;
    for (const auto& f : c.flags) flags += (flags.empty() ? "" : ",") + f;
    out << fmt::format("  comm {}{}: {}\n", c.hash, c.label.empty() ? "" : " " + c.label, flags);
  }
  if (!s.complete) out << "  (report incomplete: the reply ended before the Warnings section)\n";
}

int run_ras(const RasOptions& o, CommandContext& ctx) {
  struct Source {
    std::string name;
    nccl::RasStatus status;
  };
  std::vector<Source> sources;
  nlohmann::json query = nullptr;
  if (!o.files.empty()) {
    for (const auto& f : o.files) {
      // The bounded reader: a FIFO would never end; a RAS report is small.
      auto text = read_untrusted(f, 64ULL << 20, f);
      if (!text) return report_input_error(ctx, text.error());
      auto st = nccl::parse_ras_reply(*text);
      if (!st.recognised)
        return report_input_error(ctx, make_error("not an NCCL RAS STATUS report (text or JSON)", f));
      sources.push_back({f, std::move(st)});
    }
  } else {
    nccl::RasQueryOptions q;
    q.addr = o.addr;
    q.timeout_s = ctx.global.timeout_s;
    q.verbose = o.verbose_status;
    q.want_json = !o.text_format;
    if (!q.addr.empty()) {
      std::string h;
      int p = 0;
      if (!split_host_port(q.addr, nccl::kRasDefaultPort, h, p))
        return report_input_error(ctx, make_error("bad address (want HOST:PORT or [IPV6]:PORT)", "--addr " + q.addr));
    }
    auto r = nccl::query_ras(q);
    query = {{"address", r.address},
             {"availability", std::string(to_string(r.availability.state))},
             {"reason", r.availability.reason},
             {"attempts", r.attempts},
             {"server_protocol", r.server_protocol},
             {"format", r.format},
             {"json_unsupported", r.json_unsupported}};
    auto st = nccl::parse_ras_reply(r.reply);
    if (r.availability.is_ok() && !st.recognised) {
      // A truncated JSON report, or garbage after a good handshake.
      r.availability = Availability::error("the reply of " + r.address + " is not a complete STATUS report");
      query["availability"] = "error";
      query["reason"] = r.availability.reason;
    }
    if (!r.availability.is_ok() && !st.recognised) {
      if (o.output.json) {
        ctx.out << json_text(nlohmann::json{{"schema_version", kSchemaVersion}, {"query", query}, {"sources", nlohmann::json::array()},
                                  {"findings", nlohmann::json::array()}})
                << '\n';
      } else {
        ctx.out << "NCCL RAS " << to_string(r.availability.state) << ": " << r.availability.reason << '\n';
        for (const auto& a : r.attempts) ctx.out << "  " << a << '\n';
      }
      return kExitPartial;
    }
    // A report cut short (timeout, or the server closed mid-way) is used for
    // what it says, but the run is partial: the missing part may hold the problem.
    if (!r.availability.is_ok() || !st.complete) query["partial"] = true;
    sources.push_back({r.address, std::move(st)});
  }
  std::vector<Finding> findings;
  nlohmann::json src = nlohmann::json::array();
  for (const auto& s : sources) {
    auto d = nccl::ras_to_evidence(s.status, s.name, "");
    for (auto& f : d.findings) findings.push_back(std::move(f));
    src.push_back({{"source", s.name}, {"status", d.evidence.data}});
  }
  if (o.output.json) {
    nlohmann::json j{{"schema_version", kSchemaVersion}, {"sources", src}, {"findings", findings_json(findings)}};
    if (!query.is_null()) j["query"] = query;
    ctx.out << json_text(std::move(j)) << '\n';
  } else {
    for (const auto& s : sources) print_ras_text(ctx.out, s.status, s.name);
    print_findings(ctx.out, findings);
    if (findings.empty())
      ctx.out << (!query.is_null() && query.contains("partial") ? "\nNo problem in the part of the report received.\n"
                                                                 : "\nNo problem reported by RAS.\n");
  }
  if (!query.is_null() && query.contains("partial")) return kExitPartial;
  return has_primary(findings) ? kExitProblem : kExitHealthy;
}

bool all_digits(const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; }

int pid_of_file(const std::string& path) {
  // ccdiag-nccl-<pid>-<hash>-<rank>.fr
  auto name = fs::path(path).filename().string();
  const std::string prefix = "ccdiag-nccl-";
  if (name.rfind(prefix, 0) != 0) return -1;
  return std::atoi(name.c_str() + prefix.size());
}

std::string fmt_op(const nccl::FrOp& op) {
  std::string s = fmt::format("{} seq {}", op.func, op.seq);
  if (!op.algo.empty()) s += fmt::format(" {}/{}", op.algo, op.proto);
  return s + fmt::format(" count {} {}", op.count, op.dtype);
}

int run_dump(const DumpOptions& o, CommandContext& ctx) {
  const std::string dir = nccl::default_flight_dir(ctx.global.root);
  std::vector<std::string> files;
  std::set<int> pids;
  bool scan_default = o.ranks || o.targets.empty();
  for (const auto& t : o.targets) {
    if (all_digits(t)) {
      pids.insert(std::atoi(t.c_str()));
      scan_default = true;
      continue;
    }
    std::error_code ec;
    if (fs::is_directory(t, ec)) {
      for (auto& f : nccl::list_flight_files(t)) files.push_back(f);
    } else if (fs::exists(t, ec)) {
      files.push_back(t);
    } else {
      return report_input_error(ctx, make_error("no such file, directory or pid", t));
    }
  }
  if (scan_default)
    for (auto& f : nccl::list_flight_files(dir))
      if (pids.empty() || pids.count(pid_of_file(f))) files.push_back(f);

  std::vector<nccl::FrSnapshot> snaps;
  for (const auto& f : files) {
    auto s = nccl::read_flight_file(f);
    if (!s) return report_input_error(ctx, s.error());
    snaps.push_back(std::move(*s));
  }
  if (snaps.empty()) {
    const std::string why = fmt::format(
        "no flight-recorder files{} in {} (run the job with NCCL_PROFILER_PLUGIN=ccdiag, or set CCDIAG_NCCL_DIR)",
        pids.empty() ? "" : " for the given pid(s)", dir);
    if (o.output.json)
      ctx.out << json_text(nlohmann::json{{"schema_version", kSchemaVersion}, {"files", nlohmann::json::array()},
                                {"comms", nlohmann::json::array()}, {"findings", nlohmann::json::array()},
                                {"unchecked", why}})
              << '\n';
    else
      ctx.out << why << '\n';
    return kExitPartial;
  }
  const uint64_t now = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                 std::chrono::system_clock::now().time_since_epoch())
                                                 .count());
  auto analyses = nccl::analyze_flight(snaps, now, o.stuck_after_s);
  auto findings = nccl::flight_findings(analyses, dir);
  bool stuck = false;
  for (const auto& a : analyses) stuck |= a.verdict != "healthy";

  if (o.output.json) {
    nlohmann::json comms = nlohmann::json::array();
    for (const auto& a : analyses) comms.push_back(nccl::to_json(a));
    nlohmann::json j{{"schema_version", kSchemaVersion}, {"files", files}, {"comms", comms},
                     {"findings", findings_json(findings)}};
    if (o.raw) {
      nlohmann::json s = nlohmann::json::array();
      for (const auto& sn : snaps) s.push_back(nccl::to_json(sn));
      j["snapshots"] = s;
    }
    ctx.out << json_text(std::move(j)) << '\n';
  } else {
    for (const auto& a : analyses) {
      ctx.out << fmt::format("comm {}{} ({} ranks): ", nccl::comm_hex(a.comm_hash),
                             a.comm_name.empty() ? "" : " \"" + a.comm_name + "\"", a.nranks);
      if (a.verdict == "healthy") ctx.out << "healthy — " << a.summary << '\n';
      else ctx.out << "STUCK (" << a.verdict << ", layer " << a.layer << ")\n  " << a.summary << '\n';
      ctx.out << fmt::format("  {:>4}  {:>8}  {:<18}  {:<56}  {}\n", "rank", "pid", "where", "op", "waits on");
      for (const auto& r : a.ranks) {
        std::string waits;
        for (const auto& w : r.waits)
          waits += fmt::format("{}ch{} {} {} {} step {} {:.1f}s", waits.empty() ? "" : "; ", w.channel, w.direction,
                               w.direction == "send" ? "to" : "from", w.peer, w.step, w.age_s) +
                   " " + w.state;
        ctx.out << fmt::format("  {:>4}  {:>8}  {:<18}  {:<56}  {}\n", r.rank, r.has_file ? std::to_string(r.pid) : "-",
                               r.where, r.op ? fmt_op(*r.op) : "-", waits.empty() ? "-" : waits);
      }
    }
    print_findings(ctx.out, findings);
  }
  return stuck ? kExitProblem : kExitHealthy;
}

}  // namespace

void register_nccl(CLI::App& app, CommandContext& ctx) {
  auto* nccl = app.add_subcommand("nccl", "NCCL communicator and proxy state (RAS, profiler-plugin flight recorder)");
  nccl->require_subcommand(1);

  auto ro = std::make_shared<RasOptions>();
  auto* ras = nccl->add_subcommand("ras", "Query NCCL's RAS port (or parse saved ncclras output)");
  ras->add_option("--addr", ro->addr, "RAS address HOST:PORT or [IPV6]:PORT (default $NCCL_RAS_ADDR, else localhost:28028)");
  ras->add_option("--file", ro->files, "Parse saved STATUS output (text or JSON) instead of querying")
      ->excludes(ras->get_option("--addr"));
  ras->add_flag("--verbose-status", ro->verbose_status, "Ask for VERBOSE STATUS (outliers listed up to 50%)");
  ras->add_flag("--text-format", ro->text_format, "Do not ask for JSON (SET FORMAT json); parse the text report");
  add_output_flags(ras, ro->output, false);
  ras->footer(
      "Exit codes: 0 no problem reported, 1 problem found, 2 bad input,\n"
      "            3 RAS unavailable, timed out or misbehaved (could not check).\n");
  ras->callback([ro, &ctx] { ctx.exit_code = run_ras(*ro, ctx); });

  auto dop = std::make_shared<DumpOptions>();
  auto* dump = nccl->add_subcommand("dump", "Read the flight-recorder files of libnccl-profiler-ccdiag.so");
  dump->add_option("targets", dop->targets, "PID, flight-recorder file or directory (default: all in $CCDIAG_NCCL_DIR or /dev/shm)");
  dump->add_flag("--ranks", dop->ranks, "Every rank on this host (all files in the default directory)");
  dump->add_option("--stuck-after", dop->stuck_after_s, "Seconds in one state before it counts as stuck (default 3)")
      ->check(CLI::Range(0.0, 86400.0));
  dump->add_flag("--raw", dop->raw, "With --json: include the decoded files");
  add_output_flags(dump, dop->output, false);
  dump->footer(
      "Exit codes: 0 nothing stuck, 1 a communicator is stuck, 2 bad input,\n"
      "            3 no flight-recorder files found.\n");
  dump->callback([dop, &ctx] { ctx.exit_code = run_dump(*dop, ctx); });

  register_nccl_attach(nccl, ctx);
}

}  // namespace ccdiag
