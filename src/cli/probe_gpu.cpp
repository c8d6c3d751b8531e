// ccdiag probe gpu | nvlink | p2p : NVML and CUDA probes of this host's GPUs
// (docs/probe-gpu.md). NVML and libcuda are loaded at run time; every call runs
// in a child under a deadline. Exit codes: 0 healthy, 1 problem found,
// 2 usage error or refused (GPUs in use without --force), 3 could not check.
#include <algorithm>
#include <map>
#include <memory>
#include <ostream>
#include <set>

#include <fmt/format.h>

#include "ccdiag/utf8.hpp"
#include "ccdiag/version.hpp"
#include "cli/common.hpp"
#include "collectors/collector.hpp"
#include "collectors/gpu/cuda_p2p.hpp"
#include "collectors/gpu/gpu_findings.hpp"
#include "collectors/gpu/nvml_probe.hpp"
#include "sys/dl.hpp"
#include "sys/probe_runner.hpp"

namespace ccdiag {

namespace {

using nlohmann::json;
using std::chrono::milliseconds;

struct ProbeGpuOptions {
  OutputOptions output;
  double interval_s = 1.0;       // NVLink counter sampling interval
  bool force = false;            // p2p: run on GPUs in use
  size_t bytes = 32u << 20;      // p2p: bytes per copy
  double pair_timeout_s = 5.0;   // p2p: per pair
  double total_timeout_s = 120;  // p2p: whole test
};

struct ProbeRun {
  std::string what;
  std::vector<Evidence> evidence;
  std::vector<Finding> findings;
  std::vector<Unchecked> unchecked;
};

bool is_problem(const Finding& f) { return f.role != FindingRole::context && f.severity >= Severity::warning; }

int exit_code_of(const ProbeRun& r) {
  if (std::any_of(r.findings.begin(), r.findings.end(), is_problem)) return kExitProblem;
  return r.unchecked.empty() ? kExitHealthy : kExitPartial;
}

const Evidence* find_kind(const std::vector<Evidence>& ev, const char* kind) {
  for (const auto& e : ev)
    if (e.kind == kind) return &e;
  return nullptr;
}

std::string s_or(const json& j, const char* k, const std::string& d = "-") {
  return j.is_object() && j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : d;
}
std::string n_or(const json& j, const char* k, const std::string& d = "-") {
  return j.is_object() && j.contains(k) && j[k].is_number() ? j[k].dump() : d;
}

void print_json(const ProbeRun& r, CommandContext& ctx) {
  json j{{"schema_version", 1}, {"ccdiag_version", version_string()}, {"probe", r.what}};
  j["status"] = exit_code_of(r) == kExitProblem ? "problem" : exit_code_of(r) == kExitPartial ? "partial" : "ok";
  j["evidence"] = r.evidence;
  j["findings"] = r.findings;
  j["unchecked"] = json::array();
  for (const auto& u : r.unchecked) j["unchecked"].push_back(u);
  ctx.out << json_text(std::move(j)) << '\n';
}

void print_nvml_header(const ProbeRun& r, CommandContext& ctx) {
  const Evidence* nv = find_kind(r.evidence, "gpu.nvml");
  if (!nv) return;
  if (!nv->availability.is_ok()) {
    ctx.out << "NVML: " << to_string(nv->availability.state) << ": " << nv->availability.reason << '\n';
    return;
  }
  ctx.out << fmt::format("NVML: ok (driver {}, CUDA driver API {}, {} GPU(s), {} from {})\n", s_or(nv->data, "driver_version"),
                         n_or(nv->data, "cuda_driver_version"), n_or(nv->data, "device_count", "0"),
                         s_or(nv->data, "library"), s_or(nv->data, "library_dir"));
}

void print_findings_and_unchecked(const ProbeRun& r, CommandContext& ctx) {
  ctx.out << (r.findings.empty() ? "Findings: none\n" : "Findings:\n");
  for (const auto& f : r.findings)
    ctx.out << fmt::format("  {:<8} {:<28} {}\n", to_string(f.severity), f.id, f.summary);
  if (!r.unchecked.empty()) {
    ctx.out << "Could not check:\n";
    for (const auto& u : r.unchecked) ctx.out << "  " << u.what << ": " << to_string(u.state) << ": " << u.reason << '\n';
  }
}

std::map<std::string, std::pair<int, int>> link_counts(const std::vector<Evidence>& ev) {
  std::map<std::string, std::pair<int, int>> m;  // gpu -> (active, total)
  for (const auto& e : ev)
    if (e.kind == "nvlink.link") {
      auto& c = m[e.subject.gpu.value_or("?")];
      ++c.second;
      if (e.data.value("active", false)) ++c.first;
    }
  return m;
}

void print_gpu_text(const ProbeRun& r, CommandContext& ctx) {
  print_nvml_header(r, ctx);
  const auto links = link_counts(r.evidence);
  bool header = false;
  for (const auto& e : r.evidence) {
    if (e.kind != "gpu.device") continue;
    if (!header) {
      ctx.out << fmt::format("{:<4} {:<13} {:<24} {:>5} {:>7} {:<22} {:<12} {:>7}  {}\n", "GPU", "BDF", "NAME", "TEMP",
                             "ECC-UNC", "CLOCKS-EVENTS", "FABRIC", "NVLINK", "PROCESSES");
      header = true;
    }
    const json& d = e.data;
    const std::string bdf = e.subject.gpu.value_or("?");
    if (!e.availability.is_ok()) {
      ctx.out << fmt::format("{:<4} {:<13} {}: {}\n", n_or(d, "index"), bdf, to_string(e.availability.state),
                             e.availability.reason);
      continue;
    }
    if (d.value("lost", false)) {
      ctx.out << fmt::format("{:<4} {:<13} LOST (NVML: GPU_IS_LOST)\n", n_or(d, "index"), bdf);
      continue;
    }
    std::string clocks = "-";
    if (d.contains("clocks_event_names") && d["clocks_event_names"].is_array() && !d["clocks_event_names"].empty()) {
      clocks.clear();
      for (const auto& n : d["clocks_event_names"]) clocks += (clocks.empty() ? "" : ",") + n.get<std::string>();
    }
    std::string procs;
    for (const auto& p : d.value("processes", json::array())) procs += (procs.empty() ? "" : ",") + n_or(p, "pid");
    const auto it = links.find(bdf);
    const std::string nvl = it == links.end() ? "-" : fmt::format("{}/{}", it->second.first, it->second.second);
    ctx.out << fmt::format("{:<4} {:<13} {:<24} {:>4}C {:>7} {:<22} {:<12} {:>7}  {}\n", n_or(d, "index"), bdf,
                           s_or(d, "name"), n_or(d, "temperature_c"), n_or(d.value("ecc", json::object()), "volatile_uncorrected"),
                           clocks, s_or(d.value("fabric", json::object()), "state_name"), nvl, procs.empty() ? "-" : procs);
  }
  print_findings_and_unchecked(r, ctx);
}

// One summary line per GPU; link lines only for links that are down or count
// errors (every link with --verbose).
void print_nvlink_text(const ProbeRun& r, CommandContext& ctx) {
  print_nvml_header(r, ctx);
  std::map<std::string, std::vector<const Evidence*>> by_gpu;
  std::vector<std::string> order;
  for (const auto& e : r.evidence) {
    if (e.kind != "nvlink.link") continue;
    const std::string g = e.subject.gpu.value_or("?");
    if (!by_gpu.count(g)) order.push_back(g);
    by_gpu[g].push_back(&e);
  }
  for (const auto& g : order) {
    const auto& links = by_gpu[g];
    std::set<std::string> remotes;
    int active = 0;
    for (const auto* e : links) {
      if (e->data.value("active", false)) ++active;
      if (e->data.contains("remote_bdf")) remotes.insert(s_or(e->data, "remote_bdf") + " " + s_or(e->data, "remote_type"));
    }
    ctx.out << fmt::format("GPU {}: {}/{} links active, {} remote end(s)\n", g, active, links.size(), remotes.size());
    for (const auto* e : links) {
      const json& d = e->data;
      const json t0 = d.value("counters_t0", json::object()), t1 = d.value("counters_t1", json::object());
      bool counts = false;
      for (const auto& [k, v] : t0.items())
        if (v.is_number() && v.get<double>() > 0) counts = true;
      if (!ctx.global.verbose && d.value("active", false) && !counts) continue;
      auto delta = [&](const char* k) {
        if (!t0.contains(k) || !t1.contains(k) || !t0[k].is_number_integer() || !t1[k].is_number_integer())
          return std::string("-");
        return fmt::format("+{}", t1[k].get<int64_t>() - t0[k].get<int64_t>());
      };
      ctx.out << fmt::format("  link {:>2} {:<7} v{:<2} remote {:<13} {:<7} replay {}({}) recovery {}({}) crc_flit {}({}) crc_data {}({})\n",
                             n_or(d, "link"), d.value("active", false) ? "active" : "DOWN", n_or(d, "version", "?"),
                             s_or(d, "remote_bdf"), s_or(d, "remote_type"), n_or(t0, "replay"), delta("replay"),
                             n_or(t0, "recovery"), delta("recovery"), n_or(t0, "crc_flit"), delta("crc_flit"),
                             n_or(t0, "crc_data"), delta("crc_data"));
    }
  }
  const Evidence* nv = find_kind(r.evidence, "gpu.nvml");
  if (order.empty() && nv && nv->availability.is_ok()) ctx.out << "No NVLinks reported (PCIe-only GPUs).\n";
  print_findings_and_unchecked(r, ctx);
}

void print_p2p_text(const ProbeRun& r, CommandContext& ctx) {
  print_nvml_header(r, ctx);
  for (const auto& e : r.evidence) {
    if (e.kind != "gpu.p2p") continue;
    const std::string source = s_or(e.data, "source");
    if (!e.availability.is_ok()) {
      ctx.out << (source == "cuda" ? "CUDA P2P test: " : "NVML P2P matrix: ") << to_string(e.availability.state) << ": "
              << e.availability.reason << '\n';
      continue;
    }
    if (source == "nvml") {
      ctx.out << "NVML P2P status (read/write/nvlink/atomics; . = ok):\n";
      const json gpus = e.data.value("gpus", json::array());
      for (size_t i = 0; i < gpus.size(); ++i) {
        std::string row;
        for (size_t j = 0; j < gpus.size(); ++j) {
          if (i == j) {
            row += "   X   ";
            continue;
          }
          std::string cell;
          for (const char* cap : {"read", "write", "nvlink", "atomics"}) {
            const json m = e.data.value(cap, json::array());
            const bool ok = i < m.size() && j < m[i].size() && m[i][j].is_number() && m[i][j].get<int>() == 0;
            cell += ok ? "." : "x";
          }
          row += " " + cell + "  ";
        }
        ctx.out << fmt::format("  {:<13}{}\n", gpus[i].is_string() ? gpus[i].get<std::string>() : "?", row);
      }
    } else {
      ctx.out << "CUDA P2P copies (" << n_or(e.data, "cuda_driver_version") << "):\n";
      ctx.out << fmt::format("  {:<13} {:<13} {:<8} {:<15} {:>9} {:>10}\n", "A", "B", "PATH", "STATUS", "GB/s", "LAT(us)");
      for (const auto& p : e.data.value("pairs", json::array())) {
        std::string lat = "-";
        for (const auto& d : p.value("directions", json::array())) lat = n_or(d, "latency_us");
        ctx.out << fmt::format("  {:<13} {:<13} {:<8} {:<15} {:>9} {:>10}{}\n", s_or(p, "a"), s_or(p, "b"),
                               s_or(p, "expected_path"), s_or(p, "status"), n_or(p, "bandwidth_gbps"), lat,
                               p.contains("reason") ? "  " + s_or(p, "reason") : "");
      }
    }
  }
  print_findings_and_unchecked(r, ctx);
}

ProbeRun nvml_run(const std::string& what, const ProbeGpuOptions& o, const CommandContext& ctx, bool p2p_matrix,
                  milliseconds interval) {
  ProbeRun r;
  r.what = what;
  NvmlProbeOptions n;
  n.host = read_hostname(SysRoot());
  n.total = milliseconds(static_cast<int64_t>(ctx.global.timeout_s * 1000));
  n.sample_interval = interval;
  n.p2p_matrix = p2p_matrix;
  auto res = probe_nvml(n);
  r.evidence = std::move(res.evidence);
  r.unchecked = std::move(res.unchecked);
  r.findings = gpu_findings(r.evidence);
  (void)o;
  return r;
}

int run_probe_gpu_cmd(const ProbeGpuOptions& o, CommandContext& ctx) {
  ProbeRun r = nvml_run("gpu", o, ctx, true, milliseconds(static_cast<int64_t>(o.interval_s * 1000)));
  if (o.output.json) print_json(r, ctx);
  else print_gpu_text(r, ctx);
  return exit_code_of(r);
}

int run_probe_nvlink_cmd(const ProbeGpuOptions& o, CommandContext& ctx) {
  ProbeRun r = nvml_run("nvlink", o, ctx, false, milliseconds(static_cast<int64_t>(o.interval_s * 1000)));
  // Only what concerns NVLink: the NVML status, the links, link and fabric findings.
  std::erase_if(r.evidence, [](const Evidence& e) { return e.kind != "gpu.nvml" && e.kind != "nvlink.link"; });
  std::erase_if(r.findings, [](const Finding& f) {
    return f.id.rfind("nvlink.", 0) != 0 && f.id.rfind("gpu.fabric.", 0) != 0 && f.id.rfind("gpu.nvml.", 0) != 0 &&
           f.id != "gpu.lost";
  });
  if (o.output.json) print_json(r, ctx);
  else print_nvlink_text(r, ctx);
  return exit_code_of(r);
}

// Is libcuda loadable at all? (a child: a broken driver must not hang us)
bool cuda_loadable(std::string* why) {
  const auto o = run_probe_isolated("dlopen libcuda", milliseconds(3000), [] {
    auto lib = DynLib::open("libcuda.so.1");
    return lib ? json{{"found", true}} : json{{"found", false}, {"reason", lib.error().message}};
  });
  if (!o.availability.is_ok()) {
    *why = o.availability.reason;
    return false;
  }
  *why = o.value.value("reason", "");
  return o.value.value("found", false);
}

int run_probe_p2p_cmd(const ProbeGpuOptions& o, CommandContext& ctx) {
  ProbeRun r = nvml_run("p2p", o, ctx, true, milliseconds(0));
  const Evidence* nv = find_kind(r.evidence, "gpu.nvml");
  const bool nvml_ok = nv && nv->availability.is_ok();

  // Which GPUs are in use: the test allocates memory and saturates links, so it
  // must not run beside a training job unless asked to.
  std::vector<std::string> busy;
  for (const auto& e : r.evidence)
    if (e.kind == "gpu.device" && e.availability.is_ok())
      for (const auto& p : e.data.value("processes", json::array()))
        busy.push_back(fmt::format("{} (pid {})", e.subject.gpu.value_or("?"), n_or(p, "pid")));

  std::string why;
  if (!cuda_loadable(&why)) {
    r.unchecked.push_back(Unchecked{"CUDA P2P test", UncheckedState::skipped, (why.empty() ? std::string("libcuda.so.1 not found") : why)});
  } else if (!o.force && (!busy.empty() || !nvml_ok)) {
    const std::string what = busy.empty()
                                 ? "cannot tell whether the GPUs are in use (NVML unavailable)"
                                 : fmt::format("GPU(s) in use by running processes: {}", fmt::join(busy, ", "));
    return report_input_error(ctx, make_error(what + "; the P2P test would compete with them for memory and links",
                                              "probe p2p", "pass --force to run it anyway"));
  } else {
    P2pTestOptions t;
    t.host = read_hostname(SysRoot());
    t.bytes = o.bytes;
    t.pair_deadline = milliseconds(static_cast<int64_t>(o.pair_timeout_s * 1000));
    t.total = milliseconds(static_cast<int64_t>(o.total_timeout_s * 1000));
    // Expected path per pair from NVML: NVLink when NVML's P2P NVLink status is OK.
    if (const Evidence* m = nullptr; true) {
      for (const auto& e : r.evidence)
        if (e.kind == "gpu.p2p" && e.availability.is_ok()) m = &e;
      if (m) {
        const json gpus = m->data.value("gpus", json::array());
        const json nvl = m->data.value("nvlink", json::array());
        for (size_t i = 0; i < gpus.size(); ++i)
          for (size_t j = i + 1; j < gpus.size(); ++j) {
            if (!gpus[i].is_string() || !gpus[j].is_string()) continue;
            const bool ok = i < nvl.size() && j < nvl[i].size() && nvl[i][j].is_number() && nvl[i][j].get<int>() == 0;
            std::string x = gpus[i].get<std::string>(), y = gpus[j].get<std::string>();
            if (y < x) std::swap(x, y);
            t.expected_path[{x, y}] = ok ? "nvlink" : "pcie";
          }
      }
    }
    auto res = run_p2p_test(t);
    r.evidence.push_back(std::move(res.evidence));
    for (auto& u : res.unchecked) r.unchecked.push_back(std::move(u));
    r.findings = gpu_findings(r.evidence);
  }
  if (o.output.json) print_json(r, ctx);
  else print_p2p_text(r, ctx);
  return exit_code_of(r);
}

}  // namespace

void register_probe_gpu(CLI::App* probe, CommandContext& ctx) {
  auto opts = std::make_shared<ProbeGpuOptions>();
  auto* gpu = probe->add_subcommand("gpu", "GPUs through NVML: identity, ECC, remapped rows, clocks events, fabric, processes");
  add_output_flags(gpu, opts->output, false);
  gpu->add_option("--interval", opts->interval_s, "Seconds between the two NVLink counter samples (default 1)")
      ->check(CLI::Range(0.0, 60.0));
  gpu->callback([opts, &ctx] { ctx.exit_code = run_probe_gpu_cmd(*opts, ctx); });

  auto* nvlink = probe->add_subcommand("nvlink", "NVLink state, remote ends and error counters (sampled twice) per GPU");
  add_output_flags(nvlink, opts->output, false);
  nvlink->add_option("--interval", opts->interval_s, "Seconds between the two counter samples (default 1)")
      ->check(CLI::Range(0.0, 60.0));
  nvlink->callback([opts, &ctx] { ctx.exit_code = run_probe_nvlink_cmd(*opts, ctx); });

  auto* p2p = probe->add_subcommand(
      "p2p", "P2P matrix (NVML, CUDA) and an active copy per GPU pair: bandwidth, latency, per-pair timeout");
  add_output_flags(p2p, opts->output, false);
  p2p->add_flag("--force", opts->force, "Run even on GPUs that training processes are using");
  p2p->add_option("--size", opts->bytes, "Bytes per timed copy (default 33554432)")->check(CLI::Range(size_t{8}, size_t{1} << 32));
  p2p->add_option("--pair-timeout", opts->pair_timeout_s, "Seconds allowed per GPU pair (default 5)")
      ->check(CLI::Range(0.1, 600.0));
  p2p->add_option("--total-timeout", opts->total_timeout_s, "Seconds allowed for the whole test (default 120)")
      ->check(CLI::Range(0.1, 3600.0));
  p2p->callback([opts, &ctx] { ctx.exit_code = run_probe_p2p_cmd(*opts, ctx); });
}

}  // namespace ccdiag
