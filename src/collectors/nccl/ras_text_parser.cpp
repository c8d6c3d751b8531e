// Parser of the text STATUS report (format strings of rasClientRunInit /
// rasClientRunComms in NVIDIA/nccl src/ras/client_support.cc, 2.24-2.30).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>

#include "collectors/nccl/ras_status.hpp"

namespace ccdiag::nccl {

namespace {

// Matches `line` against `tmpl`, where "{}" captures (non-greedy, possibly
// empty) up to the next literal part of the template, or to the end of the
// line when last.
// Linear in the line length times the number of captures.
bool match(std::string_view line, std::string_view tmpl, std::vector<std::string_view>& caps) {
  caps.clear();
  size_t li = 0, ti = 0;
  while (ti < tmpl.size()) {
    size_t ph = tmpl.find("{}", ti);
    std::string_view lit = tmpl.substr(ti, ph == std::string_view::npos ? std::string_view::npos : ph - ti);
    if (line.substr(li, lit.size()) != lit) return false;
    li += lit.size();
    if (ph == std::string_view::npos) return li == line.size();
    ti = ph + 2;
    size_t next_ph = tmpl.find("{}", ti);
    std::string_view next_lit =
        tmpl.substr(ti, next_ph == std::string_view::npos ? std::string_view::npos : next_ph - ti);
    if (next_lit.empty()) {
      if (next_ph != std::string_view::npos) return false;  // "{}{}" is ambiguous: not used
      caps.push_back(line.substr(li));
      return true;
    }
    // Captures may be empty: NCCL's plural suffixes ("rank%s") print nothing for one.
    size_t end = line.find(next_lit, li);
    if (end == std::string_view::npos) return false;
    caps.push_back(line.substr(li, end - li));
    li = end;
  }
  return li == line.size();
}

template <class T>
bool to_num(std::string_view s, T& out) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s.empty()) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool to_double(std::string_view s, double& out) {
  // from_chars(double) exists in GCC 11+; keep a strict manual check for digits.
  if (s.empty() || s.size() > 32 || s.find_first_not_of("0123456789.") != std::string_view::npos) return false;
  std::string tmp(s);
  char* end = nullptr;
  out = std::strtod(tmp.c_str(), &end);
  return end && *end == '\0';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// "3" or "3 (NVML 5)".
void parse_gpu(std::string_view g, RasPlace& p) {
  p.gpu = std::string(g);
  std::vector<std::string_view> c;
  int a = -1, b = -1;
  if (match(g, "{} (NVML {})", c) && to_num(c[0], a) && to_num(c[1], b)) {
    p.cuda_dev = a;
    p.nvml_dev = b;
  } else if (to_num(g, a)) {
    p.cuda_dev = p.nvml_dev = a;
  }
}

// "<where>" part after " -- ": "GPU G managed by process P on node H" or
// "[process information not found]".
bool parse_where(std::string_view w, RasRank& r) {
  std::vector<std::string_view> c;
  if (w == "[process information not found]") {
    r.known = false;
    return true;
  }
  if (!match(w, "GPU {} managed by process {} on node {}", c)) return false;
  parse_gpu(c[0], r.place);
  to_num(c[1], r.place.pid);
  r.place.host = std::string(c[2]);
  return true;
}

bool parse_process(std::string_view line, RasProcess& p) {
  std::vector<std::string_view> c;
  if (!match(line, "Process {} on node {} managing GPU{}", c)) return false;
  if (!to_num(c[0], p.place.pid)) return false;
  p.place.host = std::string(c[1]);
  std::string_view g = c[2];
  if (!g.empty() && g.front() == 's') g.remove_prefix(1);
  p.gpus = std::string(trim(g));
  parse_gpu(p.gpus, p.place);
  return true;
}

enum class Block {
  none,
  job,
  table,
  missing_processes,
  dead_processes,
  comm_incomplete,
  comm_error,
  comm_status_mismatch,
  comm_count_mismatch,
  timeout
};

}  // namespace

RasStatus parse_ras_text(std::string_view text) {
  RasStatus s;
  s.format = "text";
  Block block = Block::none;
  RasComm* comm = nullptr;
  std::vector<std::string_view> c;
  bool job_header_seen = false;

  auto comm_for = [&s](std::string_view label, std::string_view hash) -> RasComm* {
    std::string h = normalise_comm_hash(hash);
    for (auto& x : s.comms)
      if (x.label == label && x.hash == h) return &x;
    RasComm nc;
    nc.label = std::string(label);
    nc.hash = h;
    s.comms.push_back(std::move(nc));
    return &s.comms.back();
  };

  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view raw = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    if (raw.size() > 4096) {
      ++s.skipped_lines;
      continue;
    }
    std::string_view line = trim(raw);
    if (line.empty()) continue;
    if (line.find_first_not_of('=') == std::string_view::npos) continue;  // underline

    // ---- section headers ----
    if (match(line, "NCCL version {} compiled with CUDA {}", c)) {
      s.nccl_version = std::string(c[0]);
      s.cuda_compiled = std::string(c[1]);
      s.recognised = true;
      continue;
    }
    if (match(line, "CUDA runtime version {}, driver version {}", c)) {
      to_num(c[0], s.cuda_runtime);
      to_num(c[1], s.cuda_driver);
      continue;
    }
    if (line == "Job summary") {
      block = Block::job;
      s.recognised = true;
      continue;
    }
    if (line.rfind("Communicators...", 0) == 0 || line.rfind("Gathering data about the NCCL communicators", 0) == 0) {
      auto open = line.rfind('(');
      auto close = line.rfind("s)");
      double t = 0;
      if (open != std::string_view::npos && close != std::string_view::npos && close > open &&
          to_double(line.substr(open + 1, close - open - 1), t))
        s.collection_time_s = t;
      block = Block::table;
      s.recognised = true;
      continue;
    }
    if (line == "Errors") {
      block = Block::none;
      continue;
    }
    if (line == "Warnings") {
      block = Block::none;
      s.complete = true;
      continue;
    }
    if (line == "No communicator data collected!") {
      block = Block::none;
      continue;
    }
    if (line == "INCOMPLETE") {
      block = Block::missing_processes;
      continue;
    }
    if (line == "DEAD") {
      block = Block::dead_processes;
      continue;
    }
    if (line == "TIMEOUT") {
      block = Block::timeout;
      continue;
    }
    if (line.front() == '#' && match(line, "#{} ({}) {}", c)) {
      comm = comm_for("#" + std::string(c[0]), c[1]);
      std::string flag(c[2]);
      if (std::find(comm->flags.begin(), comm->flags.end(), flag) == comm->flags.end()) comm->flags.push_back(flag);
      block = flag == "INCOMPLETE" ? Block::comm_incomplete
              : flag == "ERROR"    ? Block::comm_error
                                   : Block::comm_status_mismatch;  // refined by the next line
      continue;
    }

    // ---- block bodies ----
    switch (block) {
      case Block::job: {
        if (line.rfind("Nodes", 0) == 0 || line.rfind("(total)", 0) == 0 || line.rfind("Processes", 0) == 0) {
          job_header_seen = true;
          continue;
        }
        // Uniform layout: nodes, processes per node, GPUs per process, processes, GPUs.
        int v[5];
        std::vector<std::string_view> tok;
        size_t i = 0;
        while (i < line.size()) {
          while (i < line.size() && line[i] == ' ') ++i;
          size_t j = i;
          while (j < line.size() && line[j] != ' ') ++j;
          if (j > i) tok.push_back(line.substr(i, j - i));
          i = j;
        }
        if (job_header_seen && tok.size() == 5 && to_num(tok[0], v[0]) && to_num(tok[1], v[1]) &&
            to_num(tok[2], v[2]) && to_num(tok[3], v[3]) && to_num(tok[4], v[4])) {
          s.nodes = v[0];
          s.processes_per_node = v[1];
          s.gpus_per_process = v[2];
          s.processes = v[3];
          s.gpus = v[4];
        }
        // Non-uniform layouts print distributions and outlier nodes: kept as text only.
        continue;
      }
      case Block::table: {
        if (line.rfind("Group", 0) == 0 || line.front() == '#') continue;
        std::vector<std::string_view> tok;
        size_t i = 0;
        while (i < line.size()) {
          while (i < line.size() && line[i] == ' ') ++i;
          size_t j = i;
          while (j < line.size() && line[j] != ' ') ++j;
          if (j > i) tok.push_back(line.substr(i, j - i));
          i = j;
        }
        RasGroupRow row;
        if (tok.size() == 8 && to_num(tok[0], row.group) && to_num(tok[1], row.comms) &&
            to_num(tok[2], row.nodes_per_comm) && to_num(tok[4], row.ranks_per_comm) &&
            to_num(tok[5], row.ranks_in_group)) {
          row.ranks_per_node = std::string(tok[3]);
          row.status = std::string(tok[6]);
          row.errors = std::string(tok[7]);
          s.groups.push_back(std::move(row));
        } else {
          ++s.skipped_lines;
        }
        continue;
      }
      case Block::missing_processes:
      case Block::dead_processes: {
        RasProcess p;
        int n = 0;
        if (match(line, "Missing communicator data from {} job process{}", c) && to_num(c[0], n)) {
          s.missing_processes_count = n;
        } else if (match(line, "{} job process{} considered dead (unreachable via the RAS network)", c) &&
                   to_num(c[0], n)) {
          s.dead_processes_count = n;
        } else if (parse_process(line, p)) {
          (block == Block::missing_processes ? s.missing_processes : s.dead_processes).push_back(std::move(p));
        } else if (line.rfind("[could not find information on", 0) != 0) {
          ++s.skipped_lines;
        }
        continue;
      }
      case Block::timeout: {
        int n = 0;
        if (match(line, "Encountered {} communication timeout{} while gathering communicator data", c) &&
            to_num(c[0], n))
          s.timeouts = n;
        else
          ++s.skipped_lines;
        continue;
      }
      case Block::comm_incomplete: {
        int n = 0;
        RasMissingRank m;
        if (match(line, "Missing communicator data from {} rank{}", c) && to_num(c[0], n)) {
          comm->missing_reported = n;
        } else if (match(line, "Rank {} -- {}", c) && to_num(c[0], m.rank.rank) && parse_where(c[1], m.rank)) {
          comm->missing.push_back(std::move(m));
        } else {
          ++s.skipped_lines;
        }
        continue;
      }
      case Block::comm_error: {
        int n = 0;
        RasRank r;
        if (match(line, "Initialization error{} on {} rank{}", c) && to_num(c[1], n)) {
          comm->errors.push_back(RasRankError{"init", -1, "", {}, 0});
        } else if (match(line, "Asynchronous error{} on {} rank{}", c) && to_num(c[1], n)) {
          comm->errors.push_back(RasRankError{"async", -1, "", {}, 0});
        } else if (!comm->errors.empty() && match(line, "{} ranks reported {}", c) && to_num(c[0], n)) {
          // A second error string within one kind starts a new record.
          auto& e = comm->errors.back();
          if (!e.text.empty()) comm->errors.push_back(RasRankError{e.kind, -1, "", {}, 0});
          comm->errors.back().text = std::string(c[1]);
          comm->errors.back().code = ras_error_code(c[1]);
          comm->errors.back().count = n;
        } else if (!comm->errors.empty() && match(line, "Rank {} reported {} -- {}", c) && to_num(c[0], r.rank) &&
                   parse_where(c[2], r)) {
          auto& e = comm->errors.back();
          if (!e.text.empty() && e.text != c[1]) comm->errors.push_back(RasRankError{e.kind, -1, "", {}, 0});
          auto& cur = comm->errors.back();
          cur.text = std::string(c[1]);
          cur.code = ras_error_code(c[1]);
          cur.count = std::max(cur.count, 1);
          cur.ranks.push_back(r);
        } else if (!comm->errors.empty() && match(line, "Rank {} -- {}", c) && to_num(c[0], r.rank) &&
                   parse_where(c[1], r)) {
          comm->errors.back().ranks.push_back(r);
        } else {
          ++s.skipped_lines;
        }
        continue;
      }
      case Block::comm_status_mismatch:
      case Block::comm_count_mismatch: {
        int n = 0;
        int64_t cnt = 0;
        RasRank r;
        if (line == "Communicator ranks have different status") {
          block = Block::comm_status_mismatch;
          comm->status_groups.clear();
        } else if (match(line, "Communicator ranks have different {} operation counts", c)) {
          block = Block::comm_count_mismatch;
          comm->count_mismatches.push_back(RasCountMismatch{std::string(c[0]), {}});
        } else if (block == Block::comm_status_mismatch && match(line, "{} ranks have status {}", c) &&
                   to_num(c[0], n)) {
          comm->status_groups.push_back(RasStatusGroup{n, std::string(c[1]), {}});
        } else if (block == Block::comm_status_mismatch && match(line, "Rank {} has status {} -- {}", c) &&
                   to_num(c[0], r.rank) && parse_where(c[2], r)) {
          comm->status_groups.push_back(RasStatusGroup{1, std::string(c[1]), {r}});
        } else if (block == Block::comm_count_mismatch && !comm->count_mismatches.empty() &&
                   match(line, "{} ranks have launched up to operation {}", c) && to_num(c[0], n) &&
                   to_num(c[1], cnt)) {
          comm->count_mismatches.back().groups.push_back(RasCountGroup{n, cnt, {}});
        } else if (block == Block::comm_count_mismatch && !comm->count_mismatches.empty() &&
                   match(line, "{} ranks have not launched any operations", c) && to_num(c[0], n)) {
          comm->count_mismatches.back().groups.push_back(RasCountGroup{n, 0, {}});
        } else if (block == Block::comm_count_mismatch && !comm->count_mismatches.empty() &&
                   match(line, "Rank {} has launched up to operation {} -- {}", c) && to_num(c[0], r.rank) &&
                   to_num(c[1], cnt) && parse_where(c[2], r)) {
          comm->count_mismatches.back().groups.push_back(RasCountGroup{1, cnt, {r}});
        } else if (block == Block::comm_count_mismatch && !comm->count_mismatches.empty() &&
                   match(line, "Rank {} has not launched any operations -- {}", c) && to_num(c[0], r.rank) &&
                   parse_where(c[1], r)) {
          comm->count_mismatches.back().groups.push_back(RasCountGroup{1, 0, {r}});
        } else if (match(line, "Rank {} -- {}", c) && to_num(c[0], r.rank) && parse_where(c[1], r)) {
          // Member of the group counted on the previous "N ranks have ..." line.
          if (block == Block::comm_status_mismatch && !comm->status_groups.empty())
            comm->status_groups.back().ranks.push_back(r);
          else if (block == Block::comm_count_mismatch && !comm->count_mismatches.empty() &&
                   !comm->count_mismatches.back().groups.empty())
            comm->count_mismatches.back().groups.back().ranks.push_back(r);
          else
            ++s.skipped_lines;
        } else {
          ++s.skipped_lines;
        }
        continue;
      }
      case Block::none:
        ++s.skipped_lines;
        continue;
    }
  }
  // Text replies detail only problem comms; their sizes come from the table
  // when there is a single group.
  if (s.groups.size() == 1)
    for (auto& cm : s.comms) cm.size = s.groups[0].ranks_per_comm;
  return s;
}

}  // namespace ccdiag::nccl
