#include "collectors/logs/torchrun_console.hpp"

#include "ccdiag/line_prefix.hpp"
#include "ccdiag/signal_names.hpp"
#include "ccdiag/text_scan.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>

namespace ccdiag::logs {

bool decisive_signal(const std::string& sig) { return !sig.empty() && sig != "SIGABRT" && sig != "SIGTERM"; }

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

template <class T>
std::optional<T> leading_int(std::string_view s) {
  T v{};
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr == s.data()) return std::nullopt;
  return v;
}

// "key      : value" -> value, when the line's key is `key`.
std::optional<std::string_view> field(std::string_view line, std::string_view key) {
  line = trim(line);
  if (line.substr(0, key.size()) != key) return std::nullopt;
  line.remove_prefix(key.size());
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || trim(line.substr(0, colon)).size() != 0) return std::nullopt;
  return trim(line.substr(colon + 1));
}

// "(pid: 25267)" -> 25267 within s.
std::optional<int64_t> pid_in(std::string_view s) {
  const size_t p = s.find("pid: ");
  if (p == std::string_view::npos) return std::nullopt;
  return leading_int<int64_t>(s.substr(p + 5));
}

// "(SIGKILL)" or "Signal 9 (SIGKILL)" -> "SIGKILL".
std::string signal_in(std::string_view s) {
  const size_t p = s.find("(SIG");
  if (p == std::string_view::npos) return {};
  const size_t e = s.find(')', p);
  if (e == std::string_view::npos) return {};
  return std::string(s.substr(p + 1, e - p - 1));
}

std::string signal_of_exit(int code) {
  const char* name = linux_signal_name(-code);
  return *name ? name : "signal " + std::to_string(-code);
}

int64_t num_field(const nlohmann::json& fields, const char* key) {
  if (!fields.is_object() || !fields.contains(key)) return -1;
  const auto& v = fields[key];
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_string()) return leading_int<int64_t>(v.get<std::string>()).value_or(-1);
  return -1;
}

std::string rank_text(const TorchrunFailure& f) {
  std::string s = f.rank ? "rank " + std::to_string(*f.rank) : "local rank " + std::to_string(f.local_rank.value_or(-1));
  if (f.pid) s += " (pid " + std::to_string(*f.pid) + ")";
  return s;
}

// The worker died of the agent's closing signal. A worker that was sent it
// but had already raised (exit code 1 in the table) failed on its own.
bool stopped_by_agent(const TorchrunConsole& c, const TorchrunFailure& f) {
  if (f.signal != "SIGTERM") return false;
  // Without the "Sending process" lines (console cut), an exit by SIGTERM in a
  // table that also holds another failure is still the agent's doing.
  return (f.pid && c.agent_terminated.count(*f.pid)) || c.failures.size() > 1;
}

// "Not in the collective the others gave up on" needs one collective: when
// the others timed out in different calls (two ranks in a recv, one in the
// all_reduce after it: a point-to-point deadlock), the rank that logged none
// may be one whose own timeout line the agent's SIGTERM cut off.
bool one_call(const TorchrunConsole& c) {
  std::string call;
  for (const auto& [r, c0] : c.timed_out_call) {
    std::string norm;
    for (char ch : c0)
      if (ch != '_') norm += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (call.empty()) call = norm;
    else if (norm != call) return false;
  }
  return true;
}

// Every worker the table lists but one logged a collective timeout: that one
// was not in the collective the others waited in. (Which workers the agent
// then stopped is a race with their own exits, so the timeouts decide.)
std::optional<int> silent_rank(const TorchrunConsole& c) {
  std::set<int> all;
  for (const auto& f : c.failures)
    if (f.rank) all.insert(*f.rank);
  if (all.size() < 3 || c.timed_out.size() + 1 != all.size()) return std::nullopt;
  std::optional<int> silent;
  for (int r : all)
    if (!c.timed_out.count(r)) {
      if (silent) return std::nullopt;
      silent = r;
    }
  for (int r : c.timed_out)
    if (!all.count(r)) return std::nullopt;
  if (!one_call(c)) return std::nullopt;
  return silent;
}

