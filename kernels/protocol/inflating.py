"""A gzip-compressed recording (``.jsonl.gz``) read as its lines' bytes, bounded as
untrusted input: zlib inflates it piece by piece, each member's CRC and length checked."""

from __future__ import annotations

import zlib
from typing import IO, Any

from .events import ProtocolError

GZIP_MAGIC = b"\x1f\x8b"
# a compressed recording inflates to at most this many times its size, and never past
# MAX_INFLATED_BYTES (JSON lines compress 10-20 times; a "zip bomb" is refused, not read)
MAX_INFLATION = 200
MAX_INFLATED_BYTES = 64 << 30


class Inflating:
    """A gzip-compressed recording (``.jsonl.gz``) read as its lines' bytes, bounded: what
    it inflates to is limited (MAX_INFLATION, MAX_INFLATED_BYTES), a corrupt stream is a
    ProtocolError, and a file cut short ends the read at the cut (``cut``) with every
    whole line before it kept, as an uncompressed recording cut short is read.

    zlib reads each member (gzip's header, the data, its CRC and length checked) in one
    call per piece of output; members follow one another, zero bytes between them are
    passed over (as gzip does)."""

    def __init__(self, raw: IO[bytes], source: str, size: int) -> None:
        self.raw, self.source = raw, source
        self.limit = min(MAX_INFLATED_BYTES, max(64 << 20, MAX_INFLATION * size))
        self.out = 0
        self.cut = False
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
            raise ProtocolError(f"not a readable gzip file: {exc}", None, self.source
                                ) from None
        self.out += len(data)
        if self.out > self.limit:
            raise ProtocolError(f"the compressed file inflates past {self.limit / 2**30:.1f} GiB "
                                f"({MAX_INFLATION} times its size at most): refused",
                                None, self.source)
        return data

    def _more(self) -> None:
        if not self.pending and not self.ended:
            self.pending = self.raw.read(1 << 18)
            self.ended = not self.pending

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
                self.member = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
            given = len(self.pending)
            piece: bytes = self.member.decompress(self.pending, n)  # at most n bytes
            self.pending = self.member.unconsumed_tail
            if self.member.eof:
                self.pending, self.member = self.member.unused_data, None
            elif not piece and len(self.pending) == given:  # took nothing, gave nothing
                if self.pending:  # (zlib always moves on while it has input)
                    raise zlib.error("the stream does not move on")
                self.cut = self.done = True  # the file stops inside a member
            if piece:
                return piece
        return b""
