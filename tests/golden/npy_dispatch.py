"""numpy's SIMD dispatch levels for the golden checks (with_numpy.sh uses it).

numpy picks its SIMD loops (sin, cos, exp, log, power among them) by the CPU
at import; NPY_DISABLE_CPU_FEATURES, read at import, turns dispatched
features off. The checks run at three levels:

    native      as the CPU offers it
    no-avx512   AVX-512 off
    no-avx2     AVX-512, AVX2 and FMA off

    python3 npy_dispatch.py LEVEL    print NPY_DISABLE_CPU_FEATURES for LEVEL
    python3 npy_dispatch.py --active print the dispatched features now on

The names come from the numpy at hand: only features it dispatches and this
CPU has are named (numpy warns of a name it does not dispatch, and some
versions refuse one the CPU lacks), under either naming (AVX512F, AVX2,
FMA3, ... or the grouped X86_V3, X86_V4 of later versions). A feature in
numpy's baseline cannot be turned off: the level then keeps it, and a note
on stderr says so. Run it with NPY_DISABLE_CPU_FEATURES unset.
"""

import sys


def cpu_tables():
    try:
        from numpy._core import _multiarray_umath as m
    except ImportError:
        from numpy.core import _multiarray_umath as m
    return set(m.__cpu_baseline__), list(m.__cpu_dispatch__), dict(m.__cpu_features__)


def is_avx512(name):
    return name.startswith("AVX512") or name == "X86_V4"


def is_avx2(name):
    return name in ("AVX2", "FMA3", "FMA4", "X86_V3")


LEVELS = {
    "native": lambda n: False,
    "no-avx512": is_avx512,
    "no-avx2": lambda n: is_avx512(n) or is_avx2(n),
}


def main():
    args = sys.argv[1:]
    baseline, dispatch, have = cpu_tables()
    if args == ["--active"]:
        print(" ".join(n for n in dispatch if have.get(n)) or "(none)")
        return
    if len(args) != 1 or args[0] not in LEVELS:
        sys.exit("usage: npy_dispatch.py native|no-avx512|no-avx2|--active")
    off = LEVELS[args[0]]
    kept = sorted(n for n in baseline if off(n))
    if kept:
        print("npy_dispatch.py: %s: numpy's baseline includes %s, which stays on"
              % (args[0], " ".join(kept)), file=sys.stderr)
    print(" ".join(n for n in dispatch if off(n) and have.get(n) and n not in baseline))


if __name__ == "__main__":
    main()