// Ranks of the job that are not in the failure table: every rank a finding
// names, and the gaps between the ranks the table lists (torchrun numbers a
// node's workers contiguously, so ranks 0, 1 and 3 failing means rank 2
// exists). Only when the table is whole (a Root Cause entry, two or more
// failures) and at least one failed rank's own lines show a collective
// failing under it; a rank that is merely on another node is outside the
// listed range and not known from this console's lines.
std::vector<int> absent_ranks(const TorchrunConsole& c) {
  std::set<int> failed;
  for (const auto& f : c.failures)
    if (f.rank) failed.insert(*f.rank);
  if (failed.size() < 2 || !c.root_cause()) return {};
  bool in_collective = false;
  for (int r : failed) in_collective |= c.collective_failed.count(r) > 0 || c.timed_out.count(r) > 0;
  if (!in_collective) return {};
  std::set<int> known = c.known_ranks;
  for (int r = *failed.begin(); r <= *failed.rbegin(); ++r) known.insert(r);
  // The --log-dir folders name local ranks: with every listed worker on one
  // host at one offset (rank = local rank + k), folder l is rank l + k, which
  // reaches rank 0 and the last rank too.
  if (!c.local_ranks_logged.empty()) {
    std::optional<int> offset;
    std::optional<std::string> host;
    bool one_node = true;
    for (const auto& f : c.failures) {
      if (!f.rank || !f.local_rank) continue;
      const int k = *f.rank - *f.local_rank;
      if ((offset && *offset != k) || (host && *host != f.host)) one_node = false;
      offset = k;
      host = f.host;
    }
    if (one_node && offset)
      for (int l : c.local_ranks_logged) known.insert(l + *offset);
  }
  std::vector<int> out;
  for (int r : known)
    if (r >= 0 && !failed.count(r)) out.push_back(r);
  // Half the job or more missing is a cut console, not ranks that left.
  if (out.size() * 2 >= failed.size() + out.size()) return {};
  return out;
}

// The rank the console blames: a root cause dead by a decisive signal, else
// the one rank that left the job early, else the only worker the agent had
// to stop while every other one raised.
std::optional<int> console_culprit(const TorchrunConsole& c) {
  if (const auto* rc = c.root_cause(); rc && rc->rank && decisive_signal(rc->signal) && !stopped_by_agent(c, *rc))
    return rc->rank;
  if (const auto gone = absent_ranks(c); gone.size() == 1) return gone.front();
  else if (!gone.empty()) return std::nullopt;
  std::vector<const TorchrunFailure*> by_agent, raised;
  std::set<int> seen;
  for (const auto& f : c.failures) {
    if (!f.rank || !seen.insert(*f.rank).second) continue;
    if (stopped_by_agent(c, f)) by_agent.push_back(&f);
    else if (f.exitcode && *f.exitcode > 0) raised.push_back(&f);
  }
  // A rank that logged a collective timeout itself was in the collective: the
  // agent only reached it first while it was still unwinding (every rank timed
  // out in a deadlock; the slowest to exit is the one the agent stops).
  // And when the others failed because a peer closed its connection, some
  // process had ended before them: not the one the agent stopped afterwards,
  // which was alive until then. The one that ended is then a rank that left
  // cleanly (exit 0, not in the table), whose number this console may not show
  // (rank 0 or the last rank, outside the range of the failed ones).
  bool peer_gone = false;
  for (const auto* f : raised) peer_gone |= c.peer_closed.count(*f->rank) > 0;
  if (by_agent.size() == 1 && raised.size() >= 2 && !c.timed_out.count(*by_agent.front()->rank) && one_call(c) &&
      !peer_gone)
    return by_agent.front()->rank;
  if (auto r = silent_rank(c)) return r;
  return std::nullopt;
}

}  // namespace

std::optional<int> TorchrunConsole::rank_of_pid(int64_t pid) const {
  for (const auto& f : failures)
    if (f.pid && *f.pid == pid && f.rank) return f.rank;
  return std::nullopt;
}

const TorchrunFailure* TorchrunConsole::root_cause() const {
  const TorchrunFailure* best = nullptr;
  for (const auto& f : failures)
    if (f.root_cause && (!best || (!f.time.empty() && f.time < best->time))) best = &f;
  return best;
}

