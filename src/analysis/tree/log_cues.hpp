// Generic log cues: what a line says about the failing layer and subsystem
// when no specific signature names its cause. NCCL WARN lines and error
// breadcrumbs carry their source file (transport/net_ib.cc, graph/xml.cc,
// misc/cudawrap.cc, ...), which places the failure in a subsystem; ncclResult
// strings, CUDA error names, errno texts, ibv_wc_status names, PyTorch
// distributed exception classes, nvidia-smi and aws-ofi-nccl messages, and
// pasted diagnostic blocks (ibstat, ulimit -a, df -h /dev/shm, lspci, dmesg)
// do the same. A cue is a layer vote (and, where the corpus shows one cause
// dominates, a modest likelihood ratio); it never claims more than that.
//
// Failure markers are the lines that say something failed at all (NCCL WARN,
// ERROR, Traceback, watchdog timeout, Xid, non-zero exit, "failed"): a log
// with one is never reported healthy (docs/decision-tree.md, verdicts).
//
// Pure and total: any byte string is accepted; nothing throws.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ccdiag/finding.hpp"
#include "ccdiag/layer.hpp"
#include "analysis/tree/line_text.hpp"
#include "analysis/tree/literal_gate.hpp"

namespace ccdiag {

struct LogCue {
  std::string id;         // finding id suffix: "log.cue.<id>"
  Layer layer;
  std::string subsystem;  // "IB verbs transport", "CUDA driver API", ...
  Severity severity;
  FindingRole role;
  std::string summary;
  std::vector<CauseSupport> supports;
};

// Every cue of one line (prefixes already removed or not: cues search anywhere).
std::vector<LogCue> line_cues(const LineText& line);
inline std::vector<LogCue> line_cues(std::string_view line) { return line_cues(LineText(line)); }

// The NCCL source file a WARN line or error breadcrumb names ("transport/net_ib.cc"), if any.
std::optional<std::string> nccl_source_file(std::string_view line);

// Whether the line reports a failure (see above).
bool is_failure_marker(const LineText& line);
inline bool is_failure_marker(std::string_view line) { return is_failure_marker(LineText(line)); }

// Adds to `out` every literal line_cues() needs one of to return a cue, and
// every literal is_failure_marker() needs one of to hold (a line with none of
// them gets neither: log_facts.cpp skips it unread).
void add_cue_literals(LineLiterals& out);
// The literal gate in front of the cue table (its database is embedded at build time by tools/sigdb).
const LiteralGate& cue_gate();

}  // namespace ccdiag
