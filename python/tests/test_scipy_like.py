"""gpufilt.convolve and gpufilt.lfilter against scipy.signal (convolve, oaconvolve,
fftconvolve, lfilter): every mode, axis and dtype, batches, errors; and the
docstrings' examples, run as doctests."""
import builtins
import doctest
import importlib.util
import os
import typing
import unittest
import warnings

import numpy as np
import scipy.signal as ss

import gpufilt
import gpufilt._engine
import gpufilt._functions


def load_tests(loader, tests, pattern):
    for m in (gpufilt._functions, gpufilt._engine):
        tests.addTests(doctest.DocTestSuite(m))
    return tests


def rand(shape, seed, dtype=np.float64):
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(dtype)


def along(h, axis, ndim):
    """A 1-D filter as an N-D kernel along axis (what scipy's N-D functions take)."""
    shape = [1] * ndim
    shape[axis] = len(h)
    return h.reshape(shape)


AxisError = getattr(np, "exceptions", np).AxisError

# |error| allowed against scipy in float64: each is a float64 sum of 8..40 terms.
TOL = {np.float32: 3e-6, np.float64: 1e-14}


class Convolve(unittest.TestCase):
    def check(self, got, want, dtype, what):
        self.assertEqual(got.shape, want.shape, what)
        self.assertEqual(got.dtype, dtype, what)
        err = np.max(np.abs(got - want)) if got.size else 0.0
        self.assertLess(err, TOL[dtype], what)

    def test_every_mode_axis_and_dtype_against_scipy(self):
        # Along axis 1 the signal (37) is longer than the filter (8), along
        # axes 0 and 2 (5, 2) shorter: "valid" then swaps them, as scipy does.
        h = rand(8, 2)
        for dtype in (np.float32, np.float64):
            x = rand((5, 37, 2), 1, dtype)
            x64 = x.astype(np.float64)
            for mode in ("full", "same", "valid"):
                for axis in (0, 1, 2, -1, -2):
                    what = "%s %s axis %d" % (dtype.__name__, mode, axis)
                    k = along(h.astype(dtype).astype(np.float64), axis, 3)
                    got = gpufilt.convolve(x, h, mode, axis=axis, device="cpu")
                    want = ss.oaconvolve(x64, k, mode, axes=axis)
                    self.check(got, want, dtype, what)
                    if mode != "valid" or x.shape[axis] >= len(h):  # convolve does not swap
                        self.check(got, ss.convolve(x64, k, mode), dtype, what)

    def test_lengths_of_each_mode(self):
        x = np.zeros(10)
        for t, full, same, valid in ((3, 12, 10, 8), (10, 19, 10, 1), (14, 23, 10, 5)):
            h = np.ones(t)
            self.assertEqual([len(gpufilt.convolve(x, h, m)) for m in ("full", "same", "valid")],
                             [full, same, valid])

    def test_methods_and_the_reference(self):
        x, h = rand((2, 3000), 3), rand(700, 4) / 20
        want = ss.fftconvolve(x, h[None, :], "same", axes=-1)
        for method in ("direct", "fft"):
            self.check(gpufilt.convolve(x, h, "same", method=method, device="cpu"), want,
                       np.float64, method)
        # direct on the cpu backend: the serial reference's bytes
        self.assertTrue(np.array_equal(
            gpufilt.convolve(x, h, method="direct", device="cpu"),
            gpufilt.convolve(x, h, method="direct", device="ref")))

    def test_nupc_against_scipy_within_the_bound(self):
        # 5,000 taps, two signals in rows; the bound is the engine's for these taps (mode
        # does not change it), the first partition the library's choice.
        x, h = rand((2, 12000), 40), rand(5000, 41) / 50
        for dtype in (np.float32, np.float64):
            xr, hr = x.astype(dtype), h.astype(dtype).astype(np.float64)
            with gpufilt.Engine(taps=h, precision=dtype, device="cpu", method="nupc") as e:
                bound = e.error_bound(0, np.max(np.abs(xr)))
            self.assertLess(bound, 1e-3 if dtype == np.float32 else 1e-12)
            for mode in ("full", "same", "valid"):
                what = "%s %s" % (dtype.__name__, mode)
                got = gpufilt.convolve(xr, h, mode, method="nupc", device="cpu")
                want = ss.oaconvolve(xr.astype(np.float64), hr[None, :], mode, axes=-1)
                self.assertEqual((got.shape, got.dtype), (want.shape, dtype), what)
                self.assertLess(np.max(np.abs(got - want)), bound, what)
            # "auto" runs nupc on a usable GPU, within the bound too; else on the cpu, the
            # same bytes
            auto = gpufilt.convolve(xr, h, method="nupc")
            cpu = gpufilt.convolve(xr, h, method="nupc", device="cpu")
            if gpufilt.cuda_available():
                want = ss.oaconvolve(xr.astype(np.float64), hr[None, :], "full", axes=-1)
                self.assertLess(np.max(np.abs(auto - want)), bound, dtype.__name__)
            else:
                self.assertTrue(np.array_equal(auto, cpu))

    def test_integers_are_scaled_as_the_command_line_reads_them(self):
        h = rand(5, 5)
        cases = ((np.int16, np.arange(-32768, 32768, 4099), 32768.0, 0.0),
                 (np.int8, np.arange(-128, 128, 17), 128.0, 0.0),
                 (np.uint8, np.arange(0, 256, 17), 128.0, -128.0),
                 (np.int32, np.array([-2**31, -5, 0, 7, 2**31 - 1]), 2.0**31, 0.0),
                 (np.uint16, np.array([0, 1, 32768, 65535]), 32768.0, -32768.0))
        for dtype, v, scale, offset in cases:
            x = v.astype(dtype)
            want = np.convolve((v.astype(np.float64) + offset) / scale, h)
            got = gpufilt.convolve(x, h, device="cpu")
            self.assertEqual(got.dtype, np.float64, dtype)
            self.assertLess(np.max(np.abs(got - want)), 1e-15, dtype)
        self.assertEqual(list(gpufilt.convolve(np.array([-32768, 16384], np.int16), [1.0])),
                         [-1.0, 0.5])
        self.assertEqual(list(gpufilt.convolve(np.array([0, 192, 255], np.uint8), [1.0])),
                         [-1.0, 0.5, 127 / 128])

    def test_dtype_of_the_result(self):
        h = [0.25, 0.5]
        self.assertEqual(gpufilt.convolve(np.ones(4, np.float16), h).dtype, np.float32)
        self.assertEqual(gpufilt.convolve([1, 2, 3], h).dtype, np.float64)  # int64 list
        self.assertEqual(gpufilt.convolve(np.ones(4, np.int16), h, dtype=np.float32).dtype,
                         np.float32)
        x = rand(100, 6)
        self.assertTrue(np.array_equal(gpufilt.convolve(x, h, dtype="float32"),
                                       gpufilt.convolve(x.astype(np.float32), h)))

    def test_the_result_is_laid_out_for_its_axis(self):
        x = rand((4, 50), 7)
        self.assertTrue(gpufilt.convolve(x, [1.0, 2.0]).flags.c_contiguous)
        self.assertTrue(gpufilt.convolve(x.T, [1.0, 2.0], axis=0).flags.c_contiguous)


