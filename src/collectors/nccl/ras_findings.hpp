// RAS status -> Evidence (kind "nccl.ras") and Findings. Pure.
//
// Findings (ids are stable):
//   nccl.ras.dead_process       a job process RAS considers dead (unreachable >= 60 s)      primary
//   nccl.ras.missing_rank       a rank whose process did not answer (stopped, hung, dying)   primary
//   nccl.ras.rank_without_comm  a process answered but no longer/not yet knows the comm      primary (weak)
//   nccl.ras.init_error         a rank's init failed (ncclResult_t != 0, 7)                   primary
//   nccl.ras.async_error        a rank's async error; "Remote process error" is a cascade
//                               when another rank of the comm has a local error
//   nccl.ras.count_lagging      a rank launched fewer ops of a function than the others      primary
//   nccl.ras.count_ahead        a rank launched more ops than the majority                   symptom
//   nccl.ras.status_mismatch    ranks of a comm disagree on status (init/finalize skew)      symptom
//   nccl.ras.gather_timeout     RAS timed out gathering data (a process is slow to answer)   symptom
// Caveat carried in the summaries: counts are "enqueued", p2p and graph-captured
// collectives are not counted, and one query cannot tell a hang from a
// transient mismatch — only counts that do not move across queries do.
#pragma once

#include <string>
#include <vector>

#include "ccdiag/evidence.hpp"
#include "ccdiag/finding.hpp"
#include "collectors/nccl/ras_status.hpp"

namespace ccdiag::nccl {

struct RasDerived {
  Evidence evidence;
  std::vector<Finding> findings;
};

// `source`: where the reply came from ("127.0.0.1:28028", "node3:raw/nccl/ras.txt").
// `host`: the host the query ran on / bundle host, for the evidence subject.
RasDerived ras_to_evidence(const RasStatus& status, const std::string& source, const std::string& host);

}  // namespace ccdiag::nccl
