# FindCuFFTDx: cuFFTDx, NVIDIA MathDx's header-only device FFTs (PyPI
# nvidia-mathdx; developer.nvidia.com/mathdx), and the CUTLASS headers it
# includes, as CuFFTDx::cufftdx. Searched under MATHDX_ROOT (a CMake or an
# environment variable: the package's nvidia/mathdx folder, holding include/
# and external/cutlass/include), then CMAKE_PREFIX_PATH and the usual
# prefixes. The headers are taken as system headers (their warnings are
# not gpufilt's).
set(_cufftdx_hints ${MATHDX_ROOT} $ENV{MATHDX_ROOT})
find_path(CuFFTDx_INCLUDE_DIR cufftdx.hpp HINTS ${_cufftdx_hints} PATH_SUFFIXES include)
find_path(CuFFTDx_CUTLASS_INCLUDE_DIR cutlass/numeric_types.h
  HINTS ${_cufftdx_hints} ${CuFFTDx_INCLUDE_DIR}/..
  PATH_SUFFIXES external/cutlass/include include)
if(CuFFTDx_INCLUDE_DIR AND EXISTS "${CuFFTDx_INCLUDE_DIR}/cufftdx/cufftdx_version.hpp")
  file(STRINGS "${CuFFTDx_INCLUDE_DIR}/cufftdx/cufftdx_version.hpp" _cufftdx_v
    REGEX "#define CUFFTDX_VERSION [0-9]+")
  if(_cufftdx_v MATCHES "([0-9]+)$")
    math(EXPR _major "${CMAKE_MATCH_1} / 10000")
    math(EXPR _minor "${CMAKE_MATCH_1} / 100 % 100")
    math(EXPR _patch "${CMAKE_MATCH_1} % 100")
    set(CuFFTDx_VERSION "${_major}.${_minor}.${_patch}")
  endif()
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CuFFTDx
  REQUIRED_VARS CuFFTDx_INCLUDE_DIR CuFFTDx_CUTLASS_INCLUDE_DIR VERSION_VAR CuFFTDx_VERSION)
if(CuFFTDx_FOUND AND NOT TARGET CuFFTDx::cufftdx)
  add_library(CuFFTDx::cufftdx INTERFACE IMPORTED)
  set_target_properties(CuFFTDx::cufftdx PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${CuFFTDx_INCLUDE_DIR};${CuFFTDx_CUTLASS_INCLUDE_DIR}"
    INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${CuFFTDx_INCLUDE_DIR};${CuFFTDx_CUTLASS_INCLUDE_DIR}")
endif()
mark_as_advanced(CuFFTDx_INCLUDE_DIR CuFFTDx_CUTLASS_INCLUDE_DIR)
