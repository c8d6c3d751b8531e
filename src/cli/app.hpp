// The ccdiag command line: global options, every subcommand, help footer.
#pragma once

#include "cli/common.hpp"

namespace ccdiag {

inline constexpr const char* kAppDescription =
    "ccdiag: diagnose hung, failing or slow NCCL / PyTorch distributed jobs";

// Registers everything on `app`; option values land in `ctx`.
void build_app(CLI::App& app, CommandContext& ctx);

}  // namespace ccdiag
