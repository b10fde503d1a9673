"""gpufilt: streaming FIR filters on CUDA GPUs and CPUs, for numpy arrays.

    y = gpufilt.filter(x, taps, mode="same", device="auto")

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

from ._engine import Engine, GpufiltError, HistRecord, cuda_available, version
from ._functions import filter

__all__ = ["filter", "Engine", "GpufiltError", "HistRecord", "cuda_available",
           "version"]
__version__ = version().split()[0]
