"""The ``--output`` file of ``bench`` and ``record``: refused at once where it exists
(unless ``--force``), continued with ``--append`` (one at a time: a lock), written under a
temporary name beside it and renamed when the runs have finished, or, when they do not
finish (an error, SIGTERM, SIGHUP, SIGINT), kept only where it holds a measurement, and
said where. No Qt."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, TextIO

from ..files.reading import open_regular
from . import events
from .atomic_file import NewFile
from .decoding import decode
from .inflating import GZIP_MAGIC
from .records import Session


class OutputRefused(Exception):
    """The output file cannot be written as asked; the message says why."""


def output_file(output: str | None, force: bool = False,
                append: bool = False) -> NewFile | None:
    """The ``--output`` file, refused at once where it exists (unless ``force``): it is
    written under a temporary name beside it and renamed when the runs have finished."""
    if not output:
        return None
    if output.endswith(".gz"):  # read transparently (recording.py), but written plain
        raise OutputRefused(f"{output}: a recording is written as plain JSON lines; give a "
                            ".jsonl name and compress it afterwards (gzip -9 FILE): "
                            "gemmscope reads .jsonl.gz as it reads .jsonl")
    if append:
        if force:
            raise OutputRefused("--append keeps the file and --force replaces it: pass one")
        return appended_file(Path(output))
    try:
        return NewFile(output, replace=force)
    except FileExistsError:
        raise OutputRefused(f"{output} exists; pass --force to replace it") from None
    except OSError as exc:
        raise OutputRefused(f"cannot write {output}: {exc.strerror or exc}") from None


def appended_file(path: Path, flag: str = "--append") -> NewFile:
    """--append: a copy of the existing session file under the temporary name, which the
    runs continue and which replaces the file when they finish; so the file is never
    half-written, and what it held is never lost. ``flag``: the option named in refusals
    (``record --update`` continues a file the same way)."""
    try:
        lock = _locked(path, flag)  # held until the file is replaced: one at a time
        try:
            first = lock.readline(events.MAX_LINE_BYTES + 1)
            if not isinstance(decode(first, 1, str(path)), Session):
                raise events.ProtocolError("the first line is not a session header", 1,
                                           str(path))
        except BaseException:
            lock.close()
            raise
    except FileNotFoundError:
        raise OutputRefused(f"{flag}: {path} does not exist") from None
    except OSError as exc:
        raise OutputRefused(f"cannot read {path}: {exc.strerror or exc}") from None
    except events.ProtocolError as exc:
        raise OutputRefused(f"{flag}: {exc}; nothing was appended") from None
    try:
        out = NewFile(path, replace=True)
    except OSError as exc:
        lock.close()
        raise OutputRefused(f"cannot write beside {path}: {exc.strerror or exc}") from None
    out.hold(lock)
    try:
        lock.seek(0)
        with open(out.temp, "wb") as copy:
            shutil.copyfileobj(lock, copy)  # the file as it is under the lock
    except OSError as exc:
        out.discard()
        raise OutputRefused(f"cannot write beside {path}: {exc.strerror or exc}") from None
    out.kept_bytes = out.temp.stat().st_size
    return out


def _locked(path: Path, flag: str = "--append") -> BinaryIO:
    """``path`` open for reading under an exclusive lock (flock), refused at once where
    another gemmscope holds it (OutputRefused). The lock is taken on the file the name
    still means: one replaced meanwhile is opened again."""
    for _ in range(3):
        fh = open_regular(path)  # a device or FIFO: refused, not waited on
        try:
            import fcntl
        except ImportError:  # no flock here (Windows): unlocked, as before
            return fh
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.close()
            raise OutputRefused(f"{flag}: another gemmscope is recording into {path}; "
                                "run this one when it has finished") from None
        try:
            same = os.stat(path).st_ino == os.fstat(fh.fileno()).st_ino
        except OSError:
            same = False
        if same:
            return fh
        fh.close()  # the one before us replaced it as we opened it: open the new one
    raise OutputRefused(f"{flag}: {path} keeps being replaced; try again")


class GzipAppended:
    """A compressed recording (``.jsonl.gz``) continued as --append continues a plain one:
    the new events go, plain, to ``temp`` beside it; :meth:`commit` writes the file as it
    was plus those lines as one more gzip member under a second temporary name and renames
    that onto it (a gzip file is its members one after another: every reader, and
    kernels/protocol/inflating.py, reads them as one stream). Until that rename the file is
    as it was, so a crash leaves it readable; the file is locked as --append locks it."""

    kept_bytes = 0  # ``temp`` holds this run's lines only

    def __init__(self, path: Path, flag: str = "--update"):
        self.path = Path(path)
        try:
            self._lock = _locked(self.path, flag)
        except FileNotFoundError:
            raise OutputRefused(f"{flag}: {path} does not exist") from None
        except OSError as exc:
            raise OutputRefused(f"cannot read {path}: {exc.strerror or exc}") from None
        try:
            self._out = NewFile(self.path, replace=True)
        except OSError as exc:
            self._lock.close()
            raise OutputRefused(f"cannot write beside {path}: {exc.strerror or exc}"
                                ) from None
        self._out.hold(self._lock)
        try:  # the plain lines: ``.name.XXXX.tmp.jsonl`` (a recording of its own)
            self.temp = NewFile(self._out.target.with_suffix(""), replace=True).temp
        except OSError as exc:
            self._out.discard()
            raise OutputRefused(f"cannot write beside {path}: {exc.strerror or exc}"
                                ) from None

    def commit(self) -> Path:
        import gzip

        with open(self._out.temp, "wb") as whole:
            self._lock.seek(0)
            shutil.copyfileobj(self._lock, whole)  # the file as it is under the lock
            with open(self.temp, "rb") as lines, \
                    gzip.GzipFile(fileobj=whole, mode="wb", mtime=0) as member:
                shutil.copyfileobj(lines, member)
        path = self._out.commit()
        self.temp.unlink(missing_ok=True)
        return path

    def discard(self) -> None:
        self.temp.unlink(missing_ok=True)
        self._out.discard()

    def release(self) -> None:
        """The lock closed, ``temp`` kept (what an unfinished update measured)."""
        self._out.discard()  # the copy's temporary name only: nothing was written there


def updated_file(path: Path) -> NewFile | GzipAppended:
    """The file ``record --update`` continues: a plain recording as --append continues it,
    a compressed one through :class:`GzipAppended`; replaced whole when the runs finish."""
    with open_regular(path) as fh:
        compressed = fh.read(2) == GZIP_MAGIC
    return GzipAppended(path) if compressed else appended_file(path, "--update")


class Stopped(BaseException):
    """A signal (SIGTERM, SIGHUP, SIGINT) stopped the runs; like KeyboardInterrupt, not
    an error to catch on the way: it ends the command after its cleanup."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name


