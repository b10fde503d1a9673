"""Whole arrays: filter (frames x channels)."""
from __future__ import annotations

from typing import Any, Optional, Union

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from ._engine import Engine, _real_array, _taps


def filter(x: ArrayLike, taps: Union[int, ArrayLike], mode: str = "same", device: str = "auto",
           method: str = "auto", partition: int = 0, precision: Optional[DTypeLike] = None,
           **engine_options: Any) -> np.ndarray:
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
