#include "collectors/host/firewall.hpp"

#include <chrono>
#include <ctime>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "collectors/host/host_collectors.hpp"
#include "sys/child_process.hpp"

namespace ccdiag {

namespace {

// What one match does to our packet: a new TCP connection from a remote peer,
// on some non-loopback interface, to every port of the ephemeral range.
enum class Match { yes, no, unknown };

Match port_match(const nlohmann::json& right, int lo, int hi) {
  // The rule must cover the whole range: NCCL listens on any port of it.
  auto covers = [&](int a, int b) { return a <= lo && b >= hi; };
  if (right.is_number_integer()) return Match::no;  // one port (22, 29500): not the range
  if (right.is_object() && right.contains("range") && right["range"].is_array() && right["range"].size() == 2 &&
      right["range"][0].is_number() && right["range"][1].is_number())
    return covers(right["range"][0].get<int>(), right["range"][1].get<int>()) ? Match::yes : Match::no;
  if (right.is_object() && right.contains("set") && right["set"].is_array()) {
    for (const auto& el : right["set"]) {
      if (el.is_object() && el.contains("range") && el["range"].is_array() && el["range"].size() == 2 &&
          el["range"][0].is_number() && el["range"][1].is_number() &&
          covers(el["range"][0].get<int>(), el["range"][1].get<int>()))
        return Match::yes;
    }
    return Match::no;
  }
  return Match::unknown;
}

Match nft_match(const nlohmann::json& m, int lo, int hi) {
  const auto& left = m.value("left", nlohmann::json());
  const auto& right = m.value("right", nlohmann::json());
  const std::string op = m.value("op", "==");
  if (left.is_object() && left.contains("payload")) {
    const auto& p = left["payload"];
    const std::string proto = p.value("protocol", ""), field = p.value("field", "");
    if (proto == "tcp" && field == "dport") {
      if (op != "==" && op != "in") return Match::unknown;
      return port_match(right, lo, hi);
    }
    if (proto == "udp" || proto == "icmp" || proto == "icmpv6" || proto == "sctp") return Match::no;
    if ((proto == "ip" || proto == "ip6") && (field == "saddr" || field == "daddr")) return Match::yes;  // cluster peers
    if (proto == "ip" && field == "protocol") return right == "tcp" ? Match::yes : Match::no;
    return Match::unknown;
  }
  if (left.is_object() && left.contains("meta")) {
    const std::string key = left["meta"].value("key", "");
    if (key == "iifname" || key == "iif") {
      const bool lo_only = right == "lo";
      if (op == "!=") return lo_only ? Match::yes : Match::unknown;
      return lo_only ? Match::no : Match::yes;  // a named NIC: NCCL may well use it
    }
    if (key == "l4proto" || key == "protocol") {
      if (right == "tcp") return op == "!=" ? Match::no : Match::yes;
      if (right.is_string()) return op == "!=" ? Match::yes : Match::no;
      return Match::unknown;
    }
    if (key == "nfproto") return Match::yes;
    return Match::unknown;
  }
  if (left.is_object() && left.contains("ct")) {
    if (left["ct"].value("key", "") != "state") return Match::unknown;
    auto has_new = [](const nlohmann::json& r) {
      if (r.is_string()) return r == "new";
      if (r.is_object() && r.contains("set"))
        for (const auto& s : r["set"])
          if (s == "new") return true;
      if (r.is_array())
        for (const auto& s : r)
          if (s == "new") return true;
      return false;
    };
    const bool n = has_new(right);
    return (op == "!=" ? !n : n) ? Match::yes : Match::no;
  }
  return Match::unknown;
}

struct Walk {
  std::optional<bool> allows;  // decided
  std::string why;
};

// One base chain, rule by rule; nullopt allows = could not tell.
Walk walk_nft_chain(const std::vector<const nlohmann::json*>& rules, const std::string& policy, int lo, int hi) {
  for (const auto* r : rules) {
    const auto& expr = r->value("expr", nlohmann::json::array());
    Match m = Match::yes;
    std::string verdict;
    for (const auto& e : expr) {
      if (e.contains("match")) {
        const Match one = nft_match(e["match"], lo, hi);
        if (one == Match::no) m = Match::no;
        else if (one == Match::unknown && m == Match::yes) m = Match::unknown;
      } else if (e.contains("accept")) verdict = "accept";
      else if (e.contains("drop")) verdict = "drop";
      else if (e.contains("reject")) verdict = "reject";
      else if (e.contains("jump") || e.contains("goto")) verdict = "jump";
      else if (e.contains("return")) verdict = "return";
    }
    if (m == Match::no || verdict.empty() || verdict == "return") continue;
    const std::string handle = r->contains("handle") ? " (handle " + (*r)["handle"].dump() + ")" : "";
    if (m == Match::unknown || verdict == "jump")
      return Walk{std::nullopt, "a rule the check cannot judge" + handle};
    return Walk{verdict == "accept", verdict + " rule" + handle};
  }
  if (policy.empty()) return Walk{true, "no policy: accept"};
  return Walk{policy == "accept", "chain policy " + policy};
}

// iptables-save: "-A INPUT -p tcp -m tcp --dport 32768:60999 -j ACCEPT".
Match ipt_rule_match(const std::vector<std::string>& w, int lo, int hi, std::string& target) {
  Match m = Match::yes;
  auto weaker = [&](Match one) {
    if (one == Match::no) m = Match::no;
    else if (one == Match::unknown && m == Match::yes) m = Match::unknown;
  };
  bool tcp = true;
  for (size_t i = 2; i < w.size(); ++i) {
    const std::string& t = w[i];
    const std::string next = i + 1 < w.size() ? w[i + 1] : "";
    if (t == "-j" || t == "-g") {
      target = next;
      break;  // what follows belongs to the target (--reject-with ...)
    } else if (t == "-p") {
      tcp = next == "tcp" || next == "6";
      if (!tcp) weaker(Match::no);
      ++i;
    } else if (t == "-i") {
      weaker(next == "lo" ? Match::no : Match::yes);
      ++i;
    } else if (t == "-s" || t == "-d" || t == "-m" || t == "--comment") {
      ++i;
    } else if (t == "--state" || t == "--ctstate") {
      std::string s = next;
      weaker(s.find("NEW") != std::string::npos ? Match::yes : Match::no);
      ++i;
    } else if (t == "--dport" || t == "--destination-port" || t == "--dports") {
      bool covered = false;
      std::stringstream ss(next);
      for (std::string part; std::getline(ss, part, ',');) {
        const size_t colon = part.find(':');
        try {
          const int a = colon == std::string::npos ? std::stoi(part) : (colon == 0 ? 0 : std::stoi(part.substr(0, colon)));
          const int b = colon == std::string::npos ? a : (colon + 1 == part.size() ? 65535 : std::stoi(part.substr(colon + 1)));
          if (a <= lo && b >= hi) covered = true;
        } catch (...) {
          weaker(Match::unknown);
        }
      }
      weaker(covered ? Match::yes : Match::no);
      ++i;
    } else if (t == "!") {
      weaker(Match::unknown);  // negations: not judged
    } else if (t.rfind("--", 0) == 0) {
      weaker(Match::unknown);  // a match option we do not model
      if (!next.empty() && next[0] != '-') ++i;
    }
  }
  return m;
}

}  // namespace

FirewallJudgement judge_nft_json(std::string_view json_text, int lo, int hi) {
  FirewallJudgement j;
  auto doc = nlohmann::json::parse(json_text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("nftables") || !doc["nftables"].is_array()) {
    j.why = "not nft -j output";
    return j;
  }
  // Base chains on the input hook, and their rules in order.
  struct Chain {
    std::string family, table, name, policy;
    std::vector<const nlohmann::json*> rules;
  };
  std::vector<Chain> chains;
  for (const auto& item : doc["nftables"]) {
    if (!item.is_object() || !item.contains("chain")) continue;
    const auto& c = item["chain"];
    if (c.value("hook", "") != "input" || c.value("type", "filter") != "filter") continue;
    const std::string fam = c.value("family", "");
    if (fam != "ip" && fam != "ip6" && fam != "inet") continue;
    chains.push_back(Chain{fam, c.value("table", ""), c.value("name", ""), c.value("policy", "accept"), {}});
  }
  for (const auto& item : doc["nftables"]) {
    if (!item.is_object() || !item.contains("rule")) continue;
    const auto& r = item["rule"];
    for (auto& c : chains)
      if (r.value("family", "") == c.family && r.value("table", "") == c.table && r.value("chain", "") == c.name)
        c.rules.push_back(&r);
  }
  if (chains.empty()) {
    j.input_policy = "accept";
    j.allows = true;
    j.why = "no input chain";
    return j;
  }
  // A packet must pass every input base chain (IPv4: ip and inet tables).
  j.allows = true;
  j.input_policy = "accept";
  for (const auto& c : chains) {
    if (c.family == "ip6") continue;  // NCCL bootstrap and sockets over IPv4 in practice
    if (c.policy != "accept") j.input_policy = c.policy;
    const Walk w = walk_nft_chain(c.rules, c.policy, lo, hi);
    const std::string where = c.family + " " + c.table + " " + c.name + ": " + w.why;
    if (!w.allows) {
      j.allows.reset();
      j.why = where;
      return j;
    }
    if (!*w.allows) {
      j.allows = false;
      j.why = where;
      return j;
    }
    j.why = where;
  }
  return j;
}

FirewallJudgement judge_iptables_save(std::string_view text, int lo, int hi) {
  FirewallJudgement j;
  std::string table, policy = "ACCEPT";
  std::vector<std::vector<std::string>> input_rules;
  bool seen_filter = false;
  std::stringstream ss{std::string(text)};
  for (std::string line; std::getline(ss, line);) {
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '*') {
      table = line.substr(1);
      seen_filter = seen_filter || table == "filter";
      continue;
    }
    if (table != "filter") continue;
    std::stringstream ls(line);
    std::vector<std::string> w;
    for (std::string t; ls >> t;) w.push_back(t);
    if (w.size() >= 2 && w[0] == ":INPUT") policy = w[1];
    if (w.size() >= 2 && w[0] == "-A" && w[1] == "INPUT") input_rules.push_back(w);
  }
  if (!seen_filter) {
    j.input_policy = "accept";
    j.allows = true;
    j.why = "no filter table";
    return j;
  }
  j.input_policy = policy == "ACCEPT" ? "accept" : "drop";
  for (size_t n = 0; n < input_rules.size(); ++n) {
    std::string target;
    const Match m = ipt_rule_match(input_rules[n], lo, hi, target);
    if (m == Match::no || target.empty() || target == "LOG" || target == "RETURN") continue;
    const std::string where = "INPUT rule " + std::to_string(n + 1) + " (-j " + target + ")";
    if (m == Match::unknown || (target != "ACCEPT" && target != "DROP" && target != "REJECT")) {
      j.why = "a rule the check cannot judge: " + where;
      return j;
    }
    j.allows = target == "ACCEPT";
    j.why = where;
    return j;
  }
  j.allows = policy == "ACCEPT";
  j.why = "chain policy " + policy;
  return j;
}

