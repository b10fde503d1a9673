"""Arrays in GPU memory: filtered on their own GPU through
gf_engine_filter_device, with no copy through host memory.

cupy arrays and torch tensors are taken as they are; anything else in GPU
memory (the CUDA array interface, DLPack: jax, numba, ...) is read through
cupy where cupy is installed. The result is an array of the input's kind
on the input's GPU. The data moves only on the device: the axis to the
front and the signals interleaved (the engine's frames x channels) with
the array library's own operations on its current stream, which the
engine waits for before reading.

Engines are kept for the next call: making one (cuFFT plans, the filter's
spectra, GPU buffers) costs more than filtering a few seconds of audio, and
a caller filtering signal after signal with one filter should pay it once,
as cupy keeps its FFT plans. The last ENGINES_KEPT engines, each with its
GPU, channels, dtype, mode and a copy of its filter, which a call's must
equal (a comparison: hashing 2^20 taps cost 20 ms a call, twice the
filtering of 2^27 samples); clear_gpu_cache frees them.
"""
from __future__ import annotations

import threading
from typing import Any, List, NamedTuple, Optional, Tuple

import numpy as np

ENGINES_KEPT = 2
_kept: List[Tuple[tuple, np.ndarray, Any]] = []  # (key, taps, engine), oldest first
_kept_lock = threading.Lock()


def _take(key: tuple, taps: np.ndarray, make) -> Tuple[Any, np.ndarray]:
    """The engine kept for key and taps, the same bits (no longer kept while
    in use: another thread makes its own) and its copy of the taps, or a new
    engine and a copy."""
    bits = np.ascontiguousarray(taps, np.float64).view(np.int64)
    with _kept_lock:
        for i, (k, t, e) in enumerate(_kept):
            if k == key and np.array_equal(t, bits):
                del _kept[i]
                return e, t
    return make(), bits.copy()


def _keep(key: tuple, taps: np.ndarray, e) -> None:
    """Keep e for key and taps (its copy, as int64 bits), the oldest beyond
    ENGINES_KEPT closed."""
    with _kept_lock:
        _kept.append((key, taps, e))
        closing = [_kept.pop(0)[2] for _ in range(len(_kept) - ENGINES_KEPT)]
    for c in closing:
        c.close()


def clear_gpu_cache() -> None:
    """Close the engines kept for arrays in GPU memory (convolve and lfilter
    keep the last two, for the next call with the same filter and shape),
    freeing their GPU memory."""
    with _kept_lock:
        closing = [e for _, _, e in _kept]
        _kept.clear()
    for c in closing:
        c.close()


class _View(NamedTuple):
    """What _plan asks of an array: its dimensions and numpy dtype."""
    ndim: int
    shape: Tuple[int, ...]
    dtype: np.dtype


def on_gpu(a: Any) -> Optional[str]:
    """Where an array on a GPU lives ("CUDA array interface", "DLPack device
    2", ...), or None for anything numpy reads on the host."""
    if hasattr(a, "__cuda_array_interface__"):
        return "CUDA array interface"
    dev = getattr(a, "__dlpack_device__", None)
    if callable(dev):
        try:
            kind = int(dev()[0])
        except Exception:  # not a DLPack producer after all: numpy decides
            return None
        if kind not in (1, 3):  # kDLCPU, kDLCUDAHost: host memory
            return "DLPack device %d" % kind
    return None


class _Cupy:
    """cupy's operations, for cupy arrays (and what cupy reads)."""
    name = "cupy"

    def __init__(self):
        import cupy
        self.cp = cupy

    def take(self, a):
        if isinstance(a, self.cp.ndarray):
            return a
        if hasattr(a, "__cuda_array_interface__"):
            return self.cp.asarray(a)
        return self.cp.from_dlpack(a)

    def view(self, a):
        return _View(a.ndim, tuple(a.shape), np.dtype(a.dtype))

    def ordinal(self, a):
        return a.device.id

    def stream(self, a):
        with a.device:
            return self.cp.cuda.get_current_stream().ptr

    def moveaxis(self, a, src, dst):
        return self.cp.moveaxis(a, src, dst)

    def broadcast_reshape(self, a, shape, new):
        return self.cp.broadcast_to(a, shape).reshape(new)

    def frames(self, rows, dtype, scale, offset):
        """rows (signals x n) as the engine's frames: (n, signals), C order."""
        with rows.device:
            if scale is not None:
                rows = (rows.astype(np.float64) + offset) * scale
            return self.cp.ascontiguousarray(rows.T, dtype=dtype)

    def empty(self, like, shape, dtype):
        with like.device:
            return self.cp.empty(shape, dtype)

    def ptr(self, a):
        return a.data.ptr

    def to_host(self, a):
        return self.cp.asnumpy(a)

    def reshape(self, a, shape):
        return a.reshape(shape)


