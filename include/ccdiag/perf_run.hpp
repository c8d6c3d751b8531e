// Benchmark results (nccl-tests, perftest) as the perf readers produce them
// and the perf analysis reads them: the data model only. The parsers are in
// collectors/perf/perf_results.hpp (docs/perf.md "Input formats").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ccdiag::perf {

enum class Tool { nccl_tests, perftest };

// One half of an nccl-tests row (out-of-place or in-place).
struct SideResult {
  std::optional<double> time_us;
  std::optional<double> algbw_gbs;  // 10^9 bytes/s
  std::optional<double> busbw_gbs;
  std::optional<int64_t> wrong;     // `#wrong` count; unset when `N/A` (-c 0) or the old float `error` column
  std::optional<double> max_error;  // the <= 2.11 `error` column (max deviation, informational)
  bool present() const { return busbw_gbs.has_value() || time_us.has_value(); }
};

struct SizeRow {
  int64_t size_bytes = 0;
  int64_t count = 0;
  std::string type, redop, root;
  SideResult oop, ip;
  int line = 0;  // 1-based line in the input (0 for JSON)
  // The busbw to judge: out-of-place, else in-place.
  std::optional<double> busbw() const { return oop.busbw_gbs ? oop.busbw_gbs : ip.busbw_gbs; }
  std::optional<double> time_us() const { return oop.time_us ? oop.time_us : ip.time_us; }
};

// `#  Rank  3 Group  0 Pid  41230 on gpu017 device  3 [0000:3b:00] NVIDIA H100 80GB HBM3`
struct DeviceLine {
  int rank = 0;
  int group = 0;
  int64_t pid = 0;
  std::string host;
  int device = 0;
  std::string bus;   // "0000:3b:00" (>= 2.14.1) or "0x3b"
  std::string name;  // cudaDeviceProp.name
};

// A perftest result row: bandwidth tests fill the bw fields, latency tests the t_ fields.
struct PerftestRow {
  int64_t size_bytes = 0;
  int64_t iterations = 0;
  std::optional<double> bw_peak_gbps, bw_avg_gbps;  // Gb/s (10^9 bits), converted from MiB/s when needed
  std::optional<double> msg_rate_mpps;
  std::optional<double> t_min_us, t_max_us, t_typical_us, t_avg_us, t_stdev_us, p99_us, p999_us;
  int line = 0;
};

struct Breadcrumb {
  std::string text;  // " .. host pid N: Test failure file:line" or "host: Test timeout (N s) ..."
  int line = 0;
};

struct PerfRun {
  std::string file;        // as shown to the user
  Tool tool = Tool::nccl_tests;
  std::string format;      // "nccl-tests text", "nccl-tests json v3", "perftest text", "perftest json"
  std::string collective;  // "all_reduce", "all_gather", ... ; perftest: "ib_write_bw", "ib_read_lat", ...
  std::string version;     // nccl-tests version when printed ("2.19.6"); perftest: empty
  std::optional<int> nccl_version;  // 23007
  std::string error_column;         // "#wrong" (>= 2.13) or "error" (<= 2.11)
  std::vector<DeviceLine> devices;
  int ngpus_param = 0, nthreads_param = 0;
  std::vector<SizeRow> rows;
  std::optional<int64_t> out_of_bounds;
  std::optional<double> avg_busbw;
  std::vector<Breadcrumb> failures;
  std::vector<std::string> nccl_env;  // NCCL_ALGO / NCCL_NVLS_ENABLE / NCCL_IB_HCA / NCCL_PROTO from JSON env (nothing else is kept)
  // perftest
  std::string test_name;   // "RDMA_Write BW Test"
  std::string nic;         // Device : mlx5_3
  std::string link_type;   // IB / Ethernet
  int qps = 0;
  bool bidirectional = false;
  bool latency_test = false;
  bool gpu_memory = false;  // --use_cuda seen in JSON args / "CUDA" lines
  std::string bw_unit;      // as printed: "Gb/sec", "MB/sec", "MiB/sec"
  std::vector<PerftestRow> pt_rows;
  std::vector<std::string> notes;

  // Distinct hosts of the device lines, in rank order.
  std::vector<std::string> hosts() const;
  int ranks() const { return static_cast<int>(devices.size()); }
};

}  // namespace ccdiag::perf
