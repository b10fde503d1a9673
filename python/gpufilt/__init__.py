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

x is 1-D (frames of one channel) or 2-D (frames x channels), real; the
arithmetic is float32 or float64 (precision="f32"/"f64" or a numpy dtype;
by default float32 input gives float32, anything else float64). taps is a
positive int (a mean filter of that many taps), a 1-D array (one filter
for every channel) or a 2-D taps x channels array (one filter per channel;
a single column is one filter for every channel).

Errors: a bad argument raises TypeError (wrong kind of value) or
ValueError (right kind, bad value), naming the value given; an engine
channel that does not exist raises IndexError. A failing library call
raises GpufiltError with the library's detail; when the library refused an
argument (status GF_ERR_INVALID_ARGUMENT) that error is a ValueError too.
"""
import ctypes
import ctypes.util
import numbers
import operator
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
# The structs below mirror gpufilt.h of this minor version, whose layout a
# minor version may change (README, "ABI"): another library is refused here
# rather than crashing on a mismatched gf_config.
_ABI = "0.4"
_lib.gf_version.restype = ctypes.c_char_p
_found = _lib.gf_version().decode(errors="replace")
if not _found.startswith(_ABI + "."):
    raise ImportError("gpufilt: this module is for libgpufilt %s.x, but %s is %s: install the "
                      "matching library and reinstall this package (pip install ./python)"
                      % (_ABI, getattr(_lib, "_name", "the library"), _found))
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
    # gf_config, field for field, in gpufilt.h's order (0.4's).
    _fields_ = [("taps", ctypes.POINTER(ctypes.c_double)), ("num_taps", _size),
                ("taps_per_channel", ctypes.c_int), ("mode", ctypes.c_int),
                ("method", ctypes.c_int), ("partition", _size), ("precision", ctypes.c_int),
                ("channels", ctypes.c_int), ("chunk_frames", _size),
                ("device", ctypes.c_int), ("handoff", ctypes.c_int), ("threads", ctypes.c_int),
                ("cuda_device", ctypes.c_int),
                ("cuda_devices", ctypes.POINTER(ctypes.c_int)), ("cuda_device_count", ctypes.c_int),
                ("hist", ctypes.POINTER(_HistConfig))]


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
_declare("gf_engine_channel_taps", ctypes.c_int, _E, ctypes.c_int, ctypes.POINTER(ctypes.c_double),
         _size)

_ERR_INVALID_ARGUMENT = 1
_NO_RECORD = 8  # GF_NO_RECORD: gf_engine_hist_next has no record ready
_INT_MIN, _INT_MAX = -2**31, 2**31 - 1  # gf_config's int fields (channels, threads, ...)
_SIZE_MAX = 2**(8 * ctypes.sizeof(_size)) - 1

_MODES = {"same": 0, "causal": 1, "full": 2}
_METHODS = {"auto": 0, "direct": 1, "fft": 2}
_DEVICES = {"auto": 0, "cpu": 1, "cuda": 2, "ref": 3}
_DTYPES = {0: np.float32, 1: np.float64}

HistRecord = namedtuple("HistRecord", "block first_frame frames channel below above nan min max "
                        "rms bins")
HistRecord.__doc__ = "One block's histogram (gf_hist_record); bins is a uint64 numpy array."


class GpufiltError(RuntimeError):
    """A gpufilt call failed: status is the gf_status code, detail the library's reason.

    When the library refused an argument (status 1, GF_ERR_INVALID_ARGUMENT)
    the error raised is a GpufiltError that is also a ValueError."""

    def __new__(cls, status, detail=""):
        if cls is GpufiltError and status == _ERR_INVALID_ARGUMENT:
            cls = _GpufiltArgumentError
        return super().__new__(cls, status, detail)

    def __init__(self, status, detail=""):
        self.status, self.detail = status, detail
        reason = _lib.gf_strerror(status).decode()
        super().__init__("%s: %s" % (reason, detail) if detail else reason)


class _GpufiltArgumentError(GpufiltError, ValueError):
    """The library refused an argument (GF_ERR_INVALID_ARGUMENT)."""


def version():
    """The library's version string (gf_version): "MAJOR.MINOR.PATCH (backends)",
    e.g. "0.4.0 (ref, cpu, cuda)": the backends this build of the library has."""
    return _lib.gf_version().decode()


def cuda_available():
    """True when the library was built with CUDA and a GPU is usable."""
    return bool(_lib.gf_cuda_available())


def _choice(table, value, what):
    if not isinstance(value, str) or value not in table:
        raise ValueError("%s must be one of %s, not %r" % (what, ", ".join(table), value))
    return table[value]


def _integer(value, what, lo, hi):
    """value as a Python int in lo..hi: TypeError for a non-integer (2.5, "3",
    True), ValueError out of range, each naming the value, where int() would
    truncate and ctypes wrap around (-1 as a size_t is 18446744073709551615).
    lo..hi is the C field's range (or >= 0 for a size_t); the library checks
    the real limits and names them."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral, np.integer)):
        raise TypeError("%s must be an integer, not %r" % (what, value))
    v = operator.index(value)
    if v < lo:
        raise ValueError("%s must be >= %d, not %r" % (what, lo, value))
    if v > hi:
        raise ValueError("%s %r is too large (at most %d)" % (what, value, hi))
    return v


