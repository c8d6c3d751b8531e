// Log facts for the decision tree: the structural facts the tree's
// cross-finding rules need from NCCL / PyTorch / torchrun / nccl-tests logs
// (versions, NCCL_* settings, bootstrap interface, channel edges and their
// transports, peer-access reports, init progress) and mechanism-level
// signals (a /dev/shm segment could not be grown, an ibv_* call failed with
// ENODEV, a collective fingerprint mismatch...).
//
// Pure and total: a line that matches nothing is ignored, a line longer than
// 8 KiB is only scanned in its first 8 KiB, nothing throws. Evidence kinds it
// emits (all with subject host/pid/gpu(=CUDA device index)/rank as logged and
// provenance source+line+excerpt) are documented in docs/decision-tree.md:
//   log.nccl_version {version}          log.nccl_env {name, value}
//   log.bootstrap {ifname, addr}        log.net_plugin {state: none|loaded|failed, name}
//   log.net_ib {devices:[{nic, port, link}]}   log.net_socket {ifname}
//   log.channel_edge {from_rank, from_dev, to_rank, to_dev, transport, direction?, comm?, channels}
//   log.peer_access {from_dev, to_dev, can}    log.init {what}
//   log.warn {text}                     log.facts_summary {lines, nccl_lines, warn_lines}
// Signals become Findings with id "log.<signal>" (role primary / cascade /
// symptom, `supports` likelihood ratios), so they show in the report and vote
// through the finding_support rule.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ccdiag/evidence_set.hpp"

namespace ccdiag {

class LineSieve;
class LiteralDatabase;

// Streaming form: one line at a time (without its newline), then finish().
// Memory is the facts and findings only, never the text.
class LogFactExtractor {
 public:
  // `source` names the file for provenance; `host` is the host the file came
  // from (bundle host) or empty, in which case the NCCL line prefix names it.
  // `set` must outlive the extractor.
  //
  // `sieve_from`: blocks given to lines() of at least this many bytes are
  // first sieved in one scan for the literals some test needs; the lines
  // that hold none (most of a training log) are then only counted and shown
  // to the pasted-block reader. The facts are the same either way; a small
  // block is not worth compiling the sieve for.
  static constexpr size_t kSieveFrom = 64 * 1024;
  LogFactExtractor(const std::string& source, const std::string& host, EvidenceSet& set,
                   size_t sieve_from = kSieveFrom);
  ~LogFactExtractor();
  void line(std::string_view raw);
  // A block of whole lines, each ended by '\n' (a last line may lack one).
  void lines(std::string_view block);
  // The sieve lines() uses (made on first use, once per process); its
  // database is embedded at build time by tools/sigdb.
  static const LineSieve& sieve();
  // Every literal database the log facts use, by name, for embedding at
  // build time (tools/sigdb): the sieve and the gates of the signal and cue
  // tables.
  static std::vector<std::pair<std::string, const LiteralDatabase*>> literal_databases();
  void finish();  // appends log.facts_summary {lines, nccl_lines, warn_lines}

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The whole text at once (tests, stdin, fuzzing).
void extract_log_facts(std::string_view text, const std::string& source, const std::string& host,
                       EvidenceSet& set, size_t sieve_from = LogFactExtractor::kSieveFrom);

}  // namespace ccdiag
