// Flight-recorder analysis -> ccdiag Findings for the decision tree
// (ids "fr.<kind>", layer framework). Each finding names the catalogue causes
// it supports with likelihood ratios:
//   missing_ranks, never called and the rank kept issuing other work -> rank_skips_collective
//   missing_ranks, never called and the rank stopped issuing           -> rank_stuck_in_host_code / rank_skips_collective
//   missing_ranks, not yet arrived (blocked elsewhere, not explained)  -> straggler_or_timeout_too_short (weak)
//   type/size/dtype_mismatch                                           -> mismatched_collectives
//   hang_no_completion  -> weak support spread over the layers below (nccl_bug, gpu_hung_kernel,
//                          transport and NVLink causes) and evidence against the framework causes
//   slow_rank           -> straggler_or_timeout_too_short
//   no_dump             -> rank_process_died (weak)
// Cascades (caused_by set) carry no support: they are consequences.
#pragma once

#include <vector>

#include "analysis/cross_rank/fr_analysis.hpp"
#include "ccdiag/finding.hpp"

namespace ccdiag::fr {

std::vector<Finding> to_findings(const FrAnalysis& a, const std::vector<RankDump>& dumps);

// The `fr --json` form of one finding: the Finding fields plus kind,
// process_group, seq, seq_kind, ranks, op, call_site.
nlohmann::json fr_finding_json(const FrFinding& f, const Finding& generic);

}  // namespace ccdiag::fr
