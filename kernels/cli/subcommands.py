"""The names of the GPU-side subcommands, in the order `gemmscope --help` lists them.

``gemmscope.kernels.cli.main.COMMANDS`` maps each to its function; the app's command line
routes and lists them by these names without importing the CLI, whose modules (builds,
SASS, the access models) cost about 0.2 s of the app's cold start (issue #12).
"""

from __future__ import annotations

NAMES = ("runner", "scheduler", "worker", "bench", "record", "report", "compare", "levels",
         "diff", "sass", "check")

