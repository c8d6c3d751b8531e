# Embeds data/nccl-layouts.json into ccdiag_core (layout.cpp reads
# kNcclLayoutsJson), so the binary never needs the repository at run time.
# Included from the top-level CMakeLists.txt after ccdiag_core is defined.
# Editing the JSON re-runs CMake (CMAKE_CONFIGURE_DEPENDS); file(CONFIGURE)
# rewrites the generated source only when its content changed.
set(CCDIAG_NCCL_LAYOUTS ${CMAKE_SOURCE_DIR}/data/nccl-layouts.json)
set_property(DIRECTORY ${CMAKE_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CCDIAG_NCCL_LAYOUTS})
file(READ ${CCDIAG_NCCL_LAYOUTS} CCDIAG_NCCL_LAYOUTS_JSON)
if(CCDIAG_NCCL_LAYOUTS_JSON MATCHES "\\)ccdiag_json\"")
  message(FATAL_ERROR "${CCDIAG_NCCL_LAYOUTS} contains the raw-string delimiter")
endif()
set(CCDIAG_NCCL_LAYOUTS_CPP ${CMAKE_BINARY_DIR}/generated/nccl_layouts_json.cpp)
file(CONFIGURE OUTPUT ${CCDIAG_NCCL_LAYOUTS_CPP} @ONLY CONTENT
"// Generated from data/nccl-layouts.json by tools/nccl-layout/embed.cmake.
namespace ccdiag::nccl::attach {
extern const char* const kNcclLayoutsJson;
const char* const kNcclLayoutsJson = R\"ccdiag_json(@CCDIAG_NCCL_LAYOUTS_JSON@)ccdiag_json\";
}  // namespace ccdiag::nccl::attach
")
target_sources(ccdiag_core PRIVATE ${CCDIAG_NCCL_LAYOUTS_CPP})
# The table is longer than the 64 KiB ISO C++ guarantees; GCC and Clang take it.
set_source_files_properties(${CCDIAG_NCCL_LAYOUTS_CPP} PROPERTIES COMPILE_OPTIONS "-Wno-overlength-strings"
                            SKIP_PRECOMPILE_HEADERS ON)
