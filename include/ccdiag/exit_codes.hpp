// Exit codes every subcommand uses (docs/exit-codes.md). Stable: runbooks branch on them.
#pragma once

namespace ccdiag {

enum ExitCode : int {
  kExitHealthy = 0,        // nothing found
  kExitProblem = 1,        // a problem was found (a verdict other than no_problem_found)
  kExitUsage = 2,          // usage error or bad input (bad flag, unreadable or malformed bundle/log/dump)
  kExitPartial = 3,        // nothing found, but some probes could not run (see unchecked[])
  kExitInternal = 4,       // ccdiag itself failed (a bug): please report
};

}  // namespace ccdiag
