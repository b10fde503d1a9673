"""gpufilt: streaming FIR filters on CUDA GPUs and CPUs, for numpy arrays.

A thin ctypes layer over libgpufilt (include/gpufilt.h says what every call
guarantees):

    y = gpufilt.filter(x, taps, mode="same", device="auto")

    with gpufilt.Engine(channels=2, taps=h, mode="causal") as e:
        for block in blocks:
            e.push(block)
            play(e.pull())
        e.flush()
        rest = e.pull()

x is 1-D (one channel) or frames x channels, float32 or float64 (the
precision follows the dtype). taps is an int (a mean filter of that many
taps), a 1-D array (one filter for every channel) or a taps x channels
array (one filter per channel). Errors raise GpufiltError with the
library's detail.
"""
import ctypes
import ctypes.util
import os
from collections import namedtuple

import numpy as np

__all__ = ["filter", "Engine", "GpufiltError", "HistRecord", "cuda_available", "version"]


def _load():
    path = os.environ.get("GPUFILT_LIBRARY")
    if not path:
        try:
            from ._libpath import LIBRARY as path
        except ImportError:
            path = ctypes.util.find_library("gpufilt")
    if not path:
        raise ImportError("gpufilt: libgpufilt not found: install the library and reinstall this "
                          "package (pip install ./python), or set GPUFILT_LIBRARY")
    return ctypes.CDLL(path)


_lib = _load()
_size = ctypes.c_size_t
_u64 = ctypes.c_uint64


class _HistConfig(ctypes.Structure):
    _fields_ = [("bins", _size), ("block_frames", _size), ("lo", ctypes.c_double),
                ("hi", ctypes.c_double), ("of_input", ctypes.c_int), ("mix", ctypes.c_int)]


class _HistRecord(ctypes.Structure):
    _fields_ = [("block", _u64), ("first_frame", _u64), ("frames", _u64),
                ("channel", ctypes.c_int), ("below", _u64), ("above", _u64), ("nan", _u64),
                ("min", ctypes.c_double), ("max", ctypes.c_double), ("rms", ctypes.c_double),
                ("bins", ctypes.POINTER(_u64))]


class _Config(ctypes.Structure):
    _fields_ = [("channels", ctypes.c_int), ("num_taps", _size),
                ("taps", ctypes.POINTER(ctypes.c_double)), ("mode", ctypes.c_int),
                ("precision", ctypes.c_int), ("chunk_frames", _size), ("device", ctypes.c_int),
                ("threads", ctypes.c_int), ("cuda_device", ctypes.c_int),
                ("hist", ctypes.POINTER(_HistConfig)), ("taps_per_channel", ctypes.c_int),
                ("method", ctypes.c_int), ("partition", _size), ("handoff", ctypes.c_int)]


def _declare(name, restype, *argtypes):
    f = getattr(_lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)


_E = ctypes.c_void_p
_declare("gf_strerror", ctypes.c_char_p, ctypes.c_int)
_declare("gf_version", ctypes.c_char_p)
_declare("gf_config_default", _Config)
_declare("gf_cuda_available", ctypes.c_int)
_declare("gf_engine_create", ctypes.c_int, ctypes.POINTER(_Config), ctypes.POINTER(_E),
         ctypes.c_char_p, _size)
_declare("gf_engine_destroy", None, _E)
_declare("gf_engine_push", ctypes.c_int, _E, ctypes.c_void_p, _size, ctypes.POINTER(_size))
_declare("gf_engine_pull", ctypes.c_int, _E, ctypes.c_void_p, _size, ctypes.POINTER(_size))
_declare("gf_engine_process", ctypes.c_int, _E, ctypes.c_void_p, _size, ctypes.c_void_p,
         ctypes.POINTER(_size))
_declare("gf_engine_flush", ctypes.c_int, _E)
_declare("gf_engine_reset", ctypes.c_int, _E)
_declare("gf_engine_hist_next", ctypes.c_int, _E, ctypes.POINTER(_HistRecord))
_declare("gf_engine_max_pending", _size, _E)
_declare("gf_engine_latency", _size, _E)
_declare("gf_engine_backend", ctypes.c_char_p, _E)
_declare("gf_engine_method", ctypes.c_int, _E)
_declare("gf_engine_partition", _size, _E)
_declare("gf_engine_chunk_frames", _size, _E)
_declare("gf_engine_error", ctypes.c_char_p, _E)
_declare("gf_engine_error_bound", ctypes.c_double, _E, ctypes.c_int, ctypes.c_double)
_declare("gf_engine_channel_taps", None, _E, ctypes.c_int, ctypes.POINTER(ctypes.c_double))

