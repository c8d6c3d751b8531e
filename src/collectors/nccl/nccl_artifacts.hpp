// NCCL artefacts in bundles and the live NCCL collector.
//
// Bundle layout (raw/nccl/):
//   raw/nccl/ras-status.txt | .json    a RAS STATUS reply as received (also any file
//                                      saved from `ncclras` / `ncclras -f json`);
//   raw/nccl/ras-status-N.txt | .json  the replies of further ports the ranks named
//   raw/nccl/fr/<file>.fr              a flight-recorder file copied byte for byte
//   raw/nccl/fr/<file>.fr.b64          the same, base64 (what the live collector
//                                      writes: collector output travels as JSON)
// Any other file under raw/nccl/ is tried as a RAS reply; one that is not a
// RAS report becomes an `unchecked` entry, not an input error.
#pragma once

#include <string>
#include <vector>

#include "ccdiag/evidence_set.hpp"
#include "ccdiag/result.hpp"
#include "collectors/collector.hpp"

namespace ccdiag::nccl {

// The part of one bundle that ingest_nccl_raw reads. Collectors do not
// include bundle/ (docs/architecture.md, "Layer edges"): the pipeline fills
// this from the Bundle it read.
struct NcclRawFiles {
  std::string dir;                     // directory the paths are relative to
  std::string input;                   // the bundle as the user named it (errors, finding sources)
  std::string host;                    // manifest host
  std::string time;                    // manifest time, "YYYY-MM-DDTHH:MM:SSZ"; "" when unknown
  std::vector<std::string> raw_files;  // relative to dir; those under raw/nccl/ are read
};

// Reads every raw/nccl/** file of the bundle into `set`: RAS evidence and
// findings, flight-recorder evidence (kind "nccl.fr") and the cross-rank
// findings of the bundle's flight-recorder files (analysed as of the bundle's
// manifest time). A file that cannot be read is an input error.
Status ingest_nccl_raw(const NcclRawFiles& files, EvidenceSet& set);

// Live: queries RAS ($NCCL_RAS_ADDR; else each NCCL_RAS_ADDR the host's ranks
// name, and localhost:28028 for ranks that name none; 127.0.0.1 and ::1 for
// localhost) within its budget and copies the flight-recorder files of this host
// ($CCDIAG_NCCL_DIR or <root>/dev/shm). "Nothing listening" is an unchecked
// entry, not an error.
CollectorOutput collect_nccl(const CollectContext& ctx);

std::string base64_encode(std::string_view in);
// Total: invalid characters are skipped; returns false if the length is wrong.
bool base64_decode(std::string_view in, std::string& out);

// Parses "YYYY-MM-DDTHH:MM:SS[.fff]Z" (UTC) to ns since the epoch; 0 if not.
uint64_t iso_utc_to_ns(const std::string& iso);

}  // namespace ccdiag::nccl
