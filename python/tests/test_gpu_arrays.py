"""convolve and lfilter on arrays in GPU memory (cupy arrays, torch tensors):
filtered on their own GPU through gf_engine_filter_device, the result an
array of the input's kind on its GPU, equal to scipy.signal's within the
FFT method's bound (Engine.error_bound) for every mode, several axes,
batches, both float dtypes and integers. Skipped without a usable GPU, and
each library's cases without it. (That no sample goes through host memory
is checked on the GPU machine by tests/gpu/device-run.sh --only gpuarrays,
from a CUDA activity trace.)"""
import importlib
import importlib.util
import unittest

import numpy as np
import scipy.signal as ss

import gpufilt

GPU = gpufilt.cuda_available()


def _module(name):
    if not GPU or importlib.util.find_spec(name) is None:
        return None
    m = importlib.import_module(name)
    if name == "torch" and not m.cuda.is_available():
        return None
    return m


cupy = _module("cupy")
torch = _module("torch")


def bound(h, x, dtype, mode):
    """The library's bound for this filter and input (per output sample)."""
    h = np.asarray(h, np.float64).reshape(-1)
    lib_mode = {"valid": "full"}.get(mode, mode)
    with gpufilt.Engine(taps=h, mode=lib_mode, precision=dtype, device="cuda",
                        method="fft") as e:
        return e.error_bound(0, float(np.max(np.abs(x))) if x.size else 1.0)


class Case:
    def check(self, y, want, b, what):
        self.assertEqual(y.shape, want.shape, what)
        err = float(np.max(np.abs(y.astype(np.float64) - want))) if want.size else 0.0
        self.assertLessEqual(err, b, "%s: off by %.3g, bound %.3g" % (what, err, b))


@unittest.skipIf(cupy is None, "no GPU, or no cupy")
class Cupy(unittest.TestCase, Case):
    def run_one(self, x, h, mode, axis=-1, f=gpufilt.convolve, **kw):
        xd = cupy.asarray(x)
        y = f(h, xd, axis=axis, **kw) if f is gpufilt.lfilter else f(xd, h, mode, axis, **kw)
        self.assertIsInstance(y, cupy.ndarray)
        self.assertEqual(y.device.id, xd.device.id)
        return cupy.asnumpy(y)

    def test_modes_one_signal(self):
        rng = np.random.default_rng(1)
        x = rng.standard_normal(65539).astype(np.float32)
        h = rng.standard_normal(1000) / 30
        for mode in ("full", "same", "valid"):
            y = self.run_one(x, h, mode)
            want = ss.convolve(x.astype(np.float64), h, mode)
            self.assertEqual(y.dtype, np.float32)
            self.check(y, want, bound(h, x, np.float32, mode), "f32 " + mode)

    def test_axes_batches_f64(self):
        rng = np.random.default_rng(2)
        x = rng.standard_normal((3, 5000))
        h = rng.standard_normal(300) / 17
        y = self.run_one(x, h, "same", axis=-1)
        self.check(y, ss.convolve(x, h[None, :], "same"), bound(h, x, np.float64, "same"),
                   "rows")
        xt = np.ascontiguousarray(x.T)
        y = self.run_one(xt, h, "full", axis=0)
        self.check(y, ss.convolve(xt, h[:, None], "full"), bound(h, x, np.float64, "full"),
                   "columns")

    def test_a_filter_per_signal(self):
        rng = np.random.default_rng(3)
        x = rng.standard_normal((4, 3000)).astype(np.float32)
        hs = rng.standard_normal((4, 200)) / 14
        y = self.run_one(x, hs, "full")
        for i in range(4):
            self.check(y[i], ss.convolve(x[i].astype(np.float64), hs[i]),
                       bound(hs[i], x[i], np.float32, "full"), "signal %d" % i)

    def test_int16_and_lfilter(self):
        rng = np.random.default_rng(4)
        x = rng.integers(-32768, 32767, 20000, dtype=np.int16)
        h = rng.standard_normal(64) / 8
        y = self.run_one(x, h, "same")
        xs = x / 32768.0
        self.assertEqual(y.dtype, np.float64)
        self.check(y, ss.convolve(xs, h, "same"), bound(h, xs, np.float64, "same"), "int16")
        y = self.run_one(x.astype(np.float32), h, None, f=gpufilt.lfilter)
        self.check(y, ss.lfilter(h, 1.0, x.astype(np.float64)),
                   bound(h, x.astype(np.float32), np.float32, "causal"), "lfilter")

    def test_direct_method_gives_the_host_bytes(self):
        rng = np.random.default_rng(6)
        x = rng.standard_normal((3, 300001)).astype(np.float32)
        h = rng.standard_normal(255) / 16
        for mode in ("full", "same"):
            y = self.run_one(x, h, mode, method="direct")
            want = gpufilt.convolve(x, h, mode, method="direct", device="cpu")
            self.assertEqual(y.tobytes(), want.tobytes(), mode)
        xt = np.ascontiguousarray(x[:, :5000].T).astype(np.float64)
        y = self.run_one(xt, h, "full", axis=0, method="direct")
        want = gpufilt.convolve(xt, h, "full", axis=0, method="direct", device="cpu")
        self.assertEqual(y.tobytes(), want.tobytes(), "f64, axis 0")

    def test_engines_kept_and_freed(self):
        import gpufilt._device as dev
        gpufilt.clear_gpu_cache()
        x = cupy.asarray(np.arange(1000.0))
        for h in ([1.0, 2.0], [1.0, 2.0], [3.0], [4.0], [1.0, 2.0]):
            y = gpufilt.convolve(x, h, "full")
            self.check(cupy.asnumpy(y), ss.convolve(np.arange(1000.0), h), 1e-9, str(h))
        self.assertEqual(len(dev._kept), dev.ENGINES_KEPT)
        gpufilt.clear_gpu_cache()
        self.assertEqual(len(dev._kept), 0)

    def test_filter_in_gpu_memory_too(self):
        x = np.arange(10.0)
        y = cupy.asnumpy(gpufilt.convolve(cupy.asarray(x), cupy.asarray([1.0, -1.0]), "full"))
        self.check(y, ss.convolve(x, [1.0, -1.0]), 1e-12, "h on the GPU")


@unittest.skipIf(torch is None, "no GPU, or no torch with CUDA")
class Torch(unittest.TestCase, Case):
    def test_tensors(self):
        rng = np.random.default_rng(5)
        for dtype, tdt in ((np.float32, torch.float32), (np.float64, torch.float64)):
            x = rng.standard_normal((2, 40000)).astype(dtype)
            h = rng.standard_normal(2048) / 45
            xt = torch.tensor(x, device="cuda")
            y = gpufilt.convolve(xt, h, "same")
            self.assertIsInstance(y, torch.Tensor)
            self.assertEqual((y.device, y.dtype), (xt.device, tdt))
            self.check(y.cpu().numpy(), ss.convolve(x.astype(np.float64), h[None, :], "same"),
                       bound(h, x, dtype, "same"), str(dtype))
            y = gpufilt.lfilter(torch.tensor(h, device="cuda"), xt.T.contiguous(), axis=0)
            self.check(y.cpu().numpy(), ss.lfilter(h, 1.0, x.astype(np.float64).T, axis=0),
                       bound(h, x, dtype, "causal"), "lfilter " + str(dtype))


if __name__ == "__main__":
    unittest.main()
