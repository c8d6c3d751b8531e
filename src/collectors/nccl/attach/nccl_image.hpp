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
  // Where the DWARF is: `opened` itself, or a separate debug file found
  // through .gnu_debuglink, /usr/lib/debug/.build-id/ or DEBUGINFOD_CACHE_PATH.
  std::string debug_file;
  // The build-id of the library as mapped, read out of the target's memory
  // (the ELF header page; kernel cores and gcore dump it). "" if unreadable.
  std::string memory_build_id;
  // Set when the file on this host is not the mapped build (replaced on disk,
  // or a wrong --nccl-lib): its version, symbols and DWARF are then NOT used.
  std::string mismatch;
  bool override_refused = false;  // the mismatch is --nccl-lib's
  std::optional<uint64_t> ras_comms_addr, ras_ncomms_addr;  // absolute addresses in the target
  std::string why_not;       // when !found or the file could not be read
};

// `override_path`: a copy of the library to read instead of the mapped path
// (a core analysed on another host: --nccl-lib).
NcclImage identify_nccl(const AttachTarget& t, const std::string& override_path = "");

// The separate debug file of a library without DWARF of its own, searched as
// gdb does (no network): `.gnu_debuglink` next to the library, in its .debug/
// and under /usr/lib/debug/<dir>/; /usr/lib/debug/.build-id/xx/yyyy.debug;
// $DEBUGINFOD_CACHE_PATH/<build-id>/debuginfo (else ~/.cache/debuginfod_client).
// A candidate is taken only when its build-id equals `build_id`. "" if none.
std::string find_debug_file(const std::string& library, const std::string& build_id, const std::string& debuglink);

}  // namespace ccdiag::nccl::attach
