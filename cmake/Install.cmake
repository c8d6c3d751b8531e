# `cmake --install build` and `cpack` (a .deb): the binary, the NCCL profiler
# plugin, the docs, the man pages and shell completions generated from the CLI
# definition (tools/docgen). Debian dependencies come from dpkg-shlibdeps, so
# they are what the binary really links.
include(GNUInstallDirs)

install(TARGETS ccdiag RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The plugin is opened by NCCL, not linked: a private directory keeps it off
# the default library path (NCCL_PROFILER_PLUGIN=<that path>/libnccl-profiler-ccdiag.so).
install(TARGETS nccl-profiler-ccdiag LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/ccdiag)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${CMAKE_BINARY_DIR}/generated/docs/man/ DESTINATION ${CMAKE_INSTALL_MANDIR})
install(FILES ${CMAKE_BINARY_DIR}/generated/docs/completions/ccdiag.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME ccdiag)
install(FILES ${CMAKE_BINARY_DIR}/generated/docs/completions/_ccdiag
        DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)
install(FILES ${CMAKE_BINARY_DIR}/generated/docs/completions/ccdiag.fish
        DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d)

set(CPACK_PACKAGE_NAME ccdiag)
set(CPACK_PACKAGE_VENDOR "ccdiag developers")
set(CPACK_PACKAGE_CONTACT "ccdiag developers <ccdiag@localhost>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Diagnose hung, failing or slow NCCL / PyTorch distributed jobs")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# CUDA, NVML, NCCL and libibverbs are dlopened when a probe needs them, never linked.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "ibverbs-providers, gdb")
set(CPACK_STRIP_FILES ON)
include(CPack)
