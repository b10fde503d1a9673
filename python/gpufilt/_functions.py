"""Whole arrays, as scipy.signal takes them: convolve and lfilter along any
axis, with batches of signals and filters in one call.

How a call runs:
  1. _plan: the arguments checked and the call described without its data
     (batch shape, lengths, the library's mode, which output frames to keep);
  2. the plan runs on the host (numpy arrays: _run_host) or, for x in GPU
     memory (cupy, torch, the CUDA array interface, DLPack), on x's GPU
     (_device.run, gf_engine_filter_device: no copy through the host);
  3. either gives every 1-D signal of the batch its own channel of one
     engine (up to 1024 channels each; per-channel taps where the filters
     differ), so the batch shares one set of transforms and one pass over
     the data. A filter h in GPU memory is copied to the host: it is small,
     and the engine takes its spectra once.
"""
from __future__ import annotations

import warnings
from typing import Any, Literal, NamedTuple, Optional, Tuple, Union

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

from . import _device
from ._engine import _DEVICES, _METHODS, Engine, _choice, _method_on, _real_array, _taps
from ._lib import MAX_CHANNELS

_AxisError = getattr(getattr(np, "exceptions", np), "AxisError")

# scipy.signal.convolve's modes, each as one of the library's with the part
# of its output to keep (see _plan).
_CONVOLVE_MODES = ("full", "same", "valid")


class _Plan(NamedTuple):
    """A call without its data. x and h are seen with the filtered axis
    last: x (..., n) and h (..., taps) or (taps,); batch is their
    broadcast leading shape, signals its product."""
    axis: int                 # the filtered axis of x and the result (>= 0)
    batch: Tuple[int, ...]    # leading shape shared by x and h (broadcast)
    n: int                    # samples per signal
    taps: int                 # taps per filter
    one_filter: bool          # one filter for every signal (taps_per_channel 0)
    lib_mode: str             # "same", "causal" or "full" (Engine's)
    start: int                # first frame of the library's output kept
    n_out: int                # frames kept per signal
    dtype: np.dtype           # the arithmetic's and the result's
    scale: Optional[float]    # integer x: sample * scale (+ offset for unsigned)
    offset: float
    method: str
    device: str


def _dtype_of(x: np.ndarray, dtype: Optional[DTypeLike]) -> Tuple[np.dtype, Optional[float], float]:
    """(arithmetic dtype, integer scale or None, unsigned offset) for x."""
    k = x.dtype.kind
    if k == "c":
        raise TypeError("x must be real, not complex (%s): filter x.real and x.imag apart"
                        % x.dtype)
    if k not in "iuf":
        raise TypeError("x must be an array of real numbers, not of dtype %s" % x.dtype)
    if k == "f" and x.dtype.itemsize > 8:
        raise TypeError("x of dtype %s: gpufilt computes in float32 or float64; convert x first"
                        % x.dtype)
    scale, offset = None, 0.0
    if k in "iu":
        # As the command line reads integer samples: v * 2^-(bits-1), unsigned
        # offset by 2^(bits-1) first, so int16 -32768 .. 32767 is -1 .. 1 - 2^-15.
        bits = 8 * x.dtype.itemsize
        scale = 2.0 ** -(bits - 1)
        offset = -(2.0 ** (bits - 1)) if k == "u" else 0.0
    if dtype is None:
        dt = np.dtype(np.float32) if x.dtype in (np.float16, np.float32) else np.dtype(np.float64)
    else:
        try:
            dt = np.dtype(dtype)
        except TypeError:
            dt = None
        if dt not in (np.float32, np.float64):
            raise ValueError("dtype must be float32 or float64 (or None: x's), not %r" % (dtype,))
    return dt, scale, offset


def _axis(axis: Any, ndim: int) -> int:
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        raise TypeError("axis must be an integer, not %r" % (axis,))
    if not -ndim <= axis < ndim:
        raise _AxisError("axis %d is out of bounds for x of %d dimension%s"
                         % (axis, ndim, "s" * (ndim != 1)))
    return int(axis) % ndim


