#!/usr/bin/env bash
# The Python module as a user installs it: the library installed into a
# prefix, `pip install ./python` in a fresh virtual environment (numpy and
# scipy from the system), then the tests against scipy.signal.
#
#   python/check.sh BUILD_DIR [WORK_DIR]
set -euo pipefail
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
W=${2:-$(mktemp -d)}
rm -rf "$W" && mkdir -p "$W"
PY=${GPUFILT_PYTHON:-/usr/bin/python3}
"$PY" -c "import numpy, scipy" 2>/dev/null ||
    { echo "python/check.sh: $PY lacks numpy or scipy (Debian: python3-numpy python3-scipy)" && exit 1; }
cmake --install "$BUILD" --prefix "$W/prefix" >"$W/install.log"
pc=$(dirname "$(find "$W/prefix" -name gpufilt.pc | head -n 1)")
"$PY" -m venv --system-site-packages "$W/venv"
# numpy and scipy as $PY has them: its site-packages may be a virtual
# environment's own, which --system-site-packages does not reach.
site=$("$W/venv/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
"$PY" -c "import numpy, os; print(os.path.dirname(os.path.dirname(numpy.__file__)))" >"$site/_numpy_from_base.pth"
# No network: the build backend comes from the system (python3-setuptools).
# pkg-config sees only the installed gpufilt.pc, as it is.
cp -r "$SRC/python" "$W/src"
PKG_CONFIG_LIBDIR=$pc PKG_CONFIG_PATH= PKG_CONFIG_SYSROOT_DIR= \
    "$W/venv/bin/pip" install --no-build-isolation --no-index -q "$W/src"
cd "$W" # not the source tree: import the installed package
"$W/venv/bin/python" -c "import gpufilt; print('gpufilt', gpufilt.version(), 'from', gpufilt._lib._name)"
"$W/venv/bin/python" -m unittest discover -s "$SRC/python/tests" -v 2>&1 | tail -n 25
