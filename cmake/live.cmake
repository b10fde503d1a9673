# Live audio (--live): PortAudio, detected, optional; included from the
# top-level CMakeLists.txt when the CLI is built. Sets GPUFILT_HAVE_LIVE
# and, with it, what src/cli/CMakeLists.txt adds to the CLI:
# PkgConfig::PORTAUDIO, GPUFILT_HAVE_PA_JACK_H, and GF_ALSA_FOUND /
# GF_JACK_FOUND with PkgConfig::GF_ALSA / PkgConfig::GF_JACK.
set(GPUFILT_LIVE "AUTO" CACHE STRING "Build --live (PortAudio): AUTO (if found), ON, OFF")
set_property(CACHE GPUFILT_LIVE PROPERTY STRINGS AUTO ON OFF)
if(NOT GPUFILT_LIVE STREQUAL "OFF")
  find_package(PkgConfig)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(PORTAUDIO IMPORTED_TARGET portaudio-2.0)
  endif()
  if(PORTAUDIO_FOUND)
    set(GPUFILT_HAVE_LIVE ON)
  elseif(GPUFILT_LIVE STREQUAL "ON")
    message(FATAL_ERROR "GPUFILT_LIVE=ON but PortAudio (portaudio-2.0) was not found")
  endif()
endif()
if(GPUFILT_HAVE_LIVE)
  message(STATUS "gpufilt: live audio ON (PortAudio ${PORTAUDIO_VERSION})")
  include(CheckIncludeFile)
  set(CMAKE_REQUIRED_INCLUDES ${PORTAUDIO_INCLUDE_DIRS})
  check_include_file(pa_jack.h GPUFILT_HAVE_PA_JACK_H)
  unset(CMAKE_REQUIRED_INCLUDES)
  pkg_check_modules(GF_ALSA QUIET IMPORTED_TARGET alsa)
  pkg_check_modules(GF_JACK QUIET IMPORTED_TARGET jack)
else()
  message(STATUS "gpufilt: live audio OFF (no PortAudio): --live reports that it is not built in")
endif()
