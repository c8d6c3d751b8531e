// Writing an output file so that a reader never sees it half-written: the
// whole content goes to "<file>.<pid>.tmp" in the same directory (a name that
// does not end in ".prom", so node_exporter's textfile collector ignores it),
// is fsync'ed, then rename()d over the target, and the directory is fsync'ed.
// On any failure the temporary file is removed and the target is untouched.
#pragma once

#include <string>
#include <string_view>

#include "ccdiag/result.hpp"

namespace ccdiag {

Status write_file_atomically(const std::string& path, std::string_view content);

}  // namespace ccdiag
