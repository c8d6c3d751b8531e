// Finding and loading flight-recorder dump files (reference §1.2, §2.5).
//
// Naming: PyTorch writes "<prefix><global rank>" with any prefix
// (nccl_trace_rank_17, comm_lib_trace_rank_17, a user's TORCH_FR_DUMP_TEMP_FILE),
// and users put host names inside ("nccl_trace_rank_node02_5",
// "node02.pci3_rank_5"). The rank is the trailing integer of the base name
// (after dropping a .pkl/.pickle/.json extension); the host is what differs
// between names once the common parts are removed. With --prefix only names
// starting with it are read. A directory is walked recursively (hidden files,
// FIFOs like "<prefix><rank>.pipe" and other non-regular files are skipped).
//
// Loading maps each regular file read-only (at most kMaxDumpBytes; read()
// where mmap is refused; FIFOs and devices are refused unread) and decodes it
// on a pool of threads, each reusing one parse buffer; only the compact
// RankDump stays in memory. Bad files do not stop the others: they come back
// as errors naming the file.
#pragma once

#include <string>
#include <vector>

#include "ccdiag/result.hpp"
#include "collectors/fr/dump.hpp"

namespace ccdiag::fr {

inline constexpr size_t kMaxDumpBytes = size_t{2} << 30;  // 2 GiB: a 2,000-entry dump is ~300 KB

struct DumpFile {
  std::string path;   // to open
  std::string shown;  // in messages and provenance
  int rank = -1;
  std::string host;
};

struct LoadOptions {
  std::string prefix;   // only base names starting with it; empty = any
  unsigned threads = 0; // 0 = hardware concurrency (at least 1)
};

// Expands directories, filters by prefix, derives rank and host from names.
// An argument that does not exist, or a named file without a rank in its
// name, is an error. Two files for one rank: a pickle and its ".json" twin
// keep the pickle; anything else is an error (two jobs or dump rounds mixed).
Result<std::vector<DumpFile>> discover_dumps(const std::vector<std::string>& args, const LoadOptions& opts);

// Rank and host from one base name, given the common stem parts (exposed for tests).
std::optional<int> rank_from_name(std::string_view base_name);

struct LoadResult {
  std::vector<RankDump> dumps;  // sorted by rank
  std::vector<Error> bad;       // one per file that could not be read or decoded
};

LoadResult load_dumps(const std::vector<DumpFile>& files, const LoadOptions& opts);

// Reads and decodes one file (bounded size).
Result<RankDump> load_dump_file(const DumpFile& f);

}  // namespace ccdiag::fr
