// Xid lines of the NVIDIA kernel driver (krcReportXid in NVIDIA's open-gpu-kernel-modules).
// Pure parsers: a line that is not an Xid gives nullopt; nothing throws.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ccdiag {

struct XidEvent {
  int xid = 0;
  std::string pci;          // "0000:3b:00" as printed (domain:bus:device, no function)
  std::optional<int> gpu_instance;     // MIG GPU-I
  std::optional<int> compute_instance; // MIG GPU-CI
  std::optional<int64_t> pid;          // unset when '<unknown>' or absent
  std::string process_name;            // empty when unknown
  std::string message;                 // text after the pid/name fields
};

// Accepts every driver format: with/without "PCI:", MIG GI/CI, pid/name present,
// '<unknown>' or absent, and any prefix (kmsg record header, syslog, dmesg time).
std::optional<XidEvent> parse_xid_line(std::string_view line);

// "NVRM: GPU 0000:2b:00.0: GPU has fallen off the bus." and the legacy
// "NVRM: GPU at 0000:02:00.0 has fallen off the bus." -> the BDF with function.
std::optional<std::string> parse_fell_off_bus_line(std::string_view line);

struct XidInfo {
  int xid;
  const char* name;      // short meaning
  const char* cause;     // likely cause
  const char* action;    // restart app / reset GPU / drain + reboot / RMA ...
  const char* catalogue_cause;  // root-cause id it supports, or "" when informational
  double weight;         // likelihood ratio it gives that cause on its own
};

// The Xid catalogue (≥ 40 entries); nullptr for an unknown code.
const XidInfo* find_xid(int xid);
size_t xid_catalogue_size();

}  // namespace ccdiag
