# FindSoxr: libsoxr (the resampler of impulse responses at another rate),
# as Soxr::soxr. Uses pkg-config's hints (module soxr) when pkg-config
# exists, then searches the usual prefixes (and CMAKE_PREFIX_PATH), so a
# library unpacked into a private prefix is found without pkg-config.
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_SOXR QUIET soxr)
endif()
find_path(Soxr_INCLUDE_DIR soxr.h HINTS ${PC_SOXR_INCLUDE_DIRS})
find_library(Soxr_LIBRARY NAMES soxr HINTS ${PC_SOXR_LIBRARY_DIRS})
set(Soxr_VERSION ${PC_SOXR_VERSION})
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Soxr REQUIRED_VARS Soxr_LIBRARY Soxr_INCLUDE_DIR
                                  VERSION_VAR Soxr_VERSION)
if(Soxr_FOUND AND NOT TARGET Soxr::soxr)
  add_library(Soxr::soxr UNKNOWN IMPORTED)
  set_target_properties(Soxr::soxr PROPERTIES
    IMPORTED_LOCATION "${Soxr_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${Soxr_INCLUDE_DIR}")
endif()
mark_as_advanced(Soxr_INCLUDE_DIR Soxr_LIBRARY)
