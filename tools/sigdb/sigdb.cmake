# Compiles the built-in log signatures and the log facts' literal databases
# (line sieve, signal and cue gates) into Hyperscan databases at build time
# and links them into the ccdiag binary (tools/sigdb/gen_sigdb.cpp).
# Included from the top-level CMakeLists.txt after the ccdiag target.
add_executable(ccdiag_sigdb_gen ${CMAKE_SOURCE_DIR}/tools/sigdb/gen_sigdb.cpp)
target_link_libraries(ccdiag_sigdb_gen PRIVATE ccdiag_core)
set(CCDIAG_SIGDB_BIN ${CMAKE_BINARY_DIR}/generated/signature_db.bin)
set(CCDIAG_SIGDB_CPP ${CMAKE_BINARY_DIR}/generated/signature_db.cpp)
add_custom_command(OUTPUT ${CCDIAG_SIGDB_CPP} ${CCDIAG_SIGDB_BIN} ${CCDIAG_SIGDB_BIN}.sieve
                          ${CCDIAG_SIGDB_BIN}.signals ${CCDIAG_SIGDB_BIN}.cues
                   COMMAND ccdiag_sigdb_gen ${CCDIAG_SIGDB_BIN} ${CCDIAG_SIGDB_CPP}
                   DEPENDS ccdiag_sigdb_gen
                   COMMENT "Compiling the built-in log signatures and the log facts literal databases into Hyperscan databases")
set_source_files_properties(${CCDIAG_SIGDB_CPP} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
target_sources(ccdiag PRIVATE ${CCDIAG_SIGDB_CPP})