CollectorOutput collect_firewall(const CollectContext& ctx) {
  CollectorOutput out;
  Evidence e = host_evidence(ctx, "host.firewall", "nft / iptables-save");
  int lo = 32768, hi = 60999;  // Linux's default ip_local_port_range
  if (auto r = ctx.root.read_line("/proc/sys/net/ipv4/ip_local_port_range")) {
    std::stringstream ss(*r);
    int a = 0, b = 0;
    if (ss >> a >> b && a > 0 && b >= a) lo = a, hi = b;
  }
  // The ruleset as `nft -j list ruleset` / `iptables-save` print it.
  std::string text, source;
  bool nft_format = true;
  auto run = [&](std::vector<std::string> argv) -> bool {
    if (!program_exists(argv[0])) return false;
    std::string got;
    ChildSpec spec;
    spec.argv = std::move(argv);
    spec.deadline = std::chrono::milliseconds(1500);
    spec.kill_grace = std::chrono::milliseconds(200);
    auto r = run_child(spec, [&](std::string_view l) { got.append(l).push_back('\n'); }, [](std::string_view) {});
    if (!r || r->exit_code != 0 || got.empty()) return false;
    text = std::move(got);
    return true;
  };
  if (!ctx.root.is_live()) {
    if (auto t = ctx.root.read_file("/nft-ruleset.json", 8 << 20)) text = *t, source = "nft-ruleset.json";
    else if (auto t2 = ctx.root.read_file("/iptables-save.txt", 8 << 20))
      text = *t2, source = "iptables-save.txt", nft_format = false;
  } else if (run({"nft", "-j", "list", "ruleset"})) {
    source = "nft -j list ruleset";
  } else if (run({"iptables-save"})) {
    source = "iptables-save";
    nft_format = false;
  }
  e.provenance.source = source.empty() ? "nft / iptables-save" : source;
  if (text.empty()) {
    e.availability = Availability::unavailable(ctx.root.is_live() ? "neither nft nor iptables-save could list the rules"
                                                                   : "no nft-ruleset.json or iptables-save.txt in the tree");
    out.evidence.push_back(std::move(e));
    return out;
  }
  const FirewallJudgement j = nft_format ? judge_nft_json(text, lo, hi) : judge_iptables_save(text, lo, hi);
  e.data = {{"input_policy", j.input_policy}, {"why", j.why},
            {"ephemeral_range", std::to_string(lo) + "-" + std::to_string(hi)}, {"source", source}};
  if (j.allows) e.data["allows_ephemeral"] = *j.allows;
  e.provenance.excerpt = j.why;
  out.evidence.push_back(std::move(e));
  return out;
}

}  // namespace ccdiag