def _plan(x: np.ndarray, h: np.ndarray, mode: str, axis: Any, method: str, device: str,
          dtype: Optional[DTypeLike], what: str) -> _Plan:
    """The call checked and described (x and h as arrays, not yet moved)."""
    if x.ndim == 0:
        raise ValueError("x must have at least one dimension, not 0 (a scalar)")
    ax = _axis(axis, x.ndim)
    dt, scale, offset = _dtype_of(x, dtype)
    _choice(_METHODS, method, "method")
    _choice(_DEVICES, device, "device")
    _method_on(method, device)
    if h.ndim == 0:
        raise TypeError("%s must be an array of coefficients, 1-D or with x's %d dimension%s, "
                        "not a scalar (%r)" % (what, x.ndim, "s" * (x.ndim != 1), h.item()))
    if h.ndim != 1 and h.ndim != x.ndim:
        raise ValueError("%s of shape %s: give one filter (1-D) or filters with x's %d "
                         "dimension%s (taps along axis %d, the others broadcast against x of "
                         "shape %s)" % (what, h.shape, x.ndim, "s" * (x.ndim != 1), ax, x.shape))
    n = x.shape[ax]
    taps = h.shape[-1] if h.ndim == 1 else h.shape[ax]
    if n == 0:
        raise ValueError("x of shape %s has no samples along axis %d" % (x.shape, ax))
    if taps == 0:
        raise ValueError("%s of shape %s holds no coefficients along axis %d"
                         % (what, h.shape, ax if h.ndim > 1 else 0))
    xb = x.shape[:ax] + x.shape[ax + 1:]
    one_filter = h.ndim == 1
    if one_filter:
        batch = xb
    else:
        hb = h.shape[:ax] + h.shape[ax + 1:]
        try:
            batch = np.broadcast_shapes(xb, hb)
        except ValueError:
            raise ValueError("x of shape %s and %s of shape %s do not broadcast: along every axis "
                             "but %d their lengths must be equal or 1"
                             % (x.shape, what, h.shape, ax)) from None
        one_filter = all(d == 1 for d in hb)
    if mode == "full":
        lib_mode, start, n_out = "full", 0, n + taps - 1
    elif mode == "same":
        lib_mode, start, n_out = "same", 0, n
    elif mode == "valid" and n >= taps:  # full[taps-1 : n] is the causal output's tail
        lib_mode, start, n_out = "causal", taps - 1, n - taps + 1
    elif mode == "valid":  # shorter than the filter: full[n-1 : taps], as scipy swaps them
        lib_mode, start, n_out = "full", n - 1, taps - n + 1
    else:  # "causal": lfilter
        lib_mode, start, n_out = "causal", 0, n
    return _Plan(ax, tuple(batch), n, taps, one_filter, lib_mode, start, n_out, dt, scale,
                 offset, method, device)


def _run_host(p: _Plan, x: np.ndarray, h: np.ndarray) -> np.ndarray:
    """The plan on numpy arrays: the result, with the filtered axis at p.axis."""
    xm = np.moveaxis(x, p.axis, -1)
    signals = int(np.prod(p.batch, dtype=np.int64))
    xs = np.broadcast_to(xm, p.batch + (p.n,)).reshape(signals, p.n)
    if p.one_filter:
        hs = np.asarray(h, np.float64).reshape(-1)
    else:
        hm = np.moveaxis(h, p.axis, -1)
        hs = np.broadcast_to(hm, p.batch + (p.taps,)).reshape(signals, p.taps)
    # The result in the layout the caller will read: signals contiguous when
    # the filtered axis is last, frames x signals (the engine's) otherwise.
    if p.axis == len(p.batch):
        out = np.empty((signals, p.n_out), p.dtype)
    else:
        out = np.empty((p.n_out, signals), p.dtype).T
    for c0 in range(0, signals, MAX_CHANNELS):
        c1 = min(c0 + MAX_CHANNELS, signals)
        frames = xs[c0:c1].T  # frames x channels, as the engine takes them
        if p.scale is not None:
            frames = (frames.astype(np.float64) + p.offset) * p.scale
        frames = np.ascontiguousarray(frames, p.dtype)
        taps = hs if p.one_filter else hs[c0:c1].T
        with Engine(channels=c1 - c0, taps=taps, mode=p.lib_mode, precision=p.dtype,
                    device=p.device, method=p.method) as e:
            y = e.filter(frames)
        out[c0:c1] = y[p.start:p.start + p.n_out].T
    return np.moveaxis(out.reshape(p.batch + (p.n_out,)), -1, p.axis)


def _host_filter(h: Any, what: str) -> np.ndarray:
    """h as a host array of real numbers (one in GPU memory copied over)."""
    if _device.on_gpu(h):
        d = _device.adapter(h, what)
        h = d.to_host(d.take(h))
    return _real_array(h, what)


