#include "collectors/logs/analyzer.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <unordered_map>

#include <re2/re2.h>

#include "collectors/kernel/xid.hpp"
#include "collectors/logs/line_prefix.hpp"
#include "collectors/logs/matcher.hpp"
#include "collectors/logs/reader.hpp"
#include "collectors/logs/topology.hpp"

namespace ccdiag::logs {

namespace {

constexpr size_t kMaxGroups = 200000;   // distinct (signature, actor) aggregates kept
constexpr size_t kExcerptMax = 300;

// Named captures that stay strings even when all digits (hex ids, versions).
bool keep_as_string(const std::string& name) {
  static const std::set<std::string> k{"busid", "comm_id", "version", "version_a", "version_b", "value", "cpumask",
                                       "host_hash", "bus", "bus_a", "bus_b", "host", "peer", "pci", "nic", "cuda",
                                       "local_version", "remote_version", "ring_ranks", "ranks", "from_dev", "to_dev",
                                       "driver"};
  return k.count(name) > 0;
}

nlohmann::json typed(bool as_string, std::string_view v) {
  if (!as_string && !v.empty() && v.size() <= 18) {
    int64_t n = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec == std::errc() && end == v.data() + v.size()) return n;
  }
  return std::string(v);
}

// A numeric field, or `fallback` when absent or not a number (a capture of
// 19+ digits stays a string: fuzzed and corrupted lines must not throw).
int64_t num(const nlohmann::json& f, const char* key, int64_t fallback) {
  auto it = f.find(key);
  return it != f.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
}

std::string text(const nlohmann::json& f, const char* key, const char* fallback) {
  auto it = f.find(key);
  return it != f.end() && it->is_string() ? it->get<std::string>() : std::string(fallback);
}

std::string result_name(int64_t code) {
  static const char* k[] = {"ncclSuccess",      "ncclUnhandledCudaError", "ncclSystemError",
                            "ncclInternalError", "ncclInvalidArgument",   "ncclInvalidUsage",
                            "ncclRemoteError",   "ncclInProgress",        "ncclTimeout"};
  return code >= 0 && code <= 8 ? k[code] : "nccl error " + std::to_string(code);
}

// What the analyser does with a signature beyond making a finding; decided
// once at start-up so the per-line path compares no strings.
enum class Special { none, xid, fell_off_bus, elastic_rank, elastic_exit, breadcrumb, peer_access, remote_error };

struct CompiledSig {
  std::unique_ptr<RE2> re;
  Special special = Special::none;
  TopoKind topo = TopoKind::none;
  struct Group {
    std::string name;
    int index;
    bool as_string;
  };
  std::vector<Group> groups;
  int ngroups = 0;
};

struct Group {
  unsigned sig = 0;
  Finding f;
  int64_t count = 0;
  std::string actor;
  std::string proc_key;
  std::optional<int> dev;
  std::optional<int> prefix_rank;
  std::optional<int> file_rank;
  TimeKind kind = TimeKind::none;
  double tkey = 0;
  size_t file = 0;
  int64_t seq = 0;  // global read order of the first occurrence
  std::vector<std::string> chain;
};

}  // namespace

struct LogAnalyzer::Impl {
  std::vector<Signature> sigs;
  std::vector<CompiledSig> compiled;
  std::unique_ptr<Matcher> matcher;
  std::vector<Group> groups;
  std::unordered_map<std::string, size_t> index;
  TopologyBuilder topo;
  LogStats stats;
  int64_t seq = 0;
  size_t dropped_groups = 0;
  std::vector<Hit> hits;
  std::string scratch;

  // Per-file state.
  struct FileState {
    std::string shown, host;
    std::optional<int> file_rank;
    int64_t line = 0;
    size_t file = 0;
    std::string last_proc;        // NCCL process of the last prefixed line (for bare "NCCL version" lines)
    int64_t elastic_rank_line = -10;
    int elastic_rank = -1;
  };

