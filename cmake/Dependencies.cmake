# All third-party dependencies come from Debian packages (scripts/install-deps.sh) and the CUDA
# toolkit on the machine. Nothing is downloaded at build time.
#
# yaml-cpp and SQLite are linked statically and cudart statically, so the binary runs on the GPU
# machine (which has neither libyaml-cpp nor libsqlite3) and starts on a machine with no driver.
# libcuda is never linked: the static cudart opens it at run time. NVRTC (the toolkit's shared
# library) is opened at run time too, and only when a kernel must be compiled.

find_package(CUDAToolkit 13 REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(fmt REQUIRED)
find_package(CLI11 CONFIG QUIET)
find_path(TBTUNE_CLI11_INCLUDE CLI/CLI.hpp REQUIRED)
find_path(TBTUNE_YAML_INCLUDE yaml-cpp/yaml.h REQUIRED)
find_library(TBTUNE_YAML_STATIC NAMES libyaml-cpp.a REQUIRED)
find_path(TBTUNE_SQLITE_INCLUDE sqlite3.h REQUIRED)
find_library(TBTUNE_SQLITE_STATIC NAMES libsqlite3.a REQUIRED)

add_library(tbtune_deps_yaml INTERFACE)
target_include_directories(tbtune_deps_yaml SYSTEM INTERFACE ${TBTUNE_YAML_INCLUDE})
target_link_libraries(tbtune_deps_yaml INTERFACE ${TBTUNE_YAML_STATIC})
add_library(tbtune_deps::yaml ALIAS tbtune_deps_yaml)

add_library(tbtune_deps_sqlite INTERFACE)
target_include_directories(tbtune_deps_sqlite SYSTEM INTERFACE ${TBTUNE_SQLITE_INCLUDE})
target_link_libraries(tbtune_deps_sqlite INTERFACE ${TBTUNE_SQLITE_STATIC} ${CMAKE_DL_LIBS} Threads::Threads m)

add_library(tbtune_deps::sqlite ALIAS tbtune_deps_sqlite)

# fmt header-only: no libfmt shared library needed on the GPU machine.
add_library(tbtune_deps_fmt INTERFACE)
target_link_libraries(tbtune_deps_fmt INTERFACE fmt::fmt-header-only)
add_library(tbtune_deps::fmt ALIAS tbtune_deps_fmt)

add_library(tbtune_deps_json INTERFACE)
target_link_libraries(tbtune_deps_json INTERFACE nlohmann_json::nlohmann_json)
add_library(tbtune_deps::json ALIAS tbtune_deps_json)

add_library(tbtune_deps_cli11 INTERFACE)
target_include_directories(tbtune_deps_cli11 SYSTEM INTERFACE ${TBTUNE_CLI11_INCLUDE})
add_library(tbtune_deps::cli11 ALIAS tbtune_deps_cli11)

find_package(Threads REQUIRED)
# The static cudart by path: CMake's CUDA::cudart_static and CUDA::nvrtc targets also link the libcuda stub,
# which would make the binary refuse to start on a machine without a driver.
find_library(TBTUNE_CUDART_STATIC libcudart_static.a HINTS ${CUDAToolkit_LIBRARY_DIR} REQUIRED)
# NVRTC is not linked: tuner/gpu/nvrtc.cpp opens it with dlopen when something must be compiled,
# so an application whose lookups hit runs without libnvrtc.
add_library(tbtune_deps_cuda INTERFACE)
target_include_directories(tbtune_deps_cuda SYSTEM INTERFACE ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(tbtune_deps_cuda INTERFACE ${TBTUNE_CUDART_STATIC} Threads::Threads
                                                 ${CMAKE_DL_LIBS} rt)
add_library(tbtune_deps::cuda ALIAS tbtune_deps_cuda)
# Where NVRTC finds <cooperative_groups.h> and its cccl dependencies at run time.
set(TBTUNE_CUDA_INCLUDE_DIR ${CUDAToolkit_INCLUDE_DIRS})
