// Plain data for native (and later Python) stacks of a process: what `ccdiag
// stacks --json` prints under processes[] (docs/schema/stacks.schema.json), what
// the `stacks.process` evidence carries in bundles, and what the census reads.
// The data model only, so the unwinder (collectors/stacks/) that fills it and
// the census (analysis/census/) that reads it meet in the model layer; its JSON
// is in src/model/stack_model.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ccdiag {

struct StackFrame {
  uint64_t pc = 0;
  std::string function;                // demangled; "" when no symbol
  std::string module;                  // basename of the ELF ("libc.so.6"), "" when unknown
  std::optional<std::string> file;     // source file when debug info has it
  std::optional<int> line;
  std::string kind = "native";         // native | python
};

// The c10d collective a thread waits in, from its Python frames
// (collectors/python/walker.hpp C10dWait): op, process group name ("0" =
// default), description (pg_desc: "default_pg", "mesh_tp") and members.
struct C10dWaitInfo {
  std::string op;
  std::string process_group;
  std::string pg_desc;
  std::vector<int> ranks;  // global ranks, sorted; empty when unknown
};

struct ThreadStack {
  int64_t tid = 0;
  std::string name;                    // /proc/PID/task/TID/comm
  std::string state;                   // /proc state letter before the stop ("S", "D", "R")
  std::string wchan;                   // kernel function it sleeps in ("" when running)
  std::optional<int64_t> syscall_nr;   // from /proc/.../syscall before the stop
  std::string syscall;                 // its name ("futex"), "" when running/unknown
  std::string blocked_in;              // "futex wait", "recvfrom fd 5 -> socket:[123]", "running"
  std::string capture;                 // stopped | not_stopped | exited | seize_failed
  std::string role;                    // ccdiag/thread_roles.hpp: main, nccl_proxy_progress, ...
  std::vector<StackFrame> frames;      // innermost first
  std::string unwind_error;            // why the stack ended early, "" when it ended at a root
  std::vector<std::string> kernel_stack;  // D-state threads only, /proc/.../stack (root only), innermost first
  std::optional<uint64_t> py_thread_id;  // CPython thread state's thread_id (pthread_t) when it has one
  bool holds_gil = false;                // this thread holds the GIL right now
  std::optional<C10dWaitInfo> c10d;      // the c10d collective it waits in, when Python frames show one
  std::string py_name;                   // threading.Thread name ("" when not a Thread or unreadable); `name` stays the native one
};

// The main thread's scheduler counters over a short window before the
// capture (collectors/proc/thread_progress.hpp): a rank blocked in a hung
// collective does not wake; one of a running job wakes at every completion.
struct ThreadProgress {
  double window_ms = 0;
  uint64_t wakeups = 0;       // voluntary context switches in the window
  uint64_t preemptions = 0;   // involuntary ones (it was running)
  double cpu_ms = 0;          // user + system CPU time in the window
};

struct ProcessStacks {
  int64_t pid = 0;
  std::optional<int> rank;             // when known from rank discovery
  std::optional<std::string> host;
  std::string comm;
  double pause_ms = 0;                 // first PTRACE_INTERRUPT -> last PTRACE_DETACH
  double wall_ms = 0;                  // whole collection for this process
  std::string activity;                // one line: "in recv on a socket (under wait_for_peer)"
  std::vector<ThreadStack> threads;
  std::vector<std::string> problems;   // "thread 123 not stopped (D, kernel_clone)", exec during capture ...
  std::string python_version;          // "3.11.2" when a CPython runtime was read
  std::string python_error;            // why Python frames are unavailable ("" when read or not Python)
  std::optional<ThreadProgress> progress;  // main thread, measured just before the capture (live only)
};

void to_json(nlohmann::json& j, const StackFrame& f);
void from_json(const nlohmann::json& j, StackFrame& f);
void to_json(nlohmann::json& j, const ThreadStack& t);
void from_json(const nlohmann::json& j, ThreadStack& t);
void to_json(nlohmann::json& j, const ThreadProgress& p);
void to_json(nlohmann::json& j, const ProcessStacks& p);
// p as to_json's tree would print through json_text, without the tree.
class PrettyJson;
void write_json(PrettyJson& w, const ProcessStacks& p);
void from_json(const nlohmann::json& j, ProcessStacks& p);

}  // namespace ccdiag
