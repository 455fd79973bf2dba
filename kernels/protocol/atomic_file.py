"""Writing a file so that it is whole or absent: under a temporary name, then renamed.
The one writer of every file gemmscope makes (recordings, exports, screenshots,
preferences). No Qt.

The temporary file sits in the destination's folder (a rename within one file system is
atomic), keeps the destination's suffix (image exporters choose the format by it) and is
created with the usual permissions (the umask applies; a replaced file keeps its mode).
An existing destination is replaced only when the caller says so, and that is checked
first, before any work.

A write never follows a symlink that someone else could have put at its name. A link at
the name is followed to its target only where it is the user's own: the link and its
folder belong to this user and no one else may write that folder (a dotfiles link in
``~/.config``, a link made in one's own project folder: no one else can plant or swap
it). Any other link, such as one planted in a shared folder (``/tmp``, a group folder),
is replaced by the new file, its target left alone: a planted link cannot redirect an
export onto another file. The temporary file is made exclusively (``O_CREAT | O_EXCL |
O_NOFOLLOW``: never through a link planted under its name), and renamed onto the name
decided before any work. Links in the folders above the name are followed: that is how a
folder is named. A dangling own link is refused, and so is a name (or an own link's
target) that is a device, a FIFO, a socket or a folder, which a rename would replace.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from ..files.reading import NotRegularFile
from .interrupt import ctrl_c_seen


def target_of(path: str | Path) -> Path:
    """The file a write to ``path`` lands in: ``path``; the final target of the symlink
    it is where that link is the user's own (see the module docstring); ``path`` itself
    for any other link, which the write replaces. NotRegularFile for a dangling own link
    or a name (or own link's target) that exists and is not a regular file."""
    path = Path(path)
    target = path
    for _ in range(40):  # link by link: each one must be the user's own to be followed
        try:
            lstat = os.lstat(target)
        except FileNotFoundError:
            if target is not path:  # an own link that leads nowhere
                raise NotRegularFile(errno.ENOENT, f"a symlink to {target}, which does not "
                                                   "exist", str(path)) from None
            return path
        if not stat.S_ISLNK(lstat.st_mode):
            break
        if not _own_link(target, lstat):
            return target  # replaced by the write, never followed
        target = target.parent / os.readlink(target)  # (its .. as the kernel reads it)
    else:
        raise NotRegularFile(errno.ELOOP, "too many levels of symlinks", str(path))
    if not stat.S_ISREG(lstat.st_mode):
        raise NotRegularFile(errno.EINVAL, "not a regular file", str(path))
    return target


def _own_link(path: Path, link: os.stat_result) -> bool:
    """A link this user made, in a folder of theirs that no one else may write."""
    uid = getattr(os, "getuid", lambda: None)()
    try:
        folder = os.stat(path.parent)
    except OSError:
        return False
    others_write = folder.st_mode & (stat.S_IWOTH | stat.S_IWGRP)
    return uid is not None and link.st_uid == uid == folder.st_uid and not others_write


def check_writable(path: str | Path) -> Path:
    """Whether a writer could put a file at ``path``, said before any work: its target
    (:func:`target_of`; NotRegularFile for a dangling own link or a non-regular file),
    and a folder that exists and may be written (OSError otherwise). Returns the target."""
    target = target_of(path)
    folder = target.parent
    if not folder.is_dir():
        raise FileNotFoundError(errno.ENOENT, f"no folder {folder}", str(path))
    if not os.access(folder, os.W_OK | os.X_OK):
        raise PermissionError(errno.EACCES, f"the folder {folder} cannot be written",
                              str(path))
    return target


class NewFile:
    """``temp``: where to write; ``commit()`` renames it onto ``target`` (``path``, or an
    own link's target: :func:`target_of`), ``discard()`` removes it. Without ``replace``
    an existing ``path`` raises FileExistsError, here and at the rename (a file that
    appeared meanwhile is not replaced either). Everything that can be refused is refused
    here, before any work: an existing name without ``replace``, a non-regular file, an
    unwritable folder."""

    kept_bytes = 0  # how much of ``temp`` was there before this writer (an appended copy)

    def __init__(self, path: str | Path, replace: bool = False):
        self.path = Path(path)
        self.replace = replace
        self._held: list[BinaryIO] = []  # closed once committed or discarded (a lock)
        self.target = target_of(self.path)
        if not replace and (self.path.exists() or self.path.is_symlink()):
            raise FileExistsError(errno.EEXIST, "exists", str(self.path))
        self.temp = _create_beside(self.target)

    def hold(self, fh: BinaryIO) -> None:
        """Keep ``fh`` (a lock on the destination) open until the file is committed or
        discarded."""
        self._held.append(fh)

    def release(self) -> None:
        """Close what was held (a lock), leaving ``temp`` where it is: the runs did not
        finish, and what they measured is kept under the temporary name."""
        self._release()

    def _release(self) -> None:
        held, self._held = self._held, []
        for fh in held:
            with contextlib.suppress(OSError):
                fh.close()

    def _keep_mode(self) -> None:
        """A file replaced keeps who may read it (preferences, a private recording); a
        link replaced gives none (its target's mode is not its own)."""
        try:
            mode = os.lstat(self.target).st_mode
        except FileNotFoundError:
            return
        if stat.S_ISREG(mode):
            os.chmod(self.temp, stat.S_IMODE(mode))

    def commit(self) -> Path:
        if ctrl_c_seen():  # one that Python dropped: the work was cut short all the same
            raise KeyboardInterrupt
        with open(self.temp, "rb") as fh:  # on disk before the name says it is whole
            os.fsync(fh.fileno())
        if target_of(self.path) != self.target:  # (changed meanwhile: not written)
            raise FileExistsError(errno.EEXIST, "changed while it was written", str(self.path))
        self._keep_mode()
        if self.replace:
            os.replace(self.temp, self.target)
            self._release()  # after the rename: the next one opens the new file
            return self.path
        try:
            os.link(self.temp, self.target)  # fails, atomically, where the name is taken
        except FileExistsError:
            raise FileExistsError(errno.EEXIST, "exists", str(self.path)) from None
        except OSError:  # a file system without hard links
            if os.path.lexists(self.target):
                raise FileExistsError(errno.EEXIST, "exists", str(self.path)) from None
            os.replace(self.temp, self.target)
            self._release()
            return self.path
        self.temp.unlink()
        self._release()
        return self.path

    def discard(self) -> None:
        self.temp.unlink(missing_ok=True)
        self._release()


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)  # (O_EXCL alone already refuses a link there)


def _create_beside(path: Path) -> Path:
    """A new empty file in ``path``'s folder: hidden, same suffix, made exclusively."""
    import secrets  # here: a reader (``gemmscope report``) needs none (hashlib, hmac)

    for _ in range(100):
        temp = path.with_name(f".{path.stem}.{secrets.token_hex(4)}.tmp{path.suffix}")
        try:
            os.close(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o666))
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


def write_bytes(path: str | Path, data: bytes, replace: bool = True) -> Path:
    """``data`` in ``path``, whole or not at all (a short write, a full disk: OSError,
    and ``path`` as it was)."""
    with replacing(path, replace) as temp:
        with open(temp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if temp.stat().st_size != len(data):
            raise OSError(errno.EIO, f"{len(data)} bytes written, "
                                     f"{temp.stat().st_size} on disk", str(path))
    return Path(path)


def write_text(path: str | Path, text: str, replace: bool = True) -> Path:
    """``text`` as UTF-8 in ``path``, whole or not at all (a lone surrogate, which UTF-8
    cannot hold, is written as U+FFFD)."""
    return write_bytes(path, text.encode("utf-8", errors="replace"), replace)
