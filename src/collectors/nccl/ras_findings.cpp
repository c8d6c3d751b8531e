#include "collectors/nccl/ras_findings.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace ccdiag::nccl {

namespace {

Subject subject_of(const RasPlace& p, const std::string& comm, int rank) {
  Subject s;
  if (!p.host.empty()) s.host = p.host;
  if (p.pid >= 0) s.pid = p.pid;
  if (p.cuda_dev >= 0) s.gpu = std::to_string(p.cuda_dev);
  else if (!p.gpu.empty()) s.gpu = p.gpu;
  if (!comm.empty()) s.comm = comm;
  if (rank >= 0) s.rank = rank;
  return s;
}

std::string where(const RasPlace& p) {
  if (p.pid < 0 && p.host.empty()) return "process unknown";
  return fmt::format("GPU {} process {} on node {}", p.gpu.empty() ? "?" : p.gpu, p.pid, p.host.empty() ? "?" : p.host);
}

Finding base(const std::string& id, Layer layer, Severity sev, FindingRole role, const std::string& source,
             const std::string& summary) {
  Finding f;
  f.id = id;
  f.layer = layer;
  f.severity = sev;
  f.role = role;
  f.summary = summary;
  f.provenance.push_back(Provenance{source, std::nullopt, summary});
  return f;
}

std::vector<CauseSupport> supports_for_error(int code) {
  switch (code) {
    case 1: return {{"gpu_ecc_or_memory_fault", 1.5}, {"gpu_fell_off_bus", 1.3}, {"user_code_bug", 1.5}};
    case 2: return {{"socket_connection_failure", 1.5}, {"container_shm_too_small", 1.3}, {"memlock_limit_too_low", 1.3}};
    case 3: return {{"nccl_bug", 2.5}};
    case 4:
    case 5: return {{"user_code_bug", 2.0}, {"nccl_config_error", 1.5}, {"wrong_device_binding", 1.3}};
    case 6: return {{"nic_pair_unreachable", 1.3}, {"ib_transport_retry_exceeded", 1.3}, {"rank_process_died", 1.3}};
    case 8: return {{"straggler_or_timeout_too_short", 1.5}};
    default: return {};
  }
}

Layer layer_for_error(int code) {
  switch (code) {
    case 1: return Layer::hardware;
    case 2: return Layer::system_config;
    case 3: return Layer::nccl;
    case 6: return Layer::transport;
    default: return Layer::framework;
  }
}

}  // namespace

