# The core library (src/core): compiled once, position-independent,
# and packaged twice as libgpufilt: a static library (target gpufilt_core,
# which the CLI, tests and benchmarks link) and a shared one with a SONAME
# (target gpufilt_shared) that exports only the functions gpufilt.h
# declares. Installed with gpufilt.h, gpufilt.pc and a CMake package
# (gpufilt::gpufilt, gpufilt::gpufilt_static).
#
# ABI: the SONAME is libgpufilt.so.<major>. Within a major version functions
# are only added; a change to a public struct's layout (gf_config,
# gf_hist_config, gf_hist_record) or to an existing function's meaning bumps
# the major version. Programs initialise gf_config with gf_config_default.
set(GPUFILT_CORE_SOURCES
  src/core/engine.c
  src/core/engine_method.c
  src/core/engine_stream.c
  src/core/engine_bulk.c
  src/core/engine_hist.c
  src/core/engine_query.c
  src/core/config.c
  src/core/method.c
  src/core/status.c
  src/core/hist.c
  src/core/hist_count.c
  src/core/host_mem.c
  src/core/handoff.c
  src/core/copy_pool.c
  src/core/backends/registry.c
  src/core/backends/ref.c
  src/core/backends/cpu.c
  src/core/backends/cpu_fft.c
  src/core/backends/sync.c
  src/core/design/design.c
  src/core/design/design_kaiser.c
  src/core/design/design_firwin2.c
  src/core/design/design_minphase.c
  src/core/design/design_measure.c
  src/core/design/design_response.c
  src/core/design/design_fft.c
  ${GPUFILT_FFT_SOURCE})
if(GPUFILT_HAVE_CUDA)
  list(APPEND GPUFILT_CORE_SOURCES
    src/core/backends/cuda/backend_cuda.cu
    src/core/backends/cuda/fir_launch.cu
    src/core/backends/cuda/hist_launch.cu
    src/core/backends/cuda/fft_conv.cu
    src/core/backends/cuda/cuda_check.cu)
endif()

add_library(gpufilt_objects OBJECT ${GPUFILT_CORE_SOURCES})
set_target_properties(gpufilt_objects PROPERTIES POSITION_INDEPENDENT_CODE ON)
target_include_directories(gpufilt_objects PRIVATE include src/core src/core/backends
  src/core/backends/cuda)
target_link_libraries(gpufilt_objects PRIVATE gpufilt_flags ${GPUFILT_FFT_LIBS})
target_compile_definitions(gpufilt_objects PRIVATE ${GPUFILT_FFT_DEFINE})
if(GPUFILT_HAVE_CUDA)
  target_compile_definitions(gpufilt_objects PRIVATE GPUFILT_HAVE_CUDA)
  if(GPUFILT_FAULT_INJECTION)
    target_compile_definitions(gpufilt_objects PRIVATE GPUFILT_FAULT_INJECTION)
  endif()
  set_target_properties(gpufilt_objects PROPERTIES
    CUDA_ARCHITECTURES "${GPUFILT_CUDA_ARCHITECTURES}"
    CUDA_RUNTIME_LIBRARY None)
  target_link_libraries(gpufilt_objects PRIVATE CUDA::cudart_static CUDA::cufft)
endif()

# What linking libgpufilt needs besides itself (the static library's users
# link these; the shared library carries them).
set(GPUFILT_LINK_DEPS Threads::Threads m ${GPUFILT_FFT_LIBS})
if(GPUFILT_HAVE_CUDA)
  list(APPEND GPUFILT_LINK_DEPS CUDA::cufft CUDA::cudart_static stdc++)
endif()