// torchrun --log-dir writes <dir>/<run id>/attempt_<n>/<local rank>/{stdout,stderr}.log.
static std::optional<int> torchrun_logdir_local_rank(std::string_view path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const std::string_view name = path.substr(slash + 1);
  if (name != "stdout.log" && name != "stderr.log" && name != "error.json") return std::nullopt;
  const std::string_view dir = path.substr(0, slash);
  const size_t s2 = dir.find_last_of('/');
  if (s2 == std::string_view::npos) return std::nullopt;
  const std::string_view local = dir.substr(s2 + 1);
  if (local.empty() || local.size() > 5 || local.find_first_not_of("0123456789") != std::string_view::npos)
    return std::nullopt;
  const std::string_view parent = dir.substr(0, s2);
  const size_t s3 = parent.find_last_of('/');
  if (parent.substr(s3 == std::string_view::npos ? 0 : s3 + 1).rfind("attempt_", 0) != 0) return std::nullopt;
  return std::stoi(std::string(local));
}

void TorchrunConsoleParser::begin_file(const std::string& shown) {
  if (auto l = torchrun_logdir_local_rank(shown)) out_.local_ranks_logged.insert(*l);
  flush_entry();
  if (!carry_.empty()) feed_line(std::exchange(carry_, {}));
  flush_entry();
  file_ = shown;
  line_ = 0;
  state_ = State::none;
}

void TorchrunConsoleParser::feed_block(std::string_view block) {
  feed_block(block, std::string_view::npos);
}

void TorchrunConsoleParser::feed_block(std::string_view block, size_t newlines) {
  // Fast path: nothing of the console in this block and no table open.
  if (state_ == State::none && carry_.empty()) {
    static constexpr std::string_view kMarkers[] = {"closing signal", "Failures:", "Root Cause"};
    if (!contains_any(block, kMarkers, std::size(kMarkers))) {
      // Keep the line count right for provenance.
      if (newlines == std::string_view::npos) newlines = count_newlines(block.data(), block.size());
      line_ += static_cast<int64_t>(newlines);
      if (!block.empty() && block.back() != '\n') {
        const size_t nl = block.rfind('\n');
        carry_.assign(block.substr(nl == std::string_view::npos ? 0 : nl + 1));
      }
      return;
    }
  }
  size_t pos = 0;
  while (pos < block.size()) {
    const size_t nl = block.find('\n', pos);
    if (nl == std::string_view::npos) {
      carry_.append(block.substr(pos));
      return;
    }
    std::string_view line = block.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_;
    if (!carry_.empty()) {
      carry_.append(line);
      std::string whole = std::exchange(carry_, {});
      feed_line(whole);
    } else {
      feed_line(line);
    }
  }
}

void TorchrunConsoleParser::flush_entry() {
  if (!cur_) return;
  if (cur_->rank || cur_->pid) out_.failures.push_back(std::move(*cur_));
  cur_.reset();
}

