// The evidence contract (ccdiag/evidence_kinds.hpp) against the sources:
// every kind a rule reads is registered and has a producer; every kind a
// producer writes is registered and has a reader; every cause id a rule, a
// finding, an Xid, a flight-recorder state or a log signature names is in the
// catalogue; the generated docs are current.
//
// Regenerate the docs after editing the registry:
//   CCDIAG_WRITE_EVIDENCE_DOCS=1 build/tests/ccdiag_unit_tests "[contract]"
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <unistd.h>

#include "analysis/tree/catalogue.hpp"
#include "analysis/tree/decision_tree.hpp"
#include "analysis/tree/hypothesis.hpp"
#include "ccdiag/evidence_kinds.hpp"
#include "collectors/collector.hpp"
#include "collectors/host/host_collectors.hpp"
#include "collectors/kernel/xid.hpp"
#include "collectors/logs/signature.hpp"
#include "collectors/nccl/stuck_state.hpp"

using namespace ccdiag;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// file (relative to the source root) -> text, for every .cpp under `dir`.
std::map<std::string, std::string> sources(const std::string& dir) {
  std::map<std::string, std::string> out;
  const fs::path root = fs::path(CCDIAG_SOURCE_DIR);
  for (const auto& e : fs::recursive_directory_iterator(root / dir))
    if (e.is_regular_file() && (e.path().extension() == ".cpp" || e.path().extension() == ".hpp"))
      out[fs::relative(e.path(), root).string()] = slurp(e.path());
  return out;
}

// Every first capture group of `re` in the files, with where it was seen.
std::map<std::string, std::string> captures(const std::map<std::string, std::string>& files, const std::regex& re) {
  std::map<std::string, std::string> out;
  for (const auto& [path, text] : files)
    for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it)
      out.emplace((*it)[1].str(), path);
  return out;
}

bool has_reader_prefix(const EvidenceKindInfo& k, const std::string& prefix) {
  for (const auto& r : k.readers)
    if (r.rfind(prefix, 0) == 0) return true;
  return false;
}

// Kinds a producer writes that nothing reads yet. A kind leaves the list when
// a reader appears (the test fails while it stays); nothing new may join it.
const std::set<std::string> kNoReaderYet = {"log.net_socket"};

}  // namespace

TEST_CASE("registry: sorted, unique, every kind has a producer and a reader; log facts check no layer", "[contract]") {
  const auto& ks = evidence_kinds();
  REQUIRE(ks.size() >= 30);
  std::set<std::string> seen;
  for (const auto& k : ks) {
    INFO(k.kind);
    CHECK(seen.insert(k.kind).second);
    CHECK_FALSE(k.producer.empty());
    CHECK(k.readers.empty() == (kNoReaderYet.count(k.kind) == 1));
    CHECK_FALSE(k.doc.empty());
    CHECK(find_evidence_kind(k.kind) == &k);
    CHECK(layer_of_evidence_kind(k.kind) == k.layer);
    CHECK(k.layer.has_value() == (k.kind.rfind("log.", 0) != 0));
    std::set<std::string> fields;
    for (const auto& f : k.fields) CHECK(fields.insert(f.name).second);
  }
  CHECK(find_evidence_kind("pcie.nonexistent") == nullptr);
  // Unregistered kinds from older or hand-made bundles keep their family's layer.
  CHECK(layer_of_evidence_kind("pcie.nonexistent") == Layer::hardware);
  CHECK_FALSE(layer_of_evidence_kind("weird"));
}

TEST_CASE("rules read only registered kinds that some producer writes", "[contract]") {
  auto files = sources("src/analysis/tree/rules");
  files["src/analysis/tree/decision_tree.cpp"] = slurp(fs::path(CCDIAG_SOURCE_DIR) / "src/analysis/tree/decision_tree.cpp");
  const auto reads = captures(files, std::regex(R"re(of_kind\(\s*"([a-z_.]+)")re"));
  REQUIRE(reads.size() >= 15);
  for (const auto& [kind, where] : reads) {
    INFO(kind << " read in " << where);
    const auto* k = find_evidence_kind(kind);
    REQUIRE(k);
    CHECK_FALSE(k->producer.empty());
    CHECK(has_reader_prefix(*k, "rule "));
  }
  // And the registry names no rule reader that no rule reads.
  for (const auto& k : evidence_kinds())
    if (has_reader_prefix(k, "rule ")) {
      INFO(k.kind << " lists a rule reader");
      CHECK(reads.count(k.kind));
    }
}

