// The contract types: Result, Subject/Evidence/Finding JSON round trips.
#include <catch2/catch.hpp>

#include "ccdiag/evidence.hpp"
#include "ccdiag/finding.hpp"
#include "ccdiag/report.hpp"
#include "ccdiag/result.hpp"

using namespace ccdiag;

TEST_CASE("Result carries a value or an error with context and hint") {
  Result<int> ok = 42;
  REQUIRE(ok.ok());
  CHECK(*ok == 42);
  Result<int> bad = make_error("cannot open", "bundle/manifest.json", "collect it again");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().one_line() == "bundle/manifest.json: cannot open (collect it again)");
  CHECK(bad.value_or(7) == 7);
}

TEST_CASE("Subject round-trips through JSON with only the set fields") {
  Subject s;
  s.host = "node7";
  s.rank = 5;
  s.gpu = "0000:1b:00.0";
  s.seq = 88213;
  nlohmann::json j = s;
  CHECK(j.size() == 4);
  CHECK(j["rank"] == 5);
  CHECK(j.get<Subject>().describe() == "host node7 rank 5 gpu 0000:1b:00.0 seq 88213");
  CHECK(nlohmann::json::object().get<Subject>().empty());
}

TEST_CASE("Evidence keeps availability apart from data") {
  Evidence e;
  e.kind = "gpu.nvml";
  e.availability = Availability::timeout("nvmlInit did not return in 3 s");
  nlohmann::json j = e;
  CHECK(j["availability"]["state"] == "timeout");
  Evidence back = j.get<Evidence>();
  CHECK(back.availability.state == AvailabilityState::timeout);
  CHECK(back.availability.reason == "nvmlInit did not return in 3 s");
}

TEST_CASE("Finding supports and role survive a round trip") {
  Finding f;
  f.id = "nccl.ib.completion_error";
  f.layer = Layer::transport;
  f.severity = Severity::error;
  f.role = FindingRole::cascade;
  f.supports.push_back(CauseSupport{"ib_transport_retry_exceeded", 25});
  f.caused_by = "rank 5";
  nlohmann::json j = f;
  CHECK(j["layer"] == "transport");
  Finding back = j.get<Finding>();
  CHECK(back.role == FindingRole::cascade);
  REQUIRE(back.supports.size() == 1);
  CHECK(back.supports[0].weight == 25);
  CHECK(back.caused_by == "rank 5");
}

TEST_CASE("Layer names are the JSON contract's") {
  CHECK(to_string(Layer::system_config) == "system-config");
  CHECK(parse_layer("system-config") == Layer::system_config);
  CHECK_FALSE(parse_layer("gpu").has_value());
}
