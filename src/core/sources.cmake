# The core library's C sources, listed once, relative to the repository
# root: cmake/library.cmake builds them (with the FFT wrapper fft.cmake
# picks and, in CUDA builds, the module loader), and the fuzz harnesses
# (tests/fuzz/CMakeLists.txt, a project of its own) build the same list
# with their instrumentation.
set(GPUFILT_CORE_SOURCES
  src/core/engine.c
  src/core/engine_method.c
  src/core/engine_stream.c
  src/core/engine_bulk.c
  src/core/engine_device.c
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
  src/core/backends/cpu_nupc.c
  src/core/backends/sync.c
  src/core/backends/multi.c
  src/core/design/design.c
  src/core/design/design_kaiser.c
  src/core/design/design_firwin2.c
  src/core/design/design_minphase.c
  src/core/design/design_measure.c
  src/core/design/design_response.c
  src/core/design/design_fft.c
)
