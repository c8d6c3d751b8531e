#include "collectors/python/python_stacks.hpp"

#include <regex>

#include <fmt/format.h>

#include "collectors/proc/proc_parse.hpp"
#include "collectors/python/elf_symbols.hpp"
#include "collectors/python/layout.hpp"

namespace ccdiag::python {

namespace {

std::string basename_of(const std::string& p) {
  auto s = p.rfind('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

std::string strip_deleted(std::string p) {
  const std::string suf = " (deleted)";
  if (p.size() > suf.size() && p.compare(p.size() - suf.size(), suf.size(), suf) == 0) p.resize(p.size() - suf.size());
  return p;
}

int minor_from_name(const std::string& base) {
  std::smatch mm;
  static const std::regex re(R"(python3\.(\d+))");
  if (std::regex_search(base, mm, re)) return std::stoi(mm[1]);
  return 0;
}

bool is_eval_frame(const StackFrame& f) { return f.function.find("_PyEval_EvalFrameDefault") != std::string::npos; }

StackFrame to_stack_frame(const PyFrame& p) {
  StackFrame f;
  f.function = p.function;
  f.file = p.file;
  f.line = p.line;
  f.kind = "python";
  return f;
}

}  // namespace

Result<RuntimeLocation> locate_runtime(const SysRoot& root, int64_t pid, const MemoryReader& m) {
  const std::string dir = "/proc/" + std::to_string(pid);
  auto maps_text = root.read_file(dir + "/maps", 16 << 20);
  if (!maps_text) return maps_text.error();
  const auto maps = parse_maps(*maps_text);
  struct Cand {
    std::string path;   // as in maps
    std::string open;   // host path to read the file
  };
  std::vector<Cand> cands;
  const std::string exe = strip_deleted(root.read_link(dir + "/exe").value_or(""));
  if (minor_from_name(basename_of(exe)) || basename_of(exe).rfind("python", 0) == 0)
    cands.push_back({exe, dir + "/exe"});
  for (const auto& e : maps) {
    const std::string p = strip_deleted(e.path);
    if (basename_of(p).rfind("libpython", 0) != 0 || e.offset != 0) continue;
    bool dup = false;
    for (const auto& c : cands) dup = dup || c.path == p;
    if (!dup) cands.push_back({p, dir + "/root" + p});
  }
  if (cands.empty()) return make_error("not a Python process");
  std::string last_err = "stripped interpreter: no _PyRuntime symbol or .PyRuntime section";
  for (const auto& c : cands) {
    auto img = ElfImage::open(root.path(c.open));
    if (!img) {
      last_err = "cannot read " + c.path + " as an ELF64 file";
      continue;
    }
    uint64_t bias = 0;
    if (!img->is_exec()) {
      bool found = false;
      for (const auto& e : maps)
        if (strip_deleted(e.path) == c.path && e.offset == 0) {
          bias = e.start - img->first_load_vaddr();
          found = true;
          break;
        }
      if (!found) {
        last_err = c.path + " not mapped at offset 0";
        continue;
      }
    }
    uint64_t rt = 0;
    if (auto s = img->symbol("_PyRuntime")) rt = bias + s->value;
    else if (auto a = img->section_addr(".PyRuntime")) rt = bias + *a;
    if (!rt) continue;
    RuntimeLocation loc;
    loc.runtime = rt;
    loc.module = basename_of(c.path);
    char cookie[8] = {};
    if (m.read_exact(rt, cookie, 8) && std::string_view(cookie, 8) == "xdebugpy") {
      uint64_t v = 0;
      m.read_exact(rt + 8, &v, 8);
      loc.version_hex = v;
      loc.minor = static_cast<int>((v >> 16) & 0xff);
    } else if (auto pv = img->symbol("Py_Version")) {
      uint64_t v = 0;
      if (m.read_exact(bias + pv->value, &v, 8) && (v >> 24) == 3) {
        loc.version_hex = v;
        loc.minor = static_cast<int>((v >> 16) & 0xff);
      }
    }
    if (!loc.minor) loc.minor = minor_from_name(loc.module);
    if (!loc.minor) {
      last_err = "cannot tell the CPython version of " + c.path;
      continue;
    }
    // A static python with a stray libpython: keep the initialised runtime.
    if (auto l = static_layout(loc.minor)) {
      uint64_t head = 0;
      if (!m.read_exact(rt + l->rt_interpreters_head, &head, 8) || !head) {
        last_err = "runtime in " + c.path + " has no interpreter";
        continue;
      }
    }
    return loc;
  }
  return make_error(last_err);
}

bool interleave(std::vector<StackFrame>& native, const std::vector<PyFrame>& py) {
  if (py.empty()) return true;
  size_t evals = 0, entries = 0;
  for (const auto& f : native) evals += is_eval_frame(f);
  for (const auto& p : py) entries += p.is_entry;
  // py-spy's tolerance: one more activation than runs = a frame just popped
  // or not yet pushed.
  if (evals == 0 || !(evals == entries || evals == entries + 1)) {
    for (const auto& p : py) native.push_back(to_stack_frame(p));
    return false;
  }
  std::vector<StackFrame> out;
  size_t cur = 0;
  for (auto& f : native) {
    if (is_eval_frame(f)) {
      // One activation = Python frames up to and including the next entry.
      while (cur < py.size()) {
        const bool entry = py[cur].is_entry;
        out.push_back(to_stack_frame(py[cur++]));
        if (entry) break;
      }
      continue;  // the eval-loop frame itself is replaced by its Python frames
    }
    out.push_back(std::move(f));
  }
  for (; cur < py.size(); ++cur) out.push_back(to_stack_frame(py[cur]));
  native = std::move(out);
  return true;
}

void add_python_frames(const SysRoot& root, ProcessStacks& ps) {
  const LiveMemoryReader live(static_cast<pid_t>(ps.pid));
  const PageCachedMemoryReader mem(live);  // the walk reads a few pages hundreds of times
  auto loc = locate_runtime(root, ps.pid, mem);
  if (!loc) {
    if (loc.error().message != "not a Python process") ps.python_error = loc.error().message;
    return;
  }
  ps.python_version = loc->version_hex
                          ? fmt::format("{}.{}.{}", loc->version_hex >> 24, (loc->version_hex >> 16) & 0xff,
                                        (loc->version_hex >> 8) & 0xff)
                          : fmt::format("3.{}", loc->minor);
  Result<Layout> layout = make_error("");
  if (loc->minor >= 13) {
    layout = layout_from_debug_offsets(mem, loc->runtime, nullptr);
  } else if (auto l = static_layout(loc->minor)) {
    layout = *l;
  } else {
    layout = make_error(fmt::format("CPython 3.{} not supported (3.10-3.14 are)", loc->minor));
  }
  if (!layout) {
    ps.python_error = layout.error().message;
    return;
  }
  auto threads = walk_runtime(mem, loc->runtime, *layout);
  if (!threads) {
    ps.python_error = threads.error().message;
    return;
  }
  for (const auto& pt : *threads) {
    ThreadStack* ts = nullptr;
    for (auto& t : ps.threads)
      if (pt.native_tid > 0 && t.tid == pt.native_tid) ts = &t;
    if (!ts) {
      if (!pt.frames.empty())
        ps.problems.push_back(fmt::format("Python thread 0x{:x} (tid {}) not matched to a task", pt.thread_id,
                                          pt.native_tid));
      continue;
    }
    ts->py_thread_id = pt.thread_id;
    ts->holds_gil = pt.holds_gil;
    ts->py_name = pt.name;
    if (pt.c10d) ts->c10d = C10dWaitInfo{pt.c10d->op, pt.c10d->pg_name, pt.c10d->pg_desc, pt.c10d->ranks};
    if (!pt.error.empty()) ps.problems.push_back(fmt::format("thread {}: Python frames: {}", ts->tid, pt.error));
    if (!interleave(ts->frames, pt.frames))
      ps.problems.push_back(fmt::format(
          "thread {}: Python frames not interleaved (eval-loop frames and Python entry frames disagree); "
          "listed after the native frames",
          ts->tid));
  }
}

}  // namespace ccdiag::python