class Lfilter(unittest.TestCase):
    def test_every_axis_and_dtype_against_scipy(self):
        h = rand(11, 8)
        for dtype in (np.float32, np.float64):
            x = rand((3, 40, 4), 9, dtype)
            for axis in (0, 1, 2, -1):
                got = gpufilt.lfilter(h, x, axis=axis, device="cpu")
                want = ss.lfilter(h.astype(dtype).astype(np.float64), 1, x.astype(np.float64),
                                  axis=axis)
                self.assertEqual((got.shape, got.dtype), (x.shape, dtype))
                self.assertLess(np.max(np.abs(got - want)), TOL[dtype], (dtype, axis))

    def test_frames_by_channels_with_a_filter_per_channel(self):
        x, h = rand((500, 3), 10), rand((9, 3), 11)
        y = gpufilt.lfilter(h, x, axis=0, device="cpu")
        for c in range(3):
            self.assertLess(np.max(np.abs(y[:, c] - ss.lfilter(h[:, c], 1, x[:, c]))), 1e-14)

    def test_the_direct_method_is_the_serial_sum(self):
        # acc = h0 x[i], then acc + hk x[i-k], each rounded in float32
        x, h = rand(200, 12, np.float32), rand(5, 13)
        hh = h.astype(np.float32)
        want = np.empty_like(x)
        for i in range(len(x)):
            acc = np.float32(hh[0] * x[i])
            for k in range(1, 5):
                acc = np.float32(acc + np.float32(hh[k] * (x[i - k] if i >= k else 0)))
            want[i] = acc
        self.assertTrue(np.array_equal(gpufilt.lfilter(h, x, method="direct", device="cpu"),
                                       want))

    def test_nupc_against_scipy_within_the_bound(self):
        # Frames x channels (axis 0), 5,000 taps, one filter per channel.
        x, h = rand((6000, 2), 42), rand((5000, 2), 43) / 50
        got = gpufilt.lfilter(h, x, axis=0, method="nupc", device="cpu")
        self.assertEqual((got.shape, got.dtype), ((6000, 2), np.float64))
        with gpufilt.Engine(channels=2, taps=h, precision="f64", device="cpu",
                            method="nupc") as e:
            for c in range(2):
                bound = e.error_bound(c, np.max(np.abs(x[:, c])))
                self.assertLess(bound, 1e-12)
                err = np.max(np.abs(got[:, c] - ss.lfilter(h[:, c], 1, x[:, c])))
                self.assertLess(err, bound, c)


