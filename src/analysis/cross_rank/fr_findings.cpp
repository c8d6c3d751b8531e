#include "analysis/cross_rank/fr_findings.hpp"

#include <unordered_map>

namespace ccdiag::fr {

namespace {

std::vector<CauseSupport> supports_for(const FrFinding& f) {
  if (f.caused_by) return {};
  if (f.kind == "missing_ranks") {
    const auto& d = f.details;
    const size_t never = d.value("never_called", size_t{0});
    const size_t notyet = d.value("not_yet_arrived", size_t{0});
    if (d.value("no_dump", size_t{0}) > 0) return {{"rank_process_died", 12.0}, {"rank_stuck_in_host_code", 2.0}};
    if (f.seq_kind == "p2p") return {{"rank_skips_collective", 20.0}, {"rank_stuck_in_host_code", 4.0}};
    if (d.value("slow_not_arrived", size_t{0}) > 0 && never == 0)
      return {{"straggler_or_timeout_too_short", 25.0}, {"rank_stuck_in_host_code", 3.0}};
    if (never > 0 && notyet == 0) {
      bool kept = false;
      if (d.contains("missing"))
        for (const auto& x : d["missing"])
          if (x.value("kept_issuing_collectives", false)) kept = true;
      if (kept || d.value("odd_side", std::string()) == "present") return {{"rank_skips_collective", 40.0}};
      // Stopped issuing anything: skipped it, or stuck in its own code before it.
      return {{"rank_skips_collective", 20.0}, {"rank_stuck_in_host_code", 6.0}, {"rank_process_died", 1.5}};
    }
    if (never > 0) return {{"rank_skips_collective", 20.0}, {"rank_stuck_in_host_code", 4.0}};
    return {{"straggler_or_timeout_too_short", 3.0}, {"rank_stuck_in_host_code", 2.0}};
  }
  if (f.kind == "group_order_mismatch")
    // Sub-groups wait on each other; the ranks that went straight on are
    // where the program differs (wrong group, or a skipped sub-group call).
    return {{"wrong_process_group", 80.0}, {"rank_skips_collective", 4.0}};
  if (f.kind == "type_mismatch") return {{"mismatched_collectives", 40.0}, {"wrong_process_group", 1.5}};
  if (f.kind == "size_mismatch" || f.kind == "dtype_mismatch") return {{"mismatched_collectives", 40.0}};
  if (f.kind == "state_mismatch" && f.details.contains("backend")) return {{"straggler_or_timeout_too_short", 1.5}};
  if (f.kind == "state_mismatch") return {{"gpu_hung_kernel", 1.5}, {"straggler_or_timeout_too_short", 1.5}};
  if (f.kind == "hang_no_completion" && f.details.contains("backend"))
    // A CPU backend: no GPU, NVLink or RDMA to blame. Weak: the FR only
    // says that every member is inside.
    return {{"socket_connection_failure", 1.5},
            {"rank_process_died", 1.2},
            {"rank_skips_collective", 0.2},
            {"mismatched_collectives", 0.2}};
  if (f.kind == "hang_no_completion")
    // Every rank is inside the collective: the framework agrees with itself.
    // The cause is below it; which layer, the FR cannot tell.
    return {{"nccl_bug", 2.0},
            {"gpu_hung_kernel", 2.0},
            {"ib_transport_retry_exceeded", 1.5},
            {"nic_pair_unreachable", 1.5},
            {"qp_error_state", 1.5},
            {"nvlink_down_or_degraded", 1.5},
            {"socket_connection_failure", 1.3},
            {"rank_skips_collective", 0.2},
            {"mismatched_collectives", 0.2}};
  if (f.kind == "slow_rank") return {{"straggler_or_timeout_too_short", 25.0}};
  // Seen arriving, long after the others: late, not absent.
  if (f.kind == "late_arrival") return {{"straggler_or_timeout_too_short", 30.0}, {"rank_stuck_in_host_code", 3.0}};
  if (f.kind == "no_dump") return {{"rank_process_died", 2.0}};
  return {};
}

Severity severity_of(const std::string& s) {
  if (s == "critical") return Severity::critical;
  if (s == "warning") return Severity::warning;
  if (s == "info") return Severity::info;
  return Severity::error;
}

}  // namespace

std::vector<Finding> to_findings(const FrAnalysis& a, const std::vector<RankDump>& dumps) {
  std::unordered_map<int, const RankDump*> by_rank;
  for (const auto& d : dumps) by_rank[d.rank] = &d;
  std::vector<Finding> out;
  int64_t order = 0;
  for (const auto& f : a.findings) {
    Finding x;
    x.id = "fr." + f.kind;
    x.layer = Layer::framework;
    x.severity = severity_of(f.severity);
    x.role = f.caused_by ? FindingRole::cascade : FindingRole::primary;
    if (f.kind == "no_dump" || f.kind == "state_mismatch") x.role = f.caused_by ? FindingRole::cascade : FindingRole::symptom;
    x.summary = f.summary;
    if (!f.ranks.empty()) {
      x.subject.rank = f.ranks.front();
      if (auto it = by_rank.find(f.ranks.front()); it != by_rank.end() && !it->second->host.empty())
        x.subject.host = it->second->host;
    }
    if (!f.process_group.empty()) x.subject.process_group = f.process_group;
    if (f.seq) x.subject.seq = *f.seq;
    for (const auto& file : f.files) x.provenance.push_back(Provenance{file, std::nullopt, f.op});
    x.order = order++;
    x.caused_by = f.caused_by;
    x.fields = f.details;
    x.fields["kind"] = f.kind;
    x.fields["ranks"] = f.ranks;
    if (!f.op.empty()) x.fields["op"] = f.op;
    if (!f.pg_desc.empty()) x.fields["pg_desc"] = f.pg_desc;
    x.fields["seq_kind"] = f.seq_kind;
    if (!f.stack.empty()) {
      x.fields["call_site"] = f.stack;
      x.fields["call_site_rank"] = f.stack_rank;
    }
    x.supports = supports_for(f);
    out.push_back(std::move(x));
  }
  return out;
}

nlohmann::json fr_finding_json(const FrFinding& f, const Finding& generic) {
  nlohmann::json j = generic;
  j["kind"] = f.kind;
  j["process_group"] = f.process_group.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.process_group);
  if (!f.pg_desc.empty()) j["pg_desc"] = f.pg_desc;
  j["seq"] = f.seq ? nlohmann::json(*f.seq) : nlohmann::json(nullptr);
  j["seq_kind"] = f.seq_kind;
  j["ranks"] = f.ranks;
  if (!f.op.empty()) j["op"] = f.op;
  if (!f.stack.empty()) {
    nlohmann::json frames = nlohmann::json::array();
    size_t start = 0;
    while (start <= f.stack.size()) {
      const size_t nl = f.stack.find('\n', start);
      frames.push_back(f.stack.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
      if (nl == std::string::npos) break;
      start = nl + 1;
    }
    j["call_site"] = {{"rank", f.stack_rank}, {"frames", frames}};
  }
  return j;
}

}  // namespace ccdiag::fr
