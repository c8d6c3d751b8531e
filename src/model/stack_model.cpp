#include "ccdiag/stack_model.hpp"

#include <fmt/format.h>

#include "ccdiag/pretty_json.hpp"

namespace ccdiag {

void to_json(nlohmann::json& j, const StackFrame& f) {
  j = nlohmann::json{{"pc", fmt::format("0x{:x}", f.pc)},
                     {"function", f.function},
                     {"module", f.module},
                     {"file", f.file ? nlohmann::json(*f.file) : nlohmann::json(nullptr)},
                     {"line", f.line ? nlohmann::json(*f.line) : nlohmann::json(nullptr)},
                     {"kind", f.kind}};
}

void from_json(const nlohmann::json& j, StackFrame& f) {
  const std::string pc = j.value("pc", "0x0");
  f.pc = std::strtoull(pc.c_str(), nullptr, 16);
  f.function = j.value("function", "");
  f.module = j.value("module", "");
  if (j.contains("file") && j["file"].is_string()) f.file = j["file"].get<std::string>();
  if (j.contains("line") && j["line"].is_number_integer()) f.line = j["line"].get<int>();
  f.kind = j.value("kind", "native");
}

void to_json(nlohmann::json& j, const ThreadStack& t) {
  j = nlohmann::json{{"tid", t.tid},
                     {"name", t.name},
                     {"state", t.state},
                     {"wchan", t.wchan},
                     {"syscall_nr", t.syscall_nr ? nlohmann::json(*t.syscall_nr) : nlohmann::json(nullptr)},
                     {"syscall", t.syscall},
                     {"blocked_in", t.blocked_in},
                     {"capture", t.capture},
                     {"role", t.role},
                     {"frames", t.frames}};
  if (!t.unwind_error.empty()) j["unwind_error"] = t.unwind_error;
  if (!t.kernel_stack.empty()) j["kernel_stack"] = t.kernel_stack;
  if (t.py_thread_id)
    j["python"] =
        nlohmann::json{{"thread_id", fmt::format("0x{:x}", *t.py_thread_id)}, {"holds_gil", t.holds_gil}};
  if (t.py_thread_id && !t.py_name.empty()) j["python"]["name"] = t.py_name;
  if (t.c10d)
    j["c10d"] = nlohmann::json{{"op", t.c10d->op},
                               {"process_group", t.c10d->process_group},
                               {"pg_desc", t.c10d->pg_desc},
                               {"ranks", t.c10d->ranks}};
}

void from_json(const nlohmann::json& j, ThreadStack& t) {
  t.tid = j.value("tid", int64_t{0});
  t.name = j.value("name", "");
  t.state = j.value("state", "");
  t.wchan = j.value("wchan", "");
  if (j.contains("syscall_nr") && j["syscall_nr"].is_number_integer())
    t.syscall_nr = j["syscall_nr"].get<int64_t>();
  t.syscall = j.value("syscall", "");
  t.blocked_in = j.value("blocked_in", "");
  t.capture = j.value("capture", "");
  t.role = j.value("role", "");
  if (j.contains("frames") && j["frames"].is_array())
    for (const auto& f : j["frames"]) t.frames.push_back(f.get<StackFrame>());
  t.unwind_error = j.value("unwind_error", "");
  if (j.contains("kernel_stack") && j["kernel_stack"].is_array())
    for (const auto& k : j["kernel_stack"])
      if (k.is_string()) t.kernel_stack.push_back(k.get<std::string>());
  if (j.contains("python") && j["python"].is_object()) {
    t.py_thread_id = std::strtoull(j["python"].value("thread_id", "0x0").c_str(), nullptr, 16);
    t.holds_gil = j["python"].value("holds_gil", false);
    t.py_name = j["python"].value("name", "");
  }
  if (j.contains("c10d") && j["c10d"].is_object()) {
    const auto& c = j["c10d"];
    C10dWaitInfo w;
    w.op = c.value("op", "");
    w.process_group = c.value("process_group", "");
    w.pg_desc = c.value("pg_desc", "");
    if (c.contains("ranks") && c["ranks"].is_array())
      for (const auto& r : c["ranks"])
        if (r.is_number_integer()) w.ranks.push_back(r.get<int>());
    t.c10d = std::move(w);
  }
}

void to_json(nlohmann::json& j, const ThreadProgress& p) {
  j = nlohmann::json{{"window_ms", p.window_ms},
                     {"wakeups", p.wakeups},
                     {"preemptions", p.preemptions},
                     {"cpu_ms", p.cpu_ms}};
}

void to_json(nlohmann::json& j, const ProcessStacks& p) {
  j = nlohmann::json{
      {"pid", p.pid},         {"rank", p.rank ? nlohmann::json(*p.rank) : nlohmann::json(nullptr)},
      {"comm", p.comm},       {"pause_ms", p.pause_ms},
      {"wall_ms", p.wall_ms}, {"activity", p.activity},
      {"threads", p.threads}, {"problems", p.problems}};
  if (p.host) j["host"] = *p.host;
  if (!p.python_version.empty() || !p.python_error.empty())
    j["python"] = nlohmann::json{{"version", p.python_version}, {"error", p.python_error}};
  if (p.progress) j["progress"] = *p.progress;
}

void from_json(const nlohmann::json& j, ProcessStacks& p) {
  p.pid = j.value("pid", int64_t{0});
  if (j.contains("rank") && j["rank"].is_number_integer()) p.rank = j["rank"].get<int>();
  if (j.contains("host") && j["host"].is_string()) p.host = j["host"].get<std::string>();
  p.comm = j.value("comm", "");
  p.pause_ms = j.value("pause_ms", 0.0);
  p.wall_ms = j.value("wall_ms", 0.0);
  p.activity = j.value("activity", "");
  if (j.contains("threads") && j["threads"].is_array())
    for (const auto& t : j["threads"]) p.threads.push_back(t.get<ThreadStack>());
  if (j.contains("problems") && j["problems"].is_array())
    for (const auto& s : j["problems"])
      if (s.is_string()) p.problems.push_back(s.get<std::string>());
  if (j.contains("python") && j["python"].is_object()) {
    p.python_version = j["python"].value("version", "");
    p.python_error = j["python"].value("error", "");
  }
  if (j.contains("progress") && j["progress"].is_object()) {
    const auto& g = j["progress"];
    ThreadProgress t;
    auto num = [&](const char* k) { return g.contains(k) && g[k].is_number() ? g[k].get<double>() : 0.0; };
    t.window_ms = num("window_ms");
    t.cpu_ms = num("cpu_ms");
    if (g.contains("wakeups") && g["wakeups"].is_number_unsigned()) t.wakeups = g["wakeups"].get<uint64_t>();
    if (g.contains("preemptions") && g["preemptions"].is_number_unsigned())
      t.preemptions = g["preemptions"].get<uint64_t>();
    p.progress = t;
  }
}

// The same members as the to_json functions above, keys in sorted order
// (nlohmann's objects are std::maps): a unit test holds the two equal.
namespace {

void write_frame(PrettyJson& w, const StackFrame& f) {
  w.begin_object();
  w.key("file");
  if (f.file)
    w.string(*f.file);
  else
    w.null();
  w.key("function");
  w.string(f.function);
  w.key("kind");
  w.string(f.kind);
  w.key("line");
  if (f.line)
    w.integer(*f.line);
  else
    w.null();
  w.key("module");
  w.string(f.module);
  w.key("pc");
  w.string(fmt::format("0x{:x}", f.pc));
  w.end_object();
}

void write_strings(PrettyJson& w, const std::vector<std::string>& v) {
  w.begin_array();
  for (const auto& s : v) w.string(s);
  w.end_array();
}

void write_thread(PrettyJson& w, const ThreadStack& t) {
  w.begin_object();
  w.key("blocked_in");
  w.string(t.blocked_in);
  if (t.c10d) {
    w.key("c10d");
    w.begin_object();
    w.key("op");
    w.string(t.c10d->op);
    w.key("pg_desc");
    w.string(t.c10d->pg_desc);
    w.key("process_group");
    w.string(t.c10d->process_group);
    w.key("ranks");
    w.begin_array();
    for (int r : t.c10d->ranks) w.integer(r);
    w.end_array();
    w.end_object();
  }
  w.key("capture");
  w.string(t.capture);
  w.key("frames");
  w.begin_array();
  for (const auto& f : t.frames) write_frame(w, f);
  w.end_array();
  if (!t.kernel_stack.empty()) {
    w.key("kernel_stack");
    write_strings(w, t.kernel_stack);
  }
  w.key("name");
  w.string(t.name);
  if (t.py_thread_id) {
    w.key("python");
    w.begin_object();
    w.key("holds_gil");
    w.boolean(t.holds_gil);
    if (!t.py_name.empty()) {
      w.key("name");
      w.string(t.py_name);
    }
    w.key("thread_id");
    w.string(fmt::format("0x{:x}", *t.py_thread_id));
    w.end_object();
  }
  w.key("role");
  w.string(t.role);
  w.key("state");
  w.string(t.state);
  w.key("syscall");
  w.string(t.syscall);
  w.key("syscall_nr");
  if (t.syscall_nr)
    w.integer(*t.syscall_nr);
  else
    w.null();
  w.key("tid");
  w.integer(t.tid);
  if (!t.unwind_error.empty()) {
    w.key("unwind_error");
    w.string(t.unwind_error);
  }
  w.key("wchan");
  w.string(t.wchan);
  w.end_object();
}

}  // namespace

void write_json(PrettyJson& w, const ProcessStacks& p) {
  w.begin_object();
  w.key("activity");
  w.string(p.activity);
  w.key("comm");
  w.string(p.comm);
  if (p.host) {
    w.key("host");
    w.string(*p.host);
  }
  w.key("pause_ms");
  w.number(p.pause_ms);
  w.key("pid");
  w.integer(p.pid);
  w.key("problems");
  write_strings(w, p.problems);
  if (p.progress) {
    w.key("progress");
    w.begin_object();
    w.key("cpu_ms");
    w.number(p.progress->cpu_ms);
    w.key("preemptions");
    w.unsigned_integer(p.progress->preemptions);
    w.key("wakeups");
    w.unsigned_integer(p.progress->wakeups);
    w.key("window_ms");
    w.number(p.progress->window_ms);
    w.end_object();
  }
  if (!p.python_version.empty() || !p.python_error.empty()) {
    w.key("python");
    w.begin_object();
    w.key("error");
    w.string(p.python_error);
    w.key("version");
    w.string(p.python_version);
    w.end_object();
  }
  w.key("rank");
  if (p.rank)
    w.integer(*p.rank);
  else
    w.null();
  w.key("threads");
  w.begin_array();
  for (const auto& t : p.threads) write_thread(w, t);
  w.end_array();
  w.key("wall_ms");
  w.number(p.wall_ms);
  w.end_object();
}

}  // namespace ccdiag
