#pragma once

namespace ccdiag {
// Set by CMake from project(VERSION) and `git describe` when available.
const char* version_string();
const char* build_features();  // "asan ubsan re2 ..." as configured
}  // namespace ccdiag
