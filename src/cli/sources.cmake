# The gpufilt command's sources, listed once, relative to src/cli:
# src/cli/CMakeLists.txt builds them, and the fuzz harnesses
# (tests/fuzz/CMakeLists.txt, a project of its own) build the same list
# with their instrumentation.
#
#   GPUFILT_CLI_SOURCES       everything but main.c and PortAudio's part
#   GPUFILT_CLI_LIVE_SOURCES  --live with PortAudio (where it is found)
#   GPUFILT_CLI_MAIN          the program's main()
set(GPUFILT_CLI_SOURCES
  # the command line: options, help, messages, taps, the runs
  options.c
  help.c
  messages.c
  clock.c
  taps.c
  taps_shape.c
  taps_resample.c
  engine_setup.c
  filter.c
  batch.c
  verify.c
  verify_exact.c
  progress.c
  summary_json.c
  filter_io.c
  normalize.c
  report.c
  # sources and sinks, the output file, reader/writer threads
  io/io.c
  io/outfile.c
  io/stages.c
  io/raw_format.c
  io/raw_source.c
  io/raw_sink.c
  io/dither.c
  io/quantise.c
  io/sndfile_format.c
  io/sndfile_source.c
  io/sndfile_choose.c
  io/sndfile_sink.c
  # histogram files
  hist_out/hist_out.c
  hist_out/text.c
  hist_out/png.c
  # filter design options, --design-out, the response picture
  design/design_cli.c
  design/design_options.c
  design/response_curves.c
  design/response_png.c
  # the pictures' canvas and PNG writer
  draw/canvas.c
  draw/png_write.c
  # the lock-free ring of live audio and --latency zero's head filter: no
  # PortAudio in them, so their tests run in every build
  live/ring.c
  live/head.c)
set(GPUFILT_CLI_LIVE_SOURCES
  live/live.c
  live/worker.c
  live/control.c
  live/portaudio_io.c
  live/pa_session.c
  live/devices.c
  live/rt.c)
set(GPUFILT_CLI_MAIN main.c)
