// Tells apart, in the rank x sequence picture, a rank nobody reported ("no
// data": its host's bundle is absent or unreadable) from one its peers saw
// never arrive. A picture row with no record of its own becomes never_joined
// when a finding names that rank as absent:
//   - a flight-recorder finding whose fields.missing lists it as never_called
//     (in that finding's process group);
//   - a PyTorch desync report naming it among the ranks that never joined;
//   - the decision tree's store key never set, or torchrun's rank that left
//     early (the finding's subject rank).
// Pure; runs after the decision tree, before the report is rendered.
#pragma once

#include <vector>

#include "ccdiag/finding.hpp"
#include "ccdiag/fleet_summary.hpp"

namespace ccdiag {

void mark_never_joined(FleetSummary& summary, const std::vector<Finding>& findings);

}  // namespace ccdiag