_MODES = {"same": 0, "causal": 1, "full": 2}
_METHODS = {"auto": 0, "direct": 1, "fft": 2}
_DEVICES = {"auto": 0, "cpu": 1, "cuda": 2, "ref": 3}
_DTYPES = {0: np.float32, 1: np.float64}

HistRecord = namedtuple("HistRecord", "block first_frame frames channel below above nan min max "
                        "rms bins")
HistRecord.__doc__ = "One block's histogram (gf_hist_record); bins is a uint64 numpy array."


class GpufiltError(RuntimeError):
    """A gpufilt call failed: status is the gf_status code, detail the library's reason."""

    def __init__(self, status, detail):
        self.status, self.detail = status, detail
        reason = _lib.gf_strerror(status).decode()
        super().__init__("%s: %s" % (reason, detail) if detail else reason)


def version():
    """The library's version, e.g. "0.1.0"."""
    return _lib.gf_version().decode()


def cuda_available():
    """True when the library was built with CUDA and a GPU is usable."""
    return bool(_lib.gf_cuda_available())


def _choice(table, value, what):
    if value not in table:
        raise ValueError("%s must be one of %s, not %r" % (what, ", ".join(table), value))
    return table[value]


def _precision(value):
    if value in ("f32", np.float32):
        return 0
    if value in ("f64", np.float64):
        return 1
    raise ValueError("precision must be 'f32' or 'f64' (or a numpy float dtype), not %r" % (value,))