  void process_block(std::string_view block, FileState& st);
  void on_line(std::string_view raw, FileState& st, const std::vector<unsigned>& sigs_on_line);
  LogAnalysis finish();
};

LogAnalyzer::LogAnalyzer() : impl_(std::make_unique<Impl>()) {}
LogAnalyzer::~LogAnalyzer() = default;

Result<std::unique_ptr<LogAnalyzer>> LogAnalyzer::create(std::vector<Signature> signatures) {
  std::unique_ptr<LogAnalyzer> a(new LogAnalyzer());
  auto& im = *a->impl_;
  std::set<std::string> ids;
  for (const auto& s : signatures)
    if (!ids.insert(s.id).second) return make_error("duplicate signature id " + s.id);
  RE2::Options o;
  o.set_log_errors(false);
  for (const auto& s : signatures) {
    CompiledSig c;
    c.re = std::make_unique<RE2>(s.pattern, o);
    if (!c.re->ok()) return make_error("signature " + s.id + ": bad pattern: " + c.re->error());
    c.ngroups = c.re->NumberOfCapturingGroups();
    c.topo = s.role == FindingRole::context ? topo_kind(s.id) : TopoKind::none;
    if (s.extractor == "xid") c.special = Special::xid;
    else if (s.extractor == "fell_off_bus") c.special = Special::fell_off_bus;
    else if (s.id == "torchelastic.failure_rank") c.special = Special::elastic_rank;
    else if (s.id == "torchelastic.failure_exitcode") c.special = Special::elastic_exit;
    else if (s.id == "nccl.error_breadcrumb") c.special = Special::breadcrumb;
    else if (s.id == "cuda.peer_access") c.special = Special::peer_access;
    for (const auto& [name, idx] : c.re->NamedCapturingGroups())
      c.groups.push_back(CompiledSig::Group{name, idx, keep_as_string(name)});
    im.compiled.push_back(std::move(c));
  }
  auto m = Matcher::compile(signatures);
  if (!m) return m.error();
  im.matcher = std::move(*m);
  im.sigs = std::move(signatures);
  im.stats.signatures = im.sigs.size();
  im.stats.engine = im.matcher->engine();
  return a;
}

Status LogAnalyzer::add_file(const LogInput& in) {
  auto r = LogReader::open(in.path, in.shown);
  if (!r) return r.error();
  auto& im = *impl_;
  Impl::FileState st;
  st.shown = in.shown;
  st.host = in.host;
  st.file_rank = rank_from_filename(in.shown);
  st.file = im.stats.files++;
  for (;;) {
    auto block = (*r)->next();
    if (!block) return block.error();
    if (block->empty()) break;
    im.process_block(*block, st);
  }
  im.stats.bytes += (*r)->bytes_read();
  im.stats.overlong_lines += (*r)->overlong_lines();
  return Ok{};
}

void LogAnalyzer::add_text(std::string_view text, const std::string& shown, const std::string& host) {
  auto& im = *impl_;
  Impl::FileState st;
  st.shown = shown;
  st.host = host;
  st.file_rank = rank_from_filename(shown);
  st.file = im.stats.files++;
  im.stats.bytes += text.size();
  im.process_block(text, st);
}

void LogAnalyzer::Impl::process_block(std::string_view block, FileState& st) {
  matcher->scan(block, hits);
  const int64_t lines_before = st.line;
  size_t pos = 0;  // lines before `pos` are counted
  std::vector<unsigned> on;
  for (size_t i = 0; i < hits.size();) {
    const size_t b = hits[i].line_begin, e = hits[i].line_end;
    on.clear();
    while (i < hits.size() && hits[i].line_begin == b) on.push_back(hits[i++].sig);
    st.line += std::count(block.data() + pos, block.data() + b, '\n');
    pos = b;
    on_line(block.substr(b, e - b), st, on);
  }
  const int64_t rest = std::count(block.data() + pos, block.data() + block.size(), '\n');
  st.line += rest;
  // A final line without '\n' still counts.
  if (!block.empty() && block.back() != '\n') ++st.line;
  (void)rest;
  stats.lines += static_cast<size_t>(st.line - lines_before);
}

