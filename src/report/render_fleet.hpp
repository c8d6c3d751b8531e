// Text and Markdown sections that `ccdiag analyze` prints after the verdict:
// hosts that did not answer, hosts that differ, the rank x sequence picture,
// the stack census and the per-host hardware table. Absent data prints "—".
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include "ccdiag/fleet_summary.hpp"

namespace ccdiag {

void render_fleet_text(const FleetSummary& s, std::ostream& out, bool verbose);
void render_fleet_markdown(const FleetSummary& s, std::ostream& out);

// "—" for an unset value.
std::string dash_or(const std::optional<int>& v);
std::string dash_or(const std::optional<int64_t>& v);
std::string dash_or(const std::string& v);
// "79×2, 48×1" or "—".
std::string xid_text(const HostHardware& hw);

}  // namespace ccdiag
