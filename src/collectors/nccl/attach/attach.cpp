#include "collectors/nccl/attach/attach.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <thread>

#include "collectors/nccl/attach/anchor_scan.hpp"
#include "collectors/nccl/attach/comm_decode.hpp"
#include "collectors/nccl/attach/nccl_image.hpp"

namespace ccdiag::nccl::attach {

namespace {

bool before_magic(const NcclVersion& v) { return v.code() < 22105; }  // startMagic appeared in 2.21.5

std::optional<std::set<uint64_t>> read_ras_list(const AttachTarget& t, const NcclImage& img) {
  if (!img.ras_comms_addr || !img.ras_ncomms_addr) return std::nullopt;
  int32_t n = 0;
  uint64_t arr = 0;
  if (!t.memory->read_exact(*img.ras_ncomms_addr, &n, 4) || !t.memory->read_exact(*img.ras_comms_addr, &arr, 8))
    return std::nullopt;
  std::set<uint64_t> out;
  if (n <= 0 || arr == 0) return out;
  std::vector<uint64_t> ptrs(static_cast<size_t>(std::min(n, 1 << 16)));
  if (!t.memory->read_exact(arr, ptrs.data(), ptrs.size() * 8)) return std::nullopt;
  for (auto p : ptrs)
    if (p) out.insert(p);
  return out;
}

// Why a start magic could not be decoded, and what would make it work.
std::string undecodable_reason(const NcclImage& img, const NcclLayout* layout, uint64_t unpaired,
                               const AttachTarget& t, const AttachOptions& o) {
  const std::string what = fmt::format("{} communicator start magic(s) found but none decoded", unpaired);
  if (!img.mismatch.empty())
    return fmt::format("{}: {}; give the library of build-id {} with --nccl-lib", what, img.mismatch,
                       img.memory_build_id.empty() ? "the rank's" : img.memory_build_id);
  const std::string ver = img.version ? "NCCL " + img.version->str() : "an NCCL of unknown version";
  std::string fix;
  if (t.kind == "core" && img.opened.empty() && o.nccl_lib.empty())
    fix = "give the rank's libnccl with --nccl-lib";
  else
    fix = "give the library with its debug info (a pip wheel's libnccl, a -dbg package, or --nccl-lib), or use a "
          "newer ccdiag";
  if (t.truncated) fix = "the core is truncated (a comm may be cut), or " + fix;
  if (!layout)
    return fmt::format("{}: {} has no layout here ({}, and no table row's sizeof(ncclComm) matches the magic "
                       "pair); {}",
                       what, ver, img.has_debug_info ? "its DWARF is unusable" : "no DWARF", fix);
  return fmt::format("{}: the {} layout ({}) puts the end magic at {} and none is there: not the layout of this "
                     "build; {}",
                     what, layout->source, layout->label, layout->get("ncclComm.sizeof").value_or(0) - 8, fix);
}

}  // namespace

ProcessAttach attach_target(const AttachTarget& t, const AttachOptions& o) {
  ProcessAttach pa;
  pa.source = t.source;
  pa.kind = t.kind;
  pa.pid = t.pid;
  pa.command = t.command;
  pa.host = o.host;
  pa.notes = t.notes;
  pa.samples = std::max(1, o.samples);
  pa.sample_interval_s = pa.samples > 1 ? o.interval_s : 0;

  pa.incomplete = t.truncated;
  const NcclImage img = identify_nccl(t, o.nccl_lib);
  if (!img.found) {
    if (t.kind == "core" && t.files_note_missing) {
      // gcore writes the notes last: a cut core loses the list of mapped
      // files, so "no NCCL" cannot be told from "cannot tell".
      pa.status = "unreadable";
      pa.reason = "the core has no mapped-file list (NT_FILE note missing or cut off by truncation): cannot tell "
                  "whether NCCL was loaded; give the rank's library with --nccl-lib";
      return pa;
    }
    pa.status = "no_nccl";
    pa.reason = img.why_not;
    return pa;
  }
  if (img.override_refused) {
    pa.library = img.path;
    pa.build_id = img.memory_build_id;
    pa.status = "wrong_library";
    pa.reason = img.mismatch;
    return pa;
  }
  pa.library = img.path;
  pa.library_opened = img.opened;
  pa.static_link = img.static_link;
  pa.version_string = img.version_string;
  pa.build_id = img.build_id;
  if (img.version) pa.version = img.version->str();
  if (!img.why_not.empty()) pa.notes.push_back(img.why_not);
  if (!img.mismatch.empty())
    pa.notes.push_back(img.mismatch + "; its version, symbols and DWARF are not used");
  if (!img.debug_file.empty() && img.debug_file != img.opened)
    pa.notes.push_back("DWARF from the separate debug file " + img.debug_file);

  // Layout: the library's own DWARF, else the shipped table row for its version.
  std::optional<NcclLayout> layout;
  if (o.layout != "table" && img.has_debug_info && !img.debug_file.empty()) {
    auto d = dwarf_layout(img.debug_file);
    if (d) {
      layout = std::move(*d);
    } else {
      pa.notes.push_back("DWARF unusable: " + d.error().one_line());
    }
  }
  if (!layout && o.layout == "dwarf") {
    pa.status = "no_layout";
    pa.reason = img.has_debug_info ? "the library's DWARF does not describe ncclComm" : "the library has no DWARF (.debug_info/.zdebug_info), and no separate debug file was found "
                                       "(.gnu_debuglink, /usr/lib/debug/.build-id, DEBUGINFOD_CACHE_PATH)";
    return pa;
  }
  if (!layout && img.version) {
    layout = table_layout(*img.version, img.arch.empty() ? "x86_64" : img.arch);
    if (!layout)
      pa.notes.push_back(fmt::format("NCCL {} ({}, CUDA {}.{}) is not in the layout table; trying the magic-pair distance",
                                     img.version->str(), img.arch, img.version->cuda_major, img.version->cuda_minor));
  }
  if (!layout && !img.arch.empty() && img.arch != "x86_64") {
    // Tables (and magic-distance fingerprints) are computed for x86_64 only.
    pa.status = "no_layout";
    pa.reason = fmt::format("no layout table for {}: only the library's DWARF could describe it", img.arch);
    return pa;
  }
  const auto ras = read_ras_list(t, img);
  if (img.version && before_magic(*img.version)) {
    // No magic pair: find comms through their proxy threads (anchor_scan.hpp).
    if (!layout) {
      pa.status = "unsupported";
      pa.reason = fmt::format("NCCL {} predates the comm magic (2.21.5) and has no layout here", img.version->str());
      return pa;
    }
    AttachTarget anchored = t;
    if (t.kind == "live") {
      auto n = fill_live_thread_pointers(anchored);
      if (!n) pa.notes.push_back("thread registers unreadable: " + n.error().one_line());
    }
    pa.layout_source = layout->source;
    pa.layout_label = layout->label;
    pa.notes.push_back(fmt::format("NCCL {} predates the comm magic: communicators found through their proxy threads "
                                   "(a comm whose proxy never started, e.g. hung in bootstrap, is not visible)",
                                   img.version->str()));
    const auto found = find_comms_by_thread_anchor(anchored, *layout, o.limits, pa.scan);
    for (uint64_t addr : found) {
      DecodeContext ctx{&anchored, &*layout, ras};
      if (auto why = reject_reason(ctx, addr); !why.empty()) {
        ++pa.scan.invalid;
        continue;
      }
      pa.comms.push_back(decode_comm_stable(ctx, addr, t.kind == "live" ? 4 : 1));
    }
    pa.status = pa.comms.empty() ? "no_comm" : "ok";
    if (pa.comms.empty())
      pa.reason = "no communicator found through the proxy threads (none started, or thread registers unavailable)";
    return pa;
  }

  std::vector<int64_t> sizes;
  if (layout) {
    if (auto s = layout->get("ncclComm.sizeof")) sizes.push_back(*s);
  } else {
    for (const auto& row : layout_table())
      if (row.has("ncclComm.endMagic"))
        if (auto s = row.get("ncclComm.sizeof")) sizes.push_back(*s);
  }
  if (sizes.empty()) {
    pa.status = "no_layout";
    pa.reason = "no layout gives sizeof(ncclComm)";
    return pa;
  }
  auto cands = scan_for_comms(t, sizes, o.limits, pa.scan);
  if (pa.scan.budget_exceeded)
    pa.notes.push_back(fmt::format("scan stopped by its budget after {} MiB; {} MiB not scanned",
                                   pa.scan.bytes_scanned >> 20, pa.scan.bytes_skipped >> 20));

  std::vector<std::pair<NcclLayout, uint64_t>> accepted;
  for (const auto& c : cands) {
    NcclLayout use;
    if (layout) {
      use = *layout;
    } else {
      auto rows = layouts_for_comm_size(c.size);
      if (rows.empty()) continue;
      use = rows.front();
      use.source = "magic-distance";
      if (rows.size() > 1) pa.notes.push_back(fmt::format("comm size {} matches {} table rows; using {}", c.size, rows.size(), use.label));
    }
    DecodeContext ctx{&t, &use, ras};
    if (auto why = reject_reason(ctx, c.addr); !why.empty()) {
      ++pa.scan.invalid;
      pa.notes.push_back(fmt::format("magic pair at 0x{:x} rejected: {}", c.addr, why));
      continue;
    }
    accepted.emplace_back(use, c.addr);
  }
  if (!accepted.empty()) {
    pa.layout_source = accepted.front().first.source;
    pa.layout_label = accepted.front().first.label;
  } else if (layout) {
    pa.layout_source = layout->source;
    pa.layout_label = layout->label;
  }
  for (const auto& [use, addr] : accepted) {
    DecodeContext ctx{&t, &use, ras};
    pa.comms.push_back(decode_comm_stable(ctx, addr, t.kind == "live" ? 4 : 1));
  }
  if (pa.samples > 1 && t.kind == "live" && !pa.comms.empty()) {
    for (int s = 1; s < pa.samples; ++s) {
      std::this_thread::sleep_for(std::chrono::duration<double>(o.interval_s));
      for (size_t i = 0; i < accepted.size(); ++i) {
        DecodeContext ctx{&t, &accepted[i].first, ras};
        CommState again = decode_comm_stable(ctx, accepted[i].second);
        compare_samples(pa.comms[i], again);
        pa.comms[i] = std::move(again);
      }
    }
  }
  if (pa.comms.empty()) {
    // Start magics that are no pair's end: the scan counts the end magic of
    // every found pair (when 16-byte aligned) among those without an end.
    uint64_t pair_ends = 0;
    for (const auto& c : cands)
      if ((c.addr + static_cast<uint64_t>(c.size) - 8) % 16 == 0) ++pair_ends;
    const uint64_t unpaired = pa.scan.no_end_magic > pair_ends ? pa.scan.no_end_magic - pair_ends : 0;
    if (t.truncated && unpaired > 0) {
      pa.status = "unreadable";
      pa.reason = fmt::format("{} communicator start magic(s) without their end: the core is truncated through "
                              "them (take the core again with room on the disk)",
                              unpaired);
    } else if (unpaired > 0 && (!layout || layout->source != "dwarf" || !img.mismatch.empty())) {
      // A start magic without its end at any size this ccdiag knows: a comm
      // of a layout it does not have, never "nothing".
      pa.status = !img.mismatch.empty() ? "wrong_library" : "no_layout";
      pa.reason = undecodable_reason(img, layout ? &*layout : nullptr, unpaired, t, o);
    } else {
      pa.status = "no_comm";
      pa.reason = fmt::format("no live communicator found ({} MiB of heap scanned{})", pa.scan.bytes_scanned >> 20,
                              pa.scan.budget_exceeded ? ", budget exceeded" : "");
    }
  } else {
    pa.status = "ok";
  }
  return pa;
}

}  // namespace ccdiag::nccl::attach