void TorchrunConsoleParser::feed_line(std::string_view line) {
  if (const size_t p = line.find("Sending process "); p != std::string_view::npos &&
                                                      line.find(" closing signal ", p) != std::string_view::npos) {
    if (auto pid = leading_int<int64_t>(line.substr(p + 16))) out_.agent_terminated.insert(*pid);
    return;
  }
  // The table read behind a prefix a log shipper, grep -r or a Markdown quote
  // put in front of every line ("rank0.log:Failures:", "> [1]:"). An entry's
  // "[1]:" opener is itself a launcher-tag shape, so it is recognised by its
  // end, with or without a prefix before it.
  // Outside a table only its two headers matter: every other line leaves here
  // before any prefix is parsed (a block with a marker in it comes line by line).
  if (state_ == State::none && line.find("Failures:") == std::string_view::npos &&
      line.find("Root Cause (first observed failure)") == std::string_view::npos)
    return;
  std::string plain;
  if (line.find('\x1b') != std::string_view::npos) {  // colour codes around the table's words
    plain.assign(line);
    strip_ansi(plain);
    line = plain;
  }
  {
    const std::string_view raw = trim(line);
    const size_t open = raw.rfind('[');
    const bool opener = raw.size() >= 4 && raw.substr(raw.size() - 2) == "]:" && open != std::string_view::npos &&
                        open + 3 <= raw.size() - 1 &&
                        std::all_of(raw.begin() + static_cast<ptrdiff_t>(open) + 1, raw.end() - 2,
                                    [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)) != 0; });
    if (opener) line = raw.substr(open);
    else if (const std::string_view body = parse_line_prefix(line).body; !body.empty()) line = body;
  }
  const std::string_view t = trim(line);
  if (t.find("Root Cause (first observed failure)") != std::string_view::npos) {
    flush_entry();
    state_ = State::root_cause;
    return;
  }
  if (t == "Failures:") {
    flush_entry();
    state_ = State::failures;
    return;
  }
  if (state_ == State::none) return;
  if (!t.empty() && (t.front() == '=' || t.front() == '-') && t.find_first_not_of(t.front()) == std::string_view::npos) {
    flush_entry();
    if (t.front() == '=') state_ = State::none;
    return;
  }
  // "[0]:" opens an entry.
  if (t.size() >= 4 && t.front() == '[' && t.back() == ':' && t[t.size() - 2] == ']') {
    flush_entry();
    cur_ = TorchrunFailure{};
    cur_->root_cause = state_ == State::root_cause;
    cur_->file = file_;
    cur_->line = line_;
    return;
  }
  if (!cur_) return;
  if (auto v = field(line, "time")) cur_->time = std::string(*v);
  else if (auto h = field(line, "host")) cur_->host = std::string(*h);
  else if (auto r = field(line, "rank")) {
    cur_->rank = leading_int<int>(*r);
    if (const size_t lr = r->find("local_rank: "); lr != std::string_view::npos)
      cur_->local_rank = leading_int<int>(r->substr(lr + 12));
  } else if (auto e = field(line, "exitcode")) {
    cur_->exitcode = leading_int<int>(*e);
    cur_->pid = pid_in(*e);
    cur_->signal = signal_in(*e);
    if (cur_->signal.empty() && cur_->exitcode && *cur_->exitcode < 0) cur_->signal = signal_of_exit(*cur_->exitcode);
  } else if (auto tb = field(line, "traceback")) {
    if (cur_->signal.empty()) cur_->signal = signal_in(*tb);
  }
}

void adjust_torchrun_finding(const TorchrunConsole& c, Finding& f) {
  if (c.empty() || f.id.rfind("torchelastic.", 0) != 0) return;
  const int64_t pid = num_field(f.fields, "pid");
  if (pid < 0) return;
  if (auto r = c.rank_of_pid(pid)) f.subject.rank = *r;
  f.subject.pid = pid;
  const TorchrunFailure* entry = nullptr;
  for (const auto& x : c.failures)
    if (x.pid && *x.pid == pid) entry = &x;
  const int64_t code = entry && entry->exitcode ? *entry->exitcode : num_field(f.fields, "exitcode");
  const auto culprit = console_culprit(c);
  if (f.id == "torchelastic.closing_signal" || (entry && stopped_by_agent(c, *entry)) ||
      (!entry && c.agent_terminated.count(pid) && code == -15)) {
    f.role = FindingRole::cascade;
    f.caused_by = "torchrun's agent stopping the surviving workers after the first failure";
  } else if (entry && entry->signal == "SIGABRT") {
    // A process that aborts has logged why just before (std::terminate on
    // gloo::EnforceNotMet, the NCCL watchdog): the abort follows from that.
    f.role = FindingRole::cascade;
    f.caused_by = "the error " + (entry->rank ? "rank " + std::to_string(*entry->rank) : std::string("it")) +
                  " logged before it aborted";
  } else if (culprit && f.subject.rank && *f.subject.rank != *culprit) {
    // Another worker's exit after the rank the console blames.
    f.role = FindingRole::cascade;
    f.caused_by = "rank " + std::to_string(*culprit);
  } else if (code > 0) {
    // The rank raised: its own exception lines carry the cause.
    f.role = FindingRole::context;
  } else if (const auto* rc = c.root_cause(); rc && rc->pid && *rc->pid == pid) {
    f.role = FindingRole::context;  // torchrun.root_cause carries this vote once
  } else if (culprit && f.subject.rank == culprit) {
    f.role = FindingRole::context;  // torchrun.odd_rank_out carries the vote
  }
}

