#include "ccdiag/rank_job.hpp"

namespace ccdiag {

std::string rank_job_key(const nlohmann::json& env) {
  if (!env.is_object()) return "";
  auto get = [&](const char* k) { return env.contains(k) && env[k].is_string() ? env[k].get<std::string>() : ""; };
  const std::string addr = get("MASTER_ADDR"), port = get("MASTER_PORT"), run = get("TORCHELASTIC_RUN_ID");
  if (addr.empty() && port.empty() && run.empty()) return "";
  return addr + ":" + port + "/" + run;
}

}  // namespace ccdiag
