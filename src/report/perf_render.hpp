// The file outputs of `ccdiag perf` (docs/perf.md "Metrics and HTML"):
// Prometheus textfile metrics of the judged runs (the rules and writer of
// report/prom_text.hpp, shared with `ccdiag prom`) and a self-contained HTML
// page with one busbw-vs-size chart per run (the page conventions of
// report/html.hpp). Pure: both build text; cli/perf.cpp writes the files
// atomically.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "ccdiag/perf_summary.hpp"
#include "ccdiag/report.hpp"

namespace ccdiag {

// Bandwidths in bytes per second, times in seconds. A run's metric whose
// evidence is absent (no bundle: no expected value; `-c 0`: no #wrong) is not
// written: absent is not zero.
std::string render_perf_prom(const std::vector<perf::RunSummary>& runs, double run_timestamp_s);

// Per run: the verdict text and an inline SVG chart (log2 size axis) of
// bandwidth per size, the expected plateau as a horizontal line and the
// measured plateau marked; every point carries an SVG <title> tooltip.
void render_perf_html(const std::vector<perf::RunSummary>& runs, const Report& report, std::ostream& out);

}  // namespace ccdiag
