// Rule: a small /dev/shm (the container runtime's 64 MB default) supports
// container_shm_too_small. Alone it is weak (a job on one GPU per host needs
// no SHM transport); with NCCL's "failed to extend /dev/shm" it is decisive
// through that finding.
#include "analysis/tree/rules/rules.hpp"

namespace ccdiag::rules {

void dev_shm_size(const EvidenceSet& set, std::vector<Hypothesis>& out) {
  constexpr int64_t kSmall = 512LL << 20;  // NCCL needs ~10 MB per peer pair and channel set
  for (const auto* e : set.of_kind("host.dev_shm")) {
    if (!e->availability.is_ok()) continue;
    const auto it = e->data.find("size_bytes");
    if (it == e->data.end() || !it->is_number_integer()) continue;
    const int64_t size = it->get<int64_t>();
    Hypothesis h;
    h.cause = "container_shm_too_small";
    h.culprit.host = e->subject.host;
    h.evidence_key = "dev_shm_size";
    h.finding_ids = {"host.dev_shm"};
    if (size < kSmall) {
      h.weight = 4.0;
      h.why = "/dev/shm on " + e->subject.host.value_or("this host") + " is only " +
              std::to_string(size >> 20) + " MiB";
    } else {
      h.weight = 0.2;  // a large /dev/shm argues against it
      h.why = "/dev/shm is " + std::to_string(size >> 20) + " MiB";
    }
    out.push_back(std::move(h));
  }
}

}  // namespace ccdiag::rules