def _filter_gpu(x: Any, ha: np.ndarray, mode: str, axis: Any, method: str, device: str,
                dtype: Optional[DTypeLike], what: str) -> Any:
    """x in GPU memory, filtered on its GPU: an array of x's kind there."""
    if device not in ("auto", "cuda"):
        raise ValueError("gpufilt: x is in GPU memory: device must be 'auto' or 'cuda', not %r "
                         "(copy x to the host to filter it there)" % (device,))
    if method == "nupc":
        raise ValueError("gpufilt: x is in GPU memory, which the 'nupc' method cannot filter "
                         "(it filters host memory): method 'auto', 'direct' or 'fft'")
    d = _device.adapter(x)
    xg = d.take(x)
    p = _plan(d.view(xg), ha, mode, axis, method, "cuda", dtype, what)
    if 0 in p.batch:
        return d.moveaxis(d.empty(xg, p.batch + (p.n_out,), p.dtype), -1, p.axis)
    return _device.run(d, p, xg, ha, Engine, MAX_CHANNELS)


def _filter(x: Any, h: Any, mode: str, axis: Any, method: str, device: str,
            dtype: Optional[DTypeLike], what: str) -> Any:
    ha = _host_filter(h, what)
    if _device.on_gpu(x):
        return _filter_gpu(x, ha, mode, axis, method, device, dtype, what)
    xa = np.asarray(x)  # its dtype is checked in _plan: complex refused by name
    p = _plan(xa, ha, mode, axis, method, device, dtype, what)
    if 0 in p.batch:
        return np.empty(p.batch[:p.axis] + (p.n_out,) + p.batch[p.axis:], p.dtype)
    return _run_host(p, xa, ha)


Mode = Literal["full", "same", "valid"]
Method = Literal["auto", "direct", "fft", "nupc"]
Device = Literal["auto", "cpu", "cuda", "ref"]


def convolve(x: ArrayLike, h: ArrayLike, mode: Mode = "full", axis: int = -1,
             method: Method = "auto", device: Device = "auto",
             dtype: Optional[DTypeLike] = None) -> NDArray[np.floating]:
    """Convolve each 1-D signal of `x` along `axis` with a filter `h`.

    With a 1-D `h` this is ``scipy.signal.convolve(x, h, mode)`` for 1-D `x`,
    and the same applied to every signal along `axis` of an N-D `x`. With an
    N-D `h` it is ``scipy.signal.fftconvolve(x, h, mode, axes=axis)``: the
    other axes broadcast, so one call filters many signals with one filter,
    one signal with many filters, or each signal with its own.

    Parameters
    ----------
    x : array_like
        Real samples, any number of dimensions. float32 is filtered in
        float32 and float64 in float64 (float16 as float32); integers are
        scaled to [-1, 1) as the command line reads integer samples
        (``v * 2**-(bits-1)``, unsigned offset by ``2**(bits-1)`` first,
        so int16 is divided by 32768) and filtered in float64. Complex `x`
        is refused (TypeError).
    h : array_like
        The filter's coefficients: 1-D (one filter for every signal), or
        with `x`'s number of dimensions, taps along `axis` and the other
        axes equal to `x`'s or 1 (a batch of filters). Real; used as
        float64, rounded to the arithmetic's precision.
    mode : {"full", "same", "valid"}
        As scipy's: "full" gives ``n + taps - 1`` samples, "same" `n`,
        centred as scipy centres them, "valid" ``abs(n - taps) + 1``.
    axis : int
        The axis of `x` (and of an N-D `h`) along which to filter.
    method : {"auto", "direct", "fft", "nupc"}
        "direct" sums in the library's order (bit-identical on CPU and
        GPU); "fft" is partitioned FFT convolution, within a stated error
        bound; "nupc" is non-uniformly partitioned FFT convolution, within
        its own bound, on the CPU or a GPU (not "ref"): its low
        latency serves streams (`Engine`), a whole array gains nothing
        from it; "auto" picks "direct" or "fft" by the filter's length and
        the device.
    device : {"auto", "cpu", "cuda", "ref"}
        "auto": a usable GPU, else the CPU; "ref": the serial reference.
    dtype : {None, float32, float64}
        The arithmetic's and the result's dtype; None: as `x` (above).

    Returns
    -------
    ndarray
        The broadcast shape of `x` and `h` with the filtered axis's length
        set by `mode`, of `dtype`. For `x` in GPU memory (a cupy array, a
        torch CUDA tensor, or what cupy reads: the CUDA array interface,
        DLPack), an array of `x`'s kind on `x`'s GPU, computed there with
        no copy through host memory.

    Raises
    ------
    TypeError
        Complex or non-numeric `x` or `h`, an `axis` that is not an
        integer, or an array on a GPU that neither cupy (not installed)
        nor torch can read.
    ValueError
        A `mode`, `method`, `device` or `dtype` not listed, "nupc" on
        device "ref", shapes that do not broadcast,
        an empty signal or filter; for `x` in GPU memory, `method` "nupc"
        or a `device` other than "auto" or "cuda".
    numpy.exceptions.AxisError
        `axis` out of range.

    See Also
    --------
    lfilter : causal filtering, ``scipy.signal.lfilter(h, 1, x)``.
    Engine : the same filters on a stream that arrives in blocks.

    Examples
    --------
    >>> import numpy as np, gpufilt
    >>> gpufilt.convolve([1.0, 2.0, 3.0], [1.0, 1.0])
    array([1., 3., 5., 3.])
    >>> gpufilt.convolve([1.0, 2.0, 3.0], [1.0, 1.0], mode="valid")
    array([3., 5.])

    Two channels in rows, torchaudio's layout, one filter:

    >>> x = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0]], np.float32)
    >>> gpufilt.convolve(x, [0.5, 0.25], mode="same")
    array([[0.5 , 0.25, 0.  , 0.  ],
           [0.  , 1.  , 0.5 , 0.  ]], dtype=float32)

    One signal, three filters (a batch of filters, rows along axis 0):

    >>> h = np.array([[1.0], [2.0], [-1.0]])
    >>> gpufilt.convolve(np.array([[1.0, 2.0]]), h)
    array([[ 1.,  2.],
           [ 2.,  4.],
           [-1., -2.]])

    int16 samples are scaled as the command line scales them:

    >>> gpufilt.convolve(np.array([16384, -32768], np.int16), [1.0])
    array([ 0.5, -1. ])
    """
    if not isinstance(mode, str) or mode not in _CONVOLVE_MODES:
        raise ValueError("mode must be one of %s, not %r" % (", ".join(_CONVOLVE_MODES), mode))
    return _filter(x, h, mode, axis, method, device, dtype, "h")


