#include "report/render.hpp"
#include "report/utf8.hpp"

namespace ccdiag {

void render_json(const Report& report, std::ostream& out) {
  // Log lines may carry invalid UTF-8: repaired in one place (report/utf8.hpp).
  out << json_text(report) << '\n';
}

}  // namespace ccdiag
