#include "analysis/census/census.hpp"

#include <algorithm>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "analysis/parallel/dims.hpp"
#include "ccdiag/rank_job.hpp"
#include "ccdiag/thread_roles.hpp"

namespace ccdiag {

namespace {

const ThreadStack* main_thread(const ProcessStacks& p) {
  const ThreadStack* m = nullptr;
  for (const auto& t : p.threads)
    if (t.tid == p.pid) m = &t;
  if (!m || m->state == "Z")
    for (const auto& t : p.threads)
      if (t.state != "Z") return &t;
  return m;
}

std::string member_name(const CensusMember& m) {
  std::string s = m.rank ? fmt::format("rank {}", *m.rank) : fmt::format("pid {}", m.pid);
  if (m.host) s += " on " + *m.host;
  return s;
}

std::string members_list(const std::vector<CensusMember>& ms) {
  std::vector<std::string> names;
  for (const auto& m : ms) names.push_back(m.rank ? std::to_string(*m.rank) : "pid " + std::to_string(m.pid));
  std::string s;
  for (size_t i = 0; i < names.size() && i < 16; ++i) s += (i ? "," : "") + names[i];
  if (names.size() > 16) s += fmt::format(",... (+{})", names.size() - 16);
  return s;
}

// Where two signatures ("inner < ... < outer") part: both stacks share their
// outer frames (main, the training loop); the first frame from the outside
// that differs is where the odd rank went elsewhere. Returns {odd, majority},
// empty when one is a prefix of the other.
std::pair<std::string, std::string> first_difference(const std::string& odd, const std::string& major) {
  auto split = [](const std::string& sig) {
    std::vector<std::string> v;
    size_t b = 0;
    while (b <= sig.size()) {
      size_t e = sig.find(" < ", b);
      if (e == std::string::npos) e = sig.size();
      v.push_back(sig.substr(b, e - b));
      b = e + 3;
    }
    std::reverse(v.begin(), v.end());  // outermost first
    return v;
  };
  const auto a = split(odd), b = split(major);
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    if (a[i] != b[i]) return {a[i], b[i]};
  if (a.size() != b.size()) return {a.size() > b.size() ? a[b.size()] : "", b.size() > a.size() ? b[a.size()] : ""};
  return {};
}

std::string ranks_text(const std::vector<int>& r) {
  std::string s;
  for (size_t i = 0; i < r.size() && i < 16; ++i) s += (i ? "," : "") + std::to_string(r[i]);
  if (r.size() > 16) s += fmt::format(",... ({} ranks)", r.size());
  return s;
}

// "all_reduce on process group 4 (tp dimension, DeviceMesh mesh_tp; ranks 2,3)"
std::string wait_text(const C10dWaitInfo& w) {
  std::string label = group_label(w.process_group, w.pg_desc);
  if (!w.ranks.empty()) {
    const std::string members = "ranks " + ranks_text(w.ranks);
    if (label.back() == ')') label.insert(label.size() - 1, "; " + members);
    else label += " (" + members + ")";
  }
  return (w.op.empty() ? std::string("a collective") : w.op) + " on " + label;
}

bool same_group(const C10dWaitInfo& a, const C10dWaitInfo& b) { return a.process_group == b.process_group; }

bool member_of(const C10dWaitInfo& w, const std::optional<int>& rank) {
  return rank && std::binary_search(w.ranks.begin(), w.ranks.end(), *rank);
}

// " on process group 0 (world, default_pg)" when every member waits on the
// same group, " on process groups 1 (...) [rank 0], 4 (...) [rank 3]" else.
std::string group_suffix(const std::vector<CensusMember>& ms) {
  std::vector<std::pair<const C10dWaitInfo*, std::vector<int>>> by;
  for (const auto& m : ms) {
    if (!m.wait) continue;
    auto it = std::find_if(by.begin(), by.end(), [&](const auto& x) { return same_group(*x.first, *m.wait); });
    if (it == by.end()) by.push_back({&*m.wait, {}}), it = by.end() - 1;
    if (m.rank) it->second.push_back(*m.rank);
  }
  if (by.empty()) return {};
  if (by.size() == 1) return " on " + group_label(by[0].first->process_group, by[0].first->pg_desc);
  std::string s = " on";
  for (size_t i = 0; i < by.size() && i < 8; ++i)
    s += fmt::format("{} {} [rank {}]", i ? "," : "", group_label(by[i].first->process_group, by[i].first->pg_desc),
                     ranks_text(by[i].second));
  if (by.size() > 8) s += fmt::format(", ... ({} groups)", by.size());
  return s;
}

// Measured and still: woke fewer than kMovingWakeups times in the window.
bool frozen(const CensusMember& m) { return m.progress && m.progress->wakeups < kMovingWakeups; }

// A running job caught mid-step has the shape of a hang (some ranks in a
// collective, one computing). Where the ranks' wake-ups were measured and
// most of them kept waking, nothing is stuck: the finding that says so.
std::optional<Finding> running_job_finding(const Census& c) {
  size_t measured = 0;
  std::vector<CensusMember> moving;
  for (const auto& g : c.groups)
    for (const auto& m : g.members)
      if (m.progress) {
        ++measured;
        if (m.progress->wakeups >= kMovingWakeups) moving.push_back(m);
      }
  if (measured < 2 || moving.size() * 2 <= measured) return std::nullopt;
  double window_ms = 0;
  uint64_t least = std::numeric_limits<uint64_t>::max();
  for (const auto& m : moving) {
    window_ms = std::max(window_ms, m.progress->window_ms);
    least = std::min(least, m.progress->wakeups);
  }
  Finding f;
  f.id = "stacks.ranks_progressing";
  f.layer = Layer::framework;
  f.role = FindingRole::context;
  f.severity = Severity::info;
  f.summary = fmt::format(
      "{} of {} ranks kept waking in the {:.0f} ms before the capture (each at least {} times): the job is "
      "running, not hung; the stack census is a snapshot of ranks passing through their steps",
      moving.size(), measured, window_ms, least);
  f.fields = {{"moving", moving.size()}, {"measured", measured}, {"window_ms", window_ms},
              {"min_wakeups", least}, {"ranks", members_list(moving)}};
  return f;
}

}  // namespace

std::string stack_signature(const ThreadStack& t, size_t max_frames) {
  std::string sig;
  std::string last;
  size_t n = 0;
  for (const auto& f : t.frames) {
    std::string name = f.function;
    if (const size_t p = name.find('('); p != std::string::npos && p > 0) name.resize(p);
    if (name.empty()) name = "??" + (f.module.empty() ? std::string() : "@" + f.module);
    if (name == last) continue;  // recursion depth does not make stacks different
    last = name;
    sig += (sig.empty() ? "" : " < ") + name;
    if (++n >= max_frames) break;
  }
  if (sig.empty()) sig = t.blocked_in.empty() ? "<no frames>" : "<" + t.blocked_in + ">";
  return sig;
}

Census run_census(const std::vector<ProcessStacks>& processes) {
  Census c;
  std::map<std::string, size_t> index;
  for (const auto& p : processes) {
    const ThreadStack* m = main_thread(p);
    if (!m) continue;
    const std::string sig = stack_signature(*m);
    auto it = index.find(sig);
    if (it == index.end()) {
      CensusGroup g;
      g.signature = sig;
      g.activity = thread_activity(*m);
      g.in_collective = in_collective_or_sync(*m);
      it = index.emplace(sig, c.groups.size()).first;
      c.groups.push_back(std::move(g));
    }
    c.groups[it->second].members.push_back(CensusMember{p.host, p.rank, p.pid, m->c10d, p.progress});
  }
  std::stable_sort(c.groups.begin(), c.groups.end(),
                   [](const CensusGroup& a, const CensusGroup& b) { return a.members.size() > b.members.size(); });
  size_t total = 0;
  for (const auto& g : c.groups) total += g.members.size();
  for (const auto& g : c.groups) {
    const std::string who = g.members.size() == 1 ? member_name(g.members[0])
                                                  : fmt::format("{} ranks ({})", g.members.size(), members_list(g.members));
    c.lines.push_back(who + ": " + g.activity + (g.in_collective ? group_suffix(g.members) : std::string()));
  }
  std::optional<Finding> running = running_job_finding(c);
  if (c.groups.size() < 2 || total < 2) {
    if (running) c.findings.push_back(std::move(*running));
    return c;
  }

  const CensusGroup& major = c.groups[0];
  // A majority exists when the largest group is bigger than every other one;
  // with two processes that disagree, the one in host code is still the odd
  // one when the other waits in a collective.
  const bool strict_majority = major.members.size() > c.groups[1].members.size();
  std::string census_line;
  for (const auto& l : c.lines) census_line += (census_line.empty() ? "" : "; ") + l;

  Finding ctxf;
  ctxf.id = "stacks.census";
  ctxf.layer = Layer::framework;
  ctxf.role = FindingRole::context;
  ctxf.summary = "stack census: " + census_line;
  ctxf.fields = {{"groups", c.groups.size()}, {"processes", total}};
  c.findings.push_back(ctxf);
  if (running) {  // nobody is odd in a running job
    c.findings.push_back(std::move(*running));
    return c;
  }

  const CensusGroup* waiting = nullptr;
  if (strict_majority && major.in_collective) waiting = &major;
  if (!waiting && total == 2 && c.groups.size() == 2) {
    if (c.groups[0].in_collective != c.groups[1].in_collective)
      waiting = c.groups[0].in_collective ? &c.groups[0] : &c.groups[1];
  }
  if (!waiting) {
    // No majority to measure the others against, but every rank is blocked
    // in a collective or point-to-point wait and they are not all in the
    // same call: nobody will ever complete what the others wait for. With
    // a send/recv among the waits it is hand-written point-to-point code
    // that both sides entered in the wrong order (each waits to receive
    // first); otherwise the ranks issued different collectives.
    const bool all_waiting = std::all_of(c.groups.begin(), c.groups.end(),
                                         [](const CensusGroup& g) { return g.in_collective; });
    if (!all_waiting) return c;
    // The c10d op of the wait, else the innermost Python function the
    // activity line names ("... at distributed_c10d.py:3697 in recv").
    auto is_p2p = [](const std::string& op) {
      return op == "recv" || op == "send" || op == "irecv" || op == "isend" || op == "batch_isend_irecv" ||
             op == "recv_object_list" || op == "send_object_list";
    };
    bool p2p = false;
    nlohmann::json p2p_ranks = nlohmann::json::array();
    for (const auto& g : c.groups) {
      const size_t in = g.activity.rfind(" in ");
      const bool group_p2p = in != std::string::npos && is_p2p(g.activity.substr(in + 4));
      for (const auto& m : g.members)
        if (group_p2p || (m.wait && is_p2p(m.wait->op))) {
          p2p = true;
          if (m.rank && p2p_ranks.size() < 64) p2p_ranks.push_back(*m.rank);
        }
    }
    Finding f;
    f.id = "stacks.ranks_in_different_calls";
    f.layer = Layer::framework;
    f.role = FindingRole::primary;
    f.severity = Severity::error;
    f.summary = "every rank is blocked in a collective or point-to-point wait, in " +
                std::to_string(c.groups.size()) + " different calls (" + census_line + ")" +
                (p2p ? ": a send/recv exchange that no side can complete (each waits to receive first, or the peers "
                       "do not match)"
                     : ": the ranks issued different collectives");
    f.fields = {{"groups", c.groups.size()}, {"processes", total}, {"point_to_point", p2p}};
    if (p2p) f.fields["ranks"] = p2p_ranks;  // the ranks in send/recv: no single culprit
    f.supports = p2p ? std::vector<CauseSupport>{{"user_code_bug", 10}, {"mismatched_collectives", 2}}
                     : std::vector<CauseSupport>{{"mismatched_collectives", 8}, {"wrong_process_group", 2}};
    c.findings.push_back(std::move(f));
    return c;
  }
  for (const auto& g : c.groups) {
    if (&g == waiting) continue;
    for (const auto& m : g.members) {
      c.odd.push_back(m);
      Finding f;
      f.layer = Layer::framework;
      f.role = FindingRole::primary;
      f.severity = Severity::error;
      f.subject.host = m.host;
      f.subject.rank = m.rank;
      f.subject.pid = m.pid;
      f.fields = {{"activity", g.activity},
                  {"majority_activity", waiting->activity},
                  {"majority_size", waiting->members.size()},
                  {"signature", g.signature}};
      // The one-line activities may read the same on both sides (same wait,
      // same innermost Python frame): name the frame where the stacks part.
      const auto [odd_at, major_at] = first_difference(g.signature, waiting->signature);
      std::string differs;
      if (!odd_at.empty() || !major_at.empty()) {
        f.fields["differs_at"] = odd_at;
        f.fields["majority_at"] = major_at;
        differs = fmt::format(" (stacks part at {} vs {} in the majority)", odd_at.empty() ? "<end>" : odd_at,
                              major_at.empty() ? "<end>" : major_at);
      }
      // Who waits for this rank: the waiting ranks whose process group has it.
      std::string awaited;
      nlohmann::json awaited_in = nlohmann::json::array();
      for (const auto& w : waiting->members)
        if (w.wait && member_of(*w.wait, m.rank)) {
          if (awaited_in.size() < 16)
            awaited_in.push_back({{"rank", w.rank ? nlohmann::json(*w.rank) : nlohmann::json(nullptr)},
                                  {"op", w.wait->op},
                                  {"process_group", w.wait->process_group},
                                  {"pg_desc", w.wait->pg_desc}});
          if (awaited_in.size() <= 4)
            awaited += fmt::format("{}{} in {}", awaited.empty() ? "; awaited by " : ", ", member_name(w),
                                   wait_text(*w.wait));
        }
      if (!awaited_in.empty()) f.fields["awaited_in"] = awaited_in;
      if (m.wait) f.fields["c10d"] = {{"op", m.wait->op}, {"process_group", m.wait->process_group},
                                      {"pg_desc", m.wait->pg_desc}, {"ranks", m.wait->ranks}};
      // The sequence number is not in the stacks: say so rather than guess.
      f.fields["seq"] = nullptr;
      if (!g.in_collective) {
        f.id = "stacks.rank_outside_collective";
        f.summary = fmt::format("{} is {} while {} rank(s) are {}{}{}", member_name(m), g.activity,
                                waiting->members.size(), waiting->activity, group_suffix(waiting->members), differs) +
                    awaited;
        // Directly observed, and stronger the more ranks agree on where they
        // wait: x8 per agreeing rank, capped at x40 (7 of 8 ranks); one
        // against one only x3 (either could be the odd one).
        const double n = static_cast<double>(waiting->members.size());
        f.supports = {{"rank_stuck_in_host_code", n >= 2 ? std::min(40.0, 8.0 * n) : 3.0}};
      } else {
        // Waiting on another process group than the majority. When a member
        // of its group waits on a group that has this rank, the two wait on
        // each other: wrong_process_group, but which side went wrong the
        // stacks cannot tell, so the finding names both and no single rank.
        const CensusMember* partner = nullptr;
        const CensusMember* majority_wait = nullptr;
        for (const auto& w : waiting->members)
          if (w.wait && m.wait && !same_group(*w.wait, *m.wait)) {
            if (!majority_wait) majority_wait = &w;
            if (member_of(*m.wait, w.rank) && member_of(*w.wait, m.rank) && !partner) partner = &w;
          }
        if (partner) {
          f.id = "stacks.groups_wait_on_each_other";
          f.subject.rank.reset();
          f.subject.pid.reset();
          f.fields["ranks"] = nlohmann::json::array({m.rank ? *m.rank : -1, partner->rank ? *partner->rank : -1});
          f.fields["partner_c10d"] = {{"op", partner->wait->op}, {"process_group", partner->wait->process_group},
                                      {"pg_desc", partner->wait->pg_desc}, {"ranks", partner->wait->ranks}};
          f.summary = fmt::format(
              "{} waits in {} for {}, which waits in {} (with {} other rank(s)) for {}: the two process groups wait "
              "on each other — one of them issued its collective on the wrong group or skipped one{}",
              member_name(m), wait_text(*m.wait), member_name(*partner), wait_text(*partner->wait),
              waiting->members.size() - 1, member_name(m), differs);
          // Seen directly (both ranks' frames name their groups and members).
          f.supports = {{"wrong_process_group", 50.0}, {"rank_skips_collective", 3.0}};
        } else {
          f.id = "stacks.rank_in_different_collective";
          // Measured still (no wake-ups just before the capture, on both
          // sides): not a running job caught between two calls, the ranks
          // are stuck in calls that cannot match. Stronger the more ranks
          // agree, as above. Unmeasured (older bundles), a snapshot only.
          const bool stuck = frozen(m) && std::all_of(waiting->members.begin(), waiting->members.end(), frozen);
          const double n = static_cast<double>(waiting->members.size());
          if (stuck) f.fields["measured_still"] = true;
          f.summary = fmt::format("{} is {}{} while {} rank(s) are {}{}{}", member_name(m), g.activity,
                                  m.wait ? " (" + wait_text(*m.wait) + ")" : std::string(), waiting->members.size(),
                                  waiting->activity, group_suffix(waiting->members), differs) +
                      awaited + (stuck ? "; none of them woke in the window before the capture" : "");
          if (majority_wait)
            f.supports = {{"wrong_process_group", stuck ? std::min(30.0, 6.0 * n) : 3.0}};
          else if (stuck)
            f.supports = {{"mismatched_collectives", std::min(30.0, 6.0 * n)}, {"rank_skips_collective", 2.0}};
          else
            f.supports = {{"mismatched_collectives", 3.0}};
        }
      }
      c.findings.push_back(std::move(f));
    }
  }
  return c;
}

nlohmann::json to_json(const Census& c) {
  nlohmann::json groups = nlohmann::json::array();
  auto member = [](const CensusMember& m) {
    nlohmann::json j{{"pid", m.pid}, {"rank", m.rank ? nlohmann::json(*m.rank) : nlohmann::json(nullptr)}};
    if (m.host) j["host"] = *m.host;
    if (m.wait)
      j["c10d"] = {{"op", m.wait->op}, {"process_group", m.wait->process_group}, {"pg_desc", m.wait->pg_desc},
                   {"ranks", m.wait->ranks}};
    return j;
  };
  for (const auto& g : c.groups) {
    nlohmann::json ms = nlohmann::json::array();
    for (const auto& m : g.members) ms.push_back(member(m));
    groups.push_back({{"signature", g.signature}, {"activity", g.activity}, {"in_collective", g.in_collective},
                      {"members", ms}});
  }
  nlohmann::json odd = nlohmann::json::array();
  for (const auto& m : c.odd) odd.push_back(member(m));
  return {{"groups", groups}, {"lines", c.lines}, {"odd_ranks_out", odd}, {"findings", c.findings}};
}

void append_census_findings(EvidenceSet& set) {
  // Ranks of different jobs on one host (two small jobs on a shared node) are
  // counted apart: each job's census has its own majority and odd rank out.
  std::map<std::pair<std::string, int64_t>, std::string> job_of;  // (host, pid) -> job
  for (const Evidence* e : set.of_kind("ranks.process"))
    if (e->subject.pid && e->data.contains("env"))
      job_of[{e->subject.host.value_or(""), *e->subject.pid}] = rank_job_key(e->data["env"]);
  std::map<std::string, std::vector<ProcessStacks>> by_job;
  for (const Evidence* e : set.of_kind("stacks.process")) {
    if (!e->availability.is_ok()) continue;
    try {
      ProcessStacks p = e->data.get<ProcessStacks>();
      if (e->subject.host) p.host = e->subject.host;
      if (e->subject.rank && !p.rank) p.rank = e->subject.rank;
      const auto it = job_of.find({p.host.value_or(""), p.pid});
      by_job[it == job_of.end() ? std::string() : it->second].push_back(std::move(p));
    } catch (const nlohmann::json::exception&) {
      // A malformed item in a bundle is skipped, not fatal (house style §7.3).
    }
  }
  for (auto& [job, procs] : by_job)
    for (auto& f : run_census(procs).findings) {
      if (by_job.size() > 1 && !job.empty()) {
        f.fields["job"] = job;
        f.summary += " (job " + job + ")";
      }
      set.findings.push_back(std::move(f));
    }
}

void attach_fr_sequence(EvidenceSet& set) {
  struct Fr {
    int rank;
    const Finding* f;
  };
  std::vector<Fr> fr;
  for (const auto& f : set.findings) {
    if (f.id.rfind("fr.", 0) != 0 || f.role == FindingRole::cascade || f.role == FindingRole::context || !f.subject.seq)
      continue;
    if (f.fields.contains("ranks") && f.fields["ranks"].is_array()) {
      for (const auto& r : f.fields["ranks"])
        if (r.is_number_integer()) fr.push_back({r.get<int>(), &f});
    } else if (f.subject.rank) {
      fr.push_back({*f.subject.rank, &f});
    }
  }
  if (fr.empty()) return;
  std::vector<std::string> notes;
  for (auto& c : set.findings) {
    if (c.id != "stacks.rank_outside_collective" && c.id != "stacks.rank_in_different_collective" &&
        c.id != "stacks.groups_wait_on_each_other")
      continue;
    std::vector<int> ranks;
    if (c.subject.rank) ranks.push_back(*c.subject.rank);
    if (c.fields.contains("ranks") && c.fields["ranks"].is_array())
      for (const auto& r : c.fields["ranks"])
        if (r.is_number_integer()) ranks.push_back(r.get<int>());
    const Finding* hit = nullptr;
    for (int r : ranks)
      for (const auto& x : fr)
        if (x.rank == r && (!hit || x.f->order < hit->order)) hit = x.f;
    if (!hit) continue;
    const std::string pg = hit->subject.process_group.value_or("");
    const std::string desc = hit->fields.value("pg_desc", std::string());
    c.fields["seq"] = *hit->subject.seq;
    c.fields["seq_process_group"] = pg;
    c.fields["seq_from"] = hit->id;
    c.summary += fmt::format("; flight recorder: {} seq {} ({})", group_label(pg, desc), *hit->subject.seq,
                             hit->fields.value("kind", hit->id));
  }
}

}  // namespace ccdiag
