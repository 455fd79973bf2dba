"""Where a user's kernel source is compiled from: a folder of its own holding that one
file, so that nothing beside the user's file (a header of theirs, another kernel) can be
pulled in; ``#include "common.cuh"`` then finds the project's header (nvrtc.assemble
looks beside the file, then in kernels/cuda). One folder per source hash, made once per
process, removed at exit."""

from __future__ import annotations

import atexit
import shutil
import tempfile
import threading
from pathlib import Path

from ..ladder.user_level import UserLaunch

_lock = threading.Lock()
_root: Path | None = None
_written: dict[tuple[str, str], Path] = {}


def _base() -> Path:
    global _root
    if _root is None:
        _root = Path(tempfile.mkdtemp(prefix="gemmscope-kernels-"))
        atexit.register(shutil.rmtree, _root, ignore_errors=True)
    return _root


def folder_for(launch: UserLaunch) -> Path:
    """The folder holding ``launch.file`` with ``launch.source`` (written once)."""
    key = (launch.digest, launch.file)
    with _lock:
        if key in _written:
            return _written[key]
        folder = _base() / launch.digest[:16]
        folder.mkdir(mode=0o700, exist_ok=True)
        (folder / launch.file).write_text(launch.source, encoding="utf-8")
        _written[key] = folder
        return folder
