# `cmake --install`: the tbtune binary, the library, the public headers (C++, C, and the Fortran
# module's source), a CMake package (find_package(tbtune) -> tbtune::tbtune) and tbtune.pc.
# Components: `cli` (the binary) and `dev` (the rest: what an application builds against).
#
# The installed libtbtune.a is one archive holding the library and its private static
# dependencies (yaml-cpp, SQLite): a consumer needs neither, nor their headers (the public
# headers include only standard ones). fmt and nlohmann-json are header-only and compiled in.
# cudart is not merged in: a CUDA application links its own, and two copies of the runtime in
# one process would not share state. The package links the toolkit's static cudart (found again
# by find_package(CUDAToolkit) in the consumer, or at the path it had here), pthread, dl and rt.
# NVRTC is opened at run time (tuner/gpu/nvrtc.cpp), never linked.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TBTUNE_BUNDLE ${CMAKE_CURRENT_BINARY_DIR}/bundle/libtbtune.a)
add_custom_command(
  OUTPUT ${TBTUNE_BUNDLE}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/bundle
  COMMAND ${CMAKE_COMMAND} -DOUT=${TBTUNE_BUNDLE} -DAR=${CMAKE_AR}
          "-DLIBS=$<TARGET_FILE:tbtune>,${TBTUNE_YAML_STATIC},${TBTUNE_SQLITE_STATIC}"
          -P ${CMAKE_CURRENT_LIST_DIR}/bundle_run.cmake
  DEPENDS tbtune ${CMAKE_CURRENT_LIST_DIR}/bundle_run.cmake
  COMMENT "Bundling libtbtune.a with yaml-cpp and SQLite")
add_custom_target(tbtune_bundle ALL DEPENDS ${TBTUNE_BUNDLE})

set(TBTUNE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tbtune)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/tbtuneConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/tbtuneConfig.cmake
                              INSTALL_DESTINATION ${TBTUNE_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/tbtuneConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
configure_file(${CMAKE_CURRENT_LIST_DIR}/tbtune.pc.in ${CMAKE_CURRENT_BINARY_DIR}/tbtune.pc @ONLY)

install(TARGETS tbtune_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cli)
install(FILES ${TBTUNE_BUNDLE} DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
install(FILES ${PROJECT_SOURCE_DIR}/include/tbtune/tbtune.hpp ${PROJECT_SOURCE_DIR}/include/tbtune/tbtune.h
              ${PROJECT_SOURCE_DIR}/include/tbtune/tbtune.f90
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tbtune COMPONENT dev)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tbtuneConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/tbtuneConfigVersion.cmake
        DESTINATION ${TBTUNE_CMAKE_DIR} COMPONENT dev)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tbtune.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
        COMPONENT dev)