TEST_CASE("producers write only registered kinds, each with a reader", "[contract]") {
  auto files = sources("src/collectors");
  files.merge(sources("src/pipeline"));
  files.merge(sources("src/cli"));
  files["src/analysis/tree/log_facts.cpp"] = slurp(fs::path(CCDIAG_SOURCE_DIR) / "src/analysis/tree/log_facts.cpp");
  // The ways producers name the kind of the Evidence they build.
  const std::regex patterns[] = {
      std::regex(R"re((?:make|host_evidence)\(\s*ctx\s*,\s*"([a-z_]+\.[a-z_.]+)")re"),
      std::regex(R"re(\b(?:e|le|nv|t|v|checked|sum|m)\.kind\s*=\s*"([a-z_]+\.[a-z_.]+)")re"),
      std::regex(R"re(fact\(\s*"([a-z_]+\.[a-z_.]+)")re"),
  };
  std::map<std::string, std::string> written;
  for (const auto& re : patterns) written.merge(captures(files, re));
  REQUIRE(written.size() >= 25);
  for (const auto& [kind, where] : written) {
    INFO(kind << " written in " << where);
    const auto* k = find_evidence_kind(kind);
    REQUIRE(k);
    if (!kNoReaderYet.count(kind)) CHECK_FALSE(k->readers.empty());
  }
  // A collector that times out records its failure under a registered kind.
  for (const auto& c : all_collectors()) {
    INFO("collector " << c.name << " failure_kind " << c.failure_kind);
    CHECK(find_evidence_kind(c.failure_kind));
  }
}

TEST_CASE("typed views write registered fields and read back what they wrote", "[contract]") {
  auto check_fields = [](const char* kind, const nlohmann::json& j) {
    const auto* k = find_evidence_kind(kind);
    REQUIRE(k);
    for (const auto& item : j.items()) {
      const std::string& name = item.key();  // not a structured binding: clang 14 cannot capture one
      INFO(kind << "." << name);
      CHECK(std::any_of(k->fields.begin(), k->fields.end(), [&](const EvidenceField& f) { return f.name == name; }));
    }
  };
  contract::PcieLink link;
  link.bdf = "0000:3b:00.0";
  link.role = "gpu";
  link.gpu_index = 3;
  link.path = {contract::PcieHop{"0000:3b:00.0", "endpoint", 16.0, false, 32.0, 8, 16},
               contract::PcieHop{"0000:3a:00.0", "bridge", 32.0, false, 32.0, 16, 16}};
  check_fields("pcie.link", link.to_json());
  const auto back = contract::PcieLink::parse(link.to_json());
  REQUIRE(back.path.size() == 2);
  CHECK(back.path[0].current_width == 8);
  REQUIRE(back.degraded().size() == 1);
  CHECK(back.degraded()[0].lost_width);
  CHECK(back.degraded()[0].max_width == 16);

  check_fields("pcie.acs", contract::PcieAcs{"0000:16:02.0", true, true, false, true, "ReqRedir+"}.to_json());
  check_fields("host.iommu", contract::HostIommu{"translated", true}.to_json());
  check_fields("nvlink.link", contract::NvlinkLink{3, false, 1, "0000:01:00.0", "switch", {{"replay", 2}}}.to_json());
  check_fields("host.versions", contract::HostVersions{"2.21.5", "12.4", "550.54.15", "550.54.15"}.to_json());
  check_fields("host.memlock", contract::HostMemlock{65536, -1, 100, 3}.to_json());
  CHECK(contract::HostMemlock::parse(contract::HostMemlock{65536, -1, 100, 3}.to_json()).hard_bytes == -1);
  check_fields("host.peermem", contract::HostPeermem{false, false, false, false, 8, 8}.to_json());
  check_fields("host.fabric_manager", contract::HostFabricManager{true, false}.to_json());
  check_fields("rdma.port", contract::RdmaPort{"mlx5_0", 1, "ACTIVE", "LinkUp", "400 Gb/sec (4X NDR)", "InfiniBand"}.to_json());
  contract::RdmaCounters c;
  c.device = "mlx5_0";
  c.port = 1;
  c.sampled_twice = true;
  c.counters["link_downed"] = {1, 3, 2};
  check_fields("rdma.counters", c.to_json());
  CHECK(contract::RdmaCounters::parse(c.to_json()).counters.at("link_downed").delta == 2);
  contract::RdmaQps q;
  q.qps.push_back(contract::RdmaQpEntry{"mlx5_0", "RC", "ERR", 17, 1, 18, 4242});
  check_fields("rdma.qp", q.to_json());
  CHECK(contract::RdmaQps::parse(q.to_json()).qps.at(0).pid == 4242);
  check_fields("net.link", contract::NetLink{"ens1", "up", "aa:bb", 9000, 100000, 1, false}.to_json());
  // gpu.device carries the fabric state as an object.
  CHECK(contract::GpuFabric::of_device({{"fabric", contract::GpuFabric{"in_progress", 0, "SUCCESS", ""}.to_json()}})->state_name ==
        "in_progress");
  // Never throws on a wrong shape.
  CHECK(contract::PcieLink::parse(nlohmann::json("oops")).path.empty());
  CHECK(contract::RdmaQps::parse(nlohmann::json{{"qps", 3}}).qps.empty());
}

