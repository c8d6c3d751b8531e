// The layers the decision tree walks, top (symptom) to bottom (hardware),
// plus system-config, which can sit under any of them.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ccdiag {

enum class Layer { framework, nccl, transport, hardware, system_config, process };

// Stable JSON spellings: "framework", "nccl", "transport", "hardware", "system-config", "process".
std::string_view to_string(Layer layer);
std::optional<Layer> parse_layer(std::string_view text);

// The order the tree walks (framework first, hardware last; system-config is
// consulted together with the layer whose failure it explains).
inline constexpr Layer kWalkOrder[] = {Layer::framework, Layer::nccl, Layer::transport,
                                       Layer::hardware, Layer::system_config};

}  // namespace ccdiag
