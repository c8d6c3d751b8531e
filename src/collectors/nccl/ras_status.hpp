// NCCL RAS status: one model for both reply formats of the RAS client port
// (text and JSON, both written by NCCL's src/ras/client_support.cc), and the
// parsers that fill it.
//
// Parsers are pure and total: any byte string gives a RasStatus; lines that
// match no known form are skipped and counted (`skipped_lines`), and
// `recognised` says whether the input looked like a RAS reply at all.
//
// Text replies group communicators in a table and detail only the ones with
// problems ("#<group>-<index> (<hash>) INCOMPLETE|ERROR|MISMATCH"); outlier
// ranks are listed only when few (non-verbose: <= 10 and <= 25 %), so a text
// reply can name fewer ranks than it counts. JSON replies (NCCL >= 2.28.7)
// list every rank; the parser derives the same problem records from them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ccdiag::nccl {

// Where a rank or process lives, as RAS prints it.
struct RasPlace {
  int64_t pid = -1;
  std::string host;            // IP of the process ("10.0.0.12"), "" when unknown
  std::string gpu;             // "3", "3 (NVML 5)" (text) or cuda_dev (json)
  int cuda_dev = -1, nvml_dev = -1;
};

struct RasProcess {
  RasPlace place;
  std::string gpus;            // "0,1 (NVML 2,3)"
};

struct RasRank {
  int rank = -1;
  RasPlace place;
  bool known = true;           // false: "[process information not found]"
};

struct RasMissingRank {
  RasRank rank;
  bool unresponsive = true;    // the process did not answer the gathering
  bool considered_dead = false;
};

struct RasRankError {
  std::string kind;            // "init" | "async"
  int code = -1;               // ncclResult_t when known (json, or mapped from the text name)
  std::string text;            // RAS's name: "Remote process error", ...
  std::vector<RasRank> ranks;  // ranks listed with this error (may be fewer than `count`)
  int count = 0;               // ranks that reported it
};

struct RasCountGroup {
  int nranks = 0;
  int64_t count = 0;           // launched up to operation N; 0 = not launched any
  std::vector<RasRank> ranks;  // listed members (outliers only)
};

struct RasCountMismatch {
  std::string func;            // "AllReduce"
  std::vector<RasCountGroup> groups;
};

struct RasStatusGroup {
  int nranks = 0;
  std::string status;          // RUNNING, INIT, FINALIZE, ABORT, NOCOMM
  std::vector<RasRank> ranks;
};

// Per-rank data (JSON only).
struct RasRankInfo {
  RasRank rank;
  int init_state = 0, async_error = 0;
  bool finalize_called = false, destroy_flag = false, abort_flag = false;
  std::map<std::string, uint64_t> counts;
};

struct RasComm {
  std::string hash;            // "0x" + 16 lowercase hex digits
  std::string label;           // "#0-0" (text) or "" (json)
  int size = -1;               // nranks (json; text only via its group row)
  int ranks_count = -1, missing_count = -1;  // json
  int missing_reported = 0;    // text: "Missing communicator data from N rank(s)"
  std::vector<RasMissingRank> missing;
  std::vector<RasRankError> errors;
  std::vector<RasCountMismatch> count_mismatches;
  std::vector<RasStatusGroup> status_groups;  // non-empty only on a status mismatch
  std::vector<RasRankInfo> ranks;  // json only
  std::vector<std::string> flags;  // INCOMPLETE, ERROR, MISMATCH seen for this comm
};

struct RasGroupRow {
  int group = 0, comms = 0, nodes_per_comm = 0, ranks_per_comm = 0, ranks_in_group = 0;
  std::string ranks_per_node, status, errors;
};

struct RasStatus {
  std::string format;          // "text" | "json"
  bool recognised = false;     // looked like a RAS reply
  bool complete = false;       // text: reached the Warnings section; json: parsed whole
  std::string nccl_version, cuda_compiled, timestamp;
  int cuda_runtime = -1, cuda_driver = -1;
  int nodes = -1, processes = -1, gpus = -1, processes_per_node = -1, gpus_per_process = -1;
  double collection_time_s = -1;
  int timeouts = 0;
  int missing_processes_count = 0;
  std::vector<RasProcess> missing_processes;
  int dead_processes_count = 0;
  std::vector<RasProcess> dead_processes;
  std::vector<RasGroupRow> groups;
  std::vector<RasComm> comms;  // the ones the reply details (text) or all (json)
  int communicators_count = -1;  // json
  int skipped_lines = 0;
  std::string parse_error;     // json: why it did not parse
  bool repaired = false;       // json: NCCL 2.28.x missing-rank commas were inserted
};

RasStatus parse_ras_text(std::string_view text);
RasStatus parse_ras_json(std::string_view text);
// Picks the parser from the content (a JSON object or the text report).
RasStatus parse_ras_reply(std::string_view text);

// "Remote process error" -> 6 ... (RAS-local names, client_support.cc); -1 unknown.
int ras_error_code(std::string_view text);
std::string ras_error_text(int code);

nlohmann::json to_json(const RasStatus& s);

// "5c1e0c4a9d2f7b31" / "0x5c1e0c4a9d2f7b31" / "0x5c1e..." (unpadded) -> "0x" + 16 hex; "" if not hex.
std::string normalise_comm_hash(std::string_view s);

}  // namespace ccdiag::nccl
