// Which launch a rank process belongs to, from what every rank of one launch
// shares: the rendezvous address and port and torchelastic's run id (from the
// allowlisted environment that `ranks.process` evidence carries). Ranks of two
// jobs on one host (two small jobs on a shared node, a test harness beside a
// job) are told apart by it.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace ccdiag {

// "addr:port/run_id"; "" when the environment names none of them (or `env` is
// not an object).
std::string rank_job_key(const nlohmann::json& env);

}  // namespace ccdiag
