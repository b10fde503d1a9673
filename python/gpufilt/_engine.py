"""The streaming engine (gf_engine) and what every entry point shares:
argument checks, the taps' layout, errors."""
from __future__ import annotations

import ctypes
import numbers
import operator
from typing import Any, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

from . import _lib
from ._lib import E as _E
from ._lib import ERR_INVALID_ARGUMENT as _ERR_INVALID_ARGUMENT
from ._lib import INT_MAX as _INT_MAX
from ._lib import INT_MIN as _INT_MIN
from ._lib import NO_RECORD as _NO_RECORD
from ._lib import SIZE_MAX as _SIZE_MAX
from ._lib import lib as _clib
from ._lib import size_t as _size

_MODES = {"same": 0, "causal": 1, "full": 2}
_METHODS = {"auto": 0, "direct": 1, "fft": 2, "nupc": 3}
_METHOD_NAMES = {v: k for k, v in _METHODS.items()}
_DEVICES = {"auto": 0, "cpu": 1, "cuda": 2, "ref": 3}
# Methods that only some devices run (gpufilt.h), with those devices:
# refused here, before the library would answer "no usable GPU" where the
# method could never run anyway.
_METHOD_DEVICES = {"nupc": ("cpu", "cuda", "auto")}
_DTYPES = {0: np.float32, 1: np.float64}


class HistRecord(NamedTuple):
    """One block's histogram (gf_hist_record); bins is a uint64 numpy array."""
    block: int
    first_frame: int
    frames: int
    channel: int
    below: int
    above: int
    nan: int
    min: float
    max: float
    rms: float
    bins: NDArray[np.uint64]


class GpufiltError(RuntimeError):
    """A gpufilt call failed: status is the gf_status code, detail the library's reason.

    When the library refused an argument (status 1, GF_ERR_INVALID_ARGUMENT)
    the error raised is a GpufiltError that is also a ValueError."""

    def __new__(cls, status: int, detail: str = ""):
        if cls is GpufiltError and status == _ERR_INVALID_ARGUMENT:
            cls = _GpufiltArgumentError
        return super().__new__(cls, status, detail)

    def __init__(self, status: int, detail: str = "") -> None:
        self.status, self.detail = status, detail
        reason = _clib.gf_strerror(status).decode()
        super().__init__("%s: %s" % (reason, detail) if detail else reason)


class _GpufiltArgumentError(GpufiltError, ValueError):
    """The library refused an argument (GF_ERR_INVALID_ARGUMENT)."""


def version() -> str:
    """The library's version string (gf_version): "MAJOR.MINOR.PATCH (backends)",
    e.g. "0.6.0 (ref, cpu, cuda)": the backends this build of the library has."""
    return _clib.gf_version().decode()


def cuda_available() -> bool:
    """True when the library was built with CUDA and a GPU is usable."""
    return bool(_clib.gf_cuda_available())


def _choice(table: dict, value: Any, what: str) -> int:
    if not isinstance(value, str) or value not in table:
        raise ValueError("%s must be one of %s, not %r" % (what, ", ".join(table), value))
    return table[value]


def _method_on(method: str, device: str) -> None:
    """ValueError for a method the device never runs (both names already checked)."""
    devices = _METHOD_DEVICES.get(method)
    if devices is not None and device not in devices:
        raise ValueError("method %r does not run on the %r backend: device must be %s"
                         % (method, device, ", ".join(map(repr, devices))))


def _integer(value: Any, what: str, lo: int, hi: int) -> int:
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


def _precision(value: Any) -> int:
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


def _real_array(x: ArrayLike, what: str) -> np.ndarray:
    """x as a numpy array of real numbers (TypeError for complex or non-numbers)."""
    a = np.asarray(x)
    if a.dtype.kind not in "biuf":
        raise TypeError("%s must be an array of real numbers, not of dtype %s" % (what, a.dtype))
    return a


