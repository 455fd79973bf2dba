"""The bundled recording read once per test process (make_window in tests/conftest.py).

A window test that opens the bundled H200 recording spent about 2 s of its time reading
it (100 MB of JSON lines; tests/app/views/test_charts_story.py went from 147 s to 80 s
with this). The reader's records are read, never changed (kernels/protocol/recording.py,
``_Shared``; the app copies telemetry out of a block and sets no field of a record), so
the windows of one process may share one reading of the same file: the wrapper below
returns the Session read before where the path is the bundled recording and the file is
the one read then (size and modification time), and reads anew otherwise. Only the
windows' foreground reads go through it (gemmscope.app.window.sources); the reader's own
tests call it directly."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

_kept: dict[tuple[str, int, int], Any] = {}


def caching(read: Callable[..., Any], bundled: Path | None) -> Callable[..., Any]:
    """``read`` (read_session), keeping its answer for the bundled recording."""
    if bundled is None:
        return read
    target = os.path.realpath(bundled)

    def read_session(path: str | Path, progress: Any = None, only: Any = None) -> Any:
        if progress is not None or only is not None or os.path.realpath(path) != target:
            return read(path, progress, only)
        st = os.stat(target)
        key = (target, st.st_size, st.st_mtime_ns)
        session = _kept.get(key)
        if session is None:
            _kept.clear()
            session = _kept[key] = read(path)
        return session

    return read_session