TEST_CASE("every cause id named in the sources, the Xid table, FR states and signatures is in the catalogue",
          "[contract][catalogue]") {
  // Supports pairs {"cause", ratio}, rule hypotheses hyp("cause", ...) and
  // h.cause = "cause" anywhere in the code: score_causes() drops an id the
  // catalogue lacks, so a typo would silently vote for nothing.
  const auto files = sources("src");
  std::map<std::string, std::string> named;
  named.merge(captures(files, std::regex(R"re(\{\s*"([a-z][a-z0-9_]+)"\s*,\s*[0-9]+(?:\.[0-9]+)?\s*\})re")));
  named.merge(captures(files, std::regex(R"re(\bhyp\(\s*"([a-z][a-z0-9_]+)")re")));
  named.merge(captures(files, std::regex(R"re(\.cause\s*=\s*"([a-z][a-z0-9_]+)")re")));
  // Pairs of that shape that are not cause supports.
  const std::set<std::string> not_causes = {"mean_lag_ms", "schema_version", "version"};
  REQUIRE(named.size() >= 40);
  for (const auto& [id, where] : named) {
    if (not_causes.count(id)) continue;
    INFO(id << " named in " << where);
    CHECK(find_cause(id));
  }
  size_t xids = 0;
  for (int code = 0; code < 1024; ++code)
    if (const XidInfo* x = find_xid(code)) {
      ++xids;
      INFO("Xid " << code << " -> " << x->catalogue_cause);
      if (x->catalogue_cause[0] != '\0') CHECK(find_cause(x->catalogue_cause));
    }
  CHECK(xids == xid_catalogue_size());
  for (const char* where : {"not_enqueued", "peer_missing", "proxy_stalled", "kernel_not_started", "init_hang",
                            "async_error", "gpu_wait", "flush_wait", "network_wait"}) {
    INFO("stuck state " << where);
    CHECK_FALSE(nccl::stuck_state_supports(where).empty());
    for (const auto& s : nccl::stuck_state_supports(where)) CHECK(find_cause(s.cause));
  }
  for (const auto& sig : logs::builtin_signatures())
    for (const auto& s : sig.supports) {
      INFO("signature " << sig.id << " -> " << s.cause);
      CHECK(find_cause(s.cause));
    }
}