def lfilter(h: ArrayLike, x: ArrayLike, axis: int = -1, method: Method = "auto",
            device: Device = "auto", dtype: Optional[DTypeLike] = None) -> NDArray[np.floating]:
    """Causal FIR filtering along `axis`: ``scipy.signal.lfilter(h, 1, x, axis)``.

    ``y[i] = sum(h[k] * x[i - k])`` with zero initial state: as many samples
    out as in, none from the future. `x`, `h` (a 1-D filter, or a batch
    of filters with `x`'s dimensions, taps along `axis`), `method`,
    `device` and `dtype` are as for `convolve`.

    Parameters
    ----------
    h : array_like
        The filter's coefficients (scipy's `b`; `a` is 1).
    x : array_like
        Real samples; integers are scaled as in `convolve`.
    axis : int
        The axis to filter along.
    method, device, dtype
        As for `convolve`.

    Returns
    -------
    ndarray
        The broadcast shape of `x` and `h`, of `dtype`.

    See Also
    --------
    convolve : the "full", "same" and "valid" convolutions.

    Examples
    --------
    >>> import numpy as np, gpufilt
    >>> gpufilt.lfilter([0.5, 0.5], [2.0, 4.0, 6.0])
    array([1., 3., 5.])

    Frames x channels (axis 0), one filter per channel:

    >>> x = np.array([[1.0, 1.0], [0.0, 0.0], [0.0, 0.0]])
    >>> h = np.array([[1.0, 1.0], [0.5, -1.0]])
    >>> gpufilt.lfilter(h, x, axis=0)
    array([[ 1. ,  1. ],
           [ 0.5, -1. ],
           [ 0. ,  0. ]])
    """
    return _filter(x, h, "causal", axis, method, device, dtype, "h")


def filter(x: ArrayLike, taps: Union[int, ArrayLike], mode: str = "same", device: str = "auto",
           method: str = "auto", partition: int = 0, precision: Optional[DTypeLike] = None,
           **engine_options: Any) -> np.ndarray:
    """Deprecated: use `convolve` (``mode="same"`` or ``"full"``, ``axis=0``) or
    `lfilter` (``axis=0``) instead. Its name shadows the builtin `filter`.

    Filters x real, 1-D (frames of one channel) or 2-D (frames x channels);
    taps a positive int (mean filter), a 1-D array, or taps x channels (one
    filter per channel of x); mode "same", "causal" or "full". precision:
    "f32", "f64" or a numpy float32 / float64 dtype; by default float32 for
    float32 x and float64 for any other x (integers unscaled). The other
    keyword arguments are Engine's. Returns a new C-contiguous array of the
    precision's dtype, 1-D when x is 1-D, else (frames, channels).
    """
    warnings.warn("gpufilt.filter is deprecated: use gpufilt.convolve(x, h, mode, axis=0) or "
                  "gpufilt.lfilter(h, x, axis=0)", DeprecationWarning, stacklevel=2)
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
        y = e.filter(a)
    return y.reshape(-1) if a.ndim == 1 else y
