"""libgpufilt through ctypes: finding and loading it, the structs of
gpufilt.h (0.6's layout: 0.5's with gf_config.outputs) and the functions' signatures.

Where the library is looked for, first found wins:
  1. $GPUFILT_LIBRARY, a file name: that file and no other;
  2. the one this package carries beside this file (a wheel built by
     `pip install .` or `pip wheel .` has it);
  3. the system's, by its SONAME (libgpufilt.so.0.6: the dynamic loader's
     search), then any libgpufilt the system's library cache names.
A library of another minor version is refused at import (its gf_config
would not match the mirror below).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os

# The structs below mirror gpufilt.h of this minor version, whose layout a
# minor version may change (README, "ABI").
ABI = "0.6"
SONAME = "libgpufilt.so." + ABI
_HELP = ("reinstall this package from gpufilt's source (pip install .), install libgpufilt %s.x, "
         "or set GPUFILT_LIBRARY to its file" % ABI)


def _open() -> ctypes.CDLL:
    path = os.environ.get("GPUFILT_LIBRARY")
    if path:
        return ctypes.CDLL(path)
    bundled = os.path.join(os.path.dirname(os.path.abspath(__file__)), SONAME)
    if os.path.exists(bundled):
        return ctypes.CDLL(bundled)
    try:
        return ctypes.CDLL(SONAME)
    except OSError:
        pass
    other = ctypes.util.find_library("gpufilt")
    if other:
        return ctypes.CDLL(other)
    raise ImportError("gpufilt: libgpufilt not found: this package carries none and the system "
                      "has no %s: %s" % (SONAME, _HELP))


lib = _open()
lib.gf_version.restype = ctypes.c_char_p
_found = lib.gf_version().decode(errors="replace")
if not _found.startswith(ABI + "."):
    raise ImportError("gpufilt: this module is for libgpufilt %s.x, but %s is %s: %s"
                      % (ABI, getattr(lib, "_name", "the library"), _found, _HELP))

size_t = ctypes.c_size_t
u64 = ctypes.c_uint64


class HistConfig(ctypes.Structure):
    _fields_ = [("bins", size_t), ("block_frames", size_t), ("lo", ctypes.c_double),
                ("hi", ctypes.c_double), ("of_input", ctypes.c_int), ("mix", ctypes.c_int)]


class HistRecordC(ctypes.Structure):
    _fields_ = [("block", u64), ("first_frame", u64), ("frames", u64),
                ("channel", ctypes.c_int), ("below", u64), ("above", u64), ("nan", u64),
                ("min", ctypes.c_double), ("max", ctypes.c_double), ("rms", ctypes.c_double),
                ("bins", ctypes.POINTER(u64))]


class Config(ctypes.Structure):
    # gf_config, field for field, in gpufilt.h's order (0.6's).
    _fields_ = [("taps", ctypes.POINTER(ctypes.c_double)), ("num_taps", size_t),
                ("taps_per_channel", ctypes.c_int), ("outputs", ctypes.c_int),
                ("mode", ctypes.c_int),
                ("method", ctypes.c_int), ("partition", size_t), ("precision", ctypes.c_int),
                ("channels", ctypes.c_int), ("chunk_frames", size_t),
                ("device", ctypes.c_int), ("handoff", ctypes.c_int), ("threads", ctypes.c_int),
                ("cuda_device", ctypes.c_int),
                ("cuda_devices", ctypes.POINTER(ctypes.c_int)), ("cuda_device_count", ctypes.c_int),
                ("hist", ctypes.POINTER(HistConfig))]


def _declare(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)


E = ctypes.c_void_p  # gf_engine *
_declare("gf_strerror", ctypes.c_char_p, ctypes.c_int)
_declare("gf_version", ctypes.c_char_p)
_declare("gf_config_default", Config)
_declare("gf_cuda_available", ctypes.c_int)
_declare("gf_engine_create", ctypes.c_int, ctypes.POINTER(Config), ctypes.POINTER(E),
         ctypes.c_char_p, size_t)
_declare("gf_engine_destroy", None, E)
_declare("gf_engine_push", ctypes.c_int, E, ctypes.c_void_p, size_t, ctypes.POINTER(size_t))
_declare("gf_engine_pull", ctypes.c_int, E, ctypes.c_void_p, size_t, ctypes.POINTER(size_t))
_declare("gf_engine_process", ctypes.c_int, E, ctypes.c_void_p, size_t, ctypes.c_void_p,
         ctypes.POINTER(size_t))
_declare("gf_engine_filter", ctypes.c_int, E, ctypes.c_void_p, size_t, ctypes.c_void_p,
         ctypes.POINTER(size_t))
_declare("gf_engine_filter_device", ctypes.c_int, E, ctypes.c_void_p, size_t, ctypes.c_void_p,
         ctypes.POINTER(size_t), ctypes.c_void_p)
_declare("gf_engine_flush", ctypes.c_int, E)
_declare("gf_engine_reset", ctypes.c_int, E)
_declare("gf_engine_hist_next", ctypes.c_int, E, ctypes.POINTER(HistRecordC))
_declare("gf_engine_max_pending", size_t, E)
_declare("gf_engine_latency", size_t, E)
_declare("gf_engine_backend", ctypes.c_char_p, E)
_declare("gf_engine_method", ctypes.c_int, E)
_declare("gf_engine_partition", size_t, E)
_declare("gf_engine_chunk_frames", size_t, E)
_declare("gf_engine_error", ctypes.c_char_p, E)
_declare("gf_engine_error_bound", ctypes.c_double, E, ctypes.c_int, ctypes.c_double)
_declare("gf_engine_channel_taps", ctypes.c_int, E, ctypes.c_int, ctypes.POINTER(ctypes.c_double),
         size_t)

ERR_INVALID_ARGUMENT = 1
NO_RECORD = 8  # GF_NO_RECORD: gf_engine_hist_next has no record ready
MAX_CHANNELS = 1024  # GF_MAX_CHANNELS
INT_MIN, INT_MAX = -2**31, 2**31 - 1  # gf_config's int fields (channels, threads, ...)
SIZE_MAX = 2**(8 * ctypes.sizeof(size_t)) - 1
