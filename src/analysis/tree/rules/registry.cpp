#include "analysis/tree/rules/rules.hpp"

namespace ccdiag {

const std::vector<RuleInfo>& all_rules() {
  static const std::vector<RuleInfo> rules = {
      {"finding_support", "primary findings vote for the causes they name", rules::finding_support},
      {"version_skew", "a host with a different NCCL version than the majority", rules::version_skew},
      {"dev_shm_size", "a small /dev/shm supports container_shm_too_small", rules::dev_shm_size},
  };
  return rules;
}

}  // namespace ccdiag
