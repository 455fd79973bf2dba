"""The bundled recordings read once per test process, and checked unchanged at every reuse.

About thirty tests open the bundled H200 recording in the test process itself (a window's
replay, the gallery, the roofline and baseline reports...): 246 MB of JSON lines, 4-6 s a
read on CI's two CPUs, about 150 s of its workers' time. ``install`` puts ``read_session``
here in place of the reader's wherever the app and the GPU side call it, and this one reads
a file under a ``resources/sessions`` folder once per process: a later read of the same
unchanged file (the same size and modification time) gets the same session, asked with the
same ``only``. Every other file is read afresh, as before.

A session handed out twice must be what the file says both times: a reader's records are
only read (the records say so), and each reuse checks it: the session's fingerprint (its
records encoded, its telemetry columns' bytes; 0.4 s) must be the one taken when it was
read, or the read fails with ``Changed``, naming the test that changed it (the one before).
tests/test_read_memo.py checks that a reuse is what a fresh read gives.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import threading
import zlib
from collections import OrderedDict
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

import msgspec

from gemmscope.kernels.protocol import recording
from gemmscope.kernels.protocol.telemetry_columns import TelemetryBlock

ORIGINAL = recording.read_session
KEPT = 2  # sessions kept: a whole read of the bundled recording and one with ``only``
_encode = msgspec.json.Encoder().encode
_lock = threading.Lock()
# (file, size, mtime_ns, only) -> (session, fingerprint, the test that read it)
_kept: OrderedDict[tuple[Any, ...], tuple[recording.Session, int, str]] = OrderedDict()


class Changed(AssertionError):
    """A kept session is no longer what its file says: a test changed its records."""


def memo_file(path: Path) -> bool:
    """Whether reads of ``path`` (resolved) are kept: the recordings bundled with the app."""
    return path.parent.name == "sessions" and path.parent.parent.name == "resources"


def fingerprint(session: recording.Session) -> int:
    """A checksum of everything a reader gave: each record as JSON, each telemetry column."""
    crc = zlib.crc32(repr((session.path, session.skipped_count, session.gzip_cut)).encode())
    for event in session.events:
        if isinstance(event, TelemetryBlock):
            crc = zlib.crc32(repr((event.device, event.start, event.stop)).encode(), crc)
        else:
            crc = zlib.crc32(_encode(event), crc)
    for device, cols in sorted(session.telemetry.items()):
        n = cols.count
        for column in (cols.t[:n], cols.values[:, :n], cols.reasons[:n], cols.kinds[:n]):
            crc = zlib.crc32(column.tobytes(), crc)
        crc = zlib.crc32(repr((device, n, cols.reason_sets, cols.power_kinds)).encode(), crc)
    return crc


def read_session(path: str | Path, progress: Callable[[float], None] | None = None,
                 only: Collection[type[Any]] | None = None) -> recording.Session:
    """``recording.read_session``, a bundled recording's session kept (see the module)."""
    try:
        real = Path(path).resolve()
        st = real.stat()
    except (OSError, RuntimeError):
        return ORIGINAL(path, progress, only)
    if not memo_file(real):
        return ORIGINAL(path, progress, only)
    key = (real, st.st_size, st.st_mtime_ns, None if only is None else frozenset(only))
    test = os.environ.get("PYTEST_CURRENT_TEST", "?")
    with _lock:
        hit = _kept.get(key)
        if hit is None:
            session = ORIGINAL(path, progress, only)
            hit = _kept[key] = (session, fingerprint(session), test)
            while len(_kept) > KEPT:
                _kept.popitem(last=False)
        else:
            session, crc, first = hit
            if fingerprint(session) != crc:
                del _kept[key]
                raise Changed(f"the kept session of {real.name} (read in {first}) was "
                              "changed by a test since: a reader's records are only read")
            if progress is not None:
                progress(1.0)
        _kept.move_to_end(key)
    return dataclasses.replace(hit[0], path=str(path))


def install() -> None:
    """Reads go through ``read_session`` here: the reader module's name and the protocol
    package's (what later imports get), and each module already imported that took the
    reader's function by name (``patch_imported``)."""
    recording.read_session = read_session  # type: ignore[assignment]
    import gemmscope.kernels.protocol as protocol

    protocol.read_session = read_session  # type: ignore[attr-defined]
    patch_imported()


_seen: set[str] = set()


def patch_imported() -> None:
    """Modules imported since the last call that hold the reader's own ``read_session``
    get this one (cheap: each module is looked at once)."""
    for name in [n for n in sys.modules if n.startswith("gemmscope.") and n not in _seen]:
        _seen.add(name)
        module = sys.modules.get(name)
        if getattr(module, "read_session", None) is ORIGINAL:
            module.read_session = read_session  # type: ignore[union-attr]
