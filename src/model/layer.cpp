#include "ccdiag/layer.hpp"

namespace ccdiag {

std::string_view to_string(Layer layer) {
  switch (layer) {
    case Layer::framework: return "framework";
    case Layer::nccl: return "nccl";
    case Layer::transport: return "transport";
    case Layer::hardware: return "hardware";
    case Layer::system_config: return "system-config";
    case Layer::process: return "process";
  }
  return "framework";
}

std::optional<Layer> parse_layer(std::string_view t) {
  if (t == "framework") return Layer::framework;
  if (t == "nccl") return Layer::nccl;
  if (t == "transport") return Layer::transport;
  if (t == "hardware") return Layer::hardware;
  if (t == "system-config" || t == "system_config") return Layer::system_config;
  if (t == "process") return Layer::process;
  return std::nullopt;
}

}  // namespace ccdiag
