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
include(${CMAKE_CURRENT_LIST_DIR}/../src/core/sources.cmake)
list(APPEND GPUFILT_CORE_SOURCES ${GPUFILT_FFT_SOURCE})
if(GPUFILT_HAVE_CUDA)
  # The loader of the CUDA module (below); the library links no CUDA.
  list(APPEND GPUFILT_CORE_SOURCES src/core/backends/cuda_module.c)
endif()

add_library(gpufilt_objects OBJECT ${GPUFILT_CORE_SOURCES})
set_target_properties(gpufilt_objects PROPERTIES POSITION_INDEPENDENT_CODE ON)
target_include_directories(gpufilt_objects PRIVATE include src/core src/core/backends
  src/core/backends/cuda)
target_link_libraries(gpufilt_objects PRIVATE gpufilt_flags ${GPUFILT_FFT_LIBS})
target_compile_definitions(gpufilt_objects PRIVATE ${GPUFILT_FFT_DEFINE})
if(GPUFILT_HAVE_CUDA)
  target_compile_definitions(gpufilt_objects PRIVATE GPUFILT_HAVE_CUDA
    GPUFILT_INSTALL_LIBDIR="${CMAKE_INSTALL_FULL_LIBDIR}")
endif()

# What linking libgpufilt needs besides itself (the static library's users
# link these; the shared library carries them). No CUDA library: the CUDA
# backend is a module loaded at run time.
set(GPUFILT_LINK_DEPS Threads::Threads m ${GPUFILT_FFT_LIBS} ${CMAKE_DL_LIBS})

# --- The CUDA module: libgpufilt-cuda.so ---
# The CUDA backend (src/core/backends/cuda) with the CUDA runtime (static)
# and cuFFT, as a module that libgpufilt loads when a program first asks
# for CUDA (src/core/backends/cuda_module.c says where it looks). It exports
# one symbol, gf_cuda_module_entry (gf_cuda.h), and uses nothing of the
# library. It sits beside libgpufilt.so, in the build tree as installed;
# programs of the build tree find it through their build RPATH (below).
# gpufilt_cuda_objects: the same code for the benchmarks that call the
# kernels directly.
if(GPUFILT_HAVE_CUDA)
  add_library(gpufilt_cuda_objects OBJECT
    src/core/backends/cuda/backend_cuda.cu
    src/core/backends/cuda/backend_cuda_direct.cu
    src/core/backends/cuda/backend_cuda_fft.cu
    src/core/backends/cuda/backend_cuda_nupc.cu
    src/core/backends/cuda/fir_launch.cu
    src/core/backends/cuda/hist_launch.cu
    src/core/backends/cuda/fft_conv.cu
    src/core/backends/cuda/fft_dx.cu
    src/core/backends/cuda/cuda_check.cu)
  set_target_properties(gpufilt_cuda_objects PROPERTIES
    POSITION_INDEPENDENT_CODE ON
    CUDA_ARCHITECTURES "${GPUFILT_CUDA_ARCHITECTURES}"
    CUDA_RUNTIME_LIBRARY None)
  target_include_directories(gpufilt_cuda_objects PUBLIC include src/core src/core/backends
    src/core/backends/cuda)
  target_link_libraries(gpufilt_cuda_objects PRIVATE gpufilt_flags
    PUBLIC CUDA::cudart_static CUDA::cufft)
  if(GPUFILT_FAULT_INJECTION)
    target_compile_definitions(gpufilt_cuda_objects PRIVATE GPUFILT_FAULT_INJECTION)
  endif()
  if(GPUFILT_HAVE_CUFFTDX)
    # fft_dx_impl.cuh once per size, a source file each (they compile in
    # parallel: a size's two block FFTs take nvcc about 10 s), and
    # fft_dx_sizes.h, fft_dx.cu's dispatch over the same sizes.
    # GPUFILT_DX_EPT's SIZE=EPT pairs set a size's GF_DX_EPT. Measured
    # defaults where they beat cuFFTDx's suggestion (bench/NOTES.md, "The
    # transforms' elements per thread"): on sm_90, 16384 points with 32
    # elements a thread (512 threads) instead of 64 (256).
    set(dx_cases "")
    set(dx_sizes 1024 2048 4096 8192 16384 32768 65536)
    if(GPUFILT_DX_SM EQUAL 90)
      set(dx_ept_16384 "#define GF_DX_EPT 32\n")
    endif()
    foreach(pair ${GPUFILT_DX_EPT})
      if(NOT pair MATCHES "^([0-9]+)=([0-9]+)$" OR NOT CMAKE_MATCH_1 IN_LIST dx_sizes)
        message(FATAL_ERROR "GPUFILT_DX_EPT: '${pair}' is not SIZE=EPT for a size of ${dx_sizes}")
      endif()
      set(dx_ept_${CMAKE_MATCH_1} "#define GF_DX_EPT ${CMAKE_MATCH_2}\n")
    endforeach()
    foreach(n ${dx_sizes})
      set(f ${CMAKE_CURRENT_BINARY_DIR}/fft_dx/fft_dx_${n}.cu)
      file(CONFIGURE OUTPUT ${f}
        CONTENT "#define GF_DX_N ${n}\n${dx_ept_${n}}#include \"fft_dx_impl.cuh\"\n")
      target_sources(gpufilt_cuda_objects PRIVATE ${f})
      string(APPEND dx_cases " \\\n    case ${n}: return dx_size<${n}>::f(__VA_ARGS__);")
    endforeach()
    file(CONFIGURE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/fft_dx/fft_dx_sizes.h CONTENT
      "/* cmake/library.cmake: the sizes of this build's fused transforms */\n#define GF_DX_SIZES(f, ...)${dx_cases}\n")
    target_include_directories(gpufilt_cuda_objects PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/fft_dx)
    target_compile_definitions(gpufilt_cuda_objects PRIVATE GPUFILT_HAVE_CUFFTDX
      GF_DX_SM=${GPUFILT_DX_SM}0)
    target_link_libraries(gpufilt_cuda_objects PRIVATE CuFFTDx::cufftdx)
  endif()

  add_library(gpufilt_cuda MODULE $<TARGET_OBJECTS:gpufilt_cuda_objects>)
  target_link_libraries(gpufilt_cuda PRIVATE $<BUILD_INTERFACE:gpufilt_flags>
    CUDA::cudart_static CUDA::cufft)
  file(CONFIGURE OUTPUT gpufilt-cuda.map
    CONTENT "{\n  global:\n    gf_cuda_module_entry;\n  local:\n    *;\n};\n")
  target_link_options(gpufilt_cuda PRIVATE
    "LINKER:--version-script=${CMAKE_CURRENT_BINARY_DIR}/gpufilt-cuda.map" "LINKER:--no-undefined")
  set_target_properties(gpufilt_cuda PROPERTIES
    OUTPUT_NAME gpufilt-cuda
    PREFIX lib
    LINKER_LANGUAGE CUDA
    LINK_DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/gpufilt-cuda.map
    # cuFFT from where it was linked: CUDA's lib folder is seldom on the
    # loader's path (and CMake counts it as nvcc's own, adding no RPATH).
    BUILD_RPATH "${CUDAToolkit_LIBRARY_DIR}"
    INSTALL_RPATH "${CUDAToolkit_LIBRARY_DIR}")
