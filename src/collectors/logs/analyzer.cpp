#include "collectors/logs/analyzer.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <unordered_map>

#include <re2/re2.h>

#include "ccdiag/text_scan.hpp"
#include "ccdiag/utf8.hpp"
#include "collectors/kernel/xid.hpp"
#include "collectors/logs/captures.hpp"
#include "ccdiag/line_prefix.hpp"
#include "collectors/logs/matcher.hpp"
#include "collectors/logs/reader.hpp"
#include "collectors/logs/topology.hpp"
#include "collectors/logs/torchrun_console.hpp"

namespace ccdiag::logs {

namespace {

// "NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin."
// (2.19+), "NET/Plugin : Plugin load (libnccl-net.so) returned 2 : libnccl-net.so:
// cannot open shared object file ..." and "No plugin found (libnccl-net.so),
// using internal implementation" (older): the default name probed and absent.
bool default_net_plugin_absent(std::string_view line) {
  const size_t at = line.find("libnccl-net.so");
  if (at == std::string_view::npos) return false;
  // Another library named anywhere on the line was requested by name.
  for (size_t p = line.find("libnccl-net"); p != std::string_view::npos; p = line.find("libnccl-net", p + 1))
    if (line.compare(p, 14, "libnccl-net.so") != 0) return false;
  return line.find("sing internal") != std::string_view::npos ||
         line.find("cannot open shared object file") != std::string_view::npos ||
         line.find("Could not find") != std::string_view::npos;
}

}  // namespace

namespace {

constexpr size_t kMaxGroups = 200000;   // distinct (signature, actor) aggregates kept
constexpr size_t kExcerptMax = 300;

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
enum class Special { none, xid, fell_off_bus, elastic_rank, elastic_exit, breadcrumb, peer_access, remote_error, c10d_frame, spawn_error };

struct CompiledSig {
  std::unique_ptr<RE2> re;
  Special special = Special::none;
  TopoKind topo = TopoKind::none;
  struct Group {
    CaptureName name;
    int index;
  };
  std::vector<Group> groups;
  int nsub = 0;  // submatches RE2 must fill: the highest named group + 1 (0: a yes/no match)
};

// One signature confirmed on the current line.
struct Confirmed {
  unsigned sig = 0;
  Captures fields;
  std::optional<int64_t> rank_override;  // torchelastic exit code lines take the rank of the line before
  nlohmann::json to_json() const {
    nlohmann::json j = fields.to_json();
    if (rank_override) j["rank"] = *rank_override;
    return j;
  }
  std::optional<int64_t> rank() const { return rank_override ? rank_override : fields.integer("rank"); }
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
  // The torch.distributed call each rank's traceback was last inside
  // ("distributed_c10d.py", line N, in recv): a traceback lists it just before
  // its exception, so a gloo timeout says which call timed out.
  std::unordered_map<std::string, std::string> last_c10d_call;
  TopologyBuilder topo;
  TorchrunConsoleParser torchrun;  // the agent's console: root cause, its SIGTERMs
  LogStats stats;
  int64_t seq = 0;
  size_t dropped_groups = 0;
  std::vector<Hit> hits;
  std::string scratch;
  // Reused per line so the hot path allocates nothing for lines that only
  // bump an existing aggregate.
  std::vector<unsigned> on;
  std::vector<Confirmed> ok;
  std::string proc_key, actor, gkey;

  // Per-file state.
  struct FileState {
    std::string shown, host;
    std::optional<int> file_rank;
    int64_t line = 0;
    size_t file = 0;
    std::string last_proc;        // NCCL process of the last prefixed line (for bare "NCCL version" lines)
    int64_t elastic_rank_line = -10;
    int elastic_rank = -1;
    // mp.spawn's "-- Process N terminated with the following error:": the
    // traceback after it is process N's, up to its exception line.
    int64_t spawn_line = -1;
    int spawn_rank = -1;
    size_t spawn_group = SIZE_MAX;  // the marker's group
  };