add_library(gpufilt_core STATIC $<TARGET_OBJECTS:gpufilt_objects>)
add_library(gpufilt_shared SHARED $<TARGET_OBJECTS:gpufilt_objects>)
foreach(t gpufilt_core gpufilt_shared)
  target_include_directories(${t} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  # gpufilt_flags: a sanitizer build links its runtime into the .so too.
  target_link_libraries(${t} PRIVATE $<BUILD_INTERFACE:gpufilt_flags> ${GPUFILT_LINK_DEPS})
  set_target_properties(${t} PROPERTIES OUTPUT_NAME gpufilt PUBLIC_HEADER include/gpufilt.h)
endforeach()

# The shared library's exports: the functions gpufilt.h declares, nothing else.
file(STRINGS include/gpufilt.h gpufilt_h_lines REGEX "gf_[a-z0-9_]+\\(")
set(gpufilt_exports "")
foreach(line IN LISTS gpufilt_h_lines)
  string(REGEX MATCHALL "gf_[a-z0-9_]+\\(" names "${line}")
  foreach(name IN LISTS names)
    string(REGEX REPLACE "\\($" "" name "${name}")
    list(APPEND gpufilt_exports "${name}")
  endforeach()
endforeach()
list(REMOVE_DUPLICATES gpufilt_exports)
list(SORT gpufilt_exports)
list(JOIN gpufilt_exports ";\n    " gpufilt_exports)
file(CONFIGURE OUTPUT gpufilt.map
  CONTENT "GPUFILT_${PROJECT_VERSION_MAJOR} {\n  global:\n    ${gpufilt_exports};\n  local:\n    *;\n};\n")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS include/gpufilt.h)
target_link_options(gpufilt_shared PRIVATE
  "LINKER:--version-script=${CMAKE_CURRENT_BINARY_DIR}/gpufilt.map" "LINKER:--no-undefined")
# The SONAME names the ABI: the major version, and while it is 0 the minor
# too, since 0.x minor versions may change it (README, "ABI").
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(gpufilt_soversion 0.${PROJECT_VERSION_MINOR})
  set(gpufilt_compat SameMinorVersion)
else()
  set(gpufilt_soversion ${PROJECT_VERSION_MAJOR})
  set(gpufilt_compat SameMajorVersion)
endif()
set_target_properties(gpufilt_shared PROPERTIES
  VERSION ${PROJECT_VERSION}
  SOVERSION ${gpufilt_soversion}
  LINK_DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/gpufilt.map
  EXPORT_NAME gpufilt)
set_target_properties(gpufilt_core PROPERTIES EXPORT_NAME gpufilt_static)

# --- Installation: libraries, header, pkg-config, CMake package ---
# Installed programs find libgpufilt and the CUDA libraries they were
# linked with (CUDA's lib directory is seldom on the loader's path).
set(CMAKE_INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
set(CMAKE_INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS gpufilt_core gpufilt_shared EXPORT gpufiltTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  PUBLIC_HEADER DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
set(GPUFILT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/gpufilt)
install(EXPORT gpufiltTargets NAMESPACE gpufilt:: DESTINATION ${GPUFILT_CMAKE_DIR})
include(CMakePackageConfigHelpers)
configure_package_config_file(cmake/gpufiltConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/gpufiltConfig.cmake INSTALL_DESTINATION ${GPUFILT_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/gpufiltConfigVersion.cmake
  COMPATIBILITY ${gpufilt_compat})
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/gpufiltConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/gpufiltConfigVersion.cmake DESTINATION ${GPUFILT_CMAKE_DIR})

# gpufilt.pc, relocatable (the prefix is found from the file's own place).
file(RELATIVE_PATH GPUFILT_PC_TO_PREFIX "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
string(REGEX REPLACE "/$" "" GPUFILT_PC_TO_PREFIX "${GPUFILT_PC_TO_PREFIX}")
set(GPUFILT_PC_REQUIRES_PRIVATE "")
if(GPUFILT_FFT_DEFINE STREQUAL "GPUFILT_FFT_FFTW")
  set(GPUFILT_PC_REQUIRES_PRIVATE "fftw3f fftw3")
elseif(GPUFILT_FFT_DEFINE STREQUAL "GPUFILT_FFT_KISS")
  set(GPUFILT_PC_REQUIRES_PRIVATE "kissfft-float")
endif()
set(GPUFILT_PC_LIBS_PRIVATE "-lm -pthread")
if(GPUFILT_HAVE_CUDA)
  set(GPUFILT_PC_LIBS_PRIVATE
    "-L${CUDAToolkit_LIBRARY_DIR} -Wl,-rpath,${CUDAToolkit_LIBRARY_DIR} -lcufft -lcudart_static -ldl -lrt -lstdc++ ${GPUFILT_PC_LIBS_PRIVATE}")
endif()
configure_file(cmake/gpufilt.pc.in ${CMAKE_CURRENT_BINARY_DIR}/gpufilt.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/gpufilt.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
