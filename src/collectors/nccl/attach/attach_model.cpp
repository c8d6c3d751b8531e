#include "collectors/nccl/attach/attach_model.hpp"

#include <fmt/format.h>

namespace ccdiag::nccl::attach {

using nlohmann::json;

std::string CommState::hash_hex() const { return fmt::format("0x{:016x}", comm_hash); }

std::string bus_id_string(int64_t id) {
  if (id < 0) return "";
  const auto u = static_cast<uint64_t>(id);
  return fmt::format("{:04x}:{:02x}:{:02x}.{:01x}", u >> 20, (u & 0xff000) >> 12, (u & 0xff0) >> 4, u & 0xf);
}

std::string nccl_result_name(int code) {
  static const char* names[] = {"ncclSuccess",       "ncclUnhandledCudaError", "ncclSystemError",
                                "ncclInternalError", "ncclInvalidArgument",    "ncclInvalidUsage",
                                "ncclRemoteError",   "ncclInProgress"};
  if (code >= 0 && code < 8) return names[code];
  return "ncclResult " + std::to_string(code);
}

namespace {

template <class T>
void opt_out(json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

template <class T>
void opt_in(const json& j, const char* key, std::optional<T>& v) {
  if (j.contains(key) && !j[key].is_null()) v = j[key].get<T>();
}

template <class T>
T val(const json& j, const char* key, T def) {
  if (!j.contains(key) || j[key].is_null()) return def;
  try {
    return j[key].get<T>();
  } catch (const json::exception&) {
    return def;
  }
}

uint64_t parse_hex(const std::string& s) {
  try {
    return s.empty() ? 0 : std::stoull(s, nullptr, 16);
  } catch (...) {
    return 0;
  }
}

json sub_json(const ProxySub& s) {
  json j{{"channel", s.channel}, {"peer", s.peer},       {"direction", s.direction},     {"nsteps", s.nsteps},
         {"base", s.base},       {"posted", s.posted},   {"received", s.received},       {"flushed", s.flushed},
         {"transmitted", s.transmitted}, {"done", s.done}, {"state", std::string(1, s.state)},
         {"waits_for", s.waits_for}, {"sane", s.sane}};
  opt_out(j, "moving", s.moving);
  return j;
}

ProxySub sub_from(const json& j) {
  ProxySub s;
  s.channel = val(j, "channel", -1);
  s.peer = val(j, "peer", -1);
  s.direction = val<std::string>(j, "direction", "");
  s.nsteps = val(j, "nsteps", 0);
  s.base = val<uint64_t>(j, "base", 0);
  s.posted = val<uint64_t>(j, "posted", 0);
  s.received = val<uint64_t>(j, "received", 0);
  s.flushed = val<uint64_t>(j, "flushed", 0);
  s.transmitted = val<uint64_t>(j, "transmitted", 0);
  s.done = val<uint64_t>(j, "done", 0);
  auto st = val<std::string>(j, "state", "?");
  s.state = st.empty() ? '?' : st[0];
  s.waits_for = val<std::string>(j, "waits_for", "");
  s.sane = val(j, "sane", true);
  opt_in(j, "moving", s.moving);
  return s;
}

}  // namespace

json to_json(const ProcessAttach& p) {
  json comms = json::array();
  for (const auto& c : p.comms) {
    json ops = json::array();
    for (const auto& o : c.proxy_ops) {
      json subs = json::array();
      for (const auto& s : o.subs) subs.push_back(sub_json(s));
      ops.push_back({{"addr", fmt::format("0x{:x}", o.addr)}, {"op_count", o.op_count}, {"p2p", o.p2p},
                     {"index", o.index}, {"nsubs", o.nsubs}, {"done", o.done}, {"pattern", o.pattern},
                     {"pattern_name", o.pattern_name}, {"state", o.state}, {"subs", subs}});
    }
    json channels = json::array();
    for (const auto& ch : c.channels) {
      json peers = json::array();
      for (const auto& pc : ch.peers) peers.push_back({{"peer", pc.peer}, {"send", pc.send}, {"recv", pc.recv}});
      channels.push_back({{"index", ch.index}, {"id", ch.id}, {"peers", peers}});
    }
    json j{{"addr", fmt::format("0x{:x}", c.addr)},
           {"comm_hash", c.hash_hex()},
           {"rank", c.rank},
           {"nranks", c.nranks},
           {"cuda_dev", c.cuda_dev},
           {"bus_id", c.bus_id},
           {"init_state", c.init_state},
           {"init_state_name", nccl_result_name(c.init_state)},
           {"seq_numbers", c.seq_numbers},
           {"n_channels", c.n_channels},
           {"channels", channels},
           {"proxy_present", c.proxy_present},
           {"proxy_ops", ops},
           {"proxy_ops_truncated", c.proxy_ops_truncated},
           {"consistent", c.consistent},
           {"read_attempts", c.read_attempts},
           {"notes", c.notes}};
    opt_out(j, "async_result", c.async_result);
    opt_out(j, "abort_flag", c.abort_flag);
    opt_out(j, "op_count", c.op_count);
    opt_out(j, "coll_op_count", c.coll_op_count);
    opt_out(j, "owner_ok", c.owner_ok);
    opt_out(j, "in_ras_list", c.in_ras_list);
    opt_out(j, "proxy_tp_rank", c.proxy_tp_rank);
    opt_out(j, "proxy_thread_found", c.proxy_thread_found);
    comms.push_back(std::move(j));
  }
  return json{{"source", p.source},
              {"kind", p.kind},
              {"host", p.host},
              {"command", p.command},
              {"pid", p.pid},
              {"status", p.status},
              {"reason", p.reason},
              {"incomplete", p.incomplete},
              {"library", p.library},
              {"library_opened", p.library_opened},
              {"static_link", p.static_link},
              {"version", p.version},
              {"version_string", p.version_string},
              {"build_id", p.build_id},
              {"layout_source", p.layout_source},
              {"layout_label", p.layout_label},
              {"samples", p.samples},
              {"sample_interval_s", p.sample_interval_s},
              {"scan",
               {{"regions", p.scan.regions},
                {"bytes_scanned", p.scan.bytes_scanned},
                {"bytes_skipped", p.scan.bytes_skipped},
                {"magic_hits", p.scan.magic_hits},
                {"rejected_no_end_magic", p.scan.no_end_magic},
                {"rejected_invalid", p.scan.invalid},
                {"ms", p.scan.ms},
                {"budget_exceeded", p.scan.budget_exceeded}}},
              {"comms", comms},
              {"notes", p.notes}};
}

ProcessAttach process_attach_from_json(const json& j) {
  ProcessAttach p;
  if (!j.is_object()) return p;
  p.source = val<std::string>(j, "source", "");
  p.kind = val<std::string>(j, "kind", "");
  p.host = val<std::string>(j, "host", "");
  p.command = val<std::string>(j, "command", "");
  p.pid = val(j, "pid", 0);
  p.status = val<std::string>(j, "status", "");
  p.reason = val<std::string>(j, "reason", "");
  p.incomplete = val(j, "incomplete", false);
  p.library = val<std::string>(j, "library", "");
  p.version = val<std::string>(j, "version", "");
  p.version_string = val<std::string>(j, "version_string", "");
  p.build_id = val<std::string>(j, "build_id", "");
  p.layout_source = val<std::string>(j, "layout_source", "");
  p.layout_label = val<std::string>(j, "layout_label", "");
  p.library_opened = val<std::string>(j, "library_opened", "");
  p.static_link = val(j, "static_link", false);
  p.samples = val(j, "samples", 1);
  p.sample_interval_s = val(j, "sample_interval_s", 0.0);
  p.notes = val<std::vector<std::string>>(j, "notes", {});
  if (j.contains("scan") && j["scan"].is_object()) {
    const auto& sj = j["scan"];
    p.scan.regions = val<uint64_t>(sj, "regions", 0);
    p.scan.bytes_scanned = val<uint64_t>(sj, "bytes_scanned", 0);
    p.scan.bytes_skipped = val<uint64_t>(sj, "bytes_skipped", 0);
    p.scan.magic_hits = val<uint64_t>(sj, "magic_hits", 0);
    p.scan.no_end_magic = val<uint64_t>(sj, "rejected_no_end_magic", 0);
    p.scan.invalid = val<uint64_t>(sj, "rejected_invalid", 0);
    p.scan.ms = val(sj, "ms", 0.0);
    p.scan.budget_exceeded = val(sj, "budget_exceeded", false);
  }
  if (j.contains("comms") && j["comms"].is_array()) {
    for (const auto& cj : j["comms"]) {
      if (!cj.is_object()) continue;
      CommState c;
      c.addr = parse_hex(val<std::string>(cj, "addr", ""));
      auto hash = val<std::string>(cj, "comm_hash", "");
      try {
        c.comm_hash = hash.empty() ? 0 : std::stoull(hash, nullptr, 16);
      } catch (...) {
        c.comm_hash = 0;
      }
      c.rank = val(cj, "rank", -1);
      c.nranks = val(cj, "nranks", 0);
      c.cuda_dev = val(cj, "cuda_dev", -1);
      c.bus_id = val<std::string>(cj, "bus_id", "");
      c.init_state = val(cj, "init_state", 0);
      opt_in(cj, "async_result", c.async_result);
      opt_in(cj, "abort_flag", c.abort_flag);
      opt_in(cj, "op_count", c.op_count);
      opt_in(cj, "coll_op_count", c.coll_op_count);
      opt_in(cj, "owner_ok", c.owner_ok);
      opt_in(cj, "in_ras_list", c.in_ras_list);
      opt_in(cj, "proxy_tp_rank", c.proxy_tp_rank);
      if (cj.contains("seq_numbers") && cj["seq_numbers"].is_array())
        for (const auto& v : cj["seq_numbers"])
          if (v.is_number_unsigned() || v.is_number_integer()) c.seq_numbers.push_back(v.get<uint64_t>());
      c.n_channels = val(cj, "n_channels", 0);
      c.proxy_present = val(cj, "proxy_present", false);
      opt_in(cj, "proxy_thread_found", c.proxy_thread_found);
      c.proxy_ops_truncated = val(cj, "proxy_ops_truncated", false);
      c.consistent = val(cj, "consistent", true);
      c.read_attempts = val(cj, "read_attempts", 1);
      c.notes = val<std::vector<std::string>>(cj, "notes", {});
      if (cj.contains("channels") && cj["channels"].is_array()) {
        for (const auto& chj : cj["channels"]) {
          if (!chj.is_object()) continue;
          ChannelState ch;
          ch.index = val(chj, "index", 0);
          ch.id = val(chj, "id", -1);
          if (chj.contains("peers") && chj["peers"].is_array())
            for (const auto& pj : chj["peers"])
              if (pj.is_object()) ch.peers.push_back({val(pj, "peer", -1), val(pj, "send", false), val(pj, "recv", false)});
          c.channels.push_back(std::move(ch));
        }
      }
      if (cj.contains("proxy_ops") && cj["proxy_ops"].is_array()) {
        for (const auto& oj : cj["proxy_ops"]) {
          if (!oj.is_object()) continue;
          ProxyOp o;
          o.addr = parse_hex(val<std::string>(oj, "addr", ""));
          o.done = val(oj, "done", 0);
          o.state = val(oj, "state", 0);
          o.op_count = val<uint64_t>(oj, "op_count", 0);
          o.p2p = val(oj, "p2p", false);
          o.index = val<uint64_t>(oj, "index", 0);
          o.nsubs = val(oj, "nsubs", 0);
          o.pattern = val(oj, "pattern", -1);
          o.pattern_name = val<std::string>(oj, "pattern_name", "");
          if (oj.contains("subs") && oj["subs"].is_array())
            for (const auto& sj : oj["subs"])
              if (sj.is_object()) o.subs.push_back(sub_from(sj));
          c.proxy_ops.push_back(std::move(o));
        }
      }
      p.comms.push_back(std::move(c));
    }
  }
  return p;
}

}  // namespace ccdiag::nccl::attach
