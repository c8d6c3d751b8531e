// Log signatures: the data that turns one log line into a Finding.
//
// A signature is pure data (id, layer, severity, role, pattern, summary
// template, cause supports). The built-in catalogue ships inside the binary
// (signature_catalogue.cpp); users extend it with `ccdiag logs --signatures
// FILE` (JSON, format in docs/logs.md). IDs are stable: the decision tree's
// rules and scenarios key on them.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ccdiag/finding.hpp"
#include "ccdiag/layer.hpp"
#include "ccdiag/result.hpp"

namespace ccdiag::logs {

struct Signature {
  std::string id;                     // dotted, stable: "nccl.ib.completion_error.retry_exceeded"
  Layer layer = Layer::nccl;
  Severity severity = Severity::info;
  FindingRole role = FindingRole::context;
  // RE2 syntax, searched anywhere in the line (after ANSI colour is removed).
  // Named groups (?P<name>...) become Finding::fields; the names rank, pid,
  // host, gpu/pci, nic, port, seq, pg also fill the Finding's subject.
  std::string pattern;
  std::string summary;                // template: "{status} from {peer}"; unknown names render empty
  std::vector<CauseSupport> supports; // likelihood ratios for root-cause catalogue IDs
  std::string meaning;                // one line: what the line means and what to check
  // A generic signature that yields to a more specific one matching the same
  // line (e.g. "ibv_modify_qp failed" vs "ibv_modify_qp failed: No such device").
  bool fallback = false;
  // The rank that logs the line is waiting for another one (a collective
  // timeout): it is a victim, so it is never the culprit of the causes the
  // line supports. The finding carries fields.reporter_waits = true.
  bool reporter_waits = false;
  // Non-empty: fields come from a dedicated parser instead of the pattern's
  // groups ("xid" = parse_xid_line + the Xid catalogue, "fell_off_bus").
  std::string extractor;
};

// The built-in catalogue (≥ 80 signatures), in a fixed order.
const std::vector<Signature>& builtin_signatures();

// JSON form used by --list-signatures --json and by --signatures files.
nlohmann::json to_json(const Signature& s);
// Parses one user signature; the error names the offending key.
Result<Signature> signature_from_json(const nlohmann::json& j);
// Reads a --signatures file: a JSON array of signatures, or {"signatures": [...]}.
// Every pattern is compiled here, so a bad pattern is an input error (exit 2).
Result<std::vector<Signature>> load_signature_file(const std::string& path);
// Checks that the pattern compiles under RE2; the error is RE2's message.
Status validate_pattern(const std::string& pattern);

}  // namespace ccdiag::logs