STOP_SIGNALS = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGHUP", "SIGINT")
                     if hasattr(signal, n))


@contextlib.contextmanager
def stopped_by_signals() -> Iterator[None]:
    """SIGTERM (what ``timeout``, systemd and SLURM send), SIGHUP and SIGINT raise
    Stopped in the main thread, so the runner is stopped and the output kept or said
    (``abandon``) as for any other end. One stop: later signals are ignored while that
    cleanup (itself bounded) runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, _frame: object) -> None:
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        raise Stopped(signum)

    previous = {sig: signal.signal(sig, stop) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


# what bench and record write to: a new file, or an appended or updated one
Output = NewFile | GzipAppended


def abandon(out: Output, stderr: TextIO) -> None:
    """The runs did not finish: keep what was measured under the temporary name (and say
    where), else remove it. The --output file is left as it was."""
    try:
        with out.temp.open("rb") as fh:  # with --append, only what this run added
            fh.seek(out.kept_bytes)
            text = fh.read().decode("utf-8", errors="replace")
    except OSError:
        return
    if '"type":"result"' in text or '"type":"counters"' in text:
        out.release()  # the lock of --append / --update: closed, the temporary file kept
        stderr.write(f"gemmscope: the runs did not finish; what was measured is in "
                     f"{out.temp} ({out.path} was not written)\n")
    else:
        out.discard()
        stderr.write(f"gemmscope: the runs did not finish and nothing was measured; "
                     f"{out.path} was not written\n")
