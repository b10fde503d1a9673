"""gpufilt's Engine (streaming, histograms, arguments) and the deprecated gpufilt.filter
against scipy.signal (python -m unittest discover python/tests); convolve and lfilter are
test_scipy_like.py's.

GPU cases run where gpufilt.cuda_available(); elsewhere they are skipped."""
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import warnings

import numpy as np
import scipy.signal as ss

import gpufilt


def noise(frames, channels=None, seed=1, dtype=np.float32):
    rng = np.random.default_rng(seed)
    shape = (frames,) if channels is None else (frames, channels)
    return (rng.uniform(-1, 1, shape)).astype(dtype)


def old_filter(*args, **kw):
    """gpufilt.filter, deprecated, whose argument checks are still tested here."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return gpufilt.filter(*args, **kw)


def serial_causal(x, h):
    """The direct method's arithmetic contract: acc = h0 x, then acc + hk x', in x's dtype."""
    t = x.dtype.type
    y = np.empty_like(x)
    hh = h.astype(x.dtype)
    for i in range(len(x)):
        acc = t(hh[0] * x[i])
        for k in range(1, len(h)):
            acc = t(acc + t(hh[k] * (x[i - k] if i >= k else t(0))))
        y[i] = acc
    return y


class DirectMethod(unittest.TestCase):
    def test_bit_exact_against_the_serial_contract(self):
        x, h = noise(500), noise(7, seed=2).astype(np.float64)
        y = gpufilt.lfilter(h, x, device="cpu", method="direct")
        self.assertEqual(y.dtype, np.float32)
        self.assertEqual(y.shape, (500,))
        self.assertTrue(np.array_equal(y, serial_causal(x, h)))

    def test_same_mode_matches_scipy_convolve(self):
        for dtype, tol in ((np.float32, 2e-6), (np.float64, 1e-14)):
            x, h = noise(4000, 2, dtype=dtype), noise(31, seed=3, dtype=np.float64)
            y = gpufilt.convolve(x, h, "same", axis=0, device="cpu")
            want = np.stack([ss.convolve(x[:, c].astype(np.float64), h.astype(dtype), "same")
                             for c in range(2)], axis=1)
            self.assertEqual(y.shape, (4000, 2))
            self.assertLess(np.max(np.abs(y - want)), tol)

    def test_causal_mode_matches_lfilter_and_mean_filter(self):
        x = noise(3000, dtype=np.float64)
        y = old_filter(x, 5, mode="causal", device="ref")  # a mean filter of 5 taps
        self.assertLess(np.max(np.abs(y - ss.lfilter(np.full(5, 0.2), 1, x))), 1e-15)

    def test_per_channel_taps(self):
        x, h = noise(2000, 3, dtype=np.float64), noise(9, 3, seed=4, dtype=np.float64)
        y = gpufilt.lfilter(h, x, axis=0, device="cpu")
        for c in range(3):
            self.assertLess(np.max(np.abs(y[:, c] - ss.lfilter(h[:, c], 1, x[:, c]))), 1e-14)


class FftMethod(unittest.TestCase):
    def test_full_mode_long_filter_within_the_bound(self):
        x, h = noise(50000, dtype=np.float64), noise(20000, seed=5, dtype=np.float64) / 100
        with gpufilt.Engine(taps=h, mode="full", precision="f64", device="cpu",
                            method="fft") as e:
            self.assertEqual(e.method, "fft")
            y = e.process(x)
            e.flush()
            y = np.concatenate([y, e.pull()]).reshape(-1)
            bound = e.error_bound(0, np.max(np.abs(x)))
        self.assertEqual(len(y), 50000 + 20000 - 1)
        err = np.max(np.abs(y - ss.fftconvolve(x, h, "full")))
        self.assertGreater(bound, 0)
        self.assertLess(err, bound)


