// Renderers of the one Report model into a stream passed in (docs/architecture.md).
#pragma once

#include <ostream>

#include "ccdiag/report.hpp"

namespace ccdiag {

struct TextStyle {
  bool color = false;   // ANSI colour: only on a TTY and when NO_COLOR is unset
  bool verbose = false; // every finding instead of the first 20
};

// Headline first: verdict, culprit, confidence, next step; then the walk,
// findings, alternatives, next steps, what could not be checked.
void render_text(const Report& report, std::ostream& out, const TextStyle& style);
// The `--explain` section: every rule hypothesis and the odds arithmetic per cause.
void render_explain_text(const Explain& explain, std::ostream& out, const TextStyle& style);
// The JSON contract (docs/schema/report.schema.json), pretty-printed.
void render_json(const Report& report, std::ostream& out);
// A summary to paste into a ticket.
void render_markdown(const Report& report, std::ostream& out);

// Whether to colour `stream_fd` output: a TTY and NO_COLOR unset.
bool want_color(int stream_fd);

}  // namespace ccdiag
