// The evidence contract: one entry per evidence kind (who writes it, which
// host paths it reads, which layer it speaks for, its data fields and who
// reads it), and typed views of the kinds the decision tree reads.
//
// Producers (collectors, the pipeline's readers) and consumers (the tree's
// rules, `ccdiag analyze`, `ccdiag prom`) meet here instead of each guessing
// the other's field names. docs/evidence-kinds.md and
// docs/schema/evidence-kinds.schema.json are generated from this registry
// (tests/unit/model_evidence_kinds.cpp fails when they are stale), and
// tests/unit/model_evidence_kinds.cpp fails when a rule reads a kind that is
// not registered or has no producer, or when a registered kind has no reader.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ccdiag/evidence.hpp"
#include "ccdiag/layer.hpp"

namespace ccdiag {

// One field of an evidence item's `data`.
struct EvidenceField {
  std::string name;
  std::string type;   // JSON Schema type: "string", "integer", "number", "boolean", "array", "object", or "a|b"
  bool required = false;  // every ok item of the kind carries it
  std::string doc;
};

struct EvidenceKindInfo {
  std::string kind;                      // "pcie.link"
  // The layer the tree's walk credits with a check when an ok item is present;
  // none for log facts (a log's silence never shows a layer healthy).
  std::optional<Layer> layer;
  std::string producer;                  // "collector pcie" | "log facts" | "fr reader" ...
  std::vector<std::string> host_paths;   // what the producer reads on the host (through SysRoot)
  std::string subject;                   // which Subject fields are set
  std::vector<EvidenceField> fields;
  std::vector<std::string> readers;      // "rule pcie_state", "analyze", "prom", "pcie findings" ...
  std::string doc;                       // one line
};

// Every kind, sorted by name.
const std::vector<EvidenceKindInfo>& evidence_kinds();
const EvidenceKindInfo* find_evidence_kind(std::string_view kind);

// The layer of a kind: the registry's, else (an item from a newer or a
// hand-made bundle) by its prefix; nullopt when neither knows it.
std::optional<Layer> layer_of_evidence_kind(std::string_view kind);

// Generated documentation: docs/evidence-kinds.md and
// docs/schema/evidence-kinds.schema.json (a JSON Schema of one evidence item,
// with one `data` schema per kind).
std::string evidence_kinds_markdown();
nlohmann::json evidence_kinds_schema();

// ---------------------------------------------------------------------------
// Typed views. `parse` never throws: a missing or mistyped field stays unset
// (a rule skips what it cannot read, never guesses). `to_json` writes the
// registered field names; producers that build the same object use them.

namespace contract {

// pcie.link: one endpoint (GPU or NIC) and its path up to the root port.
struct PcieHop {
  std::string bdf;
  std::string hop;                     // "endpoint" | "bridge" | "root_port" (unset in a flattened VM tree)
  std::optional<double> current_gts;   // current_link_speed_gts; nullopt: "Unknown" (no link) or absent
  bool current_speed_unknown = false;  // the attribute was read and said "Unknown"
  std::optional<double> max_gts;       // max_link_speed_gts
  std::optional<int> current_width;    // current_link_width
  std::optional<int> max_width;        // max_link_width
};
struct PcieLink {
  std::string bdf;
  std::string role;                    // "gpu" | "nic"
  std::optional<int> gpu_index;
  bool config_all_ones = false;
  bool path_resolved = false;
  std::vector<PcieHop> path;           // endpoint first, then each bridge up to the root port
  static PcieLink parse(const nlohmann::json& data);
  nlohmann::json to_json() const;
  // Lanes the link of hop i lost: its width below the smaller maximum of both
  // ends (this hop's and its upstream port's), as NCCL and lspci judge it.
  struct Degraded {
    size_t hop = 0;
    int current_width = 0, max_width = 0;
    double current_gts = 0, max_gts = 0;
    bool lost_width = false, lost_speed = false, down = false;
  };
  std::vector<Degraded> degraded() const;
  // The endpoint's own link (path[0]), when known.
  const PcieHop* endpoint() const { return path.empty() ? nullptr : &path.front(); }
};

// pcie.acs: one bridge's ACS capability and control.
struct PcieAcs {
  std::string bdf;
  std::optional<bool> acs_capability;  // unset: config space could not be read far enough (no CAP_SYS_ADMIN)
  std::optional<bool> req_redirect, cmplt_redirect;
  std::optional<bool> on_p2p_path;
  std::string acs_ctl_text;            // lspci style, "SrcValid+ ReqRedir+ CmpltRedir+ ..."
  static PcieAcs parse(const nlohmann::json& data);
  nlohmann::json to_json() const;
};

// host.iommu: DMA translation mode.
struct HostIommu {
  std::string mode;                    // "off" | "passthrough" | "translated" | "unknown"
  std::optional<bool> translated;
  static HostIommu parse(const nlohmann::json& data);
  nlohmann::json to_json() const;
};

// nvlink.link: one NVLink of one GPU (NVML).
struct NvlinkLink {
  std::optional<int> link;
  std::optional<bool> active;
  std::optional<int> gpu_index;
  std::string remote_bdf, remote_type;
  std::map<std::string, int64_t> counters;  // counters_t0 (the latest sample: counters_t1 when present)
  static NvlinkLink parse(const nlohmann::json& data);
  nlohmann::json to_json() const;
};

// gpu.device data.fabric: NVLink fabric registration (NVSwitch systems).
struct GpuFabric {
  std::string state_name;              // "not_supported" | "not_started" | "in_progress" | "completed"
  std::optional<int64_t> status;       // NVML return code, 0 = success
  std::string status_name;             // "SUCCESS" or the error
  std::string health_summary_name;     // "healthy" | "unhealthy" | "limited_capacity" | "not_applicable"
  static std::optional<GpuFabric> of_device(const nlohmann::json& gpu_device_data);
  nlohmann::json to_json() const;
};

// host.versions.
struct HostVersions {
  std::string nccl_version, cuda_toolkit_version;
  std::string driver_version;          // kernel module (/proc/driver/nvidia/version)
  std::string user_driver_version;     // user-space driver libraries (libcuda.so.<v>, libnvidia-ml.so.<v>)
  static HostVersions parse(const nlohmann::json& data);
  nlohmann::json to_json() const;
};

// host.memlock: one rank's (or the host's) RLIMIT_MEMLOCK; soft/hard are a
// number of bytes or "unlimited".
struct HostMemlock {
  std::optional<int64_t> soft_bytes, hard_bytes;  // -1 = unlimited
  std::optional<int64_t> pid, rank;
  static HostMemlock parse(const nlohmann::json& data);
  nlohmann::json to_json() const;
};

// host.peermem: GPUDirect RDMA support.
struct HostPeermem {
  std::optional<bool> nvidia_peermem, nv_peer_mem_legacy, dmabuf_possible, gdr_possible;
  std::optional<int64_t> nvidia_gpus, rdma_devices;  // GPUDirect RDMA matters only with both
  static HostPeermem parse(const nlohmann::json& data);
  nlohmann::json to_json() const;
};

// host.fabric_manager.
struct HostFabricManager {
  std::optional<bool> nvswitch_system, fabric_manager_running;
  static HostFabricManager parse(const nlohmann::json& data);
  nlohmann::json to_json() const;
};

// rdma.port: one IB/RoCE port as sysfs shows it.
struct RdmaPort {
  std::string device;
  std::optional<int> port;
  std::string state, phys_state;       // "ACTIVE", "LinkUp" (the name part of "4: ACTIVE")
  std::string rate;                    // "400 Gb/sec (4X NDR)"
  std::string link_layer;              // "InfiniBand" | "Ethernet"
  static RdmaPort parse(const nlohmann::json& data);
  nlohmann::json to_json() const;
};

// rdma.counters: one port's counters, sampled twice when the probe waited.
struct RdmaCounter {
  std::optional<int64_t> t0, t1, delta;
};
struct RdmaCounters {
  std::string device;
  std::optional<int> port;
  bool sampled_twice = false;
  std::map<std::string, RdmaCounter> counters, hw_counters;
  static RdmaCounters parse(const nlohmann::json& data);
  nlohmann::json to_json() const;
};

// rdma.qp: the QPs of the host's processes.
struct RdmaQpEntry {
  std::string device, type, state;     // state as rdma-tool prints it: "RTS", "ERR", "SQE"
  std::optional<int64_t> lqpn, port, rqpn, pid;
};
struct RdmaQps {
  std::vector<RdmaQpEntry> qps;
  static RdmaQps parse(const nlohmann::json& data);
  nlohmann::json to_json() const;
};

// net.link: one network interface (sysfs /sys/class/net).
struct NetLink {
  std::string netdev, operstate, address;
  std::optional<int64_t> mtu, speed_mbps, carrier;
  std::optional<bool> is_virtual;
  static NetLink parse(const nlohmann::json& data);
  nlohmann::json to_json() const;
};

}  // namespace contract

}  // namespace ccdiag
