// The line sieve of the log facts: a line that holds none of the literals
// some check needs is skipped unread, so the facts of a sieved read must be
// those of a line-by-line read, on every real log the project has (the
// incident corpus, the scenario and fixture logs, the examples). A check
// added to Extractor::line without its literal in kFactLiterals fails here
// as soon as any of those logs holds a line only that check reads.
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "analysis/tree/log_facts.hpp"

using namespace ccdiag;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

nlohmann::json facts_of(const std::string& text, size_t sieve_from) {
  EvidenceSet set;
  extract_log_facts(text, "t.log", "", set, sieve_from);
  nlohmann::json j = {{"evidence", nlohmann::json::array()}, {"findings", nlohmann::json::array()}};
  for (const auto& e : set.evidence) j["evidence"].push_back(e);
  for (const auto& f : set.findings) j["findings"].push_back(f);
  return j;
}

// Sieved (every block) against never sieved.
void same_facts(const std::string& text, const std::string& what) {
  INFO(what);
  const auto sieved = facts_of(text, 0);
  const auto plain = facts_of(text, std::numeric_limits<size_t>::max());
  if (sieved != plain) {
    // The first difference, to name the line a check read without its literal.
    const auto patch = nlohmann::json::diff(plain, sieved);
    FAIL_CHECK(what << ": sieved facts differ: " << patch.dump().substr(0, 600));
  }
}

std::string case_log(const nlohmann::json& c) {
  const auto& e = c["evidence_logs"];
  if (e.is_string()) return e.get<std::string>();
  std::string out;
  for (const auto& x : e) out += (x.is_string() ? x.get<std::string>() : x.dump()) + "\n";
  return out;
}

}  // namespace

TEST_CASE("sieved log facts equal line-by-line facts on the real incident corpus", "[tree][facts-sieve]") {
  const fs::path dir = fs::path(CCDIAG_SOURCE_DIR) / "tests/corpus/cases";
  size_t n = 0;
  for (const auto& ent : fs::directory_iterator(dir)) {
    if (ent.path().extension() != ".json") continue;
    const auto c = nlohmann::json::parse(slurp(ent.path()), nullptr, false);
    if (c.is_discarded() || !c.contains("evidence_logs")) continue;
    same_facts(case_log(c), ent.path().filename().string());
    ++n;
  }
  CHECK(n >= 150);
}

TEST_CASE("sieved log facts equal line-by-line facts on the scenario, fixture and example logs",
          "[tree][facts-sieve]") {
  size_t n = 0;
  for (const char* sub : {"tests/scenarios", "tests/fixtures/logs", "tests/fixtures/torch", "examples"}) {
    const fs::path dir = fs::path(CCDIAG_SOURCE_DIR) / sub;
    if (!fs::exists(dir)) continue;
    for (const auto& ent : fs::recursive_directory_iterator(dir)) {
      if (!ent.is_regular_file()) continue;
      const auto ext = ent.path().extension();
      if (ext != ".log" && ext != ".txt" && ext != ".out") continue;
      if (ent.file_size() > (8u << 20)) continue;
      same_facts(slurp(ent.path()), ent.path().string());
      ++n;
    }
  }
  CHECK(n >= 100);
}

