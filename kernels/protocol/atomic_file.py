"""Writing a file so that it is whole or absent: under a temporary name, then renamed.

The temporary file sits in the destination's folder (a rename within one file system is
atomic), keeps the destination's suffix (image exporters choose the format by it) and is
created with the usual permissions (the umask applies). An existing destination is
replaced only when the caller says so, and that is checked first, before any work.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from collections.abc import Iterator
from pathlib import Path


class NewFile:
    """``temp``: where to write; ``commit()`` renames it onto ``path``, ``discard()``
    removes it. Without ``replace`` an existing ``path`` raises FileExistsError, here and
    at the rename (a file that appeared meanwhile is not replaced either)."""

    kept_bytes = 0  # how much of ``temp`` was there before this writer (an appended copy)

    def __init__(self, path: str | Path, replace: bool = False):
        self.path = Path(path)
        self.replace = replace
        if not replace and self.path.exists():
            raise FileExistsError(errno.EEXIST, "exists", str(self.path))
        self.temp = _create_beside(self.path)

    def commit(self) -> Path:
        with open(self.temp, "rb") as fh:  # on disk before the name says it is whole
            os.fsync(fh.fileno())
        if self.replace:
            os.replace(self.temp, self.path)
            return self.path
        try:
            os.link(self.temp, self.path)  # fails, atomically, where the name is taken
        except FileExistsError:
            raise FileExistsError(errno.EEXIST, "exists", str(self.path)) from None
        except OSError:  # a file system without hard links
            if self.path.exists():
                raise FileExistsError(errno.EEXIST, "exists", str(self.path)) from None
            os.replace(self.temp, self.path)
            return self.path
        self.temp.unlink()
        return self.path

    def discard(self) -> None:
        self.temp.unlink(missing_ok=True)


def _create_beside(path: Path) -> Path:
    """A new empty file in ``path``'s folder: hidden, same suffix, made exclusively."""
    for _ in range(100):
        temp = path.with_name(f".{path.stem}.{secrets.token_hex(4)}.tmp{path.suffix}")
        try:
            os.close(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            continue
        return temp
    raise FileExistsError(errno.EEXIST, "no free temporary name beside", str(path))


@contextlib.contextmanager
def replacing(path: str | Path, replace: bool = True) -> Iterator[Path]:
    """A temporary path to write ``path`` through: renamed onto it when the block ends,
    removed if the block raises."""
    out = NewFile(path, replace)
    try:
        yield out.temp
        out.commit()
    except BaseException:
        out.discard()
        raise


def write_text(path: str | Path, text: str, replace: bool = True) -> Path:
    """``text`` as UTF-8 in ``path``, whole or not at all."""
    with replacing(path, replace) as temp:
        temp.write_text(text, encoding="utf-8")
    return Path(path)
