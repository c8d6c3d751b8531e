// ccdiag info : version, build features, and which optional libraries this
// host can load at run time (each dlopen runs in a child under a deadline: a
// broken driver must not hang ccdiag).
#include <dlfcn.h>

#include <ostream>

#include <fmt/format.h>

#include "ccdiag/utf8.hpp"
#include "ccdiag/version.hpp"
#include "cli/common.hpp"
#include "sys/probe_runner.hpp"

namespace ccdiag {

namespace {

struct InfoOptions {
  OutputOptions output;
};

struct RuntimeLib {
  const char* what;
  const char* soname;
};

constexpr RuntimeLib kRuntimeLibs[] = {
    {"NVML", "libnvidia-ml.so.1"},
    {"CUDA driver", "libcuda.so.1"},
    {"NCCL", "libnccl.so.2"},
    {"libibverbs", "libibverbs.so.1"},
};

int run_info(const InfoOptions& opts, CommandContext& ctx) {
  std::vector<ProbeSpec> specs;
  for (const auto& lib : kRuntimeLibs) {
    specs.push_back(ProbeSpec{lib.soname, std::chrono::milliseconds(3000), [soname = lib.soname] {
                                void* h = ::dlopen(soname, RTLD_LAZY | RTLD_LOCAL);
                                if (!h) {
                                  const char* e = ::dlerror();
                                  return nlohmann::json{{"found", false}, {"reason", e ? e : "not found"}};
                                }
                                char path[4096] = {};
                                if (::dlinfo(h, RTLD_DI_ORIGIN, path) != 0) path[0] = '\0';
                                return nlohmann::json{{"found", true}, {"dir", path}};
                              }});
  }
  const auto outcomes = run_probes_isolated(specs);
  nlohmann::json libs = nlohmann::json::array();
  for (size_t i = 0; i < specs.size(); ++i) {
    nlohmann::json l{{"name", kRuntimeLibs[i].what}, {"soname", kRuntimeLibs[i].soname}};
    const auto& o = outcomes[i];
    if (!o.availability.is_ok()) {
      l["status"] = std::string(to_string(o.availability.state));
      l["reason"] = o.availability.reason;
    } else if (o.value.value("found", false)) {
      l["status"] = "found";
      l["dir"] = o.value.value("dir", "");
    } else {
      l["status"] = "not found";
      l["reason"] = o.value.value("reason", "");
    }
    libs.push_back(l);
  }
  if (opts.output.json) {
    nlohmann::json j{{"version", version_string()}, {"features", build_features()}, {"runtime_libraries", libs}};
    ctx.out << json_text(std::move(j)) << '\n';
    return kExitHealthy;
  }
  ctx.out << "ccdiag " << version_string() << '\n';
  ctx.out << "build features: " << build_features() << '\n';
  ctx.out << "runtime libraries (loaded only when a probe needs them):\n";
  for (const auto& l : libs) {
    ctx.out << fmt::format("  {:<12} {:<18} {}", l["name"].get<std::string>(), l["soname"].get<std::string>(),
                           l["status"].get<std::string>());
    if (l.contains("dir") && !l["dir"].get<std::string>().empty()) ctx.out << " (" << l["dir"].get<std::string>() << ")";
    ctx.out << '\n';
  }
  return kExitHealthy;
}

}  // namespace

void register_info(CLI::App& app, CommandContext& ctx) {
  auto opts = std::make_shared<InfoOptions>();
  auto* sub = app.add_subcommand("info", "Version, build features and libraries found at run time");
  add_output_flags(sub, opts->output, false);
  sub->callback([opts, &ctx] { ctx.exit_code = run_info(*opts, ctx); });
}

}  // namespace ccdiag