class Engine:
    """A streaming filter (gf_engine): push frames, pull what is ready, flush at the end.

    Engine(channels=1, taps=1, mode="same", precision="f32", device="auto", method="auto",
           partition=0, chunk_frames=0, threads=0, cuda_device=0, hist=None)

    hist, for per-block histograms: a dict with bins, block_frames and optionally lo, hi
    (default -1, 1), of ("output" or "input") and mix (bool).
    """

    def __init__(self, channels=1, taps=1, mode="same", precision="f32", device="auto",
                 method="auto", partition=0, chunk_frames=0, threads=0, cuda_device=0,
                 hist=None):
        c = _lib.gf_config_default()
        c.channels = int(channels)
        c.mode = _choice(_MODES, mode, "mode")
        c.precision = _precision(precision)
        c.device = _choice(_DEVICES, device, "device")
        c.method = _choice(_METHODS, method, "method")
        c.partition, c.chunk_frames = int(partition), int(chunk_frames)
        c.threads, c.cuda_device = int(threads), int(cuda_device)
        self._taps, self._hist = None, None
        if np.isscalar(taps):
            c.num_taps = int(taps)
        else:
            h = np.asarray(taps, dtype=np.float64)
            if h.ndim == 2:  # taps x channels: one filter per channel
                c.taps_per_channel = 1
                h = h.T
            elif h.ndim != 1:
                raise ValueError("taps must be an int, a 1-D array or a taps x channels array")
            self._taps = np.ascontiguousarray(h)
            c.num_taps = self._taps.shape[-1]
            c.taps = self._taps.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
        if hist is not None:
            self._hist = _HistConfig(int(hist["bins"]), int(hist["block_frames"]),
                                     float(hist.get("lo", -1.0)), float(hist.get("hi", 1.0)),
                                     _choice({"output": 0, "input": 1}, hist.get("of", "output"),
                                             "hist['of']"), int(bool(hist.get("mix", False))))
            c.hist = ctypes.pointer(self._hist)
        detail = ctypes.create_string_buffer(512)
        self._e = _E()
        st = _lib.gf_engine_create(ctypes.byref(c), ctypes.byref(self._e), detail, 512)
        if st:
            self._e = None
            raise GpufiltError(st, detail.value.decode(errors="replace"))
        self.channels, self.num_taps = c.channels, c.num_taps
        self.dtype = np.dtype(_DTYPES[c.precision])
        self._ready = []

    # --- lifecycle ---
    def close(self):
        """Destroy the engine (also on garbage collection and leaving a with block)."""
        if getattr(self, "_e", None):
            _lib.gf_engine_destroy(self._e)
            self._e = None

    __del__ = close

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _check(self, st):
        if st:
            raise GpufiltError(st, _lib.gf_engine_error(self._live()).decode(errors="replace"))

    def _live(self):
        if not self._e:
            raise ValueError("gpufilt: the engine is closed")
        return self._e

    def _frames(self, x):
        x = np.ascontiguousarray(x, dtype=self.dtype)
        if x.ndim == 1 and self.channels == 1:
            x = x.reshape(-1, 1)
        if x.ndim != 2 or x.shape[1] != self.channels:
            raise ValueError("expected frames x %d channels, got shape %s" %
                             (self.channels, x.shape))
        return x

    def _pull_into_ready(self):
        n = max(1, _lib.gf_engine_max_pending(self._live()))
        while True:
            out = np.empty((n, self.channels), self.dtype)
            got = _size()
            self._check(_lib.gf_engine_pull(self._e, out.ctypes.data, n, ctypes.byref(got)))
            if got.value == 0:
                return
            self._ready.append(out[:got.value])

    # --- streaming ---
    def push(self, x):
        """Hand frames to the engine (all of them; output made room for is kept for pull)."""
        x = self._frames(x)
        done = 0
        while done < len(x):
            used = _size()
            self._check(_lib.gf_engine_push(self._live(), x[done:].ctypes.data, len(x) - done,
                                            ctypes.byref(used)))
            done += used.value
            if done < len(x):
                self._pull_into_ready()

    def pull(self):
        """Every output frame ready now, as frames x channels (possibly 0 frames)."""
        self._pull_into_ready()
        out = np.concatenate(self._ready) if self._ready else np.empty((0, self.channels),
                                                                       self.dtype)
        self._ready = []
        return out

    def flush(self):
        """End of stream: the remaining output becomes ready."""
        self._check(_lib.gf_engine_flush(self._live()))

    def reset(self):
        """Forget all input and output; a new stream starts with zero history."""
        self._ready = []
        self._check(_lib.gf_engine_reset(self._live()))

    def process(self, x):
        """Bulk: push every frame of x and return the output ready so far (gf_engine_process)."""
        x = self._frames(x)
        out = np.empty((len(x) + _lib.gf_engine_max_pending(self._live()), self.channels),
                       self.dtype)
        got = _size()
        self._check(_lib.gf_engine_process(self._e, x.ctypes.data, len(x), out.ctypes.data,
                                           ctypes.byref(got)))
        self._ready.append(out[:got.value])
        return self.pull()

    def hist_records(self):
        """The histogram records completed so far, in stream order (list of HistRecord)."""
        recs, r = [], _HistRecord()
        while _lib.gf_engine_hist_next(self._live(), ctypes.byref(r)):
            nbins = self._hist.bins
            bins = np.ctypeslib.as_array(r.bins, shape=(nbins,)).copy()
            recs.append(HistRecord(r.block, r.first_frame, r.frames, r.channel, r.below, r.above,
                                   r.nan, r.min, r.max, r.rms, bins))
        return recs

    # --- what the engine does ---
    @property
    def backend(self):
        """"ref", "cpu" or "cuda"."""
        return _lib.gf_engine_backend(self._live()).decode()

    @property
    def method(self):
        """"direct" or "fft"."""
        return {1: "direct", 2: "fft"}[_lib.gf_engine_method(self._live())]

    @property
    def partition(self):
        """The FFT method's partition in frames (0 for direct)."""
        return _lib.gf_engine_partition(self._live())

    @property
    def latency(self):
        """Frames by which output lags input."""
        return _lib.gf_engine_latency(self._live())

    @property
    def chunk_frames(self):
        return _lib.gf_engine_chunk_frames(self._live())

    def error_bound(self, channel=0, max_abs_x=1.0):
        """The FFT method's bound on |error| against the exact sum (0 for direct)."""
        return _lib.gf_engine_error_bound(self._live(), int(channel), float(max_abs_x))

    def taps(self, channel=0):
        """The taps in use for a channel, as float64."""
        h = np.empty(self.num_taps, np.float64)
        _lib.gf_engine_channel_taps(self._live(), int(channel),
                                    h.ctypes.data_as(ctypes.POINTER(ctypes.c_double)))
        return h


def filter(x, taps, mode="same", device="auto", method="auto", partition=0, **engine_options):
    """Filter a whole signal: x 1-D or frames x channels, float32 or float64.

    Returns an array of x's dtype and layout: as many frames as x for "same" and
    "causal" (scipy.signal.convolve(x, h, "same") and lfilter(h, 1, x)), and
    frames + taps - 1 for "full" (convolve(x, h, "full")).
    """
    a = np.asarray(x)
    dtype = np.float32 if a.dtype == np.float32 else np.float64
    channels = 1 if a.ndim == 1 else a.shape[1]
    with Engine(channels=channels, taps=taps, mode=mode, precision=dtype, device=device,
                method=method, partition=partition, **engine_options) as e:
        y = [e.process(a)]
        e.flush()
        y.append(e.pull())
    y = np.concatenate(y)
    return y.reshape(-1) if a.ndim == 1 else y
