# Man pages and shell completions generated from the CLI definition at build
# time (tools/docgen/gen_docs.cpp), and installed with the binary.
add_executable(ccdiag_docgen ${CMAKE_SOURCE_DIR}/tools/docgen/gen_docs.cpp)
target_link_libraries(ccdiag_docgen PRIVATE ccdiag_core)
set(CCDIAG_DOCGEN_DIR ${CMAKE_BINARY_DIR}/generated/docs)
add_custom_command(OUTPUT ${CCDIAG_DOCGEN_DIR}/stamp
                   COMMAND ${CMAKE_COMMAND} -E rm -rf ${CCDIAG_DOCGEN_DIR}/man ${CCDIAG_DOCGEN_DIR}/completions
                   COMMAND ccdiag_docgen ${CCDIAG_DOCGEN_DIR}
                   COMMAND ${CMAKE_COMMAND} -E touch ${CCDIAG_DOCGEN_DIR}/stamp
                   DEPENDS ccdiag_docgen
                   COMMENT "Generating man pages and shell completions from the CLI definition")
add_custom_target(ccdiag_docs ALL DEPENDS ${CCDIAG_DOCGEN_DIR}/stamp)