RasDerived ras_to_evidence(const RasStatus& st, const std::string& source, const std::string& host) {
  RasDerived d;
  d.evidence.kind = "nccl.ras";
  if (!host.empty()) d.evidence.subject.host = host;
  d.evidence.provenance.source = source;
  d.evidence.provenance.excerpt = st.format == "json" ? "SET FORMAT json; STATUS" : "STATUS";
  d.evidence.availability = st.recognised ? Availability::ok() : Availability::error("reply is not a RAS status report");
  d.evidence.data = to_json(st);
  if (!st.recognised) return d;
  auto& out = d.findings;
  std::set<std::pair<std::string, int64_t>> named;     // processes already blamed
  std::set<std::pair<std::string, int64_t>> dead_set;  // processes on RAS's dead list

  // Dead processes first: they are the strongest statement RAS makes.
  for (const auto& p : st.dead_processes) {
    auto f = base("nccl.ras.dead_process", Layer::framework, Severity::critical, FindingRole::primary, source,
                  fmt::format("RAS considers process {} on node {} (GPU {}) dead: unreachable for >= 60 s",
                              p.place.pid, p.place.host, p.gpus));
    f.subject = subject_of(p.place, "", -1);
    f.supports = {{"rank_process_died", 40.0}};
    f.fields = {{"gpus", p.gpus}};
    out.push_back(std::move(f));
    named.insert({p.place.host, p.place.pid});
    dead_set.insert({p.place.host, p.place.pid});
  }
  if (st.dead_processes.empty() && st.dead_processes_count > 0) {
    auto f = base("nccl.ras.dead_process", Layer::framework, Severity::critical, FindingRole::primary, source,
                  fmt::format("RAS considers {} job process(es) dead (not listed: too many for the report)",
                              st.dead_processes_count));
    f.supports = {{"rank_process_died", 20.0}};
    out.push_back(std::move(f));
  }

  for (const auto& c : st.comms) {
    // Missing ranks.
    for (const auto& m : c.missing) {
      // Text reports list a dead process once under DEAD and again as the
      // comm's missing rank: it is the same failure.
      if (m.considered_dead || dead_set.count({m.rank.place.host, m.rank.place.pid})) {
        if (named.count({m.rank.place.host, m.rank.place.pid})) continue;
        auto f = base("nccl.ras.dead_process", Layer::framework, Severity::critical, FindingRole::primary, source,
                      fmt::format("comm {} rank {}: process dead ({})", c.hash, m.rank.rank, where(m.rank.place)));
        f.subject = subject_of(m.rank.place, c.hash, m.rank.rank);
        f.supports = {{"rank_process_died", 40.0}};
        out.push_back(std::move(f));
        named.insert({m.rank.place.host, m.rank.place.pid});
      } else if (m.unresponsive) {
        auto f = base("nccl.ras.missing_rank", Layer::framework, Severity::error, FindingRole::primary, source,
                      fmt::format("comm {} rank {}: no answer from its process ({}) — stopped, hung in a way that "
                                  "blocks the RAS thread, or dying; after 60 s RAS declares it dead",
                                  c.hash, m.rank.rank, where(m.rank.place)));
        f.subject = subject_of(m.rank.place, c.hash, m.rank.rank);
        f.supports = {{"rank_stuck_in_host_code", 4.0}, {"rank_process_died", 4.0}, {"gpu_hung_kernel", 2.0}};
        out.push_back(std::move(f));
        named.insert({m.rank.place.host, m.rank.place.pid});
      } else {
        auto f = base("nccl.ras.rank_without_comm", Layer::framework, Severity::warning, FindingRole::primary, source,
                      fmt::format("comm {} rank {}: its process answered but does not know the communicator "
                                  "(init/finalize skew) ({})",
                                  c.hash, m.rank.rank, where(m.rank.place)));
        f.subject = subject_of(m.rank.place, c.hash, m.rank.rank);
        f.supports = {{"wrong_process_group", 1.5}, {"rank_skips_collective", 1.3}};
        out.push_back(std::move(f));
      }
    }
    // Errors: "Remote process error" is the consequence of a failure elsewhere
    // when RAS shows one: a local error on another rank, a missing or dead
    // rank of this comm, or a dead process in the job.
    const bool has_local =
        std::any_of(c.errors.begin(), c.errors.end(), [](const RasRankError& e) { return e.code != 6; }) ||
        !c.missing.empty() || c.missing_reported > 0 || !st.dead_processes.empty() || st.dead_processes_count > 0;
    for (const auto& e : c.errors) {
      const bool cascade = e.code == 6 && has_local;
      const std::string id = e.kind == "init" ? "nccl.ras.init_error" : "nccl.ras.async_error";
      const std::string what = e.kind == "init" ? "initialization error" : "asynchronous error";
      auto make = [&](const RasRank* r) {
        auto f = base(id, layer_for_error(e.code), Severity::error, cascade ? FindingRole::cascade : FindingRole::primary,
                      source,
                      r ? fmt::format("comm {} rank {}: {} '{}' ({})", c.hash, r->rank, what, e.text, where(r->place))
                        : fmt::format("comm {}: {} rank(s) reported {} '{}'", c.hash, e.count, what, e.text));
        if (r) f.subject = subject_of(r->place, c.hash, r->rank);
        else f.subject.comm = c.hash;
        f.fields = {{"code", e.code}, {"error", e.text}, {"kind", e.kind}};
        if (!cascade) f.supports = supports_for_error(e.code);
        else f.caused_by = "a failure on another rank of comm " + c.hash + " (local error, missing or dead process)";
        return f;
      };
      // Cascades are one finding per comm and error (15 ranks reporting
      // "Remote process error" after one died are one consequence).
      if (e.ranks.empty() || (cascade && e.ranks.size() > 1)) {
        auto f = make(nullptr);
        nlohmann::json ranks = nlohmann::json::array();
        for (const auto& r : e.ranks) ranks.push_back(r.rank);
        f.fields["ranks"] = ranks;
        out.push_back(std::move(f));
        continue;
      }
      for (const auto& r : e.ranks) out.push_back(make(&r));
    }
    // Count mismatches: the group(s) below the highest count lag behind.
    for (const auto& m : c.count_mismatches) {
      if (m.groups.empty()) continue;
      int64_t top = 0;
      int total = 0;
      const RasCountGroup* majority = &m.groups.front();
      for (const auto& g : m.groups) {
        top = std::max(top, g.count);
        total += g.nranks;
        if (g.nranks > majority->nranks) majority = &g;
      }
      for (const auto& g : m.groups) {
        if (g.count < top) {
          const std::string launched = g.count > 0 ? fmt::format("launched up to {} op {}", m.func, g.count)
                                                   : fmt::format("launched no {} op", m.func);
          auto blame = [&](const RasRank* r) {
            auto f = base("nccl.ras.count_lagging", Layer::framework, Severity::error, FindingRole::primary, source,
                          r ? fmt::format("comm {} rank {} {} while others reached {} ({}); a hang if the counts do "
                                          "not move on a repeated query",
                                          c.hash, r->rank, launched, top, where(r->place))
                            : fmt::format("comm {}: {} rank(s) {} while others reached {}", c.hash, g.nranks,
                                          launched, top));
            if (r) f.subject = subject_of(r->place, c.hash, r->rank);
            else f.subject.comm = c.hash;
            if (g.count >= 0) f.subject.seq = g.count;
            f.fields = {{"func", m.func}, {"launched", g.count}, {"others", top}, {"nranks", g.nranks},
                        {"total_ranks", total}};
            // A minority behind is a rank that did not issue the op; a majority
            // behind means the few ahead issued an extra one.
            if (g.nranks * 2 <= total)
              f.supports = {{"rank_skips_collective", 8.0}, {"rank_stuck_in_host_code", 4.0},
                            {"straggler_or_timeout_too_short", 2.0}};
            else
              f.supports = {{"mismatched_collectives", 4.0}, {"rank_skips_collective", 2.0}};
            return f;
          };
          if (g.ranks.empty()) out.push_back(blame(nullptr));
          for (const auto& r : g.ranks) out.push_back(blame(&r));
        } else if (&g != majority && g.count > majority->count) {
          for (const auto& r : g.ranks) {
            auto f = base("nccl.ras.count_ahead", Layer::framework, Severity::warning, FindingRole::symptom, source,
                          fmt::format("comm {} rank {} launched {} op {}, ahead of the majority at {} ({})", c.hash,
                                      r.rank, m.func, g.count, majority->count, where(r.place)));
            f.subject = subject_of(r.place, c.hash, r.rank);
            f.fields = {{"func", m.func}, {"launched", g.count}, {"majority", majority->count}};
            out.push_back(std::move(f));
          }
        }
      }
    }
    if (!c.status_groups.empty()) {
      std::string groups;
      for (const auto& g : c.status_groups) groups += fmt::format("{}{} {}", groups.empty() ? "" : ", ", g.nranks, g.status);
      auto f = base("nccl.ras.status_mismatch", Layer::framework, Severity::warning, FindingRole::symptom, source,
                    fmt::format("comm {}: ranks have different status ({})", c.hash, groups));
      f.subject.comm = c.hash;
      out.push_back(std::move(f));
    }
  }
  // Processes missing from the whole gathering but not named per comm (large jobs).
  for (const auto& p : st.missing_processes) {
    if (named.count({p.place.host, p.place.pid})) continue;
    auto f = base("nccl.ras.missing_rank", Layer::framework, Severity::error, FindingRole::primary, source,
                  fmt::format("no RAS answer from process {} on node {} (GPU {})", p.place.pid, p.place.host, p.gpus));
    f.subject = subject_of(p.place, "", -1);
    f.supports = {{"rank_stuck_in_host_code", 4.0}, {"rank_process_died", 4.0}, {"gpu_hung_kernel", 2.0}};
    out.push_back(std::move(f));
  }
  if (st.timeouts > 0) {
    auto f = base("nccl.ras.gather_timeout", Layer::nccl, Severity::warning, FindingRole::symptom, source,
                  fmt::format("RAS hit {} communication timeout(s) while gathering communicator data", st.timeouts));
    f.fields = {{"timeouts", st.timeouts}};
    out.push_back(std::move(f));
  }
  return d;
}

}  // namespace ccdiag::nccl
