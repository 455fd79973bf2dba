"""The `gemmscope` command: the desktop app, or the GPU-side subcommands.

`gemmscope` and `gemmscope replay FILE` open the Qt app. `runner`, `bench`, `record`,
`report`, `levels`, `diff` and `sass` are the GPU side (gemmscope.kernels.cli) and never
import Qt, so they work on a headless GPU box without PySide6.
"""

from __future__ import annotations

import sys

GPU_COMMANDS = ("runner", "bench", "record", "report", "levels", "diff", "sass")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in GPU_COMMANDS:
        from ..kernels.cli import main as kernels_main

        return kernels_main(argv)
    from .gui_main import main as gui_main  # imports Qt

    return gui_main(argv)


if __name__ == "__main__":
    sys.exit(main())
