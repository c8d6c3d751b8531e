// The single-file HTML report of `ccdiag analyze --html FILE`
// (reference: perf-and-fleet.md §9): one file with no external reference —
// inline <style>, inline <svg> for the rank x sequence picture, native
// tooltips through SVG <title>, <details> for long tables, and no script at
// all, so it reads the same in a mail client or a ticket system. A
// Content-Security-Policy meta tag comes first in <head>, so an accidental
// external fetch is blocked and logged by the browser. The machine-readable
// record rides along as a non-executed <script type="application/json"> data
// block (every <, > and & escaped as \\u00XX). Every value from a host is HTML-escaped. Output is
// deterministic for the same inputs.
#pragma once

#include <ostream>
#include <string>
#include <string_view>

#include "ccdiag/fleet_summary.hpp"
#include "ccdiag/report.hpp"

namespace ccdiag {

void render_html(const Report& report, const FleetSummary& fleet, std::ostream& out);

// Pieces shared by every ccdiag HTML page (analyze, perf): the doctype, the
// CSP meta tag first in <head>, the title and the stylesheet, up to <body>;
// the report's verdict box; the "could not be checked" list.
void html_head(std::string_view title, std::ostream& out);
void html_verdict_section(const Report& report, std::ostream& out);
void html_unchecked_section(const Report& report, std::ostream& out);

// & < > " ' escaped for HTML text and attribute values.
std::string html_escape(std::string_view s);
// JSON text safe inside a <script type="application/json"> element.
std::string json_for_script(const std::string& json_text);

}  // namespace ccdiag
