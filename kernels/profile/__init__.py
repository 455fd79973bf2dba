"""Nsight Compute: profiling the levels (``ncu``) and reading its per-line source pages
into source-counters events.

The face (``__all__``) is what the app may use, loaded name by name at first use
(``kernels/faces.py``); the rest of the GPU side imports the modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..faces import lazy

__all__ = [
    "MAX_SASS_LINES",
    "MAX_TEXT_CHARS",
    "TOOL",
    "Outcome",
    "PageLine",
    "SourcePage",
    "compact",
    "event",
    "executed_mix",
    "fields",
    "find_ncu",
    "profile",
]

if TYPE_CHECKING:  # the same names, for the type checker and the import contracts
    from .library_sass import MAX_SASS_LINES, MAX_TEXT_CHARS, compact, executed_mix, fields
    from .ncu import TOOL, find_ncu, profile
    from .ncu_source import PageLine, SourcePage
    from .ncu_source_step import Outcome, event
else:
    __getattr__, __dir__ = lazy(__name__, {
        "library_sass": ("MAX_SASS_LINES", "MAX_TEXT_CHARS", "compact", "executed_mix",
                         "fields"),
        "ncu": ("TOOL", "find_ncu", "profile"),
        "ncu_source": ("PageLine", "SourcePage"),
        "ncu_source_step": ("Outcome", "event"),
    })
