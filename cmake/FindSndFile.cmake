# FindSndFile: libsndfile, as SndFile::sndfile.
# Uses pkg-config's hints when pkg-config exists, then searches the usual
# prefixes (and CMAKE_PREFIX_PATH), so a library unpacked into a private
# prefix is found without pkg-config.
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_SNDFILE QUIET sndfile)
endif()
find_path(SndFile_INCLUDE_DIR sndfile.h HINTS ${PC_SNDFILE_INCLUDE_DIRS})
find_library(SndFile_LIBRARY NAMES sndfile libsndfile-1 HINTS ${PC_SNDFILE_LIBRARY_DIRS})
set(SndFile_VERSION ${PC_SNDFILE_VERSION})
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(SndFile REQUIRED_VARS SndFile_LIBRARY SndFile_INCLUDE_DIR
                                  VERSION_VAR SndFile_VERSION)
if(SndFile_FOUND AND NOT TARGET SndFile::sndfile)
  add_library(SndFile::sndfile UNKNOWN IMPORTED)
  set_target_properties(SndFile::sndfile PROPERTIES
    IMPORTED_LOCATION "${SndFile_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${SndFile_INCLUDE_DIR}")
endif()
mark_as_advanced(SndFile_INCLUDE_DIR SndFile_LIBRARY)
