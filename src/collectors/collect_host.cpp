#include <unistd.h>

#include "collectors/collector.hpp"
#include "sys/probe_runner.hpp"

namespace ccdiag {

std::string read_hostname(const SysRoot& root) {
  if (auto h = root.read_line("/proc/sys/kernel/hostname"); h && !h->empty()) return *h;
  if (auto h = root.read_line("/etc/hostname"); h && !h->empty()) return *h;
  if (root.is_live()) {
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) == 0) return buf;
  }
  return "unknown-host";
}

nlohmann::json to_json(const CollectorOutput& out) {
  nlohmann::json j{{"evidence", out.evidence}, {"raw", nlohmann::json::array()}, {"unchecked", out.unchecked}};
  for (const auto& [k, v] : out.raw) {
    // Invalid UTF-8 in raw text is replaced when the runner serialises this.
    j["raw"].push_back({{"path", k}, {"content", v}});
  }
  return j;
}

CollectorOutput collector_output_from_json(const nlohmann::json& j) {
  CollectorOutput out;
  if (j.contains("evidence"))
    for (const auto& e : j["evidence"]) out.evidence.push_back(e.get<Evidence>());
  if (j.contains("raw"))
    for (const auto& r : j["raw"]) out.raw.emplace_back(r.value("path", ""), r.value("content", ""));
  if (j.contains("unchecked"))
    for (const auto& u : j["unchecked"]) {
      Unchecked c = unchecked_from_text(u.value("what", ""), u.value("reason", ""));
      if (auto st = unchecked_state_from(u.value("state", ""))) {
        c.state = *st;
        c.reason = u.value("reason", "");
      }
      out.unchecked.push_back(std::move(c));
    }
  return out;
}

CollectResult collect_host(const CollectContext& ctx_in, std::chrono::milliseconds timeout,
                           const ProbeWaitCallback& on_wait) {
  CollectContext ctx = ctx_in;
  if (ctx.host.empty()) ctx.host = read_hostname(ctx.root);
  CollectResult res;
  res.host = ctx.host;
  res.kernel = ctx.root.read_line("/proc/sys/kernel/osrelease").value_or("");

  const auto& collectors = all_collectors();
  std::vector<ProbeSpec> specs;
  for (const auto& c : collectors) {
    const auto budget = c.follows_timeout ? timeout : std::min(c.budget, timeout);
    specs.push_back(ProbeSpec{c.name, budget, [&c, &ctx, budget] {
                                CollectContext mine = ctx;
                                mine.deadline = std::chrono::steady_clock::now() + budget;
                                return to_json(c.run(mine));
                              }});
  }
  const auto outcomes = run_probes_isolated(specs, on_wait);
  for (size_t i = 0; i < collectors.size(); ++i) {
    const auto& o = outcomes[i];
    if (!o.availability.is_ok()) {
      Evidence e;
      e.kind = collectors[i].failure_kind.empty() ? "collector." + collectors[i].name : collectors[i].failure_kind;
      e.subject.host = ctx.host;
      e.provenance.source = "collector " + collectors[i].name;
      e.availability = o.availability;
      res.evidence.push_back(std::move(e));
      res.unchecked.push_back(Unchecked{collectors[i].name, unchecked_state_of(o.availability.state),
                                                              o.availability.reason});
      continue;
    }
    CollectorOutput out = collector_output_from_json(o.value);
    for (auto& e : out.evidence) {
      if (!e.subject.host) e.subject.host = ctx.host;
      res.evidence.push_back(std::move(e));
    }
    for (auto& r : out.raw) res.raw.push_back(std::move(r));
    for (auto& u : out.unchecked) res.unchecked.push_back(std::move(u));
  }
  return res;
}

}  // namespace ccdiag
