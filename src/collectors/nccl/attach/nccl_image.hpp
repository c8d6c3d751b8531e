// Which NCCL a target runs: the mapped libnccl (or a library that links NCCL
// statically), its version string, build-id and load base, and the addresses
// of the non-exported globals ccdiag cross-checks with (.symtab: the RAS
// communicator list ncclComms/nNcclComms, 2.24+).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "collectors/nccl/attach/layout.hpp"
#include "collectors/nccl/attach/target.hpp"

namespace ccdiag::nccl::attach {

struct NcclImage {
  bool found = false;
  std::string path;          // as mapped in the target
  std::string opened;        // the file actually read on this host ("" if none could be opened)
  bool static_link = false;  // NCCL found inside another library (no libnccl mapping)
  std::optional<NcclVersion> version;
  std::string version_string;  // "NCCL version 2.28.9+cuda13.0"
  std::string build_id;
  std::string arch;            // "x86_64", "aarch64" (ELF e_machine of the library)
  uint64_t load_base = 0;
  bool has_symtab = false, has_debug_info = false;
  std::optional<uint64_t> ras_comms_addr, ras_ncomms_addr;  // absolute addresses in the target
  std::string why_not;       // when !found or the file could not be read
};

// `override_path`: a copy of the library to read instead of the mapped path
// (a core analysed on another host: --nccl-lib).
NcclImage identify_nccl(const AttachTarget& t, const std::string& override_path = "");

}  // namespace ccdiag::nccl::attach
