// Pasted `nvidia-smi -q` memory error sections: what NVIDIA's memory error
// management says each counter and flag means, read from the tool's own layout.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "analysis/tree/log_cues.hpp"
#include "analysis/tree/log_facts.hpp"

using namespace ccdiag;

namespace {
std::vector<Finding> memory_findings(const std::string& text) {
  EvidenceSet set;
  extract_log_facts(text, "smi.txt", "node3", set);
  std::vector<Finding> out;
  for (const auto& f : set.findings)
    if (f.id == "log.gpu_memory_errors") out.push_back(f);
  return out;
}
double weight(const Finding& f) {
  for (const auto& s : f.supports)
    if (s.cause == "gpu_ecc_or_memory_fault") return s.weight;
  return 0;
}
std::string fixture(const char* name) {
  std::ifstream in(std::filesystem::path(CCDIAG_FIXTURES) / "logs/nvidia-smi" / name);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

TEST_CASE("nvidia-smi -q: a healthy H100 gives no memory finding and no failure line", "[tree][smi-memory]") {
  const std::string text = fixture("q-h100-healthy.txt");
  REQUIRE(text.size() > 1000);
  CHECK(memory_findings(text).empty());
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    INFO(l);
    CHECK_FALSE(is_failure_marker(l));
  }
}

TEST_CASE("nvidia-smi -q: uncorrectable errors since the driver loaded, on the GPU they belong to", "[tree][smi-memory]") {
  const auto f = memory_findings(fixture("q-h100-remap-pending.txt"));
  REQUIRE(f.size() == 1);
  CHECK(f[0].subject.gpu == "00000000:2A:00.0");
  CHECK(f[0].subject.host == "node3");
  CHECK(weight(f[0]) == 20);  // Volatile DRAM Uncorrectable 4 outweighs the pending remap
  CHECK(f[0].role == FindingRole::primary);
  CHECK(f[0].summary.find("DRAM Uncorrectable 4") != std::string::npos);
}

TEST_CASE("nvidia-smi -q: remap failure, pending retirement, and history only", "[tree][smi-memory]") {
  const std::string head = "GPU 00000000:07:00.0\n    Product Name : NVIDIA A100-SXM4-80GB\n";
  auto remapped = [&](const char* unc, const char* pending, const char* failure) {
    return head + "    Remapped Rows\n        Correctable Error                 : 0\n" +
           "        Uncorrectable Error               : " + unc + "\n" +
           "        Pending                           : " + pending + "\n" +
           "        Remapping Failure Occurred        : " + failure + "\n    Temperature\n        GPU Current Temp : 30 C\n";
  };
  auto f = memory_findings(remapped("9", "No", "Yes"));
  REQUIRE(f.size() == 1);
  CHECK(weight(f[0]) == 30);
  f = memory_findings(remapped("2", "Yes", "No"));
  REQUIRE(f.size() == 1);
  CHECK(weight(f[0]) == 15);
  // A row remapped earlier, nothing pending: history, context only.
  f = memory_findings(remapped("2", "No", "No"));
  REQUIRE(f.size() == 1);
  CHECK(weight(f[0]) == 4);
  CHECK(f[0].role == FindingRole::context);
  CHECK(memory_findings(remapped("0", "No", "No")).empty());
  // Pre-A100 retired pages: a pending retirement needs a reset.
  f = memory_findings(head + "    Retired Pages\n        Single Bit ECC : 0\n        Double Bit ECC : 1\n"
                             "        Pending Page Blacklist : Yes\n");
  REQUIRE(f.size() == 1);
  CHECK(weight(f[0]) == 15);
}

TEST_CASE("nvidia-smi -q: pre-A100 volatile double-bit totals count, aggregate ones are history", "[tree][smi-memory]") {
  auto ecc = [](const char* vol, const char* agg) {
    return std::string("GPU 00000000:3B:00.0\n    ECC Errors\n        Volatile\n            Single Bit\n") +
           "                Device Memory     : 5\n                Total             : 5\n" +
           "            Double Bit\n                Device Memory     : " + vol + "\n" +
           "                Total             : " + vol + "\n        Aggregate\n            Single Bit\n" +
           "                Total             : 7\n            Double Bit\n                Total             : " + agg +
           "\n    Retired Pages\n        Double Bit ECC : 0\n";
  };
  auto f = memory_findings(ecc("1", "1"));
  REQUIRE(f.size() == 1);
  CHECK(weight(f[0]) == 20);
  f = memory_findings(ecc("0", "3"));
  REQUIRE(f.size() == 1);
  CHECK(weight(f[0]) == 4);
  // Single-bit (corrected) errors alone are no fault.
  CHECK(memory_findings(ecc("0", "0")).empty());
}

TEST_CASE("status pairs with a null value are no failure lines; a count is", "[tree][smi-memory]") {
  for (const char* l : {"        Correctable Error                 : 0", "        Remapping Failure Occurred        : No",
                        "        Pending Page Blacklist            : N/A", "    Link Error Recovery Counter : 0", "    ECC Errors", "    PCIe Errors"})
    CHECK_FALSE(is_failure_marker(std::string(l)));
  CHECK(is_failure_marker(std::string("        Uncorrectable Error               : 4")));
  CHECK(is_failure_marker(std::string("RuntimeError: NCCL error: unhandled system error")));
  // A title only when it is one: a sentence or a count is a report.
  CHECK(is_failure_marker(std::string("Found 3 ECC Errors")));
  CHECK(is_failure_marker(std::string("ERROR: Errors")));
}