TEST_CASE("generated evidence docs are current", "[contract][docs]") {
  const fs::path root = fs::path(CCDIAG_SOURCE_DIR);
  const std::string md = evidence_kinds_markdown();
  const std::string schema = evidence_kinds_schema().dump(2) + "\n";
  if (const char* w = std::getenv("CCDIAG_WRITE_EVIDENCE_DOCS"); w && *w == '1') {
    std::ofstream(root / "docs/evidence-kinds.md") << md;
    std::ofstream(root / "docs/schema/evidence-kinds.schema.json") << schema;
  }
  INFO("stale: regenerate with CCDIAG_WRITE_EVIDENCE_DOCS=1 ccdiag_unit_tests \"[contract]\"");
  CHECK(slurp(root / "docs/evidence-kinds.md") == md);
  CHECK(slurp(root / "docs/schema/evidence-kinds.schema.json") == schema);
}

TEST_CASE("an unknown cause id is never scored and --explain names it", "[contract][catalogue]") {
  std::vector<Hypothesis> hyps(2);
  hyps[0].cause = "pcie_link_degraded";
  hyps[0].weight = 40;
  hyps[0].evidence_key = "k1";
  hyps[0].rule = "pcie_state";
  hyps[1].cause = "pcie_link_degradedd";  // a typo in a rule
  hyps[1].weight = 1000;
  hyps[1].evidence_key = "k2";
  hyps[1].rule = "pcie_state";
  Explain ex;
  const auto scores = score_causes(hyps, 0, &ex);
  REQUIRE(scores.size() == 1);
  CHECK(scores[0].cause == "pcie_link_degraded");
  CHECK(ex.unknown_causes == std::vector<std::string>{"pcie_link_degradedd"});
  REQUIRE(ex.hypotheses.size() == 2);
  CHECK_FALSE(ex.hypotheses[1].known_cause);
  CHECK_FALSE(ex.hypotheses[1].counted);
  REQUIRE(ex.causes.size() == 1);
  CHECK(ex.causes[0].factors.size() == 1);
  CHECK(ex.causes[0].odds == Approx(ex.causes[0].prior_odds * 40));
  CHECK(ex.total_odds == Approx(1 + ex.causes[0].odds));
}

TEST_CASE("host.versions: the user-space driver version from the library file names", "[contract]") {
  CHECK(user_driver_version_from_soname("libcuda.so.550.54.15") == "550.54.15");
  CHECK(user_driver_version_from_soname("libnvidia-ml.so.535.161.08") == "535.161.08");
  CHECK_FALSE(user_driver_version_from_soname("libcuda.so.1"));
  CHECK_FALSE(user_driver_version_from_soname("libcuda.so"));
  CHECK_FALSE(user_driver_version_from_soname("libnccl.so.2.21.5"));
  CHECK_FALSE(user_driver_version_from_soname("libcuda.so.550.54.15.bak"));
}

TEST_CASE("collect_versions writes user_driver_version: the target of libcuda.so.1 first", "[contract]") {
  const fs::path root = fs::temp_directory_path() / ("ccdiag-versions-" + std::to_string(::getpid()));
  fs::remove_all(root);
  const fs::path lib = root / "usr/lib/x86_64-linux-gnu";
  fs::create_directories(lib);
  fs::create_directories(root / "proc/driver/nvidia");
  std::ofstream(root / "proc/driver/nvidia/version")
      << "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.161.08  Tue Mar  5 22:42:15 UTC 2024\n";
  std::ofstream(lib / "libcuda.so.535.161.08") << "";  // a stale copy
  std::ofstream(lib / "libcuda.so.550.54.15") << "";
  fs::create_symlink("libcuda.so.550.54.15", lib / "libcuda.so.1");
  CollectContext ctx;
  ctx.root = SysRoot(root.string());
  ctx.host = "n1";
  const auto out = collect_versions(ctx);
  REQUIRE(out.evidence.size() == 1);
  const auto v = contract::HostVersions::parse(out.evidence[0].data);
  CHECK(v.driver_version == "535.161.08");
  CHECK(v.user_driver_version == "550.54.15");  // what the loader opens, not the first file listed
  // Two versions and no link to say which loads: no version, never a guess.
  fs::remove(lib / "libcuda.so.1");
  CHECK(contract::HostVersions::parse(collect_versions(ctx).evidence[0].data).user_driver_version.empty());
  fs::remove(lib / "libcuda.so.535.161.08");
  CHECK(contract::HostVersions::parse(collect_versions(ctx).evidence[0].data).user_driver_version == "550.54.15");
  fs::remove_all(root);
}
