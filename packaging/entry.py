"""The bundle's program: the same `gemmscope` command as the pip-installed one.

PyInstaller's bootloader puts the bundle's own library folder on LD_LIBRARY_PATH and keeps
the user's value in LD_LIBRARY_PATH_ORIG. The loader has read it by now; programs this one
starts (a runner from a pip install with CuPy, ssh, ldd, ncu) get the user's value back,
so they do not load the bundle's copies of libz, libssl or libstdc++.
"""

import os
import sys

from gemmscope.app.main import run


def restore_library_path() -> None:
    if not getattr(sys, "frozen", False):
        return
    original = os.environ.pop("LD_LIBRARY_PATH_ORIG", None)
    if original is not None:
        os.environ["LD_LIBRARY_PATH"] = original
    else:
        os.environ.pop("LD_LIBRARY_PATH", None)


if __name__ == "__main__":
    restore_library_path()
    run()
