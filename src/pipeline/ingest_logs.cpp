// Log ingestion: every log file goes through the log analyser together, so
// the first failure and its cascades are found across ranks and hosts; its
// findings and evidence (nccl.topology, nccl.version, log.summary) join the set.
// The decision tree's log facts (analysis/tree/log_facts.hpp) read the same
// lines: plain and .gz logs give the same facts and the same verdict (stdin is
// read once into memory for both).
//
// Cores: the facts of one file depend on that file alone (each extractor's
// state is its own), so with several files and several CPUs they are
// extracted on worker threads, each file into its own set, while this thread
// runs the analyser over the files in order; the sets are appended in input
// order, which is exactly what one thread appends. With one file, the
// analyser hands each block it reads to the extractor instead (one read): on
// a second thread through a BlockPipe when there is a second CPU.
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

#include "analysis/tree/log_facts.hpp"
#include "collectors/logs/analyzer.hpp"
#include "collectors/logs/reader.hpp"
#include "pipeline/block_pipe.hpp"
#include "pipeline/ingest.hpp"

namespace ccdiag {

namespace {

// One file's facts from its own read of the file (the analyser reads it too).
Status file_facts(const LogFile& f, EvidenceSet& out) {
  auto r = logs::LogReader::open(f.path, f.shown);
  if (!r) return r.error();
  LogFactExtractor x(f.shown, f.host, out);
  for (;;) {
    auto block = (*r)->next();
    if (!block) return block.error();
    if (block->empty()) break;
    x.lines(*block);
  }
  x.finish();
  return Ok{};
}

// CPUs this process may run on (taskset, cgroup cpusets), at least 1.
size_t usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

// Extracts the facts of `files` (except stdin, which the caller reads once
// and extracts into slot(i) itself) on worker threads.
class ParallelFacts {
 public:
  ParallelFacts(const std::vector<LogFile>& files, size_t threads)
      : files_(files), sets_(files.size()), errors_(files.size()) {
    for (size_t t = 0; t < threads; ++t) workers_.emplace_back([this] { work(); });
  }
  ~ParallelFacts() {
    cancel_ = true;  // an early return (a file the analyser refused) stops the workers
    join();
  }
  EvidenceSet& slot(size_t i) { return sets_[i]; }
  // This thread helps with what is left, then every set is appended in input
  // order; the first error in input order wins.
  Status append_to(EvidenceSet& facts) {
    work();
    join();
    for (size_t i = 0; i < files_.size(); ++i) {
      if (errors_[i]) return make_error(errors_[i]->message, files_[i].shown, "check the path given to --log");
      facts.append(std::move(sets_[i]));
    }
    return Ok{};
  }

 private:
  void join() {
    for (auto& w : workers_)
      if (w.joinable()) w.join();
  }
  void work() {
    for (size_t i; !cancel_ && (i = next_.fetch_add(1)) < files_.size();) {
      if (files_[i].path == "-") continue;
      if (auto st = file_facts(files_[i], sets_[i]); !st) errors_[i] = st.error();
    }
  }
  const std::vector<LogFile>& files_;
  std::vector<EvidenceSet> sets_;
  std::vector<std::optional<Error>> errors_;
  std::atomic<size_t> next_{0};
  std::atomic<bool> cancel_{false};
  std::vector<std::thread> workers_;
};

}  // namespace

Status ingest_logs(const std::vector<LogFile>& files, EvidenceSet& set) {
  if (files.empty()) return Ok{};
  auto analyzer = logs::LogAnalyzer::create(logs::builtin_signatures());
  if (!analyzer) return analyzer.error();
  const size_t on_disk = static_cast<size_t>(std::count_if(files.begin(), files.end(),
                                                           [](const LogFile& f) { return f.path != "-"; }));
  const size_t cpus = usable_cpus();
  std::optional<ParallelFacts> parallel;
  // Workers beside this thread: it runs the analyser, then helps. At most 15:
  // each holds a 4 MiB read block, and the analyser's one ordered pass is
  // then the bound anyway.
  constexpr size_t kMaxWorkers = 15;
  if (cpus >= 2 && on_disk >= 2) parallel.emplace(files, std::min({cpus, on_disk, kMaxWorkers + 1}) - 1);
  EvidenceSet facts;
  for (size_t i = 0; i < files.size(); ++i) {
    const LogFile& f = files[i];
    if (f.path == "-") {
      std::ostringstream ss;
      ss << std::cin.rdbuf();
      const std::string text = ss.str();
      (*analyzer)->add_text(text, f.shown, f.host);
      extract_log_facts(text, f.shown, f.host, parallel ? parallel->slot(i) : facts);
    } else if (parallel) {
      if (auto st = (*analyzer)->add_file(logs::LogInput{f.path, f.shown, f.host}); !st)
        return make_error(st.error().message, f.shown, "check the path given to --log");
    } else if (cpus >= 2) {
      // One file (or one on disk beside stdin): the facts of its blocks are
      // extracted on a second thread while this one runs the analyser.
      LogFactExtractor x(f.shown, f.host, facts);
      Status st = Ok{};
      {
        BlockPipe pipe([&x](std::string_view block) { x.lines(block); });
        st = (*analyzer)->add_file(logs::LogInput{f.path, f.shown, f.host},
                                   [&pipe](std::string_view block) { pipe.push(block); });
      }  // every block extracted
      if (!st) return make_error(st.error().message, f.shown, "check the path given to --log");
      x.finish();
    } else {
      LogFactExtractor x(f.shown, f.host, facts);
      auto tap = [&x](std::string_view block) { x.lines(block); };
      if (auto st = (*analyzer)->add_file(logs::LogInput{f.path, f.shown, f.host}, tap); !st)
        return make_error(st.error().message, f.shown, "check the path given to --log");
      x.finish();
    }
    if (!f.host.empty()) set.add_host(f.host);
  }
  if (parallel)
    if (auto st = parallel->append_to(facts); !st) return st;
  logs::LogAnalysis a = (*analyzer)->finish();
  for (auto& e : a.evidence) {
    if (e.subject.host) set.add_host(*e.subject.host);
    set.evidence.push_back(std::move(e));
  }
  for (auto& fd : a.findings) set.findings.push_back(std::move(fd));
  set.append(std::move(facts));
  return Ok{};
}

}  // namespace ccdiag