  void process_block(std::string_view block, FileState& st);
  void on_line(std::string_view raw, FileState& st);
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
    c.topo = s.role == FindingRole::context ? topo_kind(s.id) : TopoKind::none;
    if (s.extractor == "xid") c.special = Special::xid;
    else if (s.extractor == "fell_off_bus") c.special = Special::fell_off_bus;
    else if (s.id == "torchelastic.failure_rank") c.special = Special::elastic_rank;
    else if (s.id == "torchelastic.failure_exitcode") c.special = Special::elastic_exit;
    else if (s.id == "nccl.error_breadcrumb") c.special = Special::breadcrumb;
    else if (s.id == "cuda.peer_access") c.special = Special::peer_access;
    else if (s.id == "pytorch.c10d_frame") c.special = Special::c10d_frame;
    else if (s.id == "mpspawn.process_raised") c.special = Special::spawn_error;
    for (const auto& [name, idx] : c.re->NamedCapturingGroups()) {
      if (idx >= 64) continue;  // beyond the submatch array (no catalogue pattern has that many)
      c.groups.push_back(CompiledSig::Group{CaptureName{name, keep_as_string(name)}, idx});
      c.nsub = std::max(c.nsub, idx + 1);
    }
    im.compiled.push_back(std::move(c));
  }
  auto m = Matcher::compile(signatures);
  if (!m) return m.error();
  im.matcher = std::move(*m);
  im.sigs = std::move(signatures);
  im.stats.signatures = im.sigs.size();
  im.stats.engine = im.matcher->engine();
  im.stats.prefilter = im.matcher->prefilter_source();
  return a;
}

Status LogAnalyzer::add_file(const LogInput& in, const std::function<void(std::string_view)>& tap) {
  auto r = LogReader::open(in.path, in.shown);
  if (!r) return r.error();
  auto& im = *impl_;
  Impl::FileState st;
  st.shown = in.shown;
  st.host = in.host;
  st.file_rank = rank_from_filename(in.shown);
  st.file = im.stats.files++;
  im.torchrun.begin_file(in.shown);
  for (;;) {
    auto block = (*r)->next();
    if (!block) return block.error();
    if (block->empty()) break;
    im.process_block(*block, st);
    if (tap) tap(*block);
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
  im.torchrun.begin_file(shown);
  im.stats.bytes += text.size();
  im.process_block(text, st);
}

void LogAnalyzer::Impl::process_block(std::string_view block, FileState& st) {
  matcher->scan(block, hits);
  const int64_t lines_before = st.line;
  size_t pos = 0;  // lines before `pos` are counted
  for (size_t i = 0; i < hits.size();) {
    const size_t b = hits[i].line_begin, e = hits[i].line_end;
    on.clear();
    while (i < hits.size() && hits[i].line_begin == b) on.push_back(hits[i++].sig);
    st.line += static_cast<int64_t>(count_newlines(block.data() + pos, b - pos));
    pos = b;
    on_line(block.substr(b, e - b), st);
  }
  st.line += static_cast<int64_t>(count_newlines(block.data() + pos, block.size() - pos));
  // The console parser reads the block apart from the signatures; it is given the count.
  torchrun.feed_block(block, static_cast<size_t>(st.line - lines_before));
  // A final line without '\n' still counts.
  if (!block.empty() && block.back() != '\n') ++st.line;
  stats.lines += static_cast<size_t>(st.line - lines_before);
}

void LogAnalyzer::Impl::on_line(std::string_view raw, FileState& st) {
  const int64_t lineno = st.line + 1;
  while (!raw.empty() && (raw.back() == '\r' || raw.back() == '\n')) raw.remove_suffix(1);
  // A carriage return inside a line is a terminal redraw (tqdm progress bars):
  // what the terminal finally showed is the text after the last one.
  if (const size_t cr = raw.rfind('\r'); cr != std::string_view::npos) raw.remove_prefix(cr + 1);
  std::string_view line = raw;
  if (raw.find('\x1b') != std::string_view::npos) {
    scratch.assign(raw);
    strip_ansi(scratch);
    line = scratch;
  }
  const LinePrefix p = parse_line_prefix(line);
  const re2::StringPiece body(p.body.data(), p.body.size());

  // Confirm each candidate with RE2 and keep its captures as views into the line.
  size_t nok = 0;
  re2::StringPiece sub[64];
  for (unsigned s : on) {
    if (nok == ok.size()) ok.emplace_back();
    Confirmed& c = ok[nok];
    c.sig = s;
    c.fields.clear();
    c.rank_override.reset();
    const auto& cs = compiled[s];
    if (cs.special == Special::xid) {
      auto x = parse_xid_line(p.body);
      if (!x) continue;
      c.fields.add_owned("xid", x->xid);
      if (!x->pci.empty()) c.fields.add_owned("pci", true, x->pci);
      c.fields.add_owned("message", true, x->message);
      if (x->pid) c.fields.add_owned("pid", *x->pid);
      if (!x->process_name.empty()) c.fields.add_owned("process", true, x->process_name);
      if (x->gpu_instance) c.fields.add_owned("gpu_instance", *x->gpu_instance);
    } else if (cs.special == Special::fell_off_bus) {
      auto bdf = parse_fell_off_bus_line(p.body);
      if (!bdf) continue;
      c.fields.add_owned("pci", true, *bdf);
    } else {
      if (!cs.re->Match(body, 0, body.size(), RE2::UNANCHORED, sub, cs.nsub)) continue;
      for (const auto& gr : cs.groups)
        if (sub[gr.index].data() != nullptr)
          c.fields.add(&gr.name, std::string_view(sub[gr.index].data(), sub[gr.index].size()));
    }
    ++nok;
  }
  if (nok == 0) return;
  ++stats.matched_lines;
  bool specific = false;
  for (size_t k = 0; k < nok; ++k)
    if (!sigs[ok[k].sig].fallback && sigs[ok[k].sig].role != FindingRole::context) specific = true;

  // The NCCL process this line belongs to.
  proc_key.clear();
  if (p.pid) {
    char num[24];
    const auto r = std::to_chars(num, num + sizeof num, *p.pid);
    proc_key.append(p.host).append(":").append(num, r.ptr);
    if (st.last_proc != proc_key) st.last_proc = proc_key;
  }
  const std::string_view host = !p.host.empty() ? p.host : std::string_view(st.host);

  for (size_t k = 0; k < nok; ++k) {
    Confirmed& c = ok[k];
    const auto& sig = sigs[c.sig];
    if (sig.fallback && specific) continue;
    ++seq;
    const CompiledSig& cs = compiled[c.sig];
    if (cs.topo != TopoKind::none) {
      // Set-up lines feed the topology, not the findings. A bare "NCCL version"
      // line (VERSION level, no prefix) belongs to the last process of the file.
      if (!proc_key.empty()) {
        topo.add(proc_key, host, p.pid, p.rank ? p.rank : st.file_rank, p.dev, cs.topo, c.fields, st.shown);
      } else {
        const std::string key = st.last_proc.empty() ? "file:" + st.shown : st.last_proc;
        topo.add(key, host, p.pid, p.rank ? p.rank : st.file_rank, p.dev, cs.topo, c.fields, st.shown);
      }
      continue;
    }
    if (cs.special == Special::c10d_frame) {
      const std::string who = p.rank ? "rank " + std::to_string(*p.rank)
                              : st.file_rank ? "rank " + std::to_string(*st.file_rank) : "file " + st.shown;
      last_c10d_call[who] = std::string(c.fields.string("call").value_or(""));
      continue;
    }
    if (cs.special == Special::elastic_rank) {
      st.elastic_rank_line = lineno;
      st.elastic_rank = static_cast<int>(c.fields.integer("rank").value_or(-1));
    }
    if (cs.special == Special::elastic_exit && lineno - st.elastic_rank_line <= 3 && st.elastic_rank >= 0)
      c.rank_override = st.elastic_rank;
    // The first finding after mp.spawn's marker is the failing process's own
    // exception line (its traceback's frames make none): it is that rank's.
    if (cs.special == Special::spawn_error) {
      st.spawn_line = lineno;
      st.spawn_rank = static_cast<int>(c.fields.integer("rank").value_or(-1));
    } else if (st.spawn_rank >= 0 && lineno > st.spawn_line) {
      if (lineno - st.spawn_line <= 200 && !c.rank() && !p.rank) {
        c.rank_override = st.spawn_rank;
        // A plain Python exception (not a collective failing under it) ended
        // the first process to fail: the script's own error on that rank, as
        // torchrun's "Root Cause" entry says. The marker carries that vote (its
        // own evidence key: the exception line votes as well).
        if (sig.id == "python.exception" && st.spawn_group < groups.size() &&
            groups[st.spawn_group].f.id == "mpspawn.process_raised") {
          Finding& m = groups[st.spawn_group].f;
          m.role = FindingRole::primary;
          m.severity = Severity::error;
          m.supports = {{"user_code_bug", 4}};
        }
      }
      st.spawn_rank = -1;
    }

    // Actor: who logged it. Group repeated lines of one actor into one finding.
    std::optional<int> rank;
    if (auto r = c.rank()) rank = static_cast<int>(*r);
    actor.clear();
    if (rank) actor.append("rank ").append(std::to_string(*rank));
    else if (p.rank) actor.append("rank ").append(std::to_string(*p.rank));
    else if (!proc_key.empty()) {
      actor.append(proc_key);
      if (p.dev) actor.append("[").append(std::to_string(*p.dev)).append("]");
    } else if (st.file_rank) actor.append("rank ").append(std::to_string(*st.file_rank));
    else actor.append("file ").append(st.shown);
    gkey.assign(sig.id).append("|").append(actor);
    if (cs.special == Special::xid) {
      gkey.append("|").append(c.fields.string("pci").value_or("")).append("|");
      gkey.append(std::to_string(c.fields.integer("xid").value_or(0)));
    }
    // Each pair of a P2P capability matrix is its own fact.
    if (cs.special == Special::peer_access)
      gkey.append("|").append(c.fields.value("dev_a").dump()).append("-").append(c.fields.value("dev_b").dump());

    auto it = index.find(gkey);
    if (cs.special == Special::spawn_error) st.spawn_group = it != index.end() ? it->second : groups.size();
    if (it != index.end()) {
      Group& g = groups[it->second];
      ++g.count;
      if (cs.special == Special::breadcrumb && g.chain.size() < 12)
        g.chain.push_back(std::string(c.fields.string("src_file").value_or("?")) + ":" +
                          std::to_string(c.fields.integer("src_line").value_or(0)));
      continue;
    }
    if (groups.size() >= kMaxGroups) {
      ++dropped_groups;
      continue;
    }
    nlohmann::json fields = c.to_json();
    if (sig.id == "gloo.timeout") {
      const std::string who = rank ? "rank " + std::to_string(*rank)
                              : p.rank ? "rank " + std::to_string(*p.rank)
                              : st.file_rank ? "rank " + std::to_string(*st.file_rank) : "file " + st.shown;
      if (auto it = last_c10d_call.find(who); it != last_c10d_call.end() && !it->second.empty())
        fields["call"] = it->second;
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
    if (!host.empty()) f.subject.host = std::string(host);
    if (rank) f.subject.rank = rank;
    if (p.pid) f.subject.pid = *p.pid;
    if (p.tid) f.subject.tid = *p.tid;
    if (fields.contains("pid") && fields["pid"].is_number_integer()) f.subject.pid = fields["pid"].get<int64_t>();
    if (fields.contains("nic") && fields["nic"].is_string()) f.subject.nic = fields["nic"].get<std::string>();
    if (fields.contains("port") && fields["port"].is_number_integer()) f.subject.port = fields["port"].get<int>();
    if (fields.contains("seq") && fields["seq"].is_number_integer()) f.subject.seq = fields["seq"].get<int64_t>();
    if (fields.contains("pci") && fields["pci"].is_string()) {
      std::string pci = fields["pci"].get<std::string>();
      if (pci.size() == 10) pci += ".0";  // Xid prints no function; NVIDIA GPUs are function 0
      if (sig.layer == Layer::hardware && sig.id.rfind("kernel.mlx5", 0) != 0) f.subject.gpu = pci;
    }
    if (sig.id == "kernel.xid") {
      const int xid = static_cast<int>(num(fields, "xid", 0));
      const XidInfo* info = find_xid(xid);
      f.summary = "Xid " + std::to_string(xid) + " on GPU " + text(fields, "pci", "?") + ": " +
                  (info ? info->name : "unknown Xid");
      const std::string msg = text(fields, "message", "");
      if (!msg.empty()) f.summary += " (" + msg + ")";
      f.supports.clear();
      if (info) {
        fields["meaning"] = info->name;
        fields["likely_cause"] = info->cause;
        fields["action"] = info->action;
        if (info->catalogue_cause[0] != '\0') f.supports.push_back(CauseSupport{info->catalogue_cause, info->weight});
      }
      const bool actionable = info && info->catalogue_cause[0] != '\0';
      f.severity = actionable && info->weight >= 10 ? Severity::critical : Severity::warning;
      f.role = actionable ? FindingRole::primary : FindingRole::context;
    } else {
      f.summary = render_summary(sig.summary, fields);
    }
    if (sig.id == "nccl.net.plugin_load_failed" && default_net_plugin_absent(line)) {
      // NCCL looks for the default plugin name on every start and says so at
      // INFO when none is installed; it then uses its own IB / socket code. A
      // plugin that was asked for (NCCL_NET_PLUGIN) has another name.
      f.role = FindingRole::context;
      f.severity = Severity::info;
      f.supports.clear();
      f.summary = "no NCCL net plugin installed (libnccl-net.so): NCCL uses its internal network transports";
    }
    if (cs.special == Special::breadcrumb) {
      g.chain.push_back(text(fields, "src_file", "?") + ":" + std::to_string(num(fields, "src_line", 0)));
      fields["result"] = result_name(num(fields, "code", 0));
    }
    f.fields = std::move(fields);
    if (sig.reporter_waits) f.fields["reporter_waits"] = true;
    f.provenance.push_back(Provenance{st.shown, lineno, std::string(utf8_prefix(line, kExcerptMax))});
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

  // torchrun's console: the agent's SIGTERMs become cascades, worker pids
  // map to their ranks, and a root cause that died by a signal is the first
  // failure whatever the lines around it say (torchrun_console.hpp).
  std::optional<size_t> torchrun_first;
  torchrun.begin_file({});  // flush a table still open at the end of the last file
  if (TorchrunConsole tc = torchrun.result(); !tc.empty()) {
    // Which ranks logged a collective timeout: the silent one is the suspect.
    for (const auto& g : groups)
      if (g.f.subject.rank && (g.f.id == "gloo.timeout" || g.f.id == "pytorch.watchdog.timeout" ||
                               g.f.id == "pytorch.watchdog.blocking_wait_timeout" ||
                               // monitored_barrier (and DETAIL's collective check built on it): the reporter
                               // waited for the missing ranks, the others reached it and lost the reporter
                               g.f.id.rfind("c10d.monitored_barrier", 0) == 0)) {
        tc.timed_out.insert(*g.f.subject.rank);
        // Which call it timed out in: the traceback's torch.distributed call
        // (gloo), the watchdog's OpType (NCCL).
        const char* key = g.f.id == "gloo.timeout" ? "call" : "op";
        if (g.f.fields.contains(key) && g.f.fields[key].is_string())
          tc.timed_out_call.emplace(*g.f.subject.rank, g.f.fields[key].get<std::string>());
      }
    for (const auto& g : groups) {
      if (!g.f.subject.rank) continue;
      tc.known_ranks.insert(*g.f.subject.rank);
      const bool collective = g.f.id == "gloo.peer_closed" || g.f.id.find("remote_error") != std::string::npos ||
                              g.f.id == "pytorch.store.peer_closed" || g.f.id.rfind("gloo.", 0) == 0 ||
                              g.f.id.rfind("pytorch.watchdog", 0) == 0 || g.f.id.rfind("pytorch.store", 0) == 0 ||
                              g.f.id.rfind("c10d.monitored_barrier", 0) == 0;
      if (collective) tc.collective_failed.insert(*g.f.subject.rank);
      if (g.f.id == "gloo.peer_closed" || g.f.id == "pytorch.store.peer_closed" ||
          g.f.id.find("remote_error") != std::string::npos)
        tc.peer_closed.insert(*g.f.subject.rank);
      else if (g.f.id.rfind("torchelastic.", 0) != 0 && g.f.id.rfind("torchrun.", 0) != 0 &&
               g.f.id.rfind("logs.", 0) != 0 && g.f.role != FindingRole::context &&
               g.f.role != FindingRole::cascade &&
               (g.f.severity == Severity::error || g.f.severity == Severity::critical)) {
        tc.own_error.insert(*g.f.subject.rank);
        if (g.f.id == "python.exception") tc.own_exception.insert(*g.f.subject.rank);
      }
    }
    for (auto& g : groups) adjust_torchrun_finding(tc, g.f);
    for (auto& f : torchrun_findings(tc)) {
      Group g;
      g.f = std::move(f);
      g.actor = g.f.subject.rank ? "rank " + std::to_string(*g.f.subject.rank) : "torchrun";
      g.seq = ++seq;
      g.f.order = g.f.provenance.empty() ? 0 : g.f.provenance.front().line.value_or(0);
      if (g.f.id == "torchrun.root_cause" && g.f.fields.value("decisive", false)) torchrun_first = groups.size();
      groups.push_back(std::move(g));
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
  if (torchrun_first) first = torchrun_first;

  // Cascades: symptoms and cascade lines of other actors follow from it.
  if (first) {
    const Group& F = groups[*first];
    const std::string cause = F.f.subject.describe();
    for (size_t i = 0; i < groups.size(); ++i) {
      if (i == *first) continue;
      Group& g = groups[i];
      if (g.f.role == FindingRole::context) continue;
      if (g.actor == F.actor) continue;  // the failing rank's own follow-up lines stay as they are
      // The same exception, word for word, raised by another rank is that
      // rank's own raise (every rank ran the same bad code or config), not a
      // consequence of the first one's.
      if (g.f.id == "python.exception" && g.f.id == F.f.id && g.f.summary == F.f.summary) continue;
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
  im.torchrun.reset();
  im.topo = TopologyBuilder();
  const size_t nsig = im.stats.signatures;
  const std::string engine = im.stats.engine, prefilter = im.stats.prefilter;
  im.stats = LogStats{};
  im.stats.signatures = nsig;
  im.stats.engine = engine;
  im.stats.prefilter = prefilter;
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
