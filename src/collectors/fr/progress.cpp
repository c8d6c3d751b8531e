#include "collectors/fr/progress.hpp"

#include <algorithm>
#include <map>

namespace ccdiag::fr {
namespace {

struct Reach {
  int64_t enqueued = -1, started = -1, completed = -1;
  const FrEntry* last = nullptr;  // the entry with the highest seq
};

}  // namespace

std::vector<Evidence> rank_progress(const RankDump& dump) {
  // Collectives only: p2p sequence numbers count separately and are not a
  // position in the group's collective order.
  std::map<uint32_t, Reach> by_pg;
  for (const auto& e : dump.entries) {
    if (e.is_p2p || e.pg >= dump.pgs.size()) continue;
    Reach& r = by_pg[e.pg];
    if (e.collective_seq > r.enqueued) r.enqueued = e.collective_seq, r.last = &e;
    // Backends that record no device progress have their states set from
    // pg_status by the decoder (apply_backend_semantics).
    if (e.state == FrState::started || e.state == FrState::completed) r.started = std::max(r.started, e.collective_seq);
    if (e.state == FrState::completed) r.completed = std::max(r.completed, e.collective_seq);
  }
  std::vector<Evidence> out;
  for (const auto& [pg, r] : by_pg) {
    const PgRef& ref = dump.pgs[pg];
    Reach reach = r;
    // pg_status is the rank's own counter: it survives the ring buffer's wrap.
    if (auto it = dump.pg_status.find(ref.local_id); !ref.local_id.empty() && it != dump.pg_status.end()) {
      reach.enqueued = std::max(reach.enqueued, it->second.last_enqueued);
      reach.started = std::max(reach.started, it->second.last_started);
      reach.completed = std::max(reach.completed, it->second.last_completed);
    }
    Evidence ev;
    ev.kind = "fr.rank_progress";
    ev.subject.rank = dump.rank;
    ev.subject.process_group = ref.name;
    if (!dump.host.empty()) ev.subject.host = dump.host;
    ev.provenance.source = dump.file;
    auto seq = [](int64_t v) { return v >= 0 ? nlohmann::json(v) : nlohmann::json(); };
    ev.data = {{"rank", dump.rank},
               {"process_group", ref.name},
               {"pg_desc", ref.desc},
               {"last_enqueued_seq", seq(reach.enqueued)},
               {"last_started_seq", seq(reach.started)},
               {"last_completed_seq", seq(reach.completed)},
               {"backend", dump.backend}};
    for (const auto& c : dump.pg_configs)
      if (c.name == ref.name && c.ranks_known) {
        ev.data["group_size"] = c.ranks.size();
        ev.data["members"] = c.ranks;
      }
    if (r.last) {
      if (r.last->name < dump.strings.size()) ev.data["op"] = dump.strings[r.last->name];
      ev.data["state"] = std::string(to_string(r.last->state));
    }
    out.push_back(std::move(ev));
  }
  return out;
}

}  // namespace ccdiag::fr