def _taps(taps: Union[int, ArrayLike], channels: int,
          shape_of_x: Optional[Tuple[int, ...]] = None) -> Tuple[int, int, Optional[np.ndarray]]:
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

    For whole arrays, `convolve` and `lfilter` are simpler; an Engine is for
    streams that arrive in blocks (a sound card, a pipe, a file read in
    parts), whose output does not depend on how the stream was cut.

    Parameters
    ----------
    channels : int
        Interleaved channels per frame, 1 .. 1024.
    taps : int or array_like
        A positive int (a mean filter of that many taps), a 1-D array (one
        filter for every channel) or a 2-D taps x channels array (one filter
        per channel; a single column is one filter for all).
    mode : {"same", "causal", "full"}
        "same": scipy.signal.convolve(x, h, "same"); "causal":
        scipy.signal.lfilter(h, 1, x), output lagging by nothing; "full": the
        whole convolution, taps - 1 frames more than the input.
    precision : {"f32", "f64"} or numpy float32 / float64 dtype
        The arithmetic's, and the dtype of every array pull and process
        return (`dtype`).
    device : {"auto", "cpu", "cuda", "ref"}
        "auto": a usable GPU, else the CPU; "ref": the serial reference.
    method : {"auto", "direct", "fft", "nupc"}
        "direct": the library's serial sum order, bit-identical on every
        backend; "fft": uniformly partitioned FFT convolution, its output
        in whole partitions; "nupc": non-uniformly partitioned FFT
        convolution, partitions growing from `partition` frames, its output
        in whole first partitions (lower latency than "fft" for long
        filters), on the cpu and cuda backends ("ref" raises ValueError); "auto":
        "direct" or "fft" by the cost model, never "nupc". "fft" and
        "nupc" are exact to within `error_bound`.
    partition : int
        >= 0; 0 is the library's choice. "fft": its partition in frames;
        "nupc": its first (smallest) partition (0: 256 frames); ignored by
        "direct".
    chunk_frames : int
        Frames per processing chunk, >= 0; 0 is the library's choice
        (large). Output does not depend on it; a chunk of a few partitions
        lets output out as soon as each partition is complete.
    threads : int
        >= 0; 0 is the library's choice.
    cuda_device : int
        The GPU to run on.
    cuda_devices : sequence of int, optional
        GPUs to deal chunks to (the bytes of one GPU), or None for
        `cuda_device` alone.
    hist : dict, optional
        Per-block histograms: bins, block_frames and optionally lo, hi
        (default -1, 1), of ("output" or "input") and mix (bool); read them
        with `hist_records`.

    Examples
    --------
    >>> import numpy as np, gpufilt
    >>> with gpufilt.Engine(taps=np.array([0.5, 0.5]), mode="causal", precision="f64") as e:
    ...     e.push([1.0, 2.0])
    ...     first = e.pull()
    ...     e.push([3.0, 4.0])
    ...     e.flush()
    ...     rest = e.pull()
    >>> np.concatenate([first, rest]).ravel()
    array([0.5, 1.5, 2.5, 3.5])

    A long filter with little delay: non-uniform partitions, the first of
    128 frames, so output comes 128 frames at a time (on the CPU):

    >>> with gpufilt.Engine(taps=np.ones(5000) / 5000, mode="causal", method="nupc",
    ...                     partition=128, chunk_frames=128, device="cpu") as e:
    ...     e.push(np.zeros(300, np.float32))
    ...     (e.method, e.partition, e.backend, len(e.pull()))
    ('nupc', 128, 'cpu', 256)
    """

    def __init__(self, channels: int = 1, taps: Union[int, ArrayLike] = 1, mode: str = "same",
                 precision: Union[str, DTypeLike] = "f32", device: str = "auto",
                 method: str = "auto", partition: int = 0, chunk_frames: int = 0,
                 threads: int = 0, cuda_device: int = 0,
                 cuda_devices: Optional[Sequence[int]] = None,
                 hist: Optional[dict] = None) -> None:
        c = _clib.gf_config_default()
        c.channels = _integer(channels, "channels", _INT_MIN, _INT_MAX)
        c.mode = _choice(_MODES, mode, "mode")
        c.precision = _precision(precision)
        c.device = _choice(_DEVICES, device, "device")
        c.method = _choice(_METHODS, method, "method")
        _method_on(method, device)
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
            self._hist = _lib.HistConfig(
                _integer(hist["bins"], "hist['bins']", 0, _SIZE_MAX),
                _integer(hist["block_frames"], "hist['block_frames']", 0, _SIZE_MAX),
                float(hist.get("lo", -1.0)), float(hist.get("hi", 1.0)),
                _choice({"output": 0, "input": 1}, hist.get("of", "output"), "hist['of']"),
                int(bool(hist.get("mix", False))))
            c.hist = ctypes.pointer(self._hist)
        detail = ctypes.create_string_buffer(512)
        self._e = _E()
        st = _clib.gf_engine_create(ctypes.byref(c), ctypes.byref(self._e), detail, 512)
        if st:
            self._e = None
            raise GpufiltError(st, detail.value.decode(errors="replace"))
        self.channels, self.num_taps = c.channels, c.num_taps
        self._full = c.mode == _MODES["full"]
        self.dtype = np.dtype(_DTYPES[c.precision])
        self._ready = []

    # --- lifecycle ---
    def close(self) -> None:
        """Destroy the engine (also on garbage collection and leaving a with block)."""
        if getattr(self, "_e", None):
            _clib.gf_engine_destroy(self._e)
            self._e = None

    __del__ = close

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _check(self, st):
        if st:
            raise GpufiltError(st, _clib.gf_engine_error(self._live()).decode(errors="replace"))

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
        n = max(1, _clib.gf_engine_max_pending(self._live()))
        while True:
            out = np.empty((n, self.channels), self.dtype)
            got = _size()
            self._check(_clib.gf_engine_pull(self._e, out.ctypes.data, n, ctypes.byref(got)))
            if got.value == 0:
                return
            self._ready.append(out[:got.value])

    # --- streaming ---
    def push(self, x: ArrayLike) -> None:
        """Hand frames to the engine: x frames x channels (1-D for one channel), converted to
        self.dtype. All are taken; output pulled to make room is kept for pull."""
        x = self._frames(x)
        done = 0
        while done < len(x):
            used = _size()
            self._check(_clib.gf_engine_push(self._live(), x[done:].ctypes.data, len(x) - done,
                                            ctypes.byref(used)))
            done += used.value
            if done < len(x):
                self._pull_into_ready()

    def pull(self) -> np.ndarray:
        """Every output frame ready now: a new C-contiguous array of self.dtype, shape
        (frames, channels), 2-D even for one channel (possibly 0 frames)."""
        self._pull_into_ready()
        out = np.concatenate(self._ready) if self._ready else np.empty((0, self.channels),
                                                                       self.dtype)
        self._ready = []
        return out

    def flush(self) -> None:
        """End of stream: the remaining output becomes ready."""
        self._check(_clib.gf_engine_flush(self._live()))

    def reset(self) -> None:
        """Forget all input and output; a new stream starts with zero history."""
        self._ready = []
        self._check(_clib.gf_engine_reset(self._live()))

    def process(self, x: ArrayLike) -> np.ndarray:
        """Bulk: push every frame of x and return the output ready so far (gf_engine_process),
        as pull does: (frames, channels) of self.dtype."""
        x = self._frames(x)
        out = np.empty((len(x) + _clib.gf_engine_max_pending(self._live()), self.channels),
                       self.dtype)
        got = _size()
        self._check(_clib.gf_engine_process(self._e, x.ctypes.data, len(x), out.ctypes.data,
                                           ctypes.byref(got)))
        self._ready.append(out[:got.value])
        return self.pull()

    def filter(self, x: ArrayLike) -> np.ndarray:
        """A whole signal (gf_engine_filter): the engine reset, every frame of x filtered
        and the mode's whole output returned, (frames, channels) of self.dtype (full mode:
        taps - 1 frames more). Afterwards the stream is over (as after flush and pull)."""
        x = self._frames(x)
        n = len(x) + (self.num_taps - 1 if self._full else 0)
        out = np.empty((n, self.channels), self.dtype)
        got = _size()
        self._ready = []
        self._check(_clib.gf_engine_filter(self._live(), x.ctypes.data, len(x), out.ctypes.data,
                                           ctypes.byref(got)))
        return out[:got.value]

    def _filter_device(self, x_ptr: int, frames: int, y_ptr: int, stream: int) -> int:
        """gf_engine_filter_device: frames x channels at GPU address x_ptr, the mode's whole
        output to y_ptr, after the work on CUDA stream `stream` (0: the default one); the
        number of frames written. For convolve and lfilter on arrays in GPU memory."""
        got = _size()
        self._check(_clib.gf_engine_filter_device(self._live(), x_ptr, frames, y_ptr,
                                                  ctypes.byref(got), stream or None))
        return got.value

    def hist_records(self) -> List[HistRecord]:
        """The histogram records completed so far, in stream order (list of HistRecord)."""
        recs, r = [], _lib.HistRecordC()
        while self._hist is not None:
            st = _clib.gf_engine_hist_next(self._live(), ctypes.byref(r))
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
    def backend(self) -> str:
        """"ref", "cpu" or "cuda"."""
        return _clib.gf_engine_backend(self._live()).decode()

    @property
    def method(self) -> str:
        """The method in use: "direct", "fft" or "nupc" (never "auto")."""
        return _METHOD_NAMES[_clib.gf_engine_method(self._live())]

    @property
    def partition(self) -> int:
        """The FFT method's partition in frames, the NUPC method's first (smallest) partition
        B, 0 for direct."""
        return _clib.gf_engine_partition(self._live())

    @property
    def latency(self) -> int:
        """Frames by which output lags input."""
        return _clib.gf_engine_latency(self._live())

    @property
    def chunk_frames(self) -> int:
        """Frames per chunk in use (the library's choice when 0 was given)."""
        return _clib.gf_engine_chunk_frames(self._live())

    def error_bound(self, channel: int = 0, max_abs_x: float = 1.0) -> float:
        """The FFT or NUPC method's bound on |error| of channel's output against the exact sum,
        for input within +-max_abs_x (a float; 0.0 for the direct method)."""
        c = self._channel(channel)
        m = float(max_abs_x)
        if not m >= 0:
            raise ValueError("max_abs_x must be a number >= 0, not %r" % (max_abs_x,))
        return _clib.gf_engine_error_bound(self._live(), c, m)

    def taps(self, channel: int = 0) -> np.ndarray:
        """The taps in use for a channel (0 .. channels-1): a new 1-D float64 array of
        num_taps values, rounded to the engine's precision (1/T for a mean filter)."""
        c = self._channel(channel)
        h = np.empty(self.num_taps, np.float64)
        st = _clib.gf_engine_channel_taps(self._live(), c,
                                         h.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), h.size)
        if st:
            raise GpufiltError(st, "channel %d of %d" % (c, self.channels))
        return h