class NupcMethod(unittest.TestCase):
    """method="nupc" (0.5): non-uniform partitions, the first of `partition` frames, on the
    cpu backend (and cuda, 0.6, where there is a GPU); 5,000 taps keep each case to a fraction
    of a second."""

    def test_each_mode_and_precision_within_the_bound(self):
        h = noise(5000, seed=11, dtype=np.float64) / 50
        x = noise(20000, seed=12, dtype=np.float64)
        devices = ("cpu", "cuda") if gpufilt.cuda_available() else ("cpu",)
        for device, (precision, dtype, most) in itertools.product(
                devices, (("f64", np.float64, 1e-12), ("f32", np.float32, 1e-3))):
            # The reference from what the engine filters: x and h rounded to the precision.
            xr, hr = x.astype(dtype), h.astype(dtype).astype(np.float64)
            full = ss.fftconvolve(xr.astype(np.float64), hr, "full")
            for mode, want in (("causal", full[:20000]), ("same", full[2499:22499]),
                               ("full", full)):
                for partition, b in ((0, 256), (128, 128)):
                    what = "%s %s %s partition %d" % (device, precision, mode, partition)
                    with gpufilt.Engine(taps=h, mode=mode, precision=precision, device=device,
                                        method="nupc", partition=partition) as e:
                        self.assertEqual((e.method, e.partition, e.backend), ("nupc", b, device),
                                         what)
                        y = e.process(xr)
                        e.flush()
                        y = np.concatenate([y, e.pull()]).reshape(-1)
                        bound = e.error_bound(0, np.max(np.abs(xr)))
                    self.assertEqual((len(y), y.dtype), (len(want), dtype), what)
                    self.assertGreater(bound, 0, what)
                    self.assertLess(bound, most, what)  # a bound that says something
                    self.assertLess(np.max(np.abs(y - want)), bound, what)

    def test_output_comes_in_whole_first_partitions(self):
        # Frames ready after 200, 300 and 1,100 frames in: whole partitions of 128 (nupc,
        # partition=128), of 256 (nupc's default), of 512 (fft's choice for 5,000 taps).
        h = noise(5000, seed=13, dtype=np.float64)
        for method, partition, ready in (("nupc", 128, [128, 256, 1024]),
                                         ("nupc", 0, [0, 256, 1024]),
                                         ("fft", 0, [0, 0, 1024])):
            with gpufilt.Engine(taps=h, mode="causal", precision="f64", device="cpu",
                                method=method, partition=partition, chunk_frames=1) as e:
                got, total = [], 0
                for n in (200, 100, 800):
                    e.push(np.zeros(n))
                    total += len(e.pull())
                    got.append(total)
                self.assertEqual(e.latency, 0)
            self.assertEqual(got, ready, (method, partition))

    def test_uneven_pushes_give_the_bytes_of_lfilter(self):
        x, h = noise(6000, 2), noise(5000, seed=14, dtype=np.float64) / 50
        whole = gpufilt.lfilter(h, x, axis=0, method="nupc", device="cpu")
        with gpufilt.Engine(channels=2, taps=h, mode="causal", device="cpu", method="nupc",
                            chunk_frames=256) as e:
            out, i, n = [], 0, 1
            while i < len(x):
                e.push(x[i:i + n])
                out.append(e.pull())
                i, n = i + n, n * 7 % 1009 + 1
            e.flush()
            out.append(e.pull())
        self.assertTrue(np.array_equal(np.concatenate(out), whole))

    def test_not_on_the_reference(self):
        with self.assertRaises(ValueError) as cm:
            gpufilt.Engine(taps=5, method="nupc", device="ref")
        self.assertEqual(str(cm.exception), "method 'nupc' does not run on the 'ref' backend: "
                         "device must be 'cpu', 'cuda', 'auto'")
        # "auto" runs it on a usable GPU, else on the cpu.
        with gpufilt.Engine(taps=5, method="nupc") as e:
            self.assertEqual((e.backend, e.method),
                             ("cuda" if gpufilt.cuda_available() else "cpu", "nupc"))


