// A Hyperscan database compiled and serialized at build time and linked into
// the binary (tools/sigdb/gen_sigdb.cpp), with the key of what it was
// compiled from (engine version, every pattern or literal and its flags): a
// database is taken only by code whose own key matches.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ccdiag {

struct PrebuiltDatabase {
  const unsigned char* data = nullptr;
  size_t size = 0;
  uint64_t key = 0;
};

}  // namespace ccdiag
