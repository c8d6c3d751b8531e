#include "ccdiag/utf8.hpp"
#include "report/finding_groups.hpp"
#include "report/render.hpp"

namespace ccdiag {

void render_json(const Report& report, std::ostream& out) {
  nlohmann::json j = report;
  // Every finding stays in `findings`; the groups the text report shows ride
  // along so a ticket tool can show them the same way.
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& g : group_findings(report.findings)) {
    nlohmann::json gj = {{"first", g.first}, {"count", g.members.size()}, {"ranks", compress_ranks(g.ranks)},
                         {"hosts", compress_hosts(g.hosts)}};
    groups.push_back(std::move(gj));
  }
  j["finding_groups"] = std::move(groups);
  // Log lines may carry invalid UTF-8: repaired in one place (ccdiag/utf8.hpp).
  out << json_text(j) << '\n';
}

}  // namespace ccdiag
