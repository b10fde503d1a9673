#!/usr/bin/env bash
# with_numpy.sh PYTHON SCRIPT [ARGS...]: run a golden script with a Python
# that has numpy and scipy (Debian: /usr/bin/python3 with python3-numpy and
# python3-scipy); exit 77 (skipped) where it has not. No bytecode is
# written into the source tree.
py=$1
shift
if ! "$py" -c 'import numpy, scipy.signal' 2>/dev/null; then
    echo "SKIP: $py with numpy and scipy is needed (Debian: python3-numpy python3-scipy)"
    exit 77
fi
PYTHONDONTWRITEBYTECODE=1 exec "$py" "$@"
