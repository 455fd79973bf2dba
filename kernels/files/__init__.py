"""Files a user hands the program (specs, sources, talks, recordings, preferences, the GPU
table), read as untrusted input: one reader, bounded in bytes and nesting, that refuses
what is not a regular file (``reading``). No Qt, nothing above it: every room may use it.

The face (``__all__``) is what the app may use, loaded name by name at first use
(``kernels/faces.py``); the rest of the GPU side imports the modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..faces import lazy

__all__ = [
    "MAX_BYTES",
    "FileRefused",
    "Kind",
    "NotRegularFile",
    "loads_toml",
    "open_regular",
    "read_text",
]

if TYPE_CHECKING:  # the same names, for the type checker and the import contracts
    from .reading import (
        MAX_BYTES,
        FileRefused,
        Kind,
        NotRegularFile,
        loads_toml,
        open_regular,
        read_text,
    )
else:
    __getattr__, __dir__ = lazy(__name__, {
        "reading": ("FileRefused", "Kind", "MAX_BYTES", "NotRegularFile", "loads_toml",
                    "open_regular", "read_text"),
    })