def _precision(value):
    """0 (f32) or 1 (f64) from "f32", "f64" or a numpy float32 / float64 dtype
    (np.float32, np.dtype("float64"), "float32", ...)."""
    if isinstance(value, str) and value in ("f32", "f64"):
        return 0 if value == "f32" else 1
    try:
        dt = None if value is None else np.dtype(value)
    except TypeError:
        dt = None
    if dt == np.float32:
        return 0
    if dt == np.float64:
        return 1
    raise ValueError("precision must be 'f32', 'f64' or a numpy float32 / float64 dtype, not %r"
                     % (value,))


def _real_array(x, what):
    """x as a numpy array of real numbers (TypeError for complex or non-numbers)."""
    a = np.asarray(x)
    if a.dtype.kind not in "biuf":
        raise TypeError("%s must be an array of real numbers, not of dtype %s" % (what, a.dtype))
    return a


def _taps(taps, channels, shape_of_x=None):
    """(num_taps, taps_per_channel, coefficients or None) from an int or an array.

    The coefficients come back as a C-contiguous float64 array of exactly
    num_taps (one filter) or channels x num_taps (per channel) values: what
    gf_config.taps must hold, which the library cannot check (gpufilt.h)."""
    if isinstance(taps, (bool, np.bool_)):
        raise TypeError("taps must be an integer (a mean filter's length) or an array of "
                        "coefficients, not %r" % (taps,))
    if isinstance(taps, (numbers.Integral, np.integer)):
        if taps < 1:
            raise ValueError("taps must be a positive integer (a mean filter's length) or an "
                             "array of coefficients, not %r" % (taps,))
        return _integer(taps, "taps", 0, _SIZE_MAX), 0, None
    if np.ndim(taps) == 0:
        raise TypeError("taps must be an integer (a mean filter's length) or an array of "
                        "coefficients, not %r" % (taps,))
    h = _real_array(taps, "taps").astype(np.float64)
    if h.ndim > 2:
        raise ValueError("taps must be 1-D (one filter) or 2-D (taps x channels), not of shape %s"
                         % (h.shape,))
    if h.shape[0] == 0 or h.size == 0:
        raise ValueError("taps of shape %s hold no coefficients" % (h.shape,))
    taps_per_channel = 0
    if h.ndim == 2:
        if h.shape[1] == 1:  # one column: one filter for every channel
            h = h[:, 0]
        elif h.shape[1] != channels:
            raise ValueError("taps of shape %s give %d filters (one per column) for %d channel%s%s:"
                             " give taps x %d channels, one column, or a 1-D array"
                             % (h.shape, h.shape[1], channels, "s" * (channels != 1),
                                " (x has shape %s)" % (shape_of_x,) if shape_of_x else "",
                                channels))
        else:
            taps_per_channel = 1
            h = h.T  # the library's layout: channel c's filter at c * num_taps
    h = np.ascontiguousarray(h)
    if h.size != h.shape[-1] * (channels if taps_per_channel else 1):  # what create will read
        raise RuntimeError("gpufilt: taps of shape %s laid out wrongly" % (h.shape,))
    return h.shape[-1], taps_per_channel, h


