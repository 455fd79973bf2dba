"""``python -m gemmscope.kernels.launch``: the command line that recordings made before the
kernels/ folders name in their Nsight Compute events (``ncu_source``'s ``command``), kept
so such a command still runs as recorded. The launcher is :mod:`.engine.launch`."""

import sys

from .engine.launch import main

if __name__ == "__main__":
    sys.exit(main())
