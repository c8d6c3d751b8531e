#include "analysis/tree/crash_stack_block.hpp"

#include <cctype>

#include "ccdiag/text_scan.hpp"

namespace ccdiag {

namespace {

// Lines after a crash line in which its frames are read; the innermost named
// frames (noise skipped) that may place the crash.
constexpr int kWindow = 64;
constexpr size_t kInnermost = 4;

bool starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::string_view skip_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

std::string_view skip_hex(std::string_view s) {
  if (!starts(s, "0x")) return s;
  s.remove_prefix(2);
  while (!s.empty() && std::isxdigit(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  return s;
}

// A demangled C++ name ends at its parameter list; a C one at a blank.
std::string_view function_name(std::string_view s) {
  s = skip_blanks(s);
  if (starts(s, "(unknown)") || starts(s, "<unknown") || starts(s, "??")) return {};
  size_t end = 0;
  while (end < s.size() && s[end] != '(' && s[end] != ' ') ++end;
  return s.substr(0, end);
}

// The base name of a library path: "/usr/lib/x86_64-linux-gnu/libnccl.so.2" -> "libnccl.so.2".
std::string_view base_name(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

struct Frame {
  std::string_view function;
  std::string_view library;
};

// backtrace_symbols(3), which Open MPI's and UCX's crash handlers (and many
// others) print: "OBJECT(SYMBOL+0xOFF)[0xADDR]", SYMBOL often empty, behind
// the handler's own prefix:
//   "[host:01234] [ 3] /usr/lib/x86_64-linux-gnu/libnccl.so.2(+0x14e63f)[0x7f..]"   Open MPI
//   " 6  /opt/nccl/lib/libnccl.so.2(ncclCommInitRank+0x297) [0x7f..]"               UCX
//   "/lib/x86_64-linux-gnu/libnccl.so.2(+0xb9a49)[0x7c..]"                          bare
// What precedes the object may only be such a prefix (brackets, a frame
// number, a timestamp): prose that mentions "lib(x)" is not a frame.
std::optional<Frame> parse_backtrace_symbol(std::string_view s) {
  size_t obj = std::string_view::npos;
  for (size_t i = 0; i < s.size(); ++i)
    if ((s[i] == '/' || (s[i] == '.' && i + 1 < s.size() && s[i + 1] == '/')) &&
        (i == 0 || s[i - 1] == ' ')) {
      obj = i;
      break;
    }
  if (obj == std::string_view::npos) return std::nullopt;
  const std::string_view before = s.substr(0, obj);
  const size_t last = before.find_last_not_of(' ');
  if (last != std::string_view::npos && before[last] != ']' &&
      !std::isdigit(static_cast<unsigned char>(before[last])))
    return std::nullopt;
  const size_t open = s.find('(', obj), close = s.find(')', obj);
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
  if (s.substr(obj, open - obj).find(' ') != std::string_view::npos) return std::nullopt;
  const std::string_view after = skip_blanks(s.substr(close + 1));
  if (!after.empty() && !starts(after, "[0x")) return std::nullopt;
  Frame f;
  f.library = base_name(s.substr(obj, open - obj));
  const std::string_view inside = s.substr(open + 1, close - open - 1);
  f.function = inside.substr(0, inside.find('+'));
  return f;
}

// One frame line in the forms above, or nothing.
std::optional<Frame> parse_frame(std::string_view line) {
  std::string_view s = skip_blanks(line);
  Frame f;
  if (starts(s, "@ ")) {  // glog / absl: "@  0x7f.. [size]  name(args)"
    s = skip_blanks(skip_hex(skip_blanks(s.substr(1))));
    size_t digits = 0;
    while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
    if (digits && digits < s.size() && s[digits] == ' ') s = skip_blanks(s.substr(digits));
    f.function = function_name(s);
    if (const size_t lib = s.find("(/"); lib != std::string_view::npos)  // absl: "(/usr/lib/libx.so+0x12)"
      f.library = base_name(s.substr(lib + 1, s.find_first_of("+)", lib) - lib - 1));
    return f;
  }
  if (starts(s, "frame #")) {  // c10: "frame #3: name + 0x2a (0x7f.. in /usr/lib/libnccl.so.2)"
    const size_t colon = s.find(": ");
    if (colon == std::string_view::npos) return std::nullopt;
    f.function = function_name(s.substr(colon + 2));
    if (const size_t in = s.rfind(" in "); in != std::string_view::npos && s.back() == ')')
      f.library = base_name(s.substr(in + 4, s.size() - in - 5));
    return f;
  }
  if (starts(s, "#") && s.size() > 1 && std::isdigit(static_cast<unsigned char>(s[1]))) {  // gdb / eu-stack
    s.remove_prefix(1);
    while (!s.empty() && std::isdigit(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    s = skip_blanks(s);
    if (starts(s, "0x")) {
      s = skip_blanks(skip_hex(s));
      if (starts(s, "in ")) s.remove_prefix(3);
    }
    f.function = function_name(s);
    if (const size_t from = s.rfind(" from "); from != std::string_view::npos)
      f.library = base_name(s.substr(from + 6));
    return f;
  }
  return parse_backtrace_symbol(s);
}

// libc's signal delivery and abort path, the crash handlers' own frames and
// the C++ runtime: where every crash report starts, never where it happened.
bool noise(const Frame& f) {
  if (f.function.empty()) {
    const auto lib = f.library;
    return lib.empty() || starts(lib, "libc.so") || starts(lib, "libc-") || starts(lib, "libpthread") ||
           starts(lib, "libstdc++") || starts(lib, "libgcc_s") || starts(lib, "libc10.so") ||
           starts(lib, "libucs.so");  // UCX's signal handler
  }
  for (std::string_view p : {"__restore_rt",
                             "raise",
                             "abort",
                             "__GI_",
                             "__pthread_kill",
                             "pthread_kill",
                             "gsignal",
                             "__libc_",
                             "malloc_printerr",
                             "_int_free",
                             "_int_malloc",
                             "free",
                             "malloc",
                             "cfree",
                             "__sigaction",
                             "c10::FatalSignalHandler",
                             "c10::detail::",
                             "c10::Error",
                             "google::",
                             "absl::",
                             "std::",
                             "__cxa",
                             "__gnu_cxx",
                             "__clone",
                             "clone",
                             "start_thread",
                             "ucs_handle_error",
                             "ucs_debug_",
                             "ucs_error_"})
    if (starts(f.function, p)) return true;
  return false;
}

enum class Owner { none, nccl, plugin };

// aws-ofi-nccl's symbols start "nccl_net_ofi"; a plugin is libnccl-net*.so.
Owner owner(const Frame& f) {
  const auto lib = f.library;
  if (starts(lib, "libnccl-net") || starts(f.function, "nccl_net_ofi") || starts(f.function, "nccl_ofi"))
    return Owner::plugin;
  if (starts(lib, "libnccl.so") || starts(lib, "libnccl_static") || starts(f.function, "nccl"))
    return Owner::nccl;
  return Owner::none;
}

// PyTorch aborting on purpose: its watchdog rethrows NCCL's error or a
// timeout on a thread that cannot catch it.
bool deliberate(std::string_view line) {
  for (std::string_view d : CrashStackBlock::kDeliberate)
    if (contains(line, d)) return true;
  return false;
}

}  // namespace

// What kind of fault a marker line reports; empty for an abort (PyTorch's
// watchdog, an assert) and for lines that name no fault.
static std::string_view fault_kind(std::string_view line) {
  for (std::string_view m : {"free(): ", "double free", "malloc(): ", "corrupted size", "munmap_chunk("})
    if (contains(line, m)) return "heap corruption";
  if (contains(line, "SIGSEGV") || contains(line, "Segmentation fault")) return "segmentation fault";
  if (contains(line, "SIGILL")) return "illegal instruction";
  if (contains(line, "SIGFPE")) return "floating-point exception";
  if (contains(line, "Process received signal")) return "fatal signal";
  return {};
}

void CrashStackBlock::close_window() {
  if (pending_ && !deliberate_ && !hit_) hit_ = std::move(pending_);
  if (!pending_ && !deliberate_ && !fault_kind_.empty() && !native_) {
    std::string where;
    for (const auto& n : named_) where += (where.empty() ? "" : " <- ") + n;
    native_ = Hit{marker_line_, marker_, where.empty() ? fault_kind_ : fault_kind_ + " in " + where, false,
                  !where.empty()};
  }
  pending_.reset();
  fault_kind_.clear();
  window_ = 0;
}

void CrashStackBlock::line(std::string_view text, int64_t lineno, bool marked) {
  if (window_ > 0 && --window_ == 0) close_window();
  if (!marked) {
    // No window opens here; an open one may learn that it is a deliberate abort.
    if (window_ <= 0) return;
    if (deliberate(text))
      deliberate_ = true;
    else
      read_frame(text);
    return;
  }
  // The kernel's report names the object the faulting instruction is in.
  if (const size_t at = text.find("segfault at "); at != std::string_view::npos) {
    if (const size_t in = text.find(" in lib", at); in != std::string_view::npos && !hit_) {
      const std::string_view lib = text.substr(in + 4, text.find('[', in) - in - 4);
      const Frame f{{}, lib};
      if (const Owner o = owner(f); o != Owner::none)
        hit_ = Hit{lineno, std::string(text.substr(0, 300)), std::string(lib), o == Owner::plugin};
      else if (!native_)
        native_ = Hit{lineno, std::string(text.substr(0, 300)), "segmentation fault in " + std::string(lib), false,
                      true};
    }
    return;
  }
  bool marker = false;
  for (std::string_view m : kMarkers)
    if (contains(text, m)) {
      marker = true;
      break;
    }
  if (marker && !parse_frame(text)) {
    // A deliberate abort's report carries the exception first: a crash line
    // right after one is that abort.
    const bool after_throw = deliberate_ && window_ > 0 && lineno - marker_line_ <= 8;
    // Open MPI's "Signal: Aborted (6)" under its "Process received signal"
    // names the signal: an abort, not a fault (unless glibc's heap check,
    // which aborts, opened the window).
    if (fault_kind_ == "fatal signal" && window_ > 0 && lineno - marker_line_ <= 3) {
      if (contains(text, "Aborted") || contains(text, "SIGABRT")) {
        fault_kind_.clear();
      } else if (const auto kind = fault_kind(text); !kind.empty()) {
        // "Signal: Segmentation fault (11)": the same report, its frames follow.
        fault_kind_ = std::string(kind);
        marker_ = std::string(text.substr(0, 300));
        marker_line_ = lineno;
        return;
      }
    }
    close_window();
    window_ = kWindow;
    deliberate_ = after_throw || deliberate(text);
    marker_line_ = lineno;
    marker_ = std::string(text.substr(0, 300));
    named_.clear();
    if (!deliberate_) fault_kind_ = std::string(fault_kind(text));
    return;
  }
  if (deliberate(text)) {
    // "terminate called after throwing ..." opens a window of its own: the
    // SIGABRT report that follows belongs to it. A watchdog or process-group
    // line alone (torch logs thousands of them) only marks an open window: it
    // opening one would hold every following line in the block readers.
    if (window_ <= 0 && !contains(text, kOpensDeliberate)) return;
    if (window_ <= 0) {
      window_ = kWindow;
      marker_line_ = lineno;
      named_.clear();
    }
    deliberate_ = true;
    return;
  }
  if (window_ > 0) read_frame(text);
}

void CrashStackBlock::read_frame(std::string_view text) {
  if (deliberate_ || pending_) return;
  const auto f = parse_frame(text);
  if (!f || noise(*f) || named_.size() >= kInnermost) return;
  named_.emplace_back(f->function.empty() ? f->library : f->function);
  if (const Owner o = owner(*f); o != Owner::none) {
    std::string where;
    for (const auto& n : named_) where += (where.empty() ? "" : " <- ") + n;
    pending_ = Hit{marker_line_, marker_, where, o == Owner::plugin};
  }
}

void CrashStackBlock::finish(const std::string& source, const std::string& host, EvidenceSet& set,
                             bool nccl_seen) {
  close_window();
  if (!hit_ && native_) {
    Finding f;
    f.id = "log.native_crash";
    f.layer = nccl_seen ? Layer::nccl : Layer::framework;
    f.severity = Severity::error;
    f.role = nccl_seen ? FindingRole::primary : FindingRole::symptom;
    f.summary = "a process died of a native fault (" + native_->where + ")" +
                (!nccl_seen         ? ": the process died in native code, not by a Python exception"
                 : native_->framed ? ", in a process running NCCL, with the fault in code that is not NCCL's"
                                   : " with no stack shown, in a process running NCCL: most often a defect of NCCL "
                                     "or a library beside it, else memory corrupted by a native extension");
    if (!host.empty()) f.subject.host = host;
    f.provenance.push_back(Provenance{source, native_->lineno, native_->text});
    f.order = native_->lineno;
    f.fields = {{"fault", native_->where}};
    // Weights: nudges (the corpus's tuning part has two such crashes without
    // a stack, both NCCL defects); too few cases to estimate a ratio. A stack
    // that places the fault in other code (an extension, the framework) is
    // evidence for that code, not for NCCL.
    if (nccl_seen)
      f.supports = native_->framed ? std::vector<CauseSupport>{{"user_code_bug", 2}, {"nccl_bug", 1.2}}
                                   : std::vector<CauseSupport>{{"nccl_bug", 5}, {"user_code_bug", 1.2}};
    set.findings.push_back(std::move(f));
  }
  if (!hit_) return;
  Finding f;
  f.id = hit_->plugin ? "log.crash_in_net_plugin" : "log.crash_in_nccl";
  f.layer = Layer::nccl;
  f.severity = Severity::critical;
  f.role = FindingRole::primary;
  f.summary = hit_->plugin ? "a native crash with the NCCL net plugin's code on the stack (" + hit_->where +
                                 "): a plugin defect or a plugin that does not fit this NCCL / fabric library"
                           : "a native crash with NCCL's own code on the stack (" + hit_->where +
                                 "): an NCCL defect, or memory NCCL was handed that was already freed";
  if (!host.empty()) f.subject.host = host;
  f.provenance.push_back(Provenance{source, hit_->lineno, hit_->text});
  f.order = hit_->lineno;
  f.supports = hit_->plugin ? std::vector<CauseSupport>{{"net_plugin_mismatch", 4}, {"nccl_bug", 1.5}}
                            : std::vector<CauseSupport>{{"nccl_bug", 6}, {"user_code_bug", 1.5}};
  set.findings.push_back(std::move(f));
}

}  // namespace ccdiag