std::vector<Finding> torchrun_findings(const TorchrunConsole& c) {
  std::vector<Finding> out;
  const TorchrunFailure* rc = c.root_cause();
  const bool rc_signal = rc && !rc->signal.empty() && !stopped_by_agent(c, *rc);
  size_t stopped = 0;
  for (const auto& f : c.failures)
    if (stopped_by_agent(c, f)) ++stopped;
  if (rc) {
    Finding x;
    x.id = "torchrun.root_cause";
    x.layer = Layer::framework;
    x.subject.rank = rc->rank;
    x.subject.pid = rc->pid;
    if (!rc->host.empty()) x.subject.host = rc->host;
    x.provenance.push_back(Provenance{rc->file, rc->line, "Root Cause (first observed failure)"});
    x.fields = {{"exitcode", rc->exitcode ? nlohmann::json(*rc->exitcode) : nlohmann::json(nullptr)},
                {"signal", rc->signal},
                {"time", rc->time},
                {"stopped_by_agent", stopped}};
    if (rc->rank) x.fields["rank"] = *rc->rank;
    if (rc->pid) x.fields["pid"] = *rc->pid;
    if (!rc->time.empty()) x.time = rc->time;
    if (rc_signal) {
      x.severity = Severity::critical;
      x.role = FindingRole::primary;
      x.summary = "torchrun: the first observed failure is " + rank_text(*rc) + ", killed by " + rc->signal +
                  (stopped ? "; the agent then stopped " + std::to_string(stopped) + " surviving worker(s) with SIGTERM"
                           : std::string());
      // SIGKILL comes from outside (OOM killer, scheduler, a user) and SIGSEGV
      // & co. are the process's own crash: the rank died, that is the cause.
      // SIGABRT is how a process ends after an error it reported itself
      // (std::terminate on gloo::EnforceNotMet, the NCCL watchdog's abort):
      // its own last lines say why, so the signal votes weakly and does not
      // take the first-failure slot (decisive()).
      x.supports = {{"rank_process_died", decisive_signal(rc->signal) ? 20.0 : 2.0}};
      x.fields["decisive"] = decisive_signal(rc->signal);
    } else if (rc->rank && c.own_error.count(*rc->rank) &&
               ((!c.timed_out.empty() && !c.timed_out.count(*rc->rank)) ||
                (c.timed_out.empty() && stopped > 0 && stopped + 1 == c.failures.size()))) {
      // (Only with an error of its own in the logs: a rank whose timeout line
      // the agent's SIGTERM cut off also logged no timeout.)
      // (Or nobody timed out: it raised and the agent stopped every other
      // worker, which were still waiting for it.)
      // The first rank to raise, and not with a collective timeout while the
      // others timed out: its own exception is the first failure (a KeyError
      // on rank 2, the others waiting for it). It takes the first-failure
      // slot so that exception stays its own; it votes nothing itself.
      x.severity = Severity::error;
      x.role = FindingRole::symptom;
      x.fields["decisive"] = true;
      // Its own error is a plain Python exception (not CUDA, NCCL or a
      // collective): the script failed on that rank first, and the others
      // only waited for it (as mp.spawn's marker votes, x4).
      if (c.own_exception.count(*rc->rank)) x.supports = {{"user_code_bug", 4.0}};
      x.summary = "torchrun: the first worker to exit was " + rank_text(*rc) + " with code " +
                  std::to_string(rc->exitcode.value_or(0)) +
                  (c.timed_out.empty()
                       ? ", and the agent then stopped the " + std::to_string(stopped) +
                             " other worker(s): its own error came first"
                       : ", and it logged no collective timeout while " + std::to_string(c.timed_out.size()) +
                             " other rank(s) did: its own error came first");
    } else if (rc->rank && rc->exitcode && *rc->exitcode > 0 && !c.own_error.count(*rc->rank) &&
               c.timed_out.empty() && !c.peer_closed.empty() && !c.peer_closed.count(*rc->rank) && stopped > 0 &&
               stopped + 1 == c.failures.size()) {
      // It exited with an error code before anyone failed, logged no error
      // of its own here, and the others then found a peer's connection
      // closed: it ended on its own (sys.exit(1), os._exit, a library's
      // fatal-error handler) and took its connections with it. Mostly a
      // process that ended; an exception whose traceback went to another
      // file reads the same, so that votes too, less.
      x.severity = Severity::error;
      x.role = FindingRole::primary;
      x.fields["decisive"] = true;
      x.summary = "torchrun: the first worker to exit was " + rank_text(*rc) + " with code " +
                  std::to_string(*rc->exitcode) + ", with no error of its own in these logs; " +
                  std::to_string(c.peer_closed.size()) +
                  " other rank(s) then found a peer's connection closed and the agent stopped the rest: it ended "
                  "on its own (sys.exit, os._exit, a fatal-error handler)";
      x.supports = {{"rank_process_died", 25.0}, {"user_code_bug", 2.0}};
    } else {
      // An error exit: only the rank that raised first. After a timeout every
      // rank raises and the first to do so is a victim; its exception says why.
      x.severity = Severity::error;
      x.role = FindingRole::context;
      x.summary = "torchrun: the first worker to exit was " + rank_text(*rc) + " with code " +
                  std::to_string(rc->exitcode.value_or(0)) + " (it raised; its own log says why)";
    }
    out.push_back(std::move(x));
  }
  // A rank the table does not list left the job early (exit code 0) while
  // the others failed in a collective: it skipped what they waited in. The
  // worker the agent then had to stop was still waiting, not the odd one.
  const std::vector<int> gone = rc_signal ? std::vector<int>{} : absent_ranks(c);
  for (int r : gone) {
    std::set<int> failed_ranks;
    for (const auto& f : c.failures)
      if (f.rank) failed_ranks.insert(*f.rank);
    std::string failed;
    for (int f : failed_ranks) failed += (failed.empty() ? "ranks " : ", ") + std::to_string(f);
    Finding x;
    x.id = "torchrun.rank_left_early";
    x.layer = Layer::framework;
    x.severity = Severity::error;
    x.role = FindingRole::primary;
    x.subject.rank = r;
    if (rc && !rc->host.empty()) x.subject.host = rc->host;
    x.provenance.push_back(Provenance{rc->file, rc->line, "Root Cause (first observed failure)"});
    x.summary = "torchrun: rank " + std::to_string(r) + " is not among the failed workers (" + failed +
                "): it exited with code 0 while the others failed in a collective — it left the job early (an early "
                "return, one batch fewer) and never issued the collective they waited in";
    x.fields = {{"rank", r}, {"absent_ranks", gone}, {"collective_failed", c.collective_failed},
                {"timed_out", c.timed_out}};
    // One rank missing is direct evidence; several may also be ranks whose
    // failure record the paste cut off, so they vote less.
    x.supports = {{"rank_skips_collective", gone.size() == 1 ? 12.0 : 3.0}};
    out.push_back(std::move(x));
  }
  // The odd rank out: every other worker timed out in a collective (or
  // failed on its own) and this one did not; the agent had to stop it.
  if (!rc_signal && gone.empty())
    if (const auto odd_rank = console_culprit(c)) {
      const TorchrunFailure* o = nullptr;
      for (const auto& f : c.failures)
        if (f.rank == odd_rank) o = &f;
      Finding x;
      x.id = "torchrun.odd_rank_out";
      x.layer = Layer::framework;
      x.severity = Severity::error;
      x.role = FindingRole::primary;
      x.subject.rank = odd_rank;
      x.subject.pid = o->pid;
      if (!o->host.empty()) x.subject.host = o->host;
      x.provenance.push_back(Provenance{o->file, o->line, "Failures: " + rank_text(*o)});
      const bool by_timeouts = !c.timed_out.empty();
      x.summary = "torchrun: " + rank_text(*o) + " is the only worker that " +
                  (by_timeouts ? "logged no collective timeout while the other " + std::to_string(c.timed_out.size()) +
                                     " timed out"
                               : std::string("did not fail on its own while the others raised")) +
                  (stopped_by_agent(c, *o) ? "; the agent stopped it with SIGTERM" : std::string()) +
                  " — it was not in the collective the others gave up on";
      x.fields = {{"rank", *odd_rank}, {"timed_out", c.timed_out}};
      x.supports = {{"rank_stuck_in_host_code", 4.0}, {"rank_skips_collective", 3.0},
                    {"straggler_or_timeout_too_short", 2.0}};
      out.push_back(std::move(x));
    }
  return out;
}

}  // namespace ccdiag::logs