class Engine:
    """A streaming filter (gf_engine): push frames, pull what is ready, flush at the end.

    Engine(channels=1, taps=1, mode="same", precision="f32", device="auto", method="auto",
           partition=0, chunk_frames=0, threads=0, cuda_device=0, cuda_devices=None,
           hist=None)

    channels: 1 .. 1024. taps: a positive int (mean filter), a 1-D array, or a
    2-D taps x channels array (one filter per channel; one column: one filter
    for all). precision: "f32", "f64" or a numpy float32 / float64 dtype; it is
    the dtype of every array pull and process return (self.dtype).
    partition, chunk_frames, threads: integers >= 0 (0: the library's choice).
    cuda_devices: a sequence of GPU numbers to deal chunks to (the bytes of one GPU),
    or None for cuda_device alone.
    hist, for per-block histograms: a dict with bins, block_frames and optionally lo, hi
    (default -1, 1), of ("output" or "input") and mix (bool).
    """

    def __init__(self, channels=1, taps=1, mode="same", precision="f32", device="auto",
                 method="auto", partition=0, chunk_frames=0, threads=0, cuda_device=0,
                 cuda_devices=None, hist=None):
        c = _lib.gf_config_default()
        c.channels = _integer(channels, "channels", _INT_MIN, _INT_MAX)
        c.mode = _choice(_MODES, mode, "mode")
        c.precision = _precision(precision)
        c.device = _choice(_DEVICES, device, "device")
        c.method = _choice(_METHODS, method, "method")
        c.partition = _integer(partition, "partition", 0, _SIZE_MAX)
        c.chunk_frames = _integer(chunk_frames, "chunk_frames", 0, _SIZE_MAX)
        c.threads = _integer(threads, "threads", _INT_MIN, _INT_MAX)
        c.cuda_device = _integer(cuda_device, "cuda_device", _INT_MIN, _INT_MAX)
        # _devices keeps the list alive until create has copied it.
        self._devices = None
        if cuda_devices is not None:
            if isinstance(cuda_devices, (str, bytes)) or not hasattr(cuda_devices, "__len__"):
                raise TypeError("cuda_devices must be a sequence of GPU numbers or None")
            ds = [_integer(d, "cuda_devices[%d]" % i, _INT_MIN, _INT_MAX)
                  for i, d in enumerate(cuda_devices)]
            self._devices = (ctypes.c_int * max(len(ds), 1))(*ds)
            c.cuda_devices = self._devices
            c.cuda_device_count = len(ds)
        self._hist = None
        # _taps keeps the coefficients alive until create has copied them.
        c.num_taps, c.taps_per_channel, self._taps = _taps(taps, c.channels)
        if self._taps is not None:
            c.taps = self._taps.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
        if hist is not None:
            unknown = set(hist) - {"bins", "block_frames", "lo", "hi", "of", "mix"}
            if unknown:
                raise ValueError("hist has unknown keys %s (bins, block_frames, lo, hi, of, mix)"
                                 % ", ".join(sorted(map(repr, unknown))))
            self._hist = _HistConfig(_integer(hist["bins"], "hist['bins']", 0, _SIZE_MAX),
                                     _integer(hist["block_frames"], "hist['block_frames']", 0,
                                              _SIZE_MAX),
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
        x = _real_array(x, "x")
        if x.ndim == 1 and self.channels == 1:
            x = x.reshape(-1, 1)
        if x.ndim != 2 or x.shape[1] != self.channels:
            raise ValueError("expected frames x %d channels%s, got shape %s" %
                             (self.channels, " (or 1-D)" if self.channels == 1 else "", x.shape))
        return np.ascontiguousarray(x, dtype=self.dtype)

    def _channel(self, channel):
        c = operator.index(channel) if not isinstance(channel, (bool, np.bool_)) and isinstance(
            channel, (numbers.Integral, np.integer)) else None
        if c is None:
            raise TypeError("channel must be an integer, not %r" % (channel,))
        if not 0 <= c < self.channels:
            raise IndexError("channel %d out of range 0..%d (%d channel%s)" %
                             (c, self.channels - 1, self.channels, "s" * (self.channels > 1)))
        return c

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
        """Hand frames to the engine: x frames x channels (1-D for one channel), converted to
        self.dtype. All are taken; output pulled to make room is kept for pull."""
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
        """Every output frame ready now: a new C-contiguous array of self.dtype, shape
        (frames, channels), 2-D even for one channel (possibly 0 frames)."""
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
        """Bulk: push every frame of x and return the output ready so far (gf_engine_process),
        as pull does: (frames, channels) of self.dtype."""
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
        while self._hist is not None:
            st = _lib.gf_engine_hist_next(self._live(), ctypes.byref(r))
            if st == _NO_RECORD:
                break
            self._check(st)
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
        """Frames per chunk in use (the library's choice when 0 was given)."""
        return _lib.gf_engine_chunk_frames(self._live())

    def error_bound(self, channel=0, max_abs_x=1.0):
        """The FFT method's bound on |error| of channel's output against the exact sum, for
        input within +-max_abs_x (a float; 0.0 for the direct method)."""
        c = self._channel(channel)
        m = float(max_abs_x)
        if not m >= 0:
            raise ValueError("max_abs_x must be a number >= 0, not %r" % (max_abs_x,))
        return _lib.gf_engine_error_bound(self._live(), c, m)

    def taps(self, channel=0):
        """The taps in use for a channel (0 .. channels-1): a new 1-D float64 array of
        num_taps values, rounded to the engine's precision (1/T for a mean filter)."""
        c = self._channel(channel)
        h = np.empty(self.num_taps, np.float64)
        st = _lib.gf_engine_channel_taps(self._live(), c,
                                         h.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), h.size)
        if st:
            raise GpufiltError(st, "channel %d of %d" % (c, self.channels))
        return h


