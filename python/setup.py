"""Build step: find the installed libgpufilt (GPUFILT_LIBRARY, or pkg-config's
libdir for gpufilt) and record its path in gpufilt/_libpath.py, so the
package loads the library it was installed against."""
import os
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py


def find_library():
    path = os.environ.get("GPUFILT_LIBRARY")
    if path:
        return os.path.abspath(path)
    try:
        libdir = subprocess.run(["pkg-config", "--variable=libdir", "gpufilt"], check=True,
                                capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as e:
        raise SystemExit("gpufilt: cannot find libgpufilt: install it (cmake --install) and make "
                         "pkg-config find gpufilt.pc (PKG_CONFIG_PATH), or set GPUFILT_LIBRARY "
                         "(%s)" % e)
    path = os.path.join(os.path.normpath(libdir), "libgpufilt.so.0.4")
    if not os.path.exists(path):
        raise SystemExit("gpufilt: %s does not exist" % path)
    return path


class BuildPy(build_py):
    def run(self):
        super().run()
        out = os.path.join(self.build_lib, "gpufilt", "_libpath.py")
        with open(out, "w") as f:
            f.write("# written at install time by setup.py\nLIBRARY = %r\n" % find_library())


setup(cmdclass={"build_py": BuildPy})
