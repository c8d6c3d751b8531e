#include "analysis/tree/decision_tree.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "analysis/tree/catalogue.hpp"
#include "ccdiag/version.hpp"

namespace ccdiag {

std::optional<Layer> layer_of_evidence_kind(std::string_view kind) {
  static const std::pair<std::string_view, Layer> table[] = {
      {"fr.", Layer::framework},        {"stacks.", Layer::framework},  {"ranks.", Layer::framework},
      {"pytorch.", Layer::framework},   {"nccl.", Layer::nccl},         {"rdma.", Layer::transport},
      {"net.", Layer::transport},       {"kernel.", Layer::hardware},   {"gpu.", Layer::hardware},
      {"nvml.", Layer::hardware},       {"pcie.", Layer::hardware},     {"nvlink.", Layer::hardware},
      {"host.", Layer::system_config},  {"config.", Layer::system_config}};
  for (const auto& [prefix, layer] : table)
    if (kind.substr(0, prefix.size()) == prefix) return layer;
  return std::nullopt;
}

std::vector<CauseScore> score_causes(const std::vector<Hypothesis>& hyps, size_t unchecked_count) {
  // cause -> evidence_key -> strongest hypothesis for that key
  std::map<std::string, std::map<std::string, const Hypothesis*>> by_cause;
  for (const auto& h : hyps) {
    if (!find_cause(h.cause)) continue;  // unknown id: a rule bug; never invent causes
    const std::string key = h.evidence_key.empty() ? h.why : h.evidence_key;
    auto& slot = by_cause[h.cause][key];
    // Within one key keep the most extreme ratio (far from 1 either way).
    if (!slot || std::abs(std::log(h.weight)) > std::abs(std::log(slot->weight))) slot = &h;
  }
  std::vector<CauseScore> scores;
  for (const auto& [cause, keys] : by_cause) {
    const CauseInfo* info = find_cause(cause);
    CauseScore s;
    s.cause = cause;
    double odds = info->prior / (1.0 - info->prior);
    const Hypothesis* best = nullptr;
    for (const auto& [key, h] : keys) {
      odds *= std::clamp(h->weight, 1e-3, 1e4);
      s.support.push_back(h);
      // The culprit comes from the strongest supporting hypothesis; among equals,
      // the earliest (first failure).
      if (h->weight > 1.0 &&
          (!best || h->weight > best->weight ||
           (h->weight == best->weight && h->order && (!best->order || *h->order < *best->order))))
        best = h;
    }
    if (!best) continue;  // only counter-evidence: not a candidate
    s.odds = odds;
    s.culprit = best->culprit;
    scores.push_back(std::move(s));
  }
  double total = 1.0;
  for (const auto& s : scores) total += s.odds;
  // Each probe that could not run could have held the deciding evidence.
  const double unchecked_factor = std::max(0.8, std::pow(0.97, static_cast<double>(unchecked_count)));
  // Never certain: a report is evidence for a human, and 1.0 would hide that
  // even overwhelming evidence can be misread (e.g. a sympathetic Xid).
  for (auto& s : scores) s.confidence = std::min(0.98, s.odds / total * unchecked_factor);
  std::sort(scores.begin(), scores.end(), [](const CauseScore& a, const CauseScore& b) {
    if (a.confidence != b.confidence) return a.confidence > b.confidence;
    return a.cause < b.cause;
  });
  return scores;
}

namespace {

bool is_problem(const Finding& f) {
  return f.role != FindingRole::context && f.severity >= Severity::warning;
}

double round3(double x) { return std::round(x * 1000.0) / 1000.0; }

std::vector<ChainStep> walk_layers(const EvidenceSet& set, const std::optional<Layer>& verdict_layer,
                                   const CauseScore* best) {
  std::vector<ChainStep> chain;
  std::set<std::string> verdict_findings;
  if (best)
    for (const auto* h : best->support)
      for (const auto& id : h->finding_ids) verdict_findings.insert(id);
  for (Layer layer : kWalkOrder) {
    ChainStep step;
    step.layer = layer;
    size_t problems = 0, cascades = 0;
    for (const auto& f : set.findings) {
      if (f.layer != layer) continue;
      if (!is_problem(f)) continue;
      if (std::find(step.finding_ids.begin(), step.finding_ids.end(), f.id) == step.finding_ids.end())
        step.finding_ids.push_back(f.id);
      if (f.role == FindingRole::cascade) ++cascades;
      else ++problems;
    }
    bool checked = false, unavailable = false;
    for (const auto& e : set.evidence) {
      if (layer_of_evidence_kind(e.kind) != layer) continue;
      if (e.availability.is_ok()) checked = true;
      else unavailable = true;
    }
    const bool has_findings = !step.finding_ids.empty();
    if (verdict_layer && *verdict_layer == layer) {
      step.outcome = StepOutcome::explains;
      step.note = "the verdict's evidence is at this layer";
    } else if (has_findings) {
      step.outcome = StepOutcome::consistent;
      const bool above = verdict_layer && static_cast<int>(layer) < static_cast<int>(*verdict_layer);
      if (cascades > 0 && problems == 0)
        step.note = std::to_string(cascades) + " cascade finding(s): consequences of the first failure";
      else if (above)
        step.note = std::to_string(problems) + " finding(s) here are symptoms of the deeper cause";
      else
        step.note = std::to_string(problems) + " finding(s) here do not change the verdict";
    } else if (checked) {
      step.outcome = StepOutcome::clear;
      step.note = "checked; nothing abnormal";
    } else if (unavailable) {
      step.outcome = StepOutcome::unchecked;
      step.note = "probes of this layer could not run (see unchecked)";
    } else {
      step.outcome = StepOutcome::skipped;
      step.note = "no evidence for this layer in the inputs";
    }
    chain.push_back(std::move(step));
  }
  return chain;
}

}  // namespace

Report decide(const EvidenceSet& set) {
  Report report;
  report.ccdiag_version = version_string();
  report.findings = set.findings;
  report.unchecked = set.unchecked;
  report.inputs = set.inputs;
  report.hosts = set.hosts;

  std::vector<Hypothesis> hyps;
  for (const auto& rule : all_rules()) rule.run(set, hyps);
  const auto scores = score_causes(hyps, set.unchecked.size());

  const bool any_problem = std::any_of(set.findings.begin(), set.findings.end(), is_problem);
  const CauseScore* best = scores.empty() ? nullptr : &scores.front();

  Verdict& v = report.verdict;
  if (best && best->confidence >= kMinConfidence) {
    const CauseInfo* info = find_cause(best->cause);
    v.root_cause = best->cause;
    v.layer = info->layer;
    v.confidence = round3(best->confidence);
    v.culprit = best->culprit;
    std::string why;
    for (const auto* h : best->support)
      if (h->weight > 1.0) {
        why = h->why;
        break;
      }
    v.summary = info->description;
    if (!why.empty()) v.summary += " Evidence: " + why;
    report.next_steps = next_steps_for(*info, v.culprit);
  } else if (best || any_problem) {
    v.root_cause = kInsufficientEvidence;
    v.confidence = best ? round3(best->confidence) : 0.0;
    if (best) v.culprit = best->culprit;
    v.summary = best ? "Problems were found but the evidence does not single out a cause; the leading candidate is " +
                           best->cause + "."
                     : "Problems were found but no rule explains them.";
    report.next_steps.push_back(NextStep{"Collect more evidence: stacks of every rank, flight-recorder dumps, "
                                         "NCCL_DEBUG=INFO logs and bundles from every host",
                                         "ccdiag collect --out /tmp/ccdiag-$(hostname); ccdiag analyze <all bundles>"});
    if (best)
      for (const auto& s : next_steps_for(*find_cause(best->cause), best->culprit)) report.next_steps.push_back(s);
  } else {
    v.root_cause = kNoProblemFound;
    v.confidence = set.unchecked.empty() ? 0.9 : 0.5;
    v.summary = set.unchecked.empty() ? "No problem found in the inputs."
                                      : "No problem found in what could be checked; some probes did not run.";
  }

  for (size_t i = (v.root_cause == kInsufficientEvidence || v.root_cause == kNoProblemFound) ? 0 : 1;
       i < scores.size() && report.alternatives.size() < 5; ++i) {
    std::string why;
    for (const auto* h : scores[i].support)
      if (h->weight > 1.0) {
        why = h->why;
        break;
      }
    report.alternatives.push_back(Alternative{scores[i].cause, round3(scores[i].confidence), why});
  }

  report.chain = walk_layers(set, v.layer, (v.layer ? best : nullptr));
  return report;
}

}  // namespace ccdiag
