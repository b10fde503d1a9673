#!/usr/bin/env bash
# The Python package as a user gets it: `pip wheel .` on the source tree
# (scikit-build-core builds libgpufilt with the project's CMake and puts it
# in the wheel), the wheel installed into a fresh virtual environment
# (numpy and scipy from the system), then the tests against scipy.signal
# and the docstrings' examples, run with the library the wheel carries.
# It also checks that the build wrote nothing into the source tree.
#
#   python/check.sh WORK_DIR
#
# The build backend comes from PyPI, or without a network from the wheels
# in $GPUFILT_WHEELS (default .deps/python, which tests/gpu/fetch-deps.sh
# fills). The wheel's CUDA module is built only where a GPU could run it
# (nvidia-smi lists one): it adds about 25 s of nvcc and nothing else here
# would test it. GPUFILT_WHEEL_CUDA=AUTO|ON|OFF overrides that choice.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
W=${1:?usage: python/check.sh WORK_DIR}
rm -rf "$W" && mkdir -p "$W"
W=$(cd "$W" && pwd)
PY=${GPUFILT_PYTHON:-/usr/bin/python3}
"$PY" -c "import numpy, scipy" 2>/dev/null ||
    { echo "python/check.sh: $PY lacks numpy or scipy (Debian: python3-numpy python3-scipy)" && exit 1; }
"$PY" -m venv --system-site-packages "$W/venv"
# numpy and scipy as $PY has them: its site-packages may be a virtual
# environment's own, which --system-site-packages does not reach.
site=$("$W/venv/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
"$PY" -c "import numpy, os; print(os.path.dirname(os.path.dirname(numpy.__file__)))" >"$site/_numpy_from_base.pth"

cuda=${GPUFILT_WHEEL_CUDA:-}
if [ -z "$cuda" ]; then
    cuda=OFF
    nvidia-smi -L >/dev/null 2>&1 && cuda=AUTO
fi
index=()
wheels=${GPUFILT_WHEELS:-$SRC/.deps/python}
if compgen -G "$wheels/*.whl" >/dev/null; then
    index=(--no-index --find-links "$wheels")
fi
# Every file git sees, ignored ones too, but for build folders (other tests
# write there meanwhile); no git (a source archive): no check.
state() {
    git -C "$SRC" status --porcelain --ignored --untracked-files=all -- . ':(exclude)build*' \
        ':(exclude).deps' ':(exclude)out' 2>/dev/null || true
}
before=$(state)
echo "python/check.sh: pip wheel (GPUFILT_CUDA=$cuda${index:+, build backend from $wheels})"
(cd "$W" && "$W/venv/bin/pip" wheel --no-deps -q -w "$W/wheels" "${index[@]}" \
    --config-settings=cmake.define.GPUFILT_CUDA="$cuda" "$SRC") >"$W/wheel.log" 2>&1 ||
    { tail -n 30 "$W/wheel.log" && exit 1; }
after=$(state)
if [ "$before" != "$after" ]; then
    echo "python/check.sh: building the wheel wrote into the source tree:"
    diff <(echo "$before") <(echo "$after") || true
    exit 1
fi
"$W/venv/bin/pip" install --no-deps --no-index -q "$W"/wheels/gpufilt-*.whl
cd "$W" # not the source tree: import the installed package
"$W/venv/bin/python" - <<'PY'
import os, gpufilt, gpufilt._lib as L
here = os.path.dirname(gpufilt.__file__)
print("gpufilt", gpufilt.version(), "from", L.lib._name)
assert os.path.dirname(L.lib._name) == here, "not the wheel's library: %s" % L.lib._name
assert os.path.exists(os.path.join(here, "py.typed")), "no py.typed"
PY
PYTHONDONTWRITEBYTECODE=1 "$W/venv/bin/python" -m unittest discover -s "$SRC/python/tests" -v 2>&1 |
    tail -n 40
