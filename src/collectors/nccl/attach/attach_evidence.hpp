// `nccl attach` in collect / diagnose: the live collector (every rank on the
// host with libnccl mapped, read twice) writes one `nccl.attach` evidence item
// per process (data: the ProcessAttach JSON, docs/nccl-attach.md); at diagnose
// time the items of every bundle are joined by commHash and turned into
// nccl.attach.* findings, like the RAS and flight-recorder findings.
#pragma once

#include "ccdiag/evidence_set.hpp"
#include "collectors/collector.hpp"
#include "collectors/nccl/attach/attach_model.hpp"

namespace ccdiag::nccl::attach {

Evidence to_evidence(const ProcessAttach& p);

// Live only: a --root tree has no process memory behind it (skipped, with a reason).
CollectorOutput collect_nccl_attach(const CollectContext& ctx);

// Reads every `nccl.attach` evidence item of `set` (all hosts) and appends
// the cross-rank findings.
void append_attach_findings(EvidenceSet& set);

}  // namespace ccdiag::nccl::attach
