"""gpufilt's Python module against scipy.signal (python -m unittest discover python/tests).

GPU cases run where gpufilt.cuda_available(); elsewhere they are skipped."""
import unittest

import numpy as np
import scipy.signal as ss

import gpufilt


def noise(frames, channels=None, seed=1, dtype=np.float32):
    rng = np.random.default_rng(seed)
    shape = (frames,) if channels is None else (frames, channels)
    return (rng.uniform(-1, 1, shape)).astype(dtype)


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
        y = gpufilt.filter(x, h, mode="causal", device="cpu", method="direct")
        self.assertEqual(y.dtype, np.float32)
        self.assertEqual(y.shape, (500,))
        self.assertTrue(np.array_equal(y, serial_causal(x, h)))

    def test_same_mode_matches_scipy_convolve(self):
        for dtype, tol in ((np.float32, 2e-6), (np.float64, 1e-14)):
            x, h = noise(4000, 2, dtype=dtype), noise(31, seed=3, dtype=np.float64)
            y = gpufilt.filter(x, h, mode="same", device="cpu")
            want = np.stack([ss.convolve(x[:, c].astype(np.float64), h.astype(dtype), "same")
                             for c in range(2)], axis=1)
            self.assertEqual(y.shape, (4000, 2))
            self.assertLess(np.max(np.abs(y - want)), tol)

    def test_causal_mode_matches_lfilter_and_mean_filter(self):
        x = noise(3000, dtype=np.float64)
        y = gpufilt.filter(x, 5, mode="causal", device="ref")
        self.assertLess(np.max(np.abs(y - ss.lfilter(np.full(5, 0.2), 1, x))), 1e-15)

    def test_per_channel_taps(self):
        x, h = noise(2000, 3, dtype=np.float64), noise(9, 3, seed=4, dtype=np.float64)
        y = gpufilt.filter(x, h, mode="causal", device="cpu")
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


class Streaming(unittest.TestCase):
    def test_uneven_pushes_give_the_same_bytes(self):
        x, h = noise(20000, 2), noise(255, seed=6, dtype=np.float64)
        whole = gpufilt.filter(x, h, device="cpu", method="direct")
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


@unittest.skipUnless(gpufilt.cuda_available(), "no usable CUDA device")
class Cuda(unittest.TestCase):
    def test_cuda_equals_cpu_bit_for_bit_direct(self):
        x, h = noise(100000, 2), noise(63, seed=7, dtype=np.float64)
        a = gpufilt.filter(x, h, device="cuda", method="direct")
        b = gpufilt.filter(x, h, device="cpu", method="direct")
        self.assertTrue(np.array_equal(a, b))

    def test_cuda_fft_within_the_bound(self):
        x, h = noise(200000, dtype=np.float64), noise(65536, seed=8, dtype=np.float64) / 300
        with gpufilt.Engine(taps=h, precision="f64", device="cuda", method="fft") as e:
            y = e.process(x)
            e.flush()
            y = np.concatenate([y, e.pull()]).reshape(-1)
            bound = e.error_bound(0, np.max(np.abs(x)))
        self.assertLess(np.max(np.abs(y - ss.fftconvolve(x, h, "same"))), bound)


if __name__ == "__main__":
    unittest.main()
