#include "collectors/hw/hw_findings.hpp"

#include <cctype>

#include "collectors/config/config_findings.hpp"
#include "collectors/pcie/pcie_findings.hpp"
#include "collectors/rdma/rdma_findings.hpp"

namespace ccdiag {

std::optional<std::string> normalize_bdf(std::string_view t) {
  std::string s;
  for (char c : t) s.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  // domain may be 4 or 8 hex digits (NVML prints 8)
  const size_t c1 = s.find(':');
  if (c1 == std::string::npos) return std::nullopt;
  std::string domain = s.substr(0, c1), rest = s.substr(c1 + 1);
  if (domain.size() == 8 && domain.substr(0, 4) == "0000") domain = domain.substr(4);
  if (domain.size() != 4) return std::nullopt;
  if (rest.size() == 5) rest += ".0";  // Xid prints no function; NVIDIA GPUs are function 0
  if (rest.size() != 7 || rest[2] != ':' || rest[5] != '.') return std::nullopt;
  const std::string out = domain + ":" + rest;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9})
    if (!std::isxdigit(static_cast<unsigned char>(out[i]))) return std::nullopt;
  return out;
}

std::map<std::string, std::map<std::string, GpuRef>> gpu_map(const EvidenceSet& set) {
  std::map<std::string, std::map<std::string, GpuRef>> m;
  std::map<std::string, std::map<int, std::string>> bdf_of_index;
  for (const auto& e : set.evidence) {
    if (e.kind != "pcie.link" || !e.availability.is_ok() || e.data.value("role", "") != "gpu") continue;
    const auto bdf = normalize_bdf(e.data.value("bdf", ""));
    if (!bdf || !e.data.contains("gpu_index")) continue;
    const std::string host = e.subject.host.value_or("");
    m[host][*bdf].index = e.data["gpu_index"].get<int>();
    bdf_of_index[host][e.data["gpu_index"].get<int>()] = *bdf;
  }
  auto assign = [&](const std::string& host, const std::string& bdf, int rank, const char* source) {
    GpuRef& g = m[host][bdf];
    if (g.rank && g.rank_source == "ranks.process") return;  // the direct evidence wins
    g.rank = rank;
    g.rank_source = source;
  };
  // ranks.process (the ranks layer): a rank and the GPU it uses, by BDF or index.
  for (const auto& e : set.evidence) {
    if (!e.availability.is_ok()) continue;
    const std::string host = e.subject.host.value_or("");
    const auto& d = e.data;
    if (e.kind == "ranks.process") {
      std::optional<int> rank = e.subject.rank;
      if (d.contains("rank") && d["rank"].is_number_integer()) rank = d["rank"].get<int>();
      if (!rank) continue;
      std::optional<std::string> bdf;
      for (const char* k : {"gpu_bdf", "gpu_pci", "gpu"})
        if (!bdf && d.contains(k) && d[k].is_string()) bdf = normalize_bdf(d[k].get<std::string>());
      if (!bdf && e.subject.gpu) bdf = normalize_bdf(*e.subject.gpu);
      if (!bdf) {
        for (const char* k : {"gpu_index", "cuda_device", "gpu"}) {
          if (d.contains(k) && d[k].is_number_integer()) {
            const auto it = bdf_of_index[host].find(d[k].get<int>());
            if (it != bdf_of_index[host].end()) bdf = it->second;
            break;
          }
        }
      }
      if (bdf) assign(host, *bdf, *rank, "ranks.process");
    } else if (e.kind == "host.memlock" && d.contains("rank") && d.contains("local_rank")) {
      // torchrun convention: torch.cuda.set_device(LOCAL_RANK), all GPUs visible.
      const auto it = bdf_of_index[host].find(d["local_rank"].get<int>());
      if (it != bdf_of_index[host].end()) assign(host, it->second, d["rank"].get<int>(), "local_rank");
    }
  }
  return m;
}

void add_hardware_findings(EvidenceSet& set) {
  for (auto* derive : {&pcie_findings, &rdma_findings, &config_findings})
    for (auto& f : (*derive)(set.evidence)) set.findings.push_back(std::move(f));
  const auto m = gpu_map(set);
  if (m.empty()) return;
  for (auto& f : set.findings) {
    if (!f.subject.gpu) continue;
    const auto bdf = normalize_bdf(*f.subject.gpu);
    if (!bdf) continue;
    const auto h = m.find(f.subject.host.value_or(""));
    if (h == m.end()) continue;
    const auto g = h->second.find(*bdf);
    if (g == h->second.end()) continue;
    if (g->second.index) f.fields["gpu_index"] = *g->second.index;
    if (g->second.rank && !f.subject.rank) {
      f.subject.rank = *g->second.rank;
      f.fields["rank_from"] = g->second.rank_source;
    }
  }
}

}  // namespace ccdiag
