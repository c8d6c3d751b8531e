// One rank's flight-recorder dump in compact form (keys and versions: PyTorch's
// torch/csrc/distributed/c10d/FlightRecorderDetail.hpp). Decoded from a pickle
// or JSON document into fixed-size records plus small per-rank tables, so a
// 4,096-rank x 2,000-entry job fits in memory: repeated strings (profiling
// names, shapes, dtypes, stacks, process groups) are stored once per rank and
// referenced by index.
//
// Tolerant by design: versions 2.2-2.10 (and a bare list of entries from
// before versions existed); absent keys take neutral values; seq ids as int or
// string; dtypes as a list or a bare string; process_group as tuple or list;
// time fields None or 0 (both mean "not observed").
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "ccdiag/fr_dump.hpp"
#include "ccdiag/result.hpp"
#include "collectors/fr/pickle_reader.hpp"

namespace ccdiag::fr {

// Version "major.minor" -> {major, minor}; an unparseable string gives nullopt.
std::optional<std::pair<int, int>> parse_version(std::string_view v);

// Backend semantics (docs/fr.md "Backends"): a CPU backend (gloo, and
// anything but nccl/xccl) never records "started" or "completed" — every entry
// stays "scheduled" — so completion is taken from pg_status[pg].
// last_completed_collective (else from `retired`); torch 2.15's gloo recorder
// keys the default group's pg_config '' (name ''), which is the group "0".
// Called by the decoders.
void apply_backend_semantics(RankDump& d);

// Decoders. `file` names the input in errors. The rank comes from the file
// name (see loader.hpp) and is set by the caller.
Result<RankDump> decode_pickle_dump(const PickleDoc& doc, const std::string& file);
Result<RankDump> decode_json_dump(const nlohmann::json& doc, const std::string& file);

// Bytes -> dump: JSON when the first non-blank byte is '{', else pickle.
// `scratch`, when given, is the parse buffer to reuse (one per loader thread).
Result<RankDump> decode_dump_bytes(std::string_view bytes, const std::string& file, PickleDoc* scratch = nullptr);

}  // namespace ccdiag::fr