class Streaming(unittest.TestCase):
    def test_uneven_pushes_give_the_same_bytes(self):
        x, h = noise(20000, 2), noise(255, seed=6, dtype=np.float64)
        whole = gpufilt.convolve(x, h, "same", axis=0, device="cpu", method="direct")
        with gpufilt.Engine(channels=2, taps=h, device="cpu", method="direct") as e:
            out, i, n = [], 0, 1
            while i < len(x):
                e.push(x[i:i + n])
                out.append(e.pull())
                i, n = i + n, n * 3 % 997 + 1
            e.flush()
            out.append(e.pull())
            self.assertEqual(e.latency, 127)
        self.assertTrue(np.array_equal(np.concatenate(out), whole))

    def test_filter_is_the_whole_stream(self):
        x, h = noise(9001, 3), noise(1000, seed=8, dtype=np.float64)
        for mode, method in itertools.product(("same", "causal", "full"), ("direct", "fft")):
            with gpufilt.Engine(channels=3, taps=h, mode=mode, device="cpu", method=method,
                                chunk_frames=2048) as e:
                want = [e.process(x)]
                e.flush()
                want.append(e.pull())
                want = np.concatenate(want)
                y = e.filter(x)
                self.assertEqual(y.shape, (9001 + (999 if mode == "full" else 0), 3))
                self.assertTrue(np.array_equal(y, want), (mode, method))
                self.assertTrue(np.array_equal(e.filter(x), want), (mode, method))  # again
                with self.assertRaises(gpufilt.GpufiltError):
                    e.push(x[:1])  # the stream is over

    def test_histogram_records(self):
        x = noise(10000, 2, dtype=np.float64) * 2  # some beyond [-1, 1]
        with gpufilt.Engine(channels=2, taps=1, precision="f64", device="cpu",
                            hist={"bins": 8, "block_frames": 4000}) as e:
            e.process(x)
            e.flush()
            e.pull()
            recs = e.hist_records()
        self.assertEqual([(r.block, r.channel, r.frames) for r in recs],
                         [(0, 0, 4000), (0, 1, 4000), (1, 0, 4000), (1, 1, 4000),
                          (2, 0, 2000), (2, 1, 2000)])
        for r in recs:
            seg = x[r.first_frame:r.first_frame + r.frames, r.channel]
            self.assertEqual(r.above, int(np.sum(seg > 1)))
            self.assertEqual(r.below, int(np.sum(seg < -1)))
            self.assertEqual(int(r.bins.sum()) + r.above + r.below, r.frames)
            self.assertEqual(r.max, np.max(seg))


class Errors(unittest.TestCase):
    def test_bad_configuration_raises_with_the_detail(self):
        with self.assertRaises(gpufilt.GpufiltError) as cm:
            gpufilt.Engine(channels=0)
        self.assertEqual(cm.exception.status, 1)
        self.assertIn("channels 0 out of range 1..1024", str(cm.exception))
        with self.assertRaises(ValueError):
            gpufilt.Engine(mode="centred")
        with gpufilt.Engine(channels=2, taps=3, device="cpu") as e, self.assertRaises(ValueError):
            e.push(noise(10, 3))

    def test_push_after_flush_is_a_state_error(self):
        with gpufilt.Engine(taps=3, device="cpu") as e:
            e.flush()
            with self.assertRaises(gpufilt.GpufiltError) as cm:
                e.push(noise(10))
            self.assertEqual(cm.exception.status, 5)