endif()

add_library(gpufilt_core STATIC $<TARGET_OBJECTS:gpufilt_objects>)
add_library(gpufilt_shared SHARED $<TARGET_OBJECTS:gpufilt_objects>)
if(GPUFILT_HAVE_CUDA)
  # Whatever links the library can run the CUDA backend: build the module first.
  add_dependencies(gpufilt_core gpufilt_cuda)
  add_dependencies(gpufilt_shared gpufilt_cuda)
  # Programs built from here on (the CLI, tests, benchmarks) find the
  # module in the build tree's top folder through their RUNPATH; installed
  # ones through CMAKE_INSTALL_RPATH.
  list(APPEND CMAKE_BUILD_RPATH ${CMAKE_CURRENT_BINARY_DIR})
endif()
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
# gpufilt.h's version (what gf_version says) is the project's: one number.
foreach(part MAJOR MINOR PATCH)
  file(STRINGS include/gpufilt.h line REGEX "^#define GPUFILT_VERSION_${part} ")
  string(REGEX REPLACE ".* ([0-9]+)$" "\\1" value "${line}")
  if(NOT value STREQUAL "${PROJECT_VERSION_${part}}")
    message(FATAL_ERROR "include/gpufilt.h says GPUFILT_VERSION_${part} ${value}, "
                        "the project ${PROJECT_VERSION}: make them agree")
  endif()
endforeach()
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
if(GPUFILT_HAVE_CUDA)
  # Beside libgpufilt.so; a distribution may ship it in a package of its own.
  install(TARGETS gpufilt_cuda LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
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
# Only the static library's link needs more than -lgpufilt, and only
# `pkg-config --static` reads Libs.private. The FFT library is named there
# as flags, not in Requires.private, which pkg-config resolves for a
# shared link too (it would then ask for FFTW's development files).
set(GPUFILT_PC_LIBS_PRIVATE "")
set(gf_fft_dirs "")
if(GPUFILT_FFT_DEFINE STREQUAL "GPUFILT_FFT_FFTW")
  set(gf_fft_dirs ${GF_FFTW3F_LIBRARY_DIRS} ${GF_FFTW3_LIBRARY_DIRS})
  set(gf_fft_libs ${GF_FFTW3F_LIBRARIES} ${GF_FFTW3_LIBRARIES})
elseif(GPUFILT_FFT_DEFINE STREQUAL "GPUFILT_FFT_KISS")
  set(gf_fft_dirs ${GF_KISSFFT_LIBRARY_DIRS})
  set(gf_fft_libs ${GF_KISSFFT_LIBRARIES})
endif()
if(gf_fft_dirs)
  list(REMOVE_DUPLICATES gf_fft_dirs)
endif()
foreach(d IN LISTS gf_fft_dirs)
  if(NOT d IN_LIST CMAKE_C_IMPLICIT_LINK_DIRECTORIES)
    string(APPEND GPUFILT_PC_LIBS_PRIVATE "-L${d} ")
  endif()
endforeach()
foreach(l IN LISTS gf_fft_libs)
  string(APPEND GPUFILT_PC_LIBS_PRIVATE "-l${l} ")
endforeach()
foreach(l IN LISTS CMAKE_DL_LIBS)
  string(APPEND GPUFILT_PC_LIBS_PRIVATE "-l${l} ")
endforeach()
string(APPEND GPUFILT_PC_LIBS_PRIVATE "-lm -pthread")
configure_file(cmake/gpufilt.pc.in ${CMAKE_CURRENT_BINARY_DIR}/gpufilt.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/gpufilt.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