void LogAnalyzer::Impl::on_line(std::string_view raw, FileState& st, const std::vector<unsigned>& on) {
  const int64_t lineno = st.line + 1;
  while (!raw.empty() && (raw.back() == '\r' || raw.back() == '\n')) raw.remove_suffix(1);
  std::string_view line = raw;
  if (raw.find('\x1b') != std::string_view::npos) {
    scratch.assign(raw);
    strip_ansi(scratch);
    line = scratch;
  }
  const LinePrefix p = parse_line_prefix(line);
  const re2::StringPiece body(p.body.data(), p.body.size());

  struct Confirmed {
    unsigned sig;
    nlohmann::json fields;
  };
  std::vector<Confirmed> ok;
  re2::StringPiece sub[64];
  for (unsigned s : on) {
    const auto& sig = sigs[s];
    nlohmann::json fields = nlohmann::json::object();
    const Special sp = compiled[s].special;
    if (sp == Special::xid) {
      auto x = parse_xid_line(p.body);
      if (!x) continue;
      fields = {{"xid", x->xid}, {"pci", x->pci}, {"message", x->message}};
      if (x->pid) fields["pid"] = *x->pid;
      if (!x->process_name.empty()) fields["process"] = x->process_name;
      if (x->gpu_instance) fields["gpu_instance"] = *x->gpu_instance;
    } else if (sp == Special::fell_off_bus) {
      auto bdf = parse_fell_off_bus_line(p.body);
      if (!bdf) continue;
      fields = {{"pci", *bdf}};
    } else {
      const auto& c = compiled[s];
      const int n = std::min(c.ngroups + 1, 64);
      if (!c.re->Match(body, 0, body.size(), RE2::UNANCHORED, sub, n)) continue;
      for (const auto& gr : c.groups)
        if (gr.index < n && sub[gr.index].data() != nullptr)
          fields[gr.name] = typed(gr.as_string, std::string_view(sub[gr.index].data(), sub[gr.index].size()));
    }
    ok.push_back(Confirmed{s, std::move(fields)});
  }
  if (ok.empty()) return;
  ++stats.matched_lines;
  const bool specific = std::any_of(ok.begin(), ok.end(), [&](const Confirmed& c) {
    return !sigs[c.sig].fallback && sigs[c.sig].role != FindingRole::context;
  });

  // The NCCL process this line belongs to.
  std::string proc_key;
  if (p.pid) {
    proc_key.reserve(p.host.size() + 12);
    proc_key.append(p.host).append(":").append(std::to_string(*p.pid));
    if (st.last_proc != proc_key) st.last_proc = proc_key;
  }
  const std::string host = !p.host.empty() ? std::string(p.host) : st.host;

  for (auto& c : ok) {
    const auto& sig = sigs[c.sig];
    if (sig.fallback && specific) continue;
    ++seq;
    const CompiledSig& cs = compiled[c.sig];
    if (cs.topo != TopoKind::none) {
      // Set-up lines feed the topology, not the findings. A bare "NCCL version"
      // line (VERSION level, no prefix) belongs to the last process of the file.
      std::string key = proc_key.empty() ? (st.last_proc.empty() ? "file:" + st.shown : st.last_proc) : proc_key;
      topo.add(key, host, p.pid, p.rank ? p.rank : st.file_rank, p.dev, cs.topo, c.fields, st.shown);
      continue;
    }
    if (cs.special == Special::elastic_rank) {
      st.elastic_rank_line = lineno;
      st.elastic_rank = static_cast<int>(num(c.fields, "rank", -1));
    }
    if (cs.special == Special::elastic_exit && lineno - st.elastic_rank_line <= 3 && st.elastic_rank >= 0)
      c.fields["rank"] = st.elastic_rank;

    // Actor: who logged it. Group repeated lines of one actor into one finding.
    std::optional<int> rank;
    if (c.fields.contains("rank") && c.fields["rank"].is_number_integer()) rank = c.fields["rank"].get<int>();
    std::string actor;
    if (rank) actor = "rank " + std::to_string(*rank);
    else if (p.rank) actor = "rank " + std::to_string(*p.rank);
    else if (!proc_key.empty()) actor = proc_key + (p.dev ? "[" + std::to_string(*p.dev) + "]" : "");
    else if (st.file_rank) actor = "rank " + std::to_string(*st.file_rank);
    else actor = "file " + st.shown;
    std::string gkey = sig.id + "|" + actor;
    if (cs.special == Special::xid) gkey += "|" + text(c.fields, "pci", "") + "|" + std::to_string(num(c.fields, "xid", 0));
    // Each pair of a P2P capability matrix is its own fact.
    if (cs.special == Special::peer_access) gkey += "|" + c.fields["dev_a"].dump() + "-" + c.fields["dev_b"].dump();

    auto it = index.find(gkey);
    if (it != index.end()) {
      Group& g = groups[it->second];
      ++g.count;
      if (cs.special == Special::breadcrumb && g.chain.size() < 12)
        g.chain.push_back(text(c.fields, "src_file", "?") + ":" + std::to_string(num(c.fields, "src_line", 0)));
      continue;
    }
    if (groups.size() >= kMaxGroups) {
      ++dropped_groups;
      continue;
    }
    Group g;
    g.sig = c.sig;
    g.count = 1;
    g.actor = actor;
    g.proc_key = proc_key;
    g.dev = p.dev;
    g.prefix_rank = p.rank;
    g.file_rank = st.file_rank;
    g.kind = p.time_kind;
    g.tkey = p.time_key;
    g.file = st.file;
    g.seq = seq;
    Finding& f = g.f;
    f.id = sig.id;
    f.layer = sig.layer;
    f.severity = sig.severity;
    f.role = sig.role;
    f.supports = sig.supports;
    if (!host.empty()) f.subject.host = host;
    if (rank) f.subject.rank = rank;
    if (p.pid) f.subject.pid = *p.pid;
    if (p.tid) f.subject.tid = *p.tid;
    if (c.fields.contains("pid") && c.fields["pid"].is_number_integer()) f.subject.pid = c.fields["pid"].get<int64_t>();
    if (c.fields.contains("nic") && c.fields["nic"].is_string()) f.subject.nic = c.fields["nic"].get<std::string>();
    if (c.fields.contains("port") && c.fields["port"].is_number_integer()) f.subject.port = c.fields["port"].get<int>();
    if (c.fields.contains("seq") && c.fields["seq"].is_number_integer()) f.subject.seq = c.fields["seq"].get<int64_t>();
    if (c.fields.contains("pci") && c.fields["pci"].is_string()) {
      std::string pci = c.fields["pci"].get<std::string>();
      if (pci.size() == 10) pci += ".0";  // Xid prints no function; NVIDIA GPUs are function 0
      if (sig.layer == Layer::hardware && sig.id.rfind("kernel.mlx5", 0) != 0) f.subject.gpu = pci;
    }
    if (sig.id == "kernel.xid") {
      const int xid = static_cast<int>(num(c.fields, "xid", 0));
      const XidInfo* info = find_xid(xid);
      f.summary = "Xid " + std::to_string(xid) + " on GPU " + text(c.fields, "pci", "?") + ": " +
                  (info ? info->name : "unknown Xid");
      const std::string msg = text(c.fields, "message", "");
      if (!msg.empty()) f.summary += " (" + msg + ")";
      f.supports.clear();
      if (info) {
        c.fields["meaning"] = info->name;
        c.fields["likely_cause"] = info->cause;
        c.fields["action"] = info->action;
        if (info->catalogue_cause[0] != '\0') f.supports.push_back(CauseSupport{info->catalogue_cause, info->weight});
      }
      const bool actionable = info && info->catalogue_cause[0] != '\0';
      f.severity = actionable && info->weight >= 10 ? Severity::critical : Severity::warning;
      f.role = actionable ? FindingRole::primary : FindingRole::context;
    } else {
      f.summary = render_summary(sig.summary, c.fields);
    }
    if (sig.id == "nccl.error_breadcrumb") {
      g.chain.push_back(text(c.fields, "src_file", "?") + ":" + std::to_string(num(c.fields, "src_line", 0)));
      c.fields["result"] = result_name(num(c.fields, "code", 0));
    }
    f.fields = std::move(c.fields);
    f.provenance.push_back(Provenance{st.shown, lineno, std::string(line.substr(0, kExcerptMax))});
    if (!p.timestamp.empty()) f.time = std::string(p.timestamp);
    f.order = lineno;
    index.emplace(gkey, groups.size());
    groups.push_back(std::move(g));
  }
}

