# Live audio (--live) for the gpufilt target: PortAudio, detected, optional;
# included from the top-level CMakeLists.txt when the CLI is built.
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
  target_sources(gpufilt PRIVATE
    src/cli/live/live.c
    src/cli/live/worker.c
    src/cli/live/portaudio_io.c
    src/cli/live/pa_session.c
    src/cli/live/devices.c
    src/cli/live/ring.c)
  target_compile_definitions(gpufilt PRIVATE GPUFILT_HAVE_LIVE)
  target_link_libraries(gpufilt PRIVATE PkgConfig::PORTAUDIO)
  # Optional extras, each detected: pa_jack.h names our JACK client
  # "gpufilt"; libasound and libjack let us silence their device-probing
  # chatter (see src/cli/live/pa_session.c).
  include(CheckIncludeFile)
  set(CMAKE_REQUIRED_INCLUDES ${PORTAUDIO_INCLUDE_DIRS})
  check_include_file(pa_jack.h GPUFILT_HAVE_PA_JACK_H)
  unset(CMAKE_REQUIRED_INCLUDES)
  if(GPUFILT_HAVE_PA_JACK_H)
    target_compile_definitions(gpufilt PRIVATE GPUFILT_HAVE_PA_JACK)
  endif()
  pkg_check_modules(GF_ALSA QUIET IMPORTED_TARGET alsa)
  if(GF_ALSA_FOUND)
    target_compile_definitions(gpufilt PRIVATE GPUFILT_HAVE_ALSA_LIB)
    target_link_libraries(gpufilt PRIVATE PkgConfig::GF_ALSA)
  endif()
  pkg_check_modules(GF_JACK QUIET IMPORTED_TARGET jack)
  if(GF_JACK_FOUND)
    target_compile_definitions(gpufilt PRIVATE GPUFILT_HAVE_JACK_LIB)
    target_link_libraries(gpufilt PRIVATE PkgConfig::GF_JACK)
  endif()
else()
  message(STATUS "gpufilt: live audio OFF (no PortAudio): --live reports that it is not built in")
endif()

