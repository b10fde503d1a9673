"""The GPU-array path's layout logic (gpufilt._device.run) without a GPU:
numpy arrays stand in for device arrays (an adapter with cupy's methods)
and an engine whose _filter_device reads and writes them through their
addresses, filtering with the CPU backend. So the axis moves, the batch's
layout as frames x channels, groups of channels, the modes' kept frames
and the engines kept between calls are checked in CI; the real device
path is python/tests/test_gpu_arrays.py, on the GPU machine."""
import ctypes
import unittest

import numpy as np
import scipy.signal as ss

import gpufilt
import gpufilt._device as dev
from gpufilt._functions import _plan


class NumpyAsDevice:
    """_device's adapter interface over numpy arrays."""
    name = "numpy"

    def take(self, a):
        return np.asarray(a)

    def view(self, a):
        return dev._View(a.ndim, tuple(a.shape), a.dtype)

    def ordinal(self, a):
        return 0

    def stream(self, a):
        return 0

    def moveaxis(self, a, src, dst):
        return np.moveaxis(a, src, dst)

    def broadcast_reshape(self, a, shape, new):
        return np.broadcast_to(a, shape).reshape(new)

    def frames(self, rows, dtype, scale, offset):
        if scale is not None:
            rows = (rows.astype(np.float64) + offset) * scale
        return np.ascontiguousarray(rows.T, dtype=dtype)

    def empty(self, like, shape, dtype):
        return np.full(shape, np.nan, dtype)

    def ptr(self, a):
        return a.ctypes.data

    def reshape(self, a, shape):
        return a.reshape(shape)

    def to_host(self, a):
        return a


class CpuEngine:
    """An engine with _filter_device over host addresses: the CPU backend's
    process, flush and pull, as gf_engine_filter_device's contract says."""
    made = 0

    def __init__(self, channels, taps, mode, precision, device, method, cuda_device):
        assert (device, cuda_device) == ("cuda", 0)
        CpuEngine.made += 1
        self.e = gpufilt.Engine(channels=channels, taps=taps, mode=mode, precision=precision,
                                device="cpu", method=method)
        self.C, self.dt, self.mode, self.T = channels, np.dtype(precision), mode, self.e.num_taps

    def _filter_device(self, x_ptr, frames, y_ptr, stream):
        ct = ctypes.c_float if self.dt == np.float32 else ctypes.c_double
        x = np.ctypeslib.as_array((ct * (frames * self.C)).from_address(x_ptr))
        n_out = frames + self.T - 1 if self.mode == "full" else frames
        y = np.ctypeslib.as_array((ct * (n_out * self.C)).from_address(y_ptr))
        self.e.reset()
        got = [self.e.process(x.reshape(frames, self.C))]
        self.e.flush()
        got.append(self.e.pull())
        out = np.concatenate(got)
        assert len(out) == n_out, (len(out), n_out)
        y[:] = out.reshape(-1)
        return n_out

    def close(self):
        self.e.close()


def run(x, h, mode="full", axis=-1, dtype=None, max_channels=1024, method="fft"):
    x = np.asarray(x)
    h = np.asarray(h, np.float64)
    p = _plan(x, h, mode, axis, method, "cuda", dtype, "h")
    return dev.run(NumpyAsDevice(), p, x, h, CpuEngine, max_channels)


class Layout(unittest.TestCase):
    def setUp(self):
        dev.clear_gpu_cache()

    def tearDown(self):
        dev.clear_gpu_cache()

    def close(self, y, want, what, tol=1e-9):
        self.assertEqual(y.shape, want.shape, what)
        self.assertFalse(np.isnan(y).any(), what + ": frames left unwritten")
        self.assertLessEqual(float(np.max(np.abs(y - want))), tol, what)

    def test_modes_axes_and_groups(self):
        rng = np.random.default_rng(1)
        x = rng.standard_normal((3, 4, 700))
        h = rng.standard_normal(50)
        for mode in ("full", "same", "valid"):
            want = ss.convolve(x, h[None, None, :], mode)
            for groups in (1024, 5):  # 12 signals: one engine, or groups of 5, 5 and 2
                self.close(run(x, h, mode, max_channels=groups), want, "%s, %d" % (mode, groups))
            xt = np.moveaxis(x, -1, 1)
            self.close(run(xt, h, mode, axis=1), np.moveaxis(want, -1, 1), mode + " axis 1")

    def test_filters_per_signal_short_signal_and_dtypes(self):
        rng = np.random.default_rng(2)
        x = rng.standard_normal((4, 30)).astype(np.float32)
        hs = rng.standard_normal((4, 100))
        want = np.stack([ss.convolve(x[i].astype(np.float64), hs[i], "valid") for i in range(4)])
        self.close(run(x, hs, "valid"), want, "valid, n < taps", 1e-4)
        xi = np.array([16384, -32768, 100], np.int16)
        self.close(run(xi, [1.0, 0.5]), ss.convolve(xi / 32768.0, [1.0, 0.5]), "int16")
        self.assertEqual(run(x, hs[0], dtype=np.float64).dtype, np.float64)

    def test_direct_method_gives_the_host_bytes(self):
        rng = np.random.default_rng(5)
        x = rng.standard_normal((2, 3, 900)).astype(np.float32)
        h = rng.standard_normal(31)
        for mode in ("full", "same", "valid"):
            y = run(x, h, mode, axis=-1, max_channels=4, method="direct")
            want = gpufilt.convolve(x, h, mode, method="direct", device="cpu")
            self.assertEqual(y.tobytes(), want.tobytes(), mode)
        # the method is part of what a kept engine must match
        run(x, h, "full", method="fft")
        self.assertEqual([k[4] for k, _, _ in dev._kept], ["direct", "fft"])

    def test_engines_kept_between_calls(self):
        x = np.arange(64.0)
        CpuEngine.made = 0
        for h in ([1.0, 2.0], [1.0, 2.0], [3.0], [1.0, 2.0], [4.0], [5.0], [1.0, 2.0]):
            self.close(run(x, h), ss.convolve(x, h), str(h))
        # Two kept, the least recently used dropped: [1, 2] made, reused;
        # [3] made; [1, 2] reused; [4] made ([3] dropped); [5] made ([1, 2]
        # dropped); [1, 2] made again: 5 engines for 7 calls.
        self.assertEqual(CpuEngine.made, 5)
        self.assertEqual(len(dev._kept), dev.ENGINES_KEPT)


if __name__ == "__main__":
    unittest.main()