class Batches(unittest.TestCase):
    def test_many_signals_one_filter(self):
        x, h = rand((6, 40), 20), rand(9, 21)
        y = gpufilt.convolve(x, h, device="cpu")
        self.assertEqual(y.shape, (6, 48))
        for i in range(6):
            self.assertLess(np.max(np.abs(y[i] - np.convolve(x[i], h))), 1e-14)

    def test_one_signal_many_filters(self):
        x, h = rand((1, 40), 22), rand((4, 9), 23)
        y = gpufilt.convolve(x, h, "same", device="cpu")
        self.assertEqual(y.shape, (4, 40))
        for j in range(4):
            self.assertLess(np.max(np.abs(y[j] - ss.convolve(x[0], h[j], "same"))), 1e-14)

    def test_each_signal_with_its_own_filter(self):
        x, h = rand((5, 40), 24), rand((5, 9), 25)
        y = gpufilt.lfilter(h, x, device="cpu")
        for i in range(5):
            self.assertLess(np.max(np.abs(y[i] - ss.lfilter(h[i], 1, x[i]))), 1e-14)
        self.assertLess(np.max(np.abs(gpufilt.convolve(x, h, "valid", device="cpu") -
                                      ss.fftconvolve(x, h, "valid", axes=-1))), 1e-14)

    def test_every_signal_with_every_filter(self):
        x, h = rand((3, 1, 40), 26), rand((1, 4, 9), 27)
        y = gpufilt.convolve(x, h, device="cpu")
        self.assertEqual(y.shape, (3, 4, 48))
        self.assertLess(np.max(np.abs(y - ss.oaconvolve(x, h, axes=-1))), 1e-14)
        self.assertLess(np.max(np.abs(y[2, 1] - np.convolve(x[2, 0], h[0, 1]))), 1e-14)

    def test_one_engine_per_1024_signals(self):
        made = []

        class Counting(gpufilt.Engine):
            def __init__(self, **kw):
                made.append(kw["channels"])
                super().__init__(**kw)

        x, h = rand((1030, 16), 28), rand((1030, 3), 29)
        real = gpufilt._functions.Engine
        gpufilt._functions.Engine = Counting
        try:
            y = gpufilt.convolve(x, h, device="cpu")
            one = gpufilt.convolve(x[:6], h[0], device="cpu")
        finally:
            gpufilt._functions.Engine = real
        self.assertEqual(made, [1024, 6, 6])
        for i in (0, 1023, 1024, 1029):
            self.assertLess(np.max(np.abs(y[i] - np.convolve(x[i], h[i]))), 1e-14, i)
        self.assertLess(np.max(np.abs(one[5] - np.convolve(x[5], h[0]))), 1e-14)

    def test_an_empty_batch(self):
        y = gpufilt.convolve(np.zeros((0, 40)), np.ones(9))
        self.assertEqual((y.shape, y.dtype), ((0, 48), np.float64))
        self.assertEqual(gpufilt.lfilter(np.ones((3, 1, 1)), np.zeros((3, 0, 2)), axis=0).shape,
                         (3, 0, 2))


