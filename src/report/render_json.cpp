#include "report/render.hpp"

namespace ccdiag {

void render_json(const Report& report, std::ostream& out) {
  nlohmann::json j = report;
  // Log lines may carry invalid UTF-8; replace rather than fail the ticket.
  out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

}  // namespace ccdiag
