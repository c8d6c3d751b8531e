#include "report/prom_text.hpp"

#include <cmath>

#include <fmt/format.h>

namespace ccdiag {

std::string prom_escape_label(std::string_view v) {
  std::string o;
  for (char c : v) {
    if (c == '\\') o += "\\\\";
    else if (c == '"') o += "\\\"";
    else if (c == '\n') o += "\\n";
    else o.push_back(c);
  }
  return o;
}

bool prom_file_name_ok(std::string_view path) {
  return path.size() >= 6 && path.substr(path.size() - 5) == ".prom";
}

void PromText::set(const std::string& name, const char* type, const char* help, const PromLabels& labels, double v, bool add) {
  auto& f = fams_[name];
  f.type = type;
  f.help = help;
  std::string l;
  for (const auto& [k, val] : labels) l += (l.empty() ? "" : ",") + k + "=\"" + prom_escape_label(val) + "\"";
  auto [it, fresh] = f.samples.try_emplace(l, 0.0);
  it->second = add ? it->second + v : v;
}

std::string PromText::text() const {
  std::string o;
  for (const auto& [name, f] : fams_) {
    o += "# HELP " + name + " " + f.help + "\n# TYPE " + name + " " + f.type + "\n";
    for (const auto& [l, v] : f.samples) {
      o += name;
      if (!l.empty()) o += "{" + l + "}";
      o += " " + (std::isnan(v) ? std::string("NaN") : fmt::format("{}", v)) + "\n";
    }
  }
  return o;
}

}  // namespace ccdiag