std::string render_summary(const std::string& tmpl, const nlohmann::json& fields) {
  std::string out;
  out.reserve(tmpl.size() + 32);
  for (size_t i = 0; i < tmpl.size(); ++i) {
    if (tmpl[i] == '{') {
      const size_t close = tmpl.find('}', i);
      if (close != std::string::npos) {
        const std::string name = tmpl.substr(i + 1, close - i - 1);
        if (fields.contains(name)) {
          const auto& v = fields[name];
          out += v.is_string() ? v.get<std::string>() : v.dump();
        } else {
          out += "?";
        }
        i = close;
        continue;
      }
    }
    out += tmpl[i];
  }
  return out;
}

namespace {

int severity_rank(Severity s) { return static_cast<int>(s); }

double max_weight(const Finding& f) {
  double w = 1.0;
  for (const auto& s : f.supports) w = std::max(w, s.weight);
  return w;
}

}  // namespace

LogAnalysis LogAnalyzer::Impl::finish() {
  LogAnalysis out;
  // Resolve ranks and GPUs now that every comm-init line has been seen.
  for (auto& g : groups) {
    Finding& f = g.f;
    if (!f.subject.rank) {
      std::optional<int> r;
      if (!g.proc_key.empty()) r = topo.rank_of(g.proc_key, g.dev);
      if (!r) r = g.prefix_rank;
      if (!r) r = g.file_rank;
      if (r) {
        f.subject.rank = *r;
        g.actor = "rank " + std::to_string(*r);
      }
    }
    if (!f.subject.host && f.subject.rank)
      if (auto h = topo.host_of_rank(*f.subject.rank)) f.subject.host = *h;
    if (!f.subject.gpu && g.dev && f.layer != Layer::framework) {
      auto bdf = topo.bdf_of(g.proc_key, g.dev);
      f.subject.gpu = bdf ? *bdf : std::to_string(*g.dev);
    }
    if (g.count > 1) f.fields["occurrences"] = g.count;
    if (f.id == "nccl.error_breadcrumb") {
      std::string chain;
      for (const auto& c : g.chain) chain += (chain.empty() ? "" : " <- ") + c;
      f.fields["chain"] = g.chain;
      f.summary = "NCCL error " + std::to_string(num(f.fields, "code", 0)) + " (" +
                  text(f.fields, "result", "?") + ") propagated: " + chain;
    }
  }

  // The first failure: a primary error (else an error symptom) that came
  // first — by timestamp when the candidates share a clock, otherwise by
  // causal order: the most decisive line first (highest cause weight), then
  // the earliest position in its own file.
  auto candidates = [&](bool primary_only) {
    std::vector<size_t> c;
    for (size_t i = 0; i < groups.size(); ++i) {
      const auto& f = groups[i].f;
      if (severity_rank(f.severity) < severity_rank(Severity::error)) continue;
      if (f.role == FindingRole::primary || (!primary_only && f.role == FindingRole::symptom)) c.push_back(i);
    }
    return c;
  };
  std::vector<size_t> cand = candidates(true);
  if (cand.empty()) cand = candidates(false);
  std::optional<size_t> first;
  if (!cand.empty()) {
    const TimeKind k0 = groups[cand[0]].kind;
    const bool timed = k0 != TimeKind::none && std::all_of(cand.begin(), cand.end(), [&](size_t i) {
      return groups[i].kind == k0;
    });
    auto better = [&](size_t a, size_t b) {
      const Group& A = groups[a];
      const Group& B = groups[b];
      if (timed && A.tkey != B.tkey) return A.tkey < B.tkey;
      if (A.file == B.file) return A.seq < B.seq;  // same file: line order is causal order
      const double wa = max_weight(A.f), wb = max_weight(B.f);
      if (wa != wb) return wa > wb;
      return A.f.order.value_or(0) < B.f.order.value_or(0);
    };
    first = *std::min_element(cand.begin(), cand.end(), better);
  }

  // Cascades: symptoms and cascade lines of other actors follow from it.
  if (first) {
    const Group& F = groups[*first];
    const std::string cause = F.f.subject.describe();
    for (size_t i = 0; i < groups.size(); ++i) {
      if (i == *first) continue;
      Group& g = groups[i];
      if (g.f.role == FindingRole::context) continue;
      if (g.actor == F.actor) continue;  // the failing rank's own follow-up lines stay as they are
      if (g.f.role == FindingRole::cascade || g.f.role == FindingRole::symptom) {
        g.f.role = FindingRole::cascade;
        if (!g.f.caused_by) g.f.caused_by = cause.empty() ? F.actor : cause;
      }
    }
  }
  // "remote error detected from rank: N" names its own cause.
  for (auto& g : groups)
    if (g.f.id == "pytorch.remote_error" && g.f.fields.contains("remote_rank"))
      g.f.caused_by = "rank " + g.f.fields["remote_rank"].dump();

  bool any_error = false;
  for (const auto& g : groups)
    if (severity_rank(g.f.severity) >= severity_rank(Severity::error) && g.f.role != FindingRole::context)
      any_error = true;

  // Read order is the timeline (chronological within a file); the first failure leads.
  std::vector<size_t> order(groups.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return groups[a].seq < groups[b].seq; });
  if (first) {
    const Group& F = groups[*first];
    Finding ff;
    ff.id = "logs.first_failure";
    ff.layer = F.f.layer;
    ff.severity = F.f.severity;
    ff.role = FindingRole::context;  // points at the real finding; does not vote twice
    ff.subject = F.f.subject;
    ff.summary = "first failure: " + (F.f.subject.empty() ? F.actor : F.f.subject.describe()) + ": " + F.f.summary;
    ff.provenance = F.f.provenance;
    ff.time = F.f.time;
    ff.order = F.f.order;
    ff.fields = {{"signature", F.f.id}, {"actor", F.actor}};
    size_t cascades = 0;
    for (const auto& g : groups)
      if (g.f.role == FindingRole::cascade && g.f.caused_by) ++cascades;
    ff.fields["cascades"] = cascades;
    out.findings.push_back(std::move(ff));
    out.findings.push_back(groups[*first].f);
    out.first_failure = 1;
  }
  for (size_t i : order)
    if (!first || i != *first) out.findings.push_back(std::move(groups[i].f));

  // Silent hang: NCCL initialised, P2P pairs exist, and nothing failed afterwards.
  std::vector<Finding> derived = topo.derived(any_error);
  bool peer_lines = false;
  for (const auto& g : groups)
    if (sigs[g.sig].id == "cuda.peer_access") peer_lines = true;
  if (!any_error && !topo.empty() && peer_lines) {
    std::vector<std::string> pairs;
    for (const auto& f : out.findings)
      if (f.id == "cuda.peer_access" && text(f.fields, "access", "") == "CAN")
        pairs.push_back(f.fields["dev_a"].dump() + "-" + f.fields["dev_b"].dump());
    size_t p2p_edges = 0;
    for (const auto& [k, p] : topo.processes())
      for (const auto& e : p.edges)
        if (e.transport.rfind("P2P", 0) == 0) ++p2p_edges;
    Finding f;
    f.id = "logs.silent_hang_after_init";
    f.layer = Layer::hardware;
    f.severity = Severity::warning;
    f.role = FindingRole::symptom;
    f.summary = "NCCL initialised and logged no error afterwards: if the job hangs, GPU kernels are waiting for "
                "peer data (P2P path)";
    if (!pairs.empty()) {
      std::string list;
      for (const auto& p : pairs) list += (list.empty() ? "" : ", ") + p;
      f.summary += "; P2P-capable pairs: " + list;
    }
    f.fields = {{"p2p_capable_pairs", pairs}, {"p2p_edges", p2p_edges}};
    if (!pairs.empty() || p2p_edges > 0) {
      f.supports = {{"iommu_blocks_p2p", 2}, {"pcie_acs_p2p_blocked", 2}, {"gpu_driver_p2p_bug", 1.3}};
    }
    derived.push_back(std::move(f));
  }
  for (auto& d : derived) out.findings.push_back(std::move(d));

  out.evidence = topo.evidence();
  Evidence sum;
  sum.kind = "log.summary";
  stats.matched_lines = stats.matched_lines;
  sum.data = {{"files", stats.files},         {"bytes", stats.bytes},         {"lines", stats.lines},
              {"matched_lines", stats.matched_lines}, {"overlong_lines", stats.overlong_lines},
              {"signatures", stats.signatures}, {"engine", stats.engine},   {"aggregates_dropped", dropped_groups}};
  out.evidence.push_back(std::move(sum));
  out.stats = stats;
  return out;
}