TEST_CASE("the sieve skips quiet lines and keeps each check's lines", "[tree][facts-sieve]") {
  // Lines only one check reads each, between progress lines no check reads.
  const std::string quiet =
      "[rank3]:2026-04-22 21:58:30,593 - INFO - trainer.py:412 - step 3343 | loss 2.7722\n";
  std::string text;
  for (const char* l :
       {"    host      : node7.cluster\n", "    rank      : 3 (local_rank: 3)\n",
        "    exitcode  : 1 (pid: 4411)\n", "    inet 10.1.2.3/24 brd 10.1.2.255 scope global ens1\n",
        "Traceback (most recent call last):\n", "  File \"train.py\", line 12, in <module>\n",
        "    raise ValueError(\"bad\")\n", "ValueError: bad shape\n",
        "\x1b[31mRuntimeError: \x1b[0mNCCL error in: x.cpp:12, unhandled system error\n",
        "Signal 9 (SIGKILL) received by PID 4411\n",
        "terminate called after throwing an instance of 'c10::Error'\n",
        "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\n", "GPU0\t X \tSYS\t0-31\t0\n",
        "GPU1\tSYS\t X \t0-31\t0\n"}) {
    text += quiet;
    text += l;
  }
  for (int i = 0; i < 50; ++i) text += quiet;
  same_facts(text, "hand-made mix");
  // And the unterminated last line of a block.
  same_facts(text + "RuntimeError: the last line", "unterminated last line");
  const auto facts = facts_of(text, 0);
  bool exited = false, exception = false;
  for (const auto& f : facts["findings"]) {
    exited |= f["id"] == "log.rank_exited";
    exception |= f["id"] == "log.python_exception";
  }
  CHECK(exited);
  CHECK(exception);
}

TEST_CASE(
    "the sieve's crash set: a window opens on a marker, a process-group line inside it marks it deliberate",
    "[tree][facts-sieve]") {
  // Torch's ProcessGroupNCCL lines are read by the crash reader only inside an
  // open window; outside one the sieve keeps them from its marker search.
  const std::string quiet =
      "[rank3]:2026-04-22 21:58:30,593 - INFO - trainer.py:412 - step 3343 | loss 2.7722\n";
  const std::string watchdog =
      "[rank3]:[I1205 10:00:00.000000000 ProcessGroupNCCL.cpp:2025] [PG ID 0 PG GUID 0(default_pg) Rank 3] "
      "ProcessGroupNCCL created ncclComm_ 0x55d0 on CUDA device: 3\n";
  const std::string crash =
      "[rank3]:*** SIGSEGV (@0x0) received by PID 2211 (TID 0x7f3a2bfff640) from PID 0; stack trace: ***\n";
  const std::string frames =
      "    @     0x7f3b7e4a2520 (unknown)\n    @     0x7f3a9c6f1e3a ncclProxyProgress()\n";
  auto crash_in_nccl = [](const std::string& text) {
    const auto facts = facts_of(text, 0);
    for (const auto& f : facts["findings"])
      if (f["id"] == "log.crash_in_nccl") return true;
    return false;
  };
  std::string plain_crash, deliberate_crash;
  for (int i = 0; i < 20; ++i) plain_crash += quiet + watchdog;
  deliberate_crash = plain_crash;
  plain_crash += crash + quiet + frames;
  deliberate_crash += crash + watchdog + frames;
  same_facts(plain_crash, "a crash after process-group lines");
  same_facts(deliberate_crash, "a process-group line inside the crash's window");
  CHECK(crash_in_nccl(plain_crash));
  CHECK_FALSE(crash_in_nccl(deliberate_crash));
}

TEST_CASE("the sieve's NCCL count: a line whose NCCL a carriage return redraws away is not counted",
          "[tree][facts-sieve]") {
  // The sieve marks the whole line; the facts read what the terminal showed
  // after its last '\r' (fuzzer finding: nccl_lines differed).
  const std::string quiet = "[rank3]:2026-04-22 21:58:30,593 - INFO - trainer.py:412 - step 3343 | loss 2.7722\n";
  std::string text;
  for (int i = 0; i < 20; ++i) text += quiet;
  text += "gpu-node-01:41205:41205 [5] NCCL\r INFO cudaDriverVersion 12040\n";
  text += "gpu-node-01:41205:41205 [5] NCCL INFO cudaDriverVersion 12040\n";
  text += quiet;
  same_facts(text, "an NCCL line cut by a carriage return");
  const auto facts = facts_of(text, 0);
  int64_t nccl_lines = -1;
  for (const auto& e : facts["evidence"])
    if (e["kind"] == "log.facts_summary") nccl_lines = e["data"]["nccl_lines"].get<int64_t>();
  CHECK(nccl_lines == 1);
}
