"""The `gemmscope` command: the desktop app, or the GPU-side subcommands.

`gemmscope` and `gemmscope replay FILE` open the Qt app. The subcommands of
gemmscope.kernels.cli (`runner`, `bench`, `record`, `report`, `levels`) are the GPU side
and never import Qt, so they work on a headless GPU box without PySide6.
"""

from __future__ import annotations

import sys

from ..kernels import cli


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in cli.COMMANDS:  # the one list of subcommands
        return cli.main(argv)
    from .gui_main import main as gui_main  # imports Qt

    return gui_main(argv)


if __name__ == "__main__":
    sys.exit(main())
