# All dependencies come from Debian packages (scripts/setup.sh installs them);
# nothing is downloaded at build time. CUDA, NVML, NCCL and libibverbs are never
# linked: they are loaded at run time so ccdiag starts on a host whose GPU
# driver is broken.
find_package(CLI11 REQUIRED)
find_package(fmt REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(PkgConfig REQUIRED)
find_package(ZLIB REQUIRED)
find_package(Threads REQUIRED)

pkg_check_modules(LIBDW REQUIRED IMPORTED_TARGET libdw)
pkg_check_modules(LIBARCHIVE REQUIRED IMPORTED_TARGET libarchive)
pkg_check_modules(RE2 IMPORTED_TARGET re2)
pkg_check_modules(HYPERSCAN IMPORTED_TARGET libhs)

add_library(ccdiag_deps INTERFACE)
target_link_libraries(ccdiag_deps INTERFACE
  CLI11::CLI11 fmt::fmt nlohmann_json::nlohmann_json ZLIB::ZLIB Threads::Threads
  PkgConfig::LIBDW PkgConfig::LIBARCHIVE ${CMAKE_DL_LIBS})

set(CCDIAG_FEATURES "libdw libarchive zlib")
if(RE2_FOUND)
  target_link_libraries(ccdiag_deps INTERFACE PkgConfig::RE2)
  target_compile_definitions(ccdiag_deps INTERFACE CCDIAG_HAVE_RE2=1)
  string(APPEND CCDIAG_FEATURES " re2")
endif()
if(HYPERSCAN_FOUND)
  target_link_libraries(ccdiag_deps INTERFACE PkgConfig::HYPERSCAN)
  target_compile_definitions(ccdiag_deps INTERFACE CCDIAG_HAVE_HYPERSCAN=1)
  string(APPEND CCDIAG_FEATURES " hyperscan")
endif()
if(CCDIAG_SANITIZE)
  string(APPEND CCDIAG_FEATURES " asan ubsan")
endif()