class FakeGpuArray:
    __cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (0, False),
                                "version": 3}


class FakeDlpack:
    def __dlpack_device__(self):
        return (2, 0)


class Errors(unittest.TestCase):
    def assertRaisesWith(self, exc, text, f, *args, **kw):
        with self.assertRaises(exc) as cm:
            f(*args, **kw)
        self.assertEqual(str(cm.exception), text)

    def test_messages(self):
        x, h = np.ones((3, 40)), np.ones(5)
        E = self.assertRaisesWith
        E(TypeError, "x must be real, not complex (complex128): filter x.real and x.imag apart",
          gpufilt.convolve, x + 1j, h)
        E(TypeError, "x must be real, not complex (complex64): filter x.real and x.imag apart",
          gpufilt.lfilter, h, np.ones(4, np.complex64))
        E(TypeError, "h must be an array of real numbers, not of dtype complex128",
          gpufilt.convolve, x, h + 1j)
        E(TypeError, "x must be an array of real numbers, not of dtype bool",
          gpufilt.convolve, np.ones(4, bool), h)
        E(TypeError, "x of dtype float128: gpufilt computes in float32 or float64; convert x "
          "first", gpufilt.convolve, np.ones(4, np.longdouble), h)
        E(ValueError, "mode must be one of full, same, valid, not 'causal'",
          gpufilt.convolve, x, h, "causal")
        E(ValueError, "method must be one of auto, direct, fft, nupc, not 'slow'",
          gpufilt.convolve, x, h, method="slow")
        E(ValueError, "method 'nupc' does not run on the 'ref' backend: device must be 'cpu', "
          "'cuda', 'auto'", gpufilt.lfilter, h, x, method="nupc", device="ref")
        E(ValueError, "device must be one of auto, cpu, cuda, ref, not 'gpu'",
          gpufilt.lfilter, h, x, device="gpu")
        E(ValueError, "dtype must be float32 or float64 (or None: x's), not 'int16'",
          gpufilt.convolve, x, h, dtype="int16")
        E(AxisError, "axis 2 is out of bounds for x of 2 dimensions",
          gpufilt.convolve, x, h, axis=2)
        E(TypeError, "axis must be an integer, not 1.0", gpufilt.convolve, x, h, axis=1.0)
        E(TypeError, "h must be an array of coefficients, 1-D or with x's 2 dimensions, not a "
          "scalar (5)", gpufilt.convolve, x, 5)
        E(ValueError, "h of shape (1, 1, 5): give one filter (1-D) or filters with x's 2 "
          "dimensions (taps along axis 1, the others broadcast against x of shape (3, 40))",
          gpufilt.convolve, x, np.ones((1, 1, 5)))
        E(ValueError, "h of shape (2, 5): give one filter (1-D) or filters with x's 1 dimension "
          "(taps along axis 0, the others broadcast against x of shape (40,))",
          gpufilt.convolve, np.ones(40), np.ones((2, 5)))
        E(ValueError, "x of shape (3, 40) and h of shape (2, 5) do not broadcast: along every "
          "axis but 1 their lengths must be equal or 1", gpufilt.convolve, x, np.ones((2, 5)))
        E(ValueError, "x of shape (3, 0) has no samples along axis 1",
          gpufilt.convolve, np.ones((3, 0)), h)
        E(ValueError, "h of shape (0,) holds no coefficients along axis 0",
          gpufilt.convolve, x, np.ones(0))
        E(ValueError, "x must have at least one dimension, not 0 (a scalar)",
          gpufilt.convolve, 1.0, h)

    def test_arrays_on_a_gpu_what_is_refused(self):
        # Checked before any array library is asked (these run without one).
        self.assertRaisesWith(ValueError, "gpufilt: x is in GPU memory: device must be 'auto' or "
                              "'cuda', not 'cpu' (copy x to the host to filter it there)",
                              gpufilt.convolve, FakeGpuArray(), np.ones(3), device="cpu")
        self.assertRaisesWith(ValueError, "gpufilt: x is in GPU memory, which the 'nupc' "
                              "method cannot filter (it filters host memory): method 'auto', "
                              "'direct' or 'fft'", gpufilt.lfilter, np.ones(3), FakeGpuArray(),
                              method="nupc")

    @unittest.skipIf(importlib.util.find_spec("cupy") is not None,
                     "cupy is installed: it reads these arrays (test_gpu_arrays.py)")
    def test_arrays_on_a_gpu_need_cupy_or_torch(self):
        self.assertRaisesWith(TypeError, "gpufilt: x is an array on a GPU (CUDA array "
                              "interface), which gpufilt reads through cupy or torch: install "
                              "cupy, or copy it to the host first",
                              gpufilt.convolve, FakeGpuArray(), np.ones(3))
        self.assertRaisesWith(TypeError, "gpufilt: h is an array on a GPU (DLPack device 2), "
                              "which gpufilt reads through cupy or torch: install cupy, or copy "
                              "it to the host first",
                              gpufilt.lfilter, FakeDlpack(), np.ones(3))