class Arguments(unittest.TestCase):
    """Bad arguments: TypeError or ValueError naming the value, before the library can
    read past an array or receive a wrapped-around count."""

    def assertRaisesWith(self, exc, text, f, *args, **kw):
        with self.assertRaises(exc) as cm:
            f(*args, **kw)
        self.assertIn(text, str(cm.exception))
        return cm.exception

    def test_taps_columns_must_match_the_channels(self):
        x = noise(5000, 3, dtype=np.float64)
        self.assertRaisesWith(ValueError, "taps of shape (5, 2) give 2 filters (one per column) "
                              "for 3 channels (x has shape (5000, 3))",
                              old_filter, x, np.ones((5, 2)))
        self.assertRaisesWith(ValueError, "taps of shape (5, 2) give 2 filters (one per column) "
                              "for 3 channels:", gpufilt.Engine, channels=3, taps=np.ones((5, 2)))
        self.assertRaisesWith(ValueError, "taps of shape (5, 4) give 4 filters",
                              gpufilt.Engine, channels=3, taps=np.ones((5, 4)))
        self.assertRaisesWith(ValueError, "not of shape (5, 3, 1)",
                              gpufilt.Engine, channels=3, taps=np.ones((5, 3, 1)))
        self.assertRaisesWith(ValueError, "taps of shape (0,) hold no coefficients",
                              old_filter, x, np.ones(0))
        # One column is one filter for every channel, exactly as the 1-D array.
        h = np.array([0.25, 0.5, 0.25])
        self.assertTrue(np.array_equal(old_filter(x, h.reshape(3, 1), device="cpu"),
                                       old_filter(x, h, device="cpu")))

    def test_engine_taps_of_a_channel_that_does_not_exist(self):
        h = np.arange(1.0, 16.0).reshape(5, 3) / 8  # taps x channels, exact in f32
        with gpufilt.Engine(channels=3, taps=h, device="cpu") as e:
            for c in range(3):
                self.assertTrue(np.array_equal(e.taps(c), h[:, c]))
            self.assertTrue(np.array_equal(e.taps(np.int64(2)), h[:, 2]))
            self.assertRaisesWith(IndexError, "channel 5 out of range 0..2 (3 channels)", e.taps, 5)
            self.assertRaisesWith(IndexError, "channel -1 out of range 0..2", e.taps, -1)
            self.assertRaisesWith(TypeError, "channel must be an integer, not 1.5", e.taps, 1.5)
            self.assertRaisesWith(IndexError, "channel 3 out of range", e.error_bound, 3)
            self.assertRaisesWith(ValueError, "max_abs_x must be a number >= 0, not -1",
                                  e.error_bound, 0, -1)
            self.assertEqual(e.error_bound(2), 0.0)  # direct

    def test_taps_must_be_an_integer_or_an_array(self):
        x = noise(100)
        self.assertRaisesWith(TypeError, "taps must be an integer (a mean filter's length) or an "
                              "array of coefficients, not 2.5", old_filter, x, 2.5)
        self.assertRaisesWith(TypeError, "not True", old_filter, x, True)
        self.assertRaisesWith(TypeError, "not '5'", old_filter, x, "5")
        self.assertRaisesWith(ValueError, "taps must be a positive integer (a mean filter's "
                              "length) or an array of coefficients, not -1", old_filter, x, -1)
        self.assertRaisesWith(ValueError, "not 0", old_filter, x, 0)
        self.assertRaisesWith(TypeError, "taps must be an array of real numbers, not of dtype "
                              "complex128", old_filter, x, np.ones(3, complex))
        self.assertTrue(np.array_equal(old_filter(x, np.int64(3), device="cpu"),
                                       old_filter(x, 3, device="cpu")))

    def test_counts_are_checked_not_wrapped(self):
        x = noise(100)
        self.assertRaisesWith(ValueError, "chunk_frames must be >= 0, not -1",
                              old_filter, x, 3, chunk_frames=-1)
        self.assertRaisesWith(ValueError, "partition must be >= 0, not -16",
                              gpufilt.Engine, partition=-16)
        self.assertRaisesWith(TypeError, "chunk_frames must be an integer, not 64.5",
                              gpufilt.Engine, chunk_frames=64.5)
        self.assertRaisesWith(TypeError, "channels must be an integer, not 2.5",
                              gpufilt.Engine, channels=2.5)
        self.assertRaisesWith(ValueError, "channels 4294967297 is too large",
                              gpufilt.Engine, channels=2**32 + 1)
        self.assertRaisesWith(ValueError, "hist['bins'] must be >= 0, not -1", gpufilt.Engine,
                              hist={"bins": -1, "block_frames": 10})
        self.assertRaisesWith(ValueError, "hist has unknown keys 'block'", gpufilt.Engine,
                              hist={"bins": 4, "block": 10})
        # The library's own range checks: GpufiltError, and a ValueError as well.
        e = self.assertRaisesWith(ValueError, "chunk of 1000000000 frames too large",
                                  gpufilt.Engine, chunk_frames=10**9)
        self.assertIsInstance(e, gpufilt.GpufiltError)
        self.assertEqual(e.status, 1)

    def test_x_must_be_one_or_two_dimensional_and_real(self):
        h = np.ones(3) / 3
        self.assertRaisesWith(ValueError, "x must be 1-D (frames) or 2-D (frames x channels), "
                              "not 0-D (shape ())", old_filter, np.array(1.0), h)
        self.assertRaisesWith(ValueError, "not 3-D (shape (4, 2, 2))",
                              old_filter, np.ones((4, 2, 2)), h)
        self.assertRaisesWith(ValueError, "x of shape (10, 0) has no channels",
                              old_filter, np.ones((10, 0)), h)
        self.assertRaisesWith(TypeError, "x must be an array of real numbers, not of dtype "
                              "complex64", old_filter, np.ones(8, np.complex64), h)
        with gpufilt.Engine(taps=3, device="cpu") as e:
            self.assertRaisesWith(ValueError, "expected frames x 1 channels (or 1-D), got shape ()",
                                  e.push, np.float32(1))
            self.assertRaisesWith(TypeError, "not of dtype complex128", e.push, np.ones(4, complex))

    def test_precision_names_and_dtypes(self):
        x = noise(1000, dtype=np.float64)
        h = noise(9, seed=9, dtype=np.float64)
        want32 = old_filter(x.astype(np.float32), h, device="cpu")
        want64 = old_filter(x, h, device="cpu")
        self.assertEqual((want32.dtype, want64.dtype), (np.float32, np.float64))
        for p in ("f32", np.float32, np.dtype("float32"), "float32"):
            y = old_filter(x, h, precision=p, device="cpu")
            self.assertEqual(y.dtype, np.float32, p)
            self.assertTrue(np.array_equal(y, want32), p)
        for p in ("f64", np.float64, np.dtype("float64")):
            y = old_filter(x.astype(np.float32), h, precision=p, device="cpu")
            self.assertEqual(y.dtype, np.float64, p)
            self.assertTrue(np.array_equal(y, old_filter(x.astype(np.float32).astype(
                np.float64), h, device="cpu")), p)
        self.assertRaisesWith(ValueError, "precision must be 'f32', 'f64' or a numpy float32 / "
                              "float64 dtype, not 'f16'", old_filter, x, h, precision="f16")
        self.assertRaisesWith(ValueError, "not <class 'numpy.int32'>",
                              gpufilt.Engine, precision=np.int32)
        with gpufilt.Engine(precision="f64", device="cpu") as e:
            self.assertEqual(e.dtype, np.float64)
            self.assertEqual(e.process(x[:10]).shape, (10, 1))

    def test_a_library_of_another_minor_version_is_refused(self):
        # A stand-in libgpufilt that says 0.3.0: the module must refuse it at
        # import, naming both versions, instead of using 0.5's gf_config.
        cc = shutil.which("cc")
        if not cc:
            self.skipTest("no C compiler for the stand-in library")
        with tempfile.TemporaryDirectory() as d:
            src, lib = os.path.join(d, "old.c"), os.path.join(d, "libold.so")
            with open(src, "w") as f:
                f.write('const char *gf_version(void) { return "0.3.0 (ref, cpu)"; }\n')
            subprocess.run([cc, "-shared", "-fPIC", "-o", lib, src], check=True)
            env = dict(os.environ, GPUFILT_LIBRARY=lib)
            r = subprocess.run([sys.executable, "-c", "import gpufilt"], env=env,
                               capture_output=True, text=True)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("ImportError: gpufilt: this module is for libgpufilt 0.6.x, but", r.stderr)
        self.assertIn("is 0.3.0 (ref, cpu)", r.stderr)

    def test_version_is_the_library_string(self):
        v = gpufilt.version()
        self.assertRegex(v, r"^\d+\.\d+\.\d+ \(ref, cpu(, cuda)?\)$")
        self.assertIn('"MAJOR.MINOR.PATCH (backends)"', gpufilt.version.__doc__)