_TORCH_DTYPES = None


class _Torch:
    """torch's operations, for CUDA tensors."""
    name = "torch"

    def __init__(self):
        import torch
        self.t = torch
        global _TORCH_DTYPES
        if _TORCH_DTYPES is None:
            _TORCH_DTYPES = {torch.float16: np.float16, torch.float32: np.float32,
                             torch.float64: np.float64, torch.int8: np.int8,
                             torch.uint8: np.uint8, torch.int16: np.int16,
                             torch.int32: np.int32, torch.int64: np.int64,
                             torch.complex64: np.complex64, torch.complex128: np.complex128}

    def take(self, a):
        return a

    def view(self, a):
        dt = _TORCH_DTYPES.get(a.dtype)
        if dt is None:
            raise TypeError("x must be an array of real numbers, not of dtype %s" % a.dtype)
        return _View(a.dim(), tuple(a.shape), np.dtype(dt))

    def ordinal(self, a):
        return a.device.index if a.device.index is not None else self.t.cuda.current_device()

    def stream(self, a):
        return self.t.cuda.current_stream(a.device).cuda_stream

    def moveaxis(self, a, src, dst):
        return self.t.movedim(a, src, dst)

    def broadcast_reshape(self, a, shape, new):
        return a.expand(shape).reshape(new)

    def frames(self, rows, dtype, scale, offset):
        td = self.t.float32 if dtype == np.float32 else self.t.float64
        if scale is not None:
            rows = (rows.to(self.t.float64) + offset) * scale
        return rows.t().to(td).contiguous()

    def empty(self, like, shape, dtype):
        td = self.t.float32 if dtype == np.float32 else self.t.float64
        return self.t.empty(shape, dtype=td, device=like.device)

    def ptr(self, a):
        return a.data_ptr()

    def to_host(self, a):
        return a.detach().cpu().numpy()

    def reshape(self, a, shape):
        return a.reshape(shape)


def adapter(a: Any, name: str = "x"):
    """The array library for `a` (named `name` in messages), which is in GPU
    memory (on_gpu): _Cupy or _Torch. TypeError where neither can read it."""
    mod = type(a).__module__.split(".")[0]
    if mod == "torch":
        if getattr(a, "is_cuda", False):
            return _Torch()
        raise TypeError("gpufilt: %s is a torch tensor on %s, not on a CUDA GPU" % (name, a.device))
    try:
        return _Cupy()
    except ImportError:
        raise TypeError("gpufilt: %s is an array on a GPU (%s), which gpufilt reads through cupy "
                        "or torch: install cupy, or copy it to the host first"
                        % (name, on_gpu(a))) from None


def run(d, p, x, h, engine_cls, max_channels: int):
    """The plan p (_functions._plan) on x, in GPU memory, with host filters
    h (1-D, or the batch's): the result, an array of x's kind on its GPU,
    the filtered axis at p.axis."""
    signals = int(np.prod(p.batch, dtype=np.int64))
    rows = d.broadcast_reshape(d.moveaxis(x, p.axis, -1), p.batch + (p.n,), (signals, p.n))
    if p.one_filter:
        hs = np.asarray(h, np.float64).reshape(-1)
    else:
        hm = np.moveaxis(h, p.axis, -1)
        hs = np.broadcast_to(hm, p.batch + (p.taps,)).reshape(signals, p.taps)
    n_lib = p.n + p.taps - 1 if p.lib_mode == "full" else p.n
    out = d.empty(x, (signals, p.n_out), p.dtype)
    stream, gpu = d.stream(x), d.ordinal(x)
    for c0 in range(0, signals, max_channels):
        c1 = min(c0 + max_channels, signals)
        frames = d.frames(rows[c0:c1], p.dtype, p.scale, p.offset)
        y = d.empty(x, (n_lib, c1 - c0), p.dtype)
        taps = hs if p.one_filter else np.ascontiguousarray(hs[c0:c1].T)
        key = (gpu, c1 - c0, np.dtype(p.dtype).str, p.lib_mode, p.method, taps.shape)
        e, kept_taps = _take(key, taps, lambda: engine_cls(
            channels=c1 - c0, taps=taps, mode=p.lib_mode, precision=p.dtype, device="cuda",
            method=p.method, cuda_device=gpu))
        try:
            e._filter_device(d.ptr(frames), p.n, d.ptr(y), stream)
        except BaseException:
            e.close()
            raise
        _keep(key, kept_taps, e)
        out[c0:c1] = y[p.start:p.start + p.n_out].T
    return d.moveaxis(d.reshape(out, p.batch + (p.n_out,)), -1, p.axis)
