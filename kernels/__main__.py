"""`python -m gemmscope.kernels ...`: the GPU-side CLI without the app's entry point."""

import sys

from .cli.quick import quick

fast = quick(sys.argv[1]) if len(sys.argv) > 1 else None
if fast is not None:  # the runner starts without the rest of the CLI
    sys.exit(fast(sys.argv[2:]))

from .cli.main import main  # noqa: E402

sys.exit(main())