@unittest.skipUnless(gpufilt.cuda_available(), "no usable CUDA device")
class Cuda(unittest.TestCase):
    def test_cuda_equals_cpu_bit_for_bit_direct(self):
        x, h = noise(100000, 2), noise(63, seed=7, dtype=np.float64)
        a = gpufilt.convolve(x, h, "same", axis=0, device="cuda", method="direct")
        b = gpufilt.convolve(x, h, "same", axis=0, device="cpu", method="direct")
        self.assertTrue(np.array_equal(a, b))

    def test_batches_on_the_gpu(self):
        # 6 signals, each with its own filter, in one engine of 6 channels.
        x = np.stack([noise(60000, seed=s) for s in range(6)])
        h = np.stack([noise(255, seed=10 + s, dtype=np.float64) for s in range(6)])
        a = gpufilt.convolve(x, h, "full", device="cuda", method="direct")
        self.assertEqual(a.shape, (6, 60254))
        self.assertTrue(np.array_equal(a, gpufilt.convolve(x, h, "full", device="cpu",
                                                           method="direct")))
        x, h = x.astype(np.float64), np.stack([noise(8192, seed=20 + s, dtype=np.float64) / 100
                                               for s in range(6)])
        y = gpufilt.lfilter(h, x, device="cuda", method="fft")
        want = ss.fftconvolve(x, h, "full", axes=-1)[:, :60000]
        self.assertLess(np.max(np.abs(y - want)), 1e-10)

    def test_cuda_fft_within_the_bound(self):
        x, h = noise(200000, dtype=np.float64), noise(65536, seed=8, dtype=np.float64) / 300
        with gpufilt.Engine(taps=h, precision="f64", device="cuda", method="fft") as e:
            y = e.process(x)
            e.flush()
            y = np.concatenate([y, e.pull()]).reshape(-1)
            bound = e.error_bound(0, np.max(np.abs(x)))
        self.assertLess(np.max(np.abs(y - ss.fftconvolve(x, h, "same"))), bound)

    def test_several_gpus_give_the_bytes_of_one(self):
        # [0, 0]: two instances on one GPU, so this runs wherever one does.
        x, h = noise(300000, 2), noise(3000, seed=9, dtype=np.float64)
        def run(**kw):
            with gpufilt.Engine(channels=2, taps=h, device="cuda", chunk_frames=32768,
                                **kw) as e:
                y = e.process(x)
                e.flush()
                return np.concatenate([y, e.pull()])
        for method in ("direct", "fft"):
            a, b = run(method=method), run(method=method, cuda_devices=[0, 0])
            self.assertEqual(a.shape, (300000, 2))
            self.assertTrue(np.array_equal(a, b), method)
        with self.assertRaises(TypeError):
            gpufilt.Engine(device="cuda", cuda_devices=0)


if __name__ == "__main__":
    unittest.main()
