"""`python -m gemmscope.kernels ...`: the GPU-side CLI without the app's entry point."""

import sys

from .cli.main import main

sys.exit(main())
