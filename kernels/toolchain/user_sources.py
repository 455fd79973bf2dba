"""Where a user's kernel source is compiled from: a folder of its own holding that one
file, so that nothing beside the user's file (a header of theirs, another kernel) can be
pulled in; ``#include "common.cuh"`` then finds the project's header (nvrtc.assemble
looks beside the file, then in kernels/cuda). One folder per source hash, made once per
process, removed at exit. A process killed (a compile child past its limits, a runner
stopped with SIGKILL) runs no exit handler, so its folder is named with its pid and the
next process to make one removes those whose process is gone."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
from pathlib import Path

from ..ladder.user_level import UserLaunch

_lock = threading.Lock()
_root: Path | None = None
_written: dict[tuple[str, str], Path] = {}


PREFIX = "gemmscope-kernels-"


def _base() -> Path:
    global _root
    if _root is None:
        sweep_orphans(Path(tempfile.gettempdir()))
        _root = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-"))
        atexit.register(shutil.rmtree, _root, ignore_errors=True)
    return _root


def sweep_orphans(where: Path) -> list[Path]:
    """Remove the folders in ``where`` that processes now gone made here (named
    PREFIX<pid>-...); a folder whose process lives, or may (a pid of another user's, or
    reused), is left. Returns those removed."""
    removed: list[Path] = []
    try:
        names = [e.name for e in os.scandir(where) if e.name.startswith(PREFIX)]
    except OSError:
        return removed
    for name in names:
        pid_text, dash, _ = name[len(PREFIX):].partition("-")
        if not dash or not pid_text.isdigit() or int(pid_text) == os.getpid():
            continue
        try:
            os.kill(int(pid_text), 0)
        except ProcessLookupError:  # gone: its folder is an orphan
            path = where / name
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
        except (OverflowError, OSError):  # PermissionError among them
            continue  # another user's process, or no such pid number: left
    return removed


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
