// Decimal numbers as sysfs prints them in link speeds and port rates
// ("16.0 GT/s PCIe", "400 Gb/sec (4X NDR)"). Parsed by hand because
// std::from_chars for double is not in every libstdc++ ccdiag builds with.
#pragma once

#include <optional>
#include <string_view>

namespace ccdiag {

// "16.0" -> 16.0; nullopt for anything but digits with at most one '.'.
inline std::optional<double> parse_sysfs_decimal(std::string_view num) {
  if (num.empty()) return std::nullopt;
  double v = 0, scale = 0;
  for (char c : num) {
    if (c == '.') {
      if (scale != 0) return std::nullopt;
      scale = 1;
    } else if (c >= '0' && c <= '9') {
      v = v * 10 + (c - '0');
      if (scale != 0) scale *= 10;
    } else {
      return std::nullopt;
    }
  }
  if (scale > 1) v /= scale;
  return v;
}

}  // namespace ccdiag
