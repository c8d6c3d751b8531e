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
set(CCDIAG_FEATURES "libdw libarchive zlib")

if(CCDIAG_STATIC)
  # One copyable binary: every third-party library from its Debian static
  # archive, libstdc++ and libgcc too, so ldd lists only glibc. fmt has no
  # static archive in Debian: it is used header-only. The archives' own
  # private dependencies are listed by hand because pkg-config --static
  # names libraries (acl, zstd, lz4) whose objects ccdiag never pulls and
  # Debian ships no .a of. --gc-sections drops what libarchive's writer
  # table drags in (xar/XML/ICU, zip crypto) but ccdiag never calls.
  if(NOT RE2_FOUND OR NOT HYPERSCAN_FOUND)
    message(FATAL_ERROR "CCDIAG_STATIC needs RE2 and Hyperscan (libre2-dev, libhyperscan-dev)")
  endif()
  set(CCDIAG_STATIC_ARCHIVES archive xml2 icuuc icudata nettle dw elf re2 hs z lzma bz2)
  set(CCDIAG_STATIC_PATHS "")
  foreach(lib IN LISTS CCDIAG_STATIC_ARCHIVES)
    find_library(CCDIAG_STATIC_LIB_${lib} NAMES lib${lib}.a)
    if(NOT CCDIAG_STATIC_LIB_${lib})
      message(FATAL_ERROR "CCDIAG_STATIC: lib${lib}.a not found (install its -dev package; see scripts/setup.sh)")
    endif()
    list(APPEND CCDIAG_STATIC_PATHS ${CCDIAG_STATIC_LIB_${lib}})
  endforeach()
  target_include_directories(ccdiag_deps INTERFACE ${LIBDW_INCLUDE_DIRS} ${LIBARCHIVE_INCLUDE_DIRS}
                             ${RE2_INCLUDE_DIRS} ${HYPERSCAN_INCLUDE_DIRS})
  target_link_libraries(ccdiag_deps INTERFACE
    CLI11::CLI11 fmt::fmt-header-only nlohmann_json::nlohmann_json Threads::Threads
    -Wl,--start-group ${CCDIAG_STATIC_PATHS} -Wl,--end-group ${CMAKE_DL_LIBS})
  target_link_options(ccdiag_deps INTERFACE -static-libstdc++ -static-libgcc -Wl,--gc-sections)
  target_compile_definitions(ccdiag_deps INTERFACE CCDIAG_HAVE_RE2=1 CCDIAG_HAVE_HYPERSCAN=1)
  string(APPEND CCDIAG_FEATURES " re2 hyperscan static")
else()
  target_link_libraries(ccdiag_deps INTERFACE
    CLI11::CLI11 fmt::fmt nlohmann_json::nlohmann_json ZLIB::ZLIB Threads::Threads
    PkgConfig::LIBDW PkgConfig::LIBARCHIVE ${CMAKE_DL_LIBS})
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
endif()
if(CCDIAG_SANITIZE)
  string(APPEND CCDIAG_FEATURES " asan ubsan")
endif()