LogAnalysis LogAnalyzer::finish() { return impl_->finish(); }

void LogAnalyzer::reset() {
  auto& im = *impl_;
  im.groups.clear();
  im.index.clear();
  im.topo = TopologyBuilder();
  const size_t nsig = im.stats.signatures;
  const std::string engine = im.stats.engine;
  im.stats = LogStats{};
  im.stats.signatures = nsig;
  im.stats.engine = engine;
  im.seq = 0;
  im.dropped_groups = 0;
}

Result<std::vector<LogInput>> expand_log_paths(const std::vector<std::string>& args, const std::string& host) {
  namespace fs = std::filesystem;
  std::vector<LogInput> out;
  for (const auto& a : args) {
    if (a == "-") {
      out.push_back(LogInput{"-", "<stdin>", host});
      continue;
    }
    std::error_code ec;
    const auto st = fs::status(a, ec);
    if (ec || !fs::exists(st)) return make_error("no such file or directory", a);
    if (fs::is_directory(st)) {
      std::vector<std::string> found;
      for (auto it = fs::recursive_directory_iterator(a, fs::directory_options::skip_permission_denied, ec);
           !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (!name.empty() && name[0] == '.') {
          if (it->is_directory(ec)) it.disable_recursion_pending();
          continue;
        }
        if (it->is_regular_file(ec)) found.push_back(it->path().string());
      }
      if (ec) return make_error("cannot read directory: " + ec.message(), a);
      std::sort(found.begin(), found.end());
      if (found.empty()) return make_error("directory holds no files", a);
      for (auto& f : found) out.push_back(LogInput{f, f, host});
    } else {
      out.push_back(LogInput{a, a, host});
    }
  }
  return out;
}

}  // namespace ccdiag::logs
