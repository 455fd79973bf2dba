"""Resource usage of the kernels in a cubin, read from its ELF sections (no tool needed).

What ``cuobjdump -res-usage`` prints, from the same places:

- registers per thread: the ``EIATTR_REGCOUNT`` attribute (0x2f) of the cubin's
  ``.nv.info`` section, one per kernel (by symbol index);
- local memory per thread (stack frame, where spills go): ``EIATTR_FRAME_SIZE`` (0x11);
- static shared memory: the size of the kernel's ``.nv.shared.<name>`` section, less the
  1 KB that the toolchain places at its start on sm_80 and later (the block's reserved
  shared memory, ``.nv.shared.reserved.0``; the driver's CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
  leaves it out, and the occupancy calculation adds it back for every block);
- named barriers: ``EIATTR_NUM_BARRIERS`` (0x4c) of ``.nv.info.<name>``;
- ``__launch_bounds__`` threads: ``EIATTR_MAX_THREADS`` (0x05).

An attribute entry is (format u8, attribute u8, then a u16 value for format 0x03 or 0x02,
or a u16 size and that many bytes for format 0x04).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

EIATTR_MAX_THREADS = 0x05
EIATTR_FRAME_SIZE = 0x11
EIATTR_REGCOUNT = 0x2F
EIATTR_NUM_BARRIERS = 0x4C
RESERVED_SHARED_BYTES = 1024  # per block, sm_80 and later


@dataclass(frozen=True, slots=True)
class KernelResources:
    name: str  # mangled
    regs: int
    smem_static_bytes: int
    local_bytes: int
    barriers: int
    max_threads: int | None  # from __launch_bounds__, else None


def kernels(cubin: bytes) -> dict[str, KernelResources]:
    """Every kernel of a cubin with its resources, by mangled name."""
    if cubin[:4] != b"\x7fELF" or cubin[4] != 2:
        raise ValueError("not a 64-bit ELF cubin")
    sections = _sections(cubin)
    by_name = {s.name: s for s in sections}
    symtab = next(s for s in sections if s.type == 2)  # SHT_SYMTAB
    strtab = sections[symtab.link]
    symbols = {}
    for i in range(symtab.size // 24):
        st_name, = struct.unpack_from("<I", cubin, symtab.offset + 24 * i)
        symbols[i] = _cstr(cubin, strtab.offset + st_name)
    per_symbol: dict[str, dict[int, int]] = {}
    info = by_name.get(".nv.info")
    if info is not None:
        for attr, value in _attributes(cubin[info.offset:info.offset + info.size]):
            if len(value) == 8:
                index, number = struct.unpack("<II", value)
                per_symbol.setdefault(symbols.get(index, ""), {})[attr] = number
    out = {}
    for s in sections:
        if not s.name.startswith(".text."):
            continue
        name = s.name[len(".text."):]
        attrs = per_symbol.get(name, {})
        own: dict[int, bytes] = {}
        own_info = by_name.get(f".nv.info.{name}")
        if own_info is not None:
            own = dict(_attributes(cubin[own_info.offset:own_info.offset + own_info.size]))
        shared = by_name.get(f".nv.shared.{name}")
        static = 0
        if shared is not None:
            reserved = RESERVED_SHARED_BYTES if ".nv.shared.reserved.0" in by_name else 0
            static = max(0, shared.size - reserved)
        max_threads = None
        if EIATTR_MAX_THREADS in own and len(own[EIATTR_MAX_THREADS]) >= 12:
            x, y, z = struct.unpack_from("<III", own[EIATTR_MAX_THREADS])
            max_threads = x * max(y, 1) * max(z, 1)
        barriers = own.get(EIATTR_NUM_BARRIERS, b"\0")
        out[name] = KernelResources(
            name=name, regs=attrs.get(EIATTR_REGCOUNT, 0), smem_static_bytes=static,
            local_bytes=attrs.get(EIATTR_FRAME_SIZE, 0),
            barriers=int.from_bytes(barriers[:2], "little"), max_threads=max_threads)
    return out


@dataclass(frozen=True, slots=True)
class _Section:
    name: str
    type: int
    offset: int
    size: int
    link: int


def _sections(b: bytes) -> list[_Section]:
    shoff, = struct.unpack_from("<Q", b, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3A)
    raw = [struct.unpack_from("<IIQQQQIIQQ", b, shoff + i * shentsize) for i in range(shnum)]
    names_at = raw[shstrndx][4]
    return [_Section(_cstr(b, names_at + h[0]), h[1], h[4], h[5], h[6]) for h in raw]


def _cstr(b: bytes, at: int) -> str:
    return b[at:b.index(b"\0", at)].decode("ascii", errors="replace")


def _attributes(data: bytes) -> list[tuple[int, bytes]]:
    """(attribute, value bytes) of an .nv.info section."""
    out, i = [], 0
    while i + 4 <= len(data):
        fmt, attr = data[i], data[i + 1]
        if fmt == 0x04:  # EIFMT_SVAL: u16 size, then the bytes
            size, = struct.unpack_from("<H", data, i + 2)
            out.append((attr, data[i + 4:i + 4 + size]))
            i += 4 + size
        else:  # EIFMT_HVAL / EIFMT_BVAL: the value in the u16; EIFMT_NVAL: none
            out.append((attr, data[i + 2:i + 4]))
            i += 4
    return out
