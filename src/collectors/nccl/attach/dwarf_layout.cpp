// dwarf_layout(): NCCL struct offsets from a library's own DWARF (layout.hpp).
//
// Walks the top-level DIEs of each compile unit (libdw) until every struct of
// the layout keys has a complete definition and the ncclPattern enumerators
// are seen, then stops: a release libnccl has ~12 MB of .debug_info but every
// CU that includes comm.h describes all of them, so the walk ends early.
#include "collectors/nccl/attach/layout.hpp"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

#include <fmt/format.h>

namespace ccdiag::nccl::attach {
namespace {

struct Want {
  // struct name -> member names wanted (from layout_field_keys()).
  std::map<std::string, std::set<std::string>> members;
  std::set<std::string> structs_left;
  bool have_patterns = false;
};

const char* name_of(Dwarf_Die* die) {
  const char* n = dwarf_diename(die);
  return n ? n : "";
}

// The type DIE a member/typedef refers to, typedefs and cv-qualifiers peeled.
bool peel_type(Dwarf_Die* die, Dwarf_Die* out) {
  Dwarf_Attribute attr;
  Dwarf_Die cur = *die;
  for (int depth = 0; depth < 16; ++depth) {
    if (!dwarf_attr_integrate(&cur, DW_AT_type, &attr) || !dwarf_formref_die(&attr, out)) return false;
    const int tag = dwarf_tag(out);
    if (tag != DW_TAG_typedef && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type) return true;
    cur = *out;
  }
  return false;
}

// DW_AT_data_member_location: a constant (DWARF 3+ as GCC and Clang emit it),
// or the DWARF 2 block form "DW_OP_plus_uconst N".
std::optional<int64_t> member_offset(Dwarf_Die* member) {
  Dwarf_Attribute attr;
  if (!dwarf_attr(member, DW_AT_data_member_location, &attr)) {
    // Members of a union have no location: they start at 0.
    return std::nullopt;
  }
  Dwarf_Word w = 0;
  if (dwarf_formudata(&attr, &w) == 0) return static_cast<int64_t>(w);
  Dwarf_Op* ops = nullptr;
  size_t n = 0;
  if (dwarf_getlocation(&attr, &ops, &n) == 0 && n == 1 && ops[0].atom == DW_OP_plus_uconst)
    return static_cast<int64_t>(ops[0].number);
  return std::nullopt;
}

// Element count of an array type (first dimension), from DW_AT_count or
// DW_AT_upper_bound (+1; C arrays count from 0).
std::optional<int64_t> array_count(Dwarf_Die* array_type) {
  Dwarf_Die sub;
  if (dwarf_child(array_type, &sub) != 0) return std::nullopt;
  do {
    if (dwarf_tag(&sub) != DW_TAG_subrange_type) continue;
    Dwarf_Attribute attr;
    Dwarf_Word w = 0;
    if (dwarf_attr_integrate(&sub, DW_AT_count, &attr) && dwarf_formudata(&attr, &w) == 0)
      return static_cast<int64_t>(w);
    if (dwarf_attr_integrate(&sub, DW_AT_upper_bound, &attr) && dwarf_formudata(&attr, &w) == 0)
      return static_cast<int64_t>(w) + 1;
    return std::nullopt;
  } while (dwarf_siblingof(&sub, &sub) == 0);
  return std::nullopt;
}

struct Member {
  int64_t offset;
  std::optional<int64_t> count;  // element count when the member is an array
};

// Collects the wanted members of a struct, descending into anonymous
// struct/union members (their members are the enclosing struct's members).
void collect_members(Dwarf_Die* type, int64_t base, const std::set<std::string>& wanted,
                     std::map<std::string, Member>& out, int depth) {
  Dwarf_Die m;
  if (depth > 4 || dwarf_child(type, &m) != 0) return;
  do {
    if (dwarf_tag(&m) != DW_TAG_member) continue;
    const int64_t off = base + member_offset(&m).value_or(0);
    const char* n = dwarf_diename(&m);
    Dwarf_Die t;
    const bool typed = peel_type(&m, &t);
    if (!n) {
      if (typed && (dwarf_tag(&t) == DW_TAG_structure_type || dwarf_tag(&t) == DW_TAG_union_type ||
                    dwarf_tag(&t) == DW_TAG_class_type))
        collect_members(&t, off, wanted, out, depth + 1);
      continue;
    }
    if (!wanted.count(n) || out.count(n)) continue;
    Member mem{off, std::nullopt};
    if (typed && dwarf_tag(&t) == DW_TAG_array_type) mem.count = array_count(&t);
    out.emplace(n, mem);
  } while (dwarf_siblingof(&m, &m) == 0);
}

// Constants taken from array bounds: key -> (struct, member).
const std::pair<const char*, std::pair<const char*, const char*>> kBoundConstants[] = {
    {"const.MAXCHANNELS", {"ncclComm", "channels"}},
    {"const.NCCL_PROXY_MAX_SUBS", {"ncclProxyArgs", "subs"}},
    {"const.NCCL_NUM_FUNCTIONS", {"ncclComm", "seqNumber"}},
    // Before 2.23.4 there is no seqNumber[]; latencies[NCCL_NUM_FUNCTIONS][..][..]
    // is in ncclComm in every release from 2.18 to 2.30 (first one found wins).
    {"const.NCCL_NUM_FUNCTIONS", {"ncclComm", "latencies"}},
    {"const.NCCL_STEPS", {"ncclProxySubArgs", "requests"}},
};

void take_struct(Dwarf_Die* die, const std::string& name, Want& want, NcclLayout& out) {
  std::set<std::string> wanted = want.members[name];
  for (const auto& [key, sm] : kBoundConstants)
    if (name == sm.first) wanted.insert(sm.second);
  std::map<std::string, Member> found;
  collect_members(die, 0, wanted, found, 0);
  const auto& keyset = want.members[name];
  for (const auto& [m, mem] : found)
    if (keyset.count(m)) out.fields[name + "." + m] = mem.offset;
  if (keyset.count("sizeof")) {
    const int size = dwarf_bytesize(die);
    if (size > 0) out.fields[name + ".sizeof"] = size;
  }
  for (const auto& [key, sm] : kBoundConstants) {
    if (name != sm.first) continue;
    auto it = found.find(sm.second);
    if (it != found.end() && it->second.count && !out.fields.count(key)) out.fields[key] = *it->second.count;
  }
}

// ncclPattern_t: an enumeration holding ncclPatternSend and ncclPatternRecv.
void take_enum(Dwarf_Die* die, Want& want, NcclLayout& out) {
  Dwarf_Die e;
  if (dwarf_child(die, &e) != 0) return;
  std::map<std::string, int64_t> values;
  do {
    if (dwarf_tag(&e) != DW_TAG_enumerator) continue;
    const char* n = name_of(&e);
    if (std::strcmp(n, "ncclPatternSend") != 0 && std::strcmp(n, "ncclPatternRecv") != 0) continue;
    Dwarf_Attribute attr;
    Dwarf_Sword v = 0;
    if (dwarf_attr(&e, DW_AT_const_value, &attr) && dwarf_formsdata(&attr, &v) == 0) values[n] = v;
  } while (dwarf_siblingof(&e, &e) == 0);
  if (values.size() != 2) return;
  out.fields["const.ncclPatternSend"] = values["ncclPatternSend"];
  out.fields["const.ncclPatternRecv"] = values["ncclPatternRecv"];
  want.have_patterns = true;
}

void scan_scope(Dwarf_Die* scope, Want& want, NcclLayout& out) {
  Dwarf_Die d;
  if (dwarf_child(scope, &d) != 0) return;
  do {
    const int tag = dwarf_tag(&d);
    if (tag == DW_TAG_structure_type || tag == DW_TAG_class_type) {
      if (want.structs_left.empty()) continue;
      const char* n = dwarf_diename(&d);
      if (!n || !want.structs_left.count(n) || dwarf_hasattr(&d, DW_AT_declaration)) continue;
      take_struct(&d, n, want, out);
      want.structs_left.erase(n);
    } else if (tag == DW_TAG_enumeration_type && !want.have_patterns && !dwarf_hasattr(&d, DW_AT_declaration)) {
      take_enum(&d, want, out);
    }
  } while (dwarf_siblingof(&d, &d) == 0 && !(want.structs_left.empty() && want.have_patterns));
}

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};
struct DwarfHandle {
  Dwarf* dw;
  ~DwarfHandle() {
    if (dw) dwarf_end(dw);
  }
};

}  // namespace

