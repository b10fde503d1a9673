#!/usr/bin/python3
"""Golden outputs for cli_matrix.sh, computed with numpy (run from this
directory: /usr/bin/python3 gen.py; it rewrites every .txt file here).

A 2-channel input of 500 frames through a 4-channel (2 x 2: LL, LR, RL, RR)
filter of 17 taps, and its left channel through a 2-channel (1 x 2) filter.
Output o of a matrix of C x O filters: sum over inputs i of
np.convolve(x_i, h[i*O + o]) ("full"); "causal" keeps its first N frames,
"same" the N from (T-1)//2. Samples are multiples of 1/128 below 1 and taps
multiples of 1/32 below 1, so every product has at most 14 significant bits
and every sum of 34 of them fits in 24: the exact sums, in f32 as in f64.
"""
import numpy as np

rng = np.random.default_rng(20261126)
N, T = 500, 17
x = rng.integers(-128, 128, size=(N, 2)) / 128.0
h4 = rng.integers(-32, 32, size=(T, 4)) / 32.0  # columns LL, LR, RL, RR
h2 = rng.integers(-32, 32, size=(T, 2)) / 32.0  # columns: mono to L, mono to R


def matrix(x, h, C, O):
    full = np.stack([sum(np.convolve(x[:, i], h[:, i * O + o]) for i in range(C))
                     for o in range(O)], axis=1)
    d = (T - 1) // 2
    return {"full": full, "causal": full[:N], "same": full[d:d + N]}


def save(name, a):
    np.savetxt(name, np.atleast_2d(a.T).T, fmt="%.17g")


save("in2.txt", x)
save("h4.txt", h4)
save("h2.txt", h2)
for mode, y in matrix(x, h4, 2, 2).items():
    save(f"y22_{mode}.txt", y)
for mode, y in matrix(x[:, :1], h2, 1, 2).items():
    save(f"y12_{mode}.txt", y)