class Module(unittest.TestCase):
    def test_star_import_shadows_no_builtin(self):
        self.assertEqual([n for n in gpufilt.__all__ if hasattr(builtins, n)], [])
        self.assertEqual(sorted(gpufilt.__all__), ["Engine", "GpufiltError", "HistRecord",
                                                   "clear_gpu_cache", "convolve",
                                                   "cuda_available", "lfilter", "version"])
        ns = {}
        exec("from gpufilt import *", ns)
        self.assertIs(ns.get("filter", builtins.filter), builtins.filter)

    def test_filter_is_a_deprecated_alias(self):
        x, h = rand((300, 2), 30), rand((7, 2), 31)
        with self.assertWarns(DeprecationWarning) as cm:
            y = gpufilt.filter(x, h, mode="causal", device="cpu")
        self.assertEqual(str(cm.warning), "gpufilt.filter is deprecated: use "
                         "gpufilt.convolve(x, h, mode, axis=0) or gpufilt.lfilter(h, x, axis=0)")
        self.assertTrue(np.array_equal(y, gpufilt.lfilter(h, x, axis=0, device="cpu")))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            y = gpufilt.filter(x, h, mode="same", device="cpu")
        self.assertTrue(np.array_equal(y, gpufilt.convolve(x, h, "same", axis=0, device="cpu")))

    def test_typed(self):
        pkg = os.path.dirname(gpufilt.__file__)
        self.assertTrue(os.path.isfile(os.path.join(pkg, "py.typed")))
        hints = typing.get_type_hints(gpufilt.convolve)
        self.assertEqual(sorted(hints), ["axis", "device", "dtype", "h", "method", "mode",
                                         "return", "x"])
        self.assertEqual(typing.get_args(hints["mode"]), ("full", "same", "valid"))
        self.assertEqual(typing.get_args(hints["method"]), ("auto", "direct", "fft", "nupc"))
        self.assertIn("return", typing.get_type_hints(gpufilt.Engine.pull))

    def test_every_public_function_has_examples_that_run(self):
        finder = doctest.DocTestFinder()
        examples = {t.name.split(".")[-1]: len(t.examples)
                    for m in (gpufilt._functions, gpufilt._engine) for t in finder.find(m)
                    if t.examples}
        self.assertGreaterEqual(examples.get("convolve", 0), 8)
        self.assertGreaterEqual(examples.get("lfilter", 0), 4)
        self.assertGreaterEqual(examples.get("Engine", 0), 2)


if __name__ == "__main__":
    unittest.main()