Result<NcclLayout> dwarf_layout(const std::string& library_path) {
  Fd fd{open(library_path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (fd.fd < 0) return make_error(std::strerror(errno), library_path);
  DwarfHandle h{dwarf_begin(fd.fd, DWARF_C_READ)};
  if (!h.dw) {
    const int err = dwarf_errno();
    return make_error(fmt::format("no DWARF debug info: {}", dwarf_errmsg(err)), library_path,
                      "stripped or not an ELF file; the shipped layout table is used instead");
  }

  Want want;
  for (const auto& key : layout_field_keys()) {
    const auto dot = key.find('.');
    const std::string st = key.substr(0, dot);
    if (st == "const") continue;
    want.members[st].insert(key.substr(dot + 1));
    want.structs_left.insert(st);
  }

  NcclLayout out;
  out.label = "dwarf";
  out.source = "dwarf";
  Dwarf_Off off = 0, next = 0;
  size_t header_size = 0;
  while (!(want.structs_left.empty() && want.have_patterns) &&
         dwarf_nextcu(h.dw, off, &next, &header_size, nullptr, nullptr, nullptr) == 0) {
    Dwarf_Die cu;
    if (dwarf_offdie(h.dw, off + header_size, &cu)) scan_scope(&cu, want, out);
    off = next;
  }
  if (!out.has("ncclComm.startMagic") && !out.has("ncclComm.rank"))
    return make_error("the DWARF does not describe struct ncclComm", library_path,
                      "not a libnccl, or built without -g");
  return out;
}

}  // namespace ccdiag::nccl::attach