def filter(x, taps, mode="same", device="auto", method="auto", partition=0, precision=None,
           **engine_options):
    """Filter a whole signal: x real, 1-D (frames of one channel) or 2-D (frames x channels).

    taps: a positive int (mean filter), a 1-D array, or taps x channels (one filter per
    channel of x). precision: "f32", "f64" or a numpy float32 / float64 dtype; by default
    float32 for float32 x and float64 for any other x. The other keyword arguments are
    Engine's (chunk_frames, threads, cuda_device, hist).

    Returns a new C-contiguous array of the precision's dtype (float32 or float64), 1-D
    when x is 1-D, else (frames, channels): as many frames as x for "same" and "causal"
    (scipy.signal.convolve(x, h, "same") and lfilter(h, 1, x)), and frames + taps - 1 for
    "full" (convolve(x, h, "full")).
    """
    a = _real_array(x, "x")
    if a.ndim not in (1, 2):
        raise ValueError("x must be 1-D (frames) or 2-D (frames x channels), not %d-D (shape %s)"
                         % (a.ndim, a.shape))
    if precision is None:
        precision = np.float32 if a.dtype == np.float32 else np.float64
    channels = 1 if a.ndim == 1 else a.shape[1]
    if channels < 1:
        raise ValueError("x of shape %s has no channels" % (a.shape,))
    _taps(taps, channels, a.shape)  # taps against x's channels, both shapes in the message
    with Engine(channels=channels, taps=taps, mode=mode, precision=precision, device=device,
                method=method, partition=partition, **engine_options) as e:
        y = [e.process(a)]
        e.flush()
        y.append(e.pull())
    y = np.concatenate(y)
    return y.reshape(-1) if a.ndim == 1 else y
