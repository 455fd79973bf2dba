"""A gzip-compressed recording (``.jsonl.gz``) read as its lines' bytes, bounded as
untrusted input: zlib inflates it piece by piece, each member's CRC and length checked."""

from __future__ import annotations

import zlib
from typing import IO, Any

from .events import ProtocolError

GZIP_MAGIC = b"\x1f\x8b"
MEMBER_START = GZIP_MAGIC + b"\x08"  # and deflate, the one method gzip has
GZIP_CUT = "the compressed file ends early (cut short): the events before the cut were read"
# a compressed recording inflates to at most this many times its size, and never past
# MAX_INFLATED_BYTES (JSON lines compress 10-20 times; a "zip bomb" is refused, not read)
MAX_INFLATION = 200
MAX_INFLATED_BYTES = 64 << 30


class Inflating:
    """A gzip-compressed recording (``.jsonl.gz``) read as its lines' bytes, bounded: what
    it inflates to is limited (MAX_INFLATION, MAX_INFLATED_BYTES), a corrupt stream is a
    ProtocolError, and a file cut short ends the read at the cut (``cut``, and why in
    ``cut_reason``) with every whole line before it kept, as an uncompressed recording cut
    short is read. Bytes after a whole member that are not another one (``cat new >>
    old.jsonl.gz`` of a plain file, a copy that wrote junk past the end) are such a cut
    too: the read ends with the last whole member, and says where; so does a later member
    that is damaged (what it inflated before the damage is kept, line by line, as a cut
    plain file's lines are). Only a first member that cannot be read is an error.

    zlib reads each member (gzip's header, the data, its CRC and length checked) in one
    call per piece of output; members follow one another, zero bytes between them are
    passed over (as gzip does)."""

    def __init__(self, raw: IO[bytes], source: str, size: int) -> None:
        self.raw, self.source, self.size = raw, source, size
        self.limit = min(MAX_INFLATED_BYTES, max(64 << 20, MAX_INFLATION * size))
        self.out = 0
        self.cut = False
        self.cut_reason = ""  # where and why the read ended early
        self.members = 0  # whole members read
        self.member_end = 0  # the file offset where the last whole member ended
        self.member: Any = None  # the zlib decompressor of the member being read
        self.pending = b""  # compressed bytes read from the file, not yet inflated
        self.ended = False  # the file's last byte is read (into ``pending``)
        self.done = False  # nothing more comes: the end, or the cut

    def consumed(self) -> int:
        """Compressed bytes read so far (the reader's progress)."""
        return self.raw.tell()

    def read(self, n: int) -> bytes:
        """Up to ``n`` inflated bytes (fewer where a member or the file's piece ends),
        nothing at the end; where the file is cut, what inflated before the cut is
        returned (the next read returns nothing)."""
        try:
            data = self._inflate(n)
        except zlib.error as exc:
            if not self.members:
                raise ProtocolError(f"not a readable gzip file: {exc}", None, self.source
                                    ) from None
            self._stop(f"a damaged gzip member after byte {self.member_end:,} ({exc}); "
                       "read up to the damage")
            data = b""
        self.out += len(data)
        if self.out > self.limit:
            raise ProtocolError(f"the compressed file inflates past {self.limit / 2**30:.1f} GiB "
                                f"({MAX_INFLATION} times its size at most): refused",
                                None, self.source)
        return data

    def _more(self, at_least: int = 1) -> None:
        while len(self.pending) < at_least and not self.ended:
            more = self.raw.read(1 << 18)
            self.pending += more
            self.ended = not more

    def _stop(self, why: str) -> None:
        self.cut = self.done = True
        self.cut_reason = why

    def _offset(self) -> int:
        """The file offset of the first byte not yet inflated."""
        return self.raw.tell() - len(self.pending)

    def _inflate(self, n: int) -> bytes:
        """What one call of zlib gives, at most ``n`` bytes (not joined up to ``n``: a
        join would copy them once more); nothing at the end or the cut."""
        while not self.done:
            self._more()
            if self.member is None:  # before a member: another one, zero bytes, or the end
                self.pending = self.pending.lstrip(b"\0")
                if not self.pending:
                    self.done = self.ended
                    continue
                self._more(len(MEMBER_START))
                if self.members and not self.pending.startswith(MEMBER_START):
                    self._stop(f"{self.size - self.member_end:,} bytes that are not "
                               f"gzip follow the last whole member (at byte "
                               f"{self.member_end:,}); read up to them")
                    return b""
                self.member = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
            given = len(self.pending)
            piece: bytes = self.member.decompress(self.pending, n)  # at most n bytes
            self.pending = self.member.unconsumed_tail
            if self.member.eof:
                self.pending, self.member = self.member.unused_data, None
                self.members += 1
                self.member_end = self._offset()
            elif not piece and len(self.pending) == given:  # took nothing, gave nothing
                if self.pending:  # (zlib always moves on while it has input)
                    raise zlib.error("the stream does not move on")
                self._stop(GZIP_CUT)  # the file stops inside a member
            if piece:
                return piece
        return b""
