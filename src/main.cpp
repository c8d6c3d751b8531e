// Wiring only: build the CLI, register subcommands, map errors to exit codes.
#include <iostream>

#include "ccdiag/exit_codes.hpp"
#include "cli/app.hpp"
#include "collectors/logs/matcher.hpp"

int main(int argc, char** argv) {
  using namespace ccdiag;
  logs::register_builtin_prefilter();
  CLI::App app{kAppDescription, "ccdiag"};
  CommandContext ctx{GlobalOptions{}, std::cout, std::cerr};
  build_app(app, ctx);

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "ccdiag: internal error: " << e.what() << " (please report this)\n";
    return kExitInternal;
  }
  return ctx.exit_code;
}
