// The rules of the decision tree. Each reads the EvidenceSet and appends
// hypotheses; none does I/O. Register a new rule in registry.cpp. The
// evidence kinds and data fields each rule reads are listed in
// docs/decision-tree.md.
#pragma once

#include <optional>
#include <string>

#include "analysis/tree/hypothesis.hpp"

namespace ccdiag::rules {

void finding_support(const EvidenceSet& set, std::vector<Hypothesis>& out);
void skew_audit(const EvidenceSet& set, std::vector<Hypothesis>& out);
void dev_shm_size(const EvidenceSet& set, std::vector<Hypothesis>& out);
void watchdog_without_error(const EvidenceSet& set, std::vector<Hypothesis>& out);
void watchdog_disagreement(const EvidenceSet& set, std::vector<Hypothesis>& out);
void coll_disagreement(const EvidenceSet& set, std::vector<Hypothesis>& out);
void fingerprint_odd_rank(const EvidenceSet& set, std::vector<Hypothesis>& out);
void store_key_never_set(const EvidenceSet& set, std::vector<Hypothesis>& out);
void store_clients_missing(const EvidenceSet& set, std::vector<Hypothesis>& out);
void store_target_local(const EvidenceSet& set, std::vector<Hypothesis>& out);
void socket_ifname(const EvidenceSet& set, std::vector<Hypothesis>& out);
void cross_host_p2p(const EvidenceSet& set, std::vector<Hypothesis>& out);
void one_name_two_addresses(const EvidenceSet& set, std::vector<Hypothesis>& out);
void net_without_gdr(const EvidenceSet& set, std::vector<Hypothesis>& out);
void p2p_silent_hang(const EvidenceSet& set, std::vector<Hypothesis>& out);
void selected_hca(const EvidenceSet& set, std::vector<Hypothesis>& out);
void rdma_state(const EvidenceSet& set, std::vector<Hypothesis>& out);
void pcie_state(const EvidenceSet& set, std::vector<Hypothesis>& out);
void host_config(const EvidenceSet& set, std::vector<Hypothesis>& out);
void rank_census(const EvidenceSet& set, std::vector<Hypothesis>& out);
void flight_recorder(const EvidenceSet& set, std::vector<Hypothesis>& out);

// Shared helpers (rules/helpers.cpp).
// A finding that counts as a problem that could explain the incident by
// itself: primary, warning or worse, with at least one supported cause.
bool is_causal_finding(const Finding& f);
// Evidence data accessors that never throw on a wrong type.
std::optional<std::string> str_field(const nlohmann::json& data, const char* key);
std::optional<int64_t> int_field(const nlohmann::json& data, const char* key);
std::optional<bool> bool_field(const nlohmann::json& data, const char* key);
// Subject's host, or "this host" for messages.
std::string host_name(const Subject& s);
Finding derived_finding(std::string id, Layer layer, Severity sev, std::string summary, const Subject& subject,
                        const std::vector<const Evidence*>& from);

}  // namespace ccdiag::rules
