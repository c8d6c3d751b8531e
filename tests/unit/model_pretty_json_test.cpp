// PrettyJson writes what json_text prints for the same tree, byte for byte:
// on random trees (every value type, awkward strings, nesting, empty
// containers) and on a stack capture with every optional member.
#include <catch2/catch.hpp>

#include <random>
#include <string>

#include "ccdiag/pretty_json.hpp"
#include "ccdiag/stack_model.hpp"
#include "ccdiag/utf8.hpp"

using namespace ccdiag;

namespace {

std::string pretty(const nlohmann::json& j) {
  std::string out;
  PrettyJson w(out);
  w.value(j);
  return out;
}

// Strings with the bytes JSON escapes, UTF-8, and invalid UTF-8 (repaired).
std::string random_string(std::mt19937& rng) {
  static const std::string pieces[] = {"a",  "frame", " ",    "\"",   "\\",   "\n",    "\t",
                                       "\r", "\b",    "\f",   "\x01", "\x1f", "\x7f",  "é",
                                       "→",  "😀",     "\xff", "\xc3", "/",    "0x7f3a"};
  std::string s;
  const size_t n = rng() % 6;
  for (size_t i = 0; i < n; ++i) s += pieces[rng() % std::size(pieces)];
  return s;
}

nlohmann::json random_tree(std::mt19937& rng, int depth) {
  switch (rng() % (depth > 3 ? 6 : 8)) {
    case 0:
      return nullptr;
    case 1:
      return rng() % 2 == 0;
    case 2:
      return static_cast<int64_t>(rng()) - (1LL << 31);
    case 3:
      return static_cast<uint64_t>(rng()) << 20;
    case 4:
      return static_cast<double>(rng() % 100000) / 64.0 + (rng() % 3 == 0 ? 1e-7 : 0.0);
    case 5:
      return random_string(rng);
    case 6: {
      nlohmann::json a = nlohmann::json::array();
      for (size_t i = rng() % 4; i > 0; --i) a.push_back(random_tree(rng, depth + 1));
      return a;
    }
    default: {
      nlohmann::json o = nlohmann::json::object();
      for (size_t i = rng() % 4; i > 0; --i) o[random_string(rng)] = random_tree(rng, depth + 1);
      return o;
    }
  }
}

}  // namespace

TEST_CASE("PrettyJson prints what json_text prints on random trees", "[model][pretty-json]") {
  std::mt19937 rng(11);
  for (int n = 0; n < 3000; ++n) {
    const nlohmann::json j = random_tree(rng, 0);
    INFO(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    REQUIRE(pretty(j) == json_text(j));
  }
  // Values json_text cannot hold as numbers print as its dump does.
  CHECK(pretty(nlohmann::json(std::numeric_limits<double>::infinity())) == "null");
  CHECK(pretty(nlohmann::json::object()) == "{}");
  CHECK(pretty(nlohmann::json::array()) == "[]");
}

TEST_CASE("a stack capture written directly equals its to_json tree through json_text",
          "[model][pretty-json]") {
  ProcessStacks p;
  p.pid = 4411;
  p.host = "node7";
  p.comm = "python3";
  p.pause_ms = 1.795574;
  p.wall_ms = 7.5;
  p.activity = "in recv on a socket (under wait_for_peer)";
  p.problems = {"thread 9 not stopped (D, \"nfs\")"};
  p.python_version = "3.11.2";
  p.progress = ThreadProgress{250.0, 3, 1, 0.25};
  ThreadStack t;
  t.tid = 4411;
  t.name = "pt_main_thread";
  t.state = "S";
  t.wchan = "futex_wait_queue";
  t.syscall_nr = 202;
  t.syscall = "futex";
  t.blocked_in = "futex wait 0x7f00";
  t.capture = "stopped";
  t.role = "main";
  t.frames.push_back(StackFrame{0x7f3a9c6f1e3a, "ncclProxyProgress", "libnccl.so.2", std::string("proxy.cc"),
                                812, "native"});
  t.frames.push_back(StackFrame{0, "train_step", "", std::string("train.py"), std::nullopt, "python"});
  t.frames.push_back(StackFrame{0x10, "",
                                "\xff"
                                "bad.so",
                                std::nullopt, std::nullopt, "native"});
  t.unwind_error = "no CFI for 0x10";
  t.kernel_stack = {"nfs_wait_bit_killable", "__rpc_execute"};
  t.py_thread_id = 0x7f00deadbeefULL;
  t.holds_gil = true;
  t.py_name = "MainThread";
  t.c10d = C10dWaitInfo{"allreduce", "0", "default_pg", {0, 1, 2}};
  p.threads.push_back(t);
  ThreadStack bare;  // no optional member, nothing unwound
  bare.tid = 4412;
  p.threads.push_back(bare);

  std::string direct;
  PrettyJson w(direct);
  write_json(w, p);
  CHECK(direct == json_text(nlohmann::json(p)));

  // And without the process's optional members.
  p.host.reset();
  p.progress.reset();
  p.python_version.clear();
  p.rank = 3;
  direct.clear();
  PrettyJson w2(direct);
  write_json(w2, p);
  CHECK(direct == json_text(nlohmann::json(p)));
}
