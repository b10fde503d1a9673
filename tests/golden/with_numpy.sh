#!/usr/bin/env bash
# with_numpy.sh PYTHON SCRIPT [ARGS...]: run a golden script with a Python
# that has numpy and scipy (Debian: /usr/bin/python3 with python3-numpy and
# python3-scipy); exit 77 (skipped) where it has not. No bytecode is
# written into the source tree.
#
# GPUFILT_NUMPY_DISPATCH=native|no-avx512|no-avx2 (default native) runs it
# with numpy's SIMD dispatch as the CPU offers it, with AVX-512 off, or
# with AVX-512, AVX2 and FMA off (npy_dispatch.py sets
# NPY_DISABLE_CPU_FEATURES from what this numpy and this CPU have).
py=$1
shift
if ! "$py" -c 'import numpy, scipy.signal' 2>/dev/null; then
    echo "SKIP: $py with numpy and scipy is needed (Debian: python3-numpy python3-scipy)"
    exit 77
fi
export PYTHONDONTWRITEBYTECODE=1
here=$(dirname "$0")
level=${GPUFILT_NUMPY_DISPATCH:-native}
unset NPY_DISABLE_CPU_FEATURES
case $level in
native) ;;
no-avx512 | no-avx2)
    off=$("$py" "$here/npy_dispatch.py" "$level") || exit 1
    [ -n "$off" ] && export NPY_DISABLE_CPU_FEATURES="$off"
    ;;
*)
    echo "with_numpy.sh: GPUFILT_NUMPY_DISPATCH=$level: use native, no-avx512 or no-avx2" >&2
    exit 2
    ;;
esac
# A name numpy does not take is a warning at import: make it an error.
active=$("$py" -W error "$here/npy_dispatch.py" --active) || exit 1
echo "numpy dispatch $level: $active"
exec "$py" "$@"
