// fr.rank_progress on real torch 2.15 gloo dumps (tests/fixtures/torch/mesh_tp:
// a 2x2 DeviceMesh, rank 2 skipped its third tp all_reduce and slept).
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <string>

#include "collectors/fr/loader.hpp"
#include "collectors/fr/progress.hpp"

namespace fs = std::filesystem;
using namespace ccdiag;

namespace {

// (process group, rank) -> the progress evidence of that rank's dump.
std::map<std::pair<std::string, int>, Evidence> progress_of_mesh_job() {
  std::map<std::pair<std::string, int>, Evidence> out;
  for (int r = 0; r < 4; ++r) {
    const fs::path p = fs::path(CCDIAG_SOURCE_DIR) / "tests/fixtures/torch/mesh_tp/fr" / ("rank" + std::to_string(r));
    auto d = fr::load_dump_file(fr::DumpFile{p.string(), p.filename().string(), r, ""});
    REQUIRE(d.ok());
    for (auto& e : fr::rank_progress(*d)) out[{*e.subject.process_group, r}] = std::move(e);
  }
  return out;
}

}  // namespace

TEST_CASE("fr.rank_progress: how far each rank got in each group, by its own dump", "[fr][progress]") {
  const auto p = progress_of_mesh_job();
  // tp {2,3} is group "4" on both its members: rank 3 enqueued seq 3 and waits
  // (gloo: pg_status says seq 2 completed); rank 2 stopped at seq 2.
  const auto& r3 = p.at({"4", 3}).data;
  CHECK(r3["last_enqueued_seq"] == 3);
  CHECK(r3["last_completed_seq"] == 2);
  CHECK(r3["last_started_seq"] == 2);  // gloo records no start: taken from completion
  CHECK(r3["pg_desc"] == "mesh_tp");
  CHECK(r3["op"] == "gloo:all_reduce");
  const auto& r2 = p.at({"4", 2}).data;
  CHECK(r2["last_enqueued_seq"] == 2);
  CHECK(r2["last_completed_seq"] == 2);
  // dp {1,3} is group "2": rank 1 entered seq 3, rank 3 never got there.
  CHECK(p.at({"2", 1}).data["last_enqueued_seq"] == 3);
  CHECK(p.at({"2", 3}).data["last_enqueued_seq"] == 2);
  // Every item names its rank and group in the subject, as the registry says.
  for (const auto& [key, e] : p) {
    CHECK(e.kind == "fr.rank_progress");
    CHECK(e.subject.rank == key.second);
    CHECK(e.data["rank"] == key.second);
    CHECK(e.data["process_group"] == key.first);
  }
}
