#include "ccdiag/subject.hpp"

#include <nlohmann/json.hpp>

namespace ccdiag {

bool Subject::empty() const {
  return !host && !rank && !pid && !tid && !gpu && !nic && !port && !comm && !process_group && !seq;
}

void Subject::merge(const Subject& o) {
  if (o.host) host = o.host;
  if (o.rank) rank = o.rank;
  if (o.pid) pid = o.pid;
  if (o.tid) tid = o.tid;
  if (o.gpu) gpu = o.gpu;
  if (o.nic) nic = o.nic;
  if (o.port) port = o.port;
  if (o.comm) comm = o.comm;
  if (o.process_group) process_group = o.process_group;
  if (o.seq) seq = o.seq;
}

std::string Subject::describe() const {
  std::string s;
  auto add = [&s](const char* k, const std::string& v) {
    if (!s.empty()) s += ' ';
    s += k;
    s += ' ';
    s += v;
  };
  if (host) add("host", *host);
  if (rank) add("rank", std::to_string(*rank));
  if (pid) add("pid", std::to_string(*pid));
  if (tid) add("tid", std::to_string(*tid));
  if (gpu) add("gpu", *gpu);
  if (nic) add("nic", *nic);
  if (port) add("port", std::to_string(*port));
  if (comm) add("comm", *comm);
  if (process_group) add("process_group", *process_group);
  if (seq) add("seq", std::to_string(*seq));
  return s;
}

void to_json(nlohmann::json& j, const Subject& s) {
  j = nlohmann::json::object();
  if (s.host) j["host"] = *s.host;
  if (s.rank) j["rank"] = *s.rank;
  if (s.pid) j["pid"] = *s.pid;
  if (s.tid) j["tid"] = *s.tid;
  if (s.gpu) j["gpu"] = *s.gpu;
  if (s.nic) j["nic"] = *s.nic;
  if (s.port) j["port"] = *s.port;
  if (s.comm) j["comm"] = *s.comm;
  if (s.process_group) j["process_group"] = *s.process_group;
  if (s.seq) j["seq"] = *s.seq;
}

namespace {
template <class T>
void get_opt(const nlohmann::json& j, const char* key, std::optional<T>& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  if constexpr (std::is_same_v<T, std::string>) {
    if (it->is_string()) out = it->template get<std::string>();
    else if (it->is_number_integer()) out = std::to_string(it->template get<int64_t>());
  } else {
    if (it->is_number_integer()) out = it->template get<T>();
  }
}
}  // namespace

void from_json(const nlohmann::json& j, Subject& s) {
  s = Subject{};
  if (!j.is_object()) return;
  get_opt(j, "host", s.host);
  get_opt(j, "rank", s.rank);
  get_opt(j, "pid", s.pid);
  get_opt(j, "tid", s.tid);
  get_opt(j, "gpu", s.gpu);
  get_opt(j, "nic", s.nic);
  get_opt(j, "port", s.port);
  get_opt(j, "comm", s.comm);
  get_opt(j, "process_group", s.process_group);
  get_opt(j, "seq", s.seq);
}

}  // namespace ccdiag
