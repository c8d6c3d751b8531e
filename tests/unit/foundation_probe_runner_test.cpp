// The probe runner bounds collectors that block in foreign code.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <thread>

#include "sys/probe_runner.hpp"

using namespace ccdiag;
using namespace std::chrono;

TEST_CASE("a probe that never returns is killed at its deadline and reported as timeout") {
  const auto start = steady_clock::now();
  auto out = run_probe_isolated("blocks-forever", milliseconds(300), [] {
    for (;;) ::pause();  // a collector stuck in a syscall
    return nlohmann::json();
  });
  const auto took = duration_cast<milliseconds>(steady_clock::now() - start);
  CHECK(out.availability.state == AvailabilityState::timeout);
  CHECK(out.availability.reason.find("blocks-forever") != std::string::npos);
  CHECK(took < milliseconds(2000));
  CHECK(took >= milliseconds(290));
}

TEST_CASE("a probe's JSON result comes back") {
  auto out = run_probe_isolated("answers", seconds(5), [] { return nlohmann::json{{"gpus", 8}}; });
  REQUIRE(out.availability.is_ok());
  CHECK(out.value["gpus"] == 8);
}

TEST_CASE("a probe that crashes is an error, not a crash of ccdiag") {
  auto out = run_probe_isolated("crashes", seconds(5), []() -> nlohmann::json {
    std::raise(SIGSEGV);
    return {};
  });
  CHECK(out.availability.state == AvailabilityState::error);
  CHECK(out.availability.reason.find("signal") != std::string::npos);
}

TEST_CASE("a probe that throws reports the message") {
  auto out = run_probe_isolated("throws", seconds(5), []() -> nlohmann::json { throw std::runtime_error("EACCES"); });
  CHECK(out.availability.state == AvailabilityState::error);
  CHECK(out.availability.reason.find("EACCES") != std::string::npos);
}

TEST_CASE("concurrent probes take the longest deadline, not the sum") {
  std::vector<ProbeSpec> specs;
  for (int i = 0; i < 4; ++i)
    specs.push_back(ProbeSpec{"stuck" + std::to_string(i), milliseconds(400), [] {
                                for (;;) ::pause();
                                return nlohmann::json();
                              }});
  specs.push_back(ProbeSpec{"fast", seconds(5), [] { return nlohmann::json(1); }});
  const auto start = steady_clock::now();
  auto outs = run_probes_isolated(specs);
  const auto took = duration_cast<milliseconds>(steady_clock::now() - start);
  CHECK(took < milliseconds(1200));
  for (int i = 0; i < 4; ++i) CHECK(outs[i].availability.state == AvailabilityState::timeout);
  CHECK(outs[4].availability.is_ok());
}

TEST_CASE("a text probe's output crosses as bytes; its error as {error}; no result is an error") {
  std::string big(300000, 'x');
  big += "\"quotes\" \\ and \x04 and \n newlines\xff";  // bytes JSON would have to escape or repair
  std::vector<ProbeSpec> specs(3);
  specs[0].name = "text";
  specs[0].deadline = seconds(5);
  specs[0].text_probe = [&big]() -> Result<std::string> { return big; };
  specs[1].name = "fails";
  specs[1].deadline = seconds(5);
  specs[1].text_probe = []() -> Result<std::string> { return make_error("ptrace: EPERM", "pid 1"); };
  specs[2].name = "cut";
  specs[2].deadline = seconds(5);
  specs[2].text_probe = []() -> Result<std::string> {
    ::_exit(0);  // a child that ends without writing its result
  };
  auto outs = run_probes_isolated(specs);
  REQUIRE(outs[0].availability.is_ok());
  CHECK(outs[0].text == big);
  REQUIRE(outs[1].availability.is_ok());
  CHECK(outs[1].text.empty());
  CHECK(outs[1].value.value("error", "").find("EPERM") != std::string::npos);
  CHECK_FALSE(outs[2].availability.is_ok());
}

TEST_CASE("Deadline slices never exceed what is left") {
  Deadline d(milliseconds(100));
  CHECK(d.slice(seconds(10)) <= milliseconds(100));
  std::this_thread::sleep_for(milliseconds(120));
  CHECK(d.expired());
  CHECK(d.slice(seconds(1)).count() == 0);
}
