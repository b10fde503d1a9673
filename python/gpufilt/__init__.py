"""gpufilt: FIR filters on CUDA GPUs and CPUs, for numpy arrays.

scipy-like functions over whole arrays, along any axis, in batches::

    y = gpufilt.convolve(x, h, mode="same", axis=-1)   # scipy.signal.convolve's meaning
    y = gpufilt.lfilter(h, x, axis=-1)                 # scipy.signal.lfilter(h, 1, x)

and a streaming engine for signals that arrive in blocks::

    with gpufilt.Engine(channels=2, taps=h, mode="causal") as e:
        for block in blocks:
            e.push(block)
            play(e.pull())
        e.flush()
        rest = e.pull()

The package carries libgpufilt (built by ``pip install .``) and calls it
through ctypes; include/gpufilt.h in gpufilt's source says what each call
guarantees.

Errors: a bad argument raises TypeError (wrong kind of value) or
ValueError (right kind, bad value), naming the value given; an engine
channel that does not exist raises IndexError. A failing library call
raises GpufiltError with the library's detail; when the library refused an
argument (status GF_ERR_INVALID_ARGUMENT) that error is a ValueError too.
"""
from __future__ import annotations

from ._device import clear_gpu_cache
from ._engine import Engine, GpufiltError, HistRecord, cuda_available, version
from ._functions import convolve, filter, lfilter

# No name here shadows a builtin: filter, deprecated, is reachable only as
# gpufilt.filter.
__all__ = ["convolve", "lfilter", "Engine", "GpufiltError", "HistRecord", "clear_gpu_cache",
           "cuda_available", "version"]
__version__ = version().split()[0]
