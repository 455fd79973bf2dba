"""The subcommands that start without the rest of the CLI: ``runner`` (the engine only:
GPU machines without what readers need), ``report`` and ``compare`` (the reader only: a
fraction of a second). ``gemmscope`` (app/main.py) and ``python -m gemmscope.kernels`` route
by it."""

from __future__ import annotations

from collections.abc import Callable


def quick(name: str) -> Callable[[list[str]], int] | None:
    """The subcommand's own entry (its arguments after the name); None for the others."""
    if name == "runner":
        from .serve import main as serve_main

        return serve_main
    if name == "report":
        from .report import main as report_main

        return report_main
    if name == "compare":
        from .compare import main as compare_main

        return compare_main
    return None
