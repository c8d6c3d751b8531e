// The flight-recorder dump model, as the FR readers (collectors/fr/dump.hpp:
// the pickle and JSON decoders) produce it and the cross-rank analysis reads
// it (docs/fr.md): one rank's flight-recorder dump in compact form, decoded
// from a pickle or JSON document into fixed-size records plus small per-rank
// tables, so a 4,096-rank x 2,000-entry job fits in memory: repeated strings
// (profiling names, shapes, dtypes, stacks, process groups) are stored once
// per rank and referenced by index.
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

namespace ccdiag::fr {


enum class FrState : uint8_t { scheduled, started, completed, unknown };
std::string_view to_string(FrState s);

inline constexpr uint32_t kNoIndex = 0xffffffffu;
inline constexpr int64_t kNoTime = -1;

// Shapes of one side (input or output) of an entry: "[[4, 4], [4, 4]]".
struct ShapeInfo {
  std::string text;        // canonical text, for messages and comparison
  uint64_t hash = 0;       // of `text`: compared across ranks
  int64_t first_numel = 0; // numel of the first tensor (0 when none or empty)
  int64_t total_numel = 0; // sum over tensors
  uint32_t count = 0;      // number of tensors
  bool first_empty = true; // first shape is [] or there is none (non-root gather output)
};

struct FrEntry {
  int64_t record_id = 0;
  int64_t collective_seq = 0;
  int64_t p2p_seq = 0;
  int64_t op_id = 0;
  int64_t time_created_ns = kNoTime;
  int64_t time_started_ns = kNoTime;    // time_discovered_started_ns
  int64_t time_completed_ns = kNoTime;  // time_discovered_completed_ns
  float duration_ms = std::numeric_limits<float>::quiet_NaN();
  uint32_t pg = kNoIndex;        // RankDump::pgs
  uint32_t name = kNoIndex;      // RankDump::strings: profiling_name
  uint32_t in_shapes = kNoIndex, out_shapes = kNoIndex;  // RankDump::shapes
  uint32_t in_dtypes = kNoIndex, out_dtypes = kNoIndex;  // RankDump::strings: sorted set, joined by ','
  uint32_t stack = kNoIndex;     // RankDump::stacks
  FrState state = FrState::unknown;
  bool is_p2p = false;
  bool retired = false;
};

struct PgRef {
  std::string name;  // process_group[0]: cross-rank group id ("0" = default)
  std::string desc;  // process_group[1]
  std::string local_id;  // the entries' pg_id (this process's own index of the group; keys pg_status), "" unknown
};

struct PgConfig {
  std::string name;
  std::string desc;
  std::vector<int> ranks;  // global ranks, in group-rank order
  bool ranks_known = false;
};

// pg_status[<pg id>]: the rank's own view of how far each group got.
struct PgStatus {
  int64_t last_enqueued = -1, last_started = -1, last_completed = -1;
};

struct RankDump {
  std::string file;           // as shown to the user
  int rank = -1;              // global rank, from the file name
  std::string host;           // from the file name when it carries one, else empty
  std::string version;        // "2.10"; empty for pre-version dumps
  std::string comm_lib_version;
  std::vector<PgConfig> pg_configs;
  std::vector<PgRef> pgs;
  std::vector<FrEntry> entries;  // in record order (oldest first)
  std::vector<std::string> strings;
  std::vector<ShapeInfo> shapes;
  std::vector<std::string> stacks;  // "name at file:line" lines joined by '\n', innermost first
  bool has_entries_key = true;
  // "gloo", "nccl", ... from the entries' profiling names ("gloo:all_reduce");
  // empty when no entry names one. Decides what `state` can mean.
  std::string backend;
  std::unordered_map<std::string, PgStatus> pg_status;
  // Entries whose state was derived (gloo: completed from pg_status), counted for notes.
  size_t states_derived = 0;

  // Interning helpers used while decoding.
  uint32_t intern_string(std::string_view s);
  uint32_t intern_shape(ShapeInfo s);
  uint32_t intern_stack(std::string s);
  uint32_t intern_pg(std::string_view name, std::string_view desc);

  const std::string& str(uint32_t i) const;  // "" for kNoIndex
  const ShapeInfo& shape(uint32_t i) const;  // empty for kNoIndex

  std::unordered_map<std::string, uint32_t> string_index_, stack_index_, pg_index_;
  std::unordered_map<uint64_t, uint32_t> shape_index_;
};

// True for backends that run on a device and record device-side progress.
bool device_backend(std::string_view backend);

}  // namespace ccdiag::fr
