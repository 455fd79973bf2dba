"""Reading the cubins build_determinism.py compares: a cubin's ELF cut from what follows
it, the digest of its code (.text sections, registers, stack), the PTX it carries, the
sections that differ, its SASS (nvdisasm) and what moved between two SASS texts.
A helper of the script, not a script (benchmarks/_smoke.py's habit).
"""

from __future__ import annotations

import collections
import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path


def elf_only(data: bytes) -> bytes:
    """The ELF file at the start of ``data``, without what follows it (CuPy's cache file
    keeps more after the cubin): up to the end of its headers, sections or segments."""
    import struct

    phoff, shoff = struct.unpack_from("<QQ", data, 0x20)
    phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", data, 0x36)
    end = max(shoff + shnum * shentsize, phoff + phnum * phentsize)
    for i in range(phnum):
        _t, _f, offset, _v, _p, filesz = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
        end = max(end, offset + filesz)
    for i in range(shnum):
        _n, kind, _f, _a, offset, size = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
        if kind != 8:  # SHT_NOBITS takes no room in the file
            end = max(end, offset + size)
    return data[:end]


def code_digest(cubin: bytes) -> str:
    """What the GPU runs: each kernel's .text section with its registers, stack frame and
    shared memory; not line tables, the PTX copy, or the ELF layout."""
    from gemmscope.kernels.toolchain import cubin as elf

    h = hashlib.sha256()
    for s in sorted(elf._sections(cubin), key=lambda s: s.name):
        if s.name.startswith(".text."):
            h.update(s.name.encode() + b"\0" + cubin[s.offset:s.offset + s.size])
    for name, res in sorted(elf.kernels(cubin).items()):
        h.update(f"{name} {res.regs} {res.local_bytes} {res.smem_static_bytes}".encode())
    return h.hexdigest()[:12]


def embedded_ptx(cubin: bytes) -> str:
    """The PTX that -lineinfo puts in the cubin (.nv_debug_ptx_txt), '' without it."""
    from gemmscope.kernels.toolchain import cubin as elf

    for s in elf._sections(cubin):
        if s.name == ".nv_debug_ptx_txt":
            text = cubin[s.offset:s.offset + s.size].replace(b"\0", b"\n")
            return text.decode(errors="replace").strip("\n") + "\n"
    return ""


def differing_sections(a: bytes, b: bytes) -> list[str]:
    from gemmscope.kernels.toolchain import cubin as elf

    sa = {s.name: a[s.offset:s.offset + s.size] for s in elf._sections(a)}
    sb = {s.name: b[s.offset:s.offset + s.size] for s in elf._sections(b)}
    return sorted(n for n in set(sa) | set(sb) if sa.get(n) != sb.get(n))


def nvdisasm_tool() -> str | None:
    from gemmscope.kernels.toolchain import sass_check

    found = sass_check.nvdisasm_path()
    if found:
        return found
    for base in (os.environ.get("CUDA_PATH"), os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if base and Path(base, "bin", "nvdisasm").exists():
            return str(Path(base, "bin", "nvdisasm"))
    return None


def sass_text(tool: str | None, path: Path) -> str | None:
    """The disassembly, "" without nvdisasm, None where it failed (said on stderr once)."""
    if tool is None:
        return ""
    proc = subprocess.run([tool, "-c", str(path)], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        if not _NVDISASM_FAILED:
            print(f"nvdisasm failed on {path}: {proc.stderr.strip()[:300]}", file=sys.stderr)
        _NVDISASM_FAILED.append(path)
        return None
    return proc.stdout


_NVDISASM_FAILED: list[Path] = []


_OP = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", re.M)
_FUNC = re.compile(r"^\s*\.text\.(\S+?):?\s*$", re.M)


def per_kernel_ops(sass: str) -> dict[str, collections.Counter[str]]:
    """Mnemonic counts per kernel (short names: the template arguments' tail)."""
    out: dict[str, collections.Counter[str]] = {}
    marks = list(_FUNC.finditer(sass))
    for i, m in enumerate(marks):
        body = sass[m.end():marks[i + 1].start() if i + 1 < len(marks) else len(sass)]
        out[m.group(1)] = collections.Counter(_OP.findall(body))
    return out


def kernel_label(mangled: str) -> str:
    """A short name for a kernel: its VEC flag (the last template argument), which tells
    the vector instantiation from the edge one; else the start of the name."""
    m = re.search(r"ELb([01])EE", mangled)
    return f"VEC={'true' if m.group(1) == '1' else 'false'}" if m else mangled[:24]


def describe(sass_a: str, sass_b: str, cubin_a: bytes, cubin_b: bytes) -> str:
    """What one code has that the other has not, per kernel."""
    from gemmscope.kernels.toolchain import cubin as elf

    ka, kb = elf.kernels(cubin_a), elf.kernels(cubin_b)
    oa, ob = per_kernel_ops(sass_a), per_kernel_ops(sass_b)
    parts = []
    for name in sorted(set(ka) | set(kb)):
        ra, rb = ka.get(name), kb.get(name)
        ca, cb = oa.get(name, collections.Counter()), ob.get(name, collections.Counter())
        bits = []
        if ra and rb and ra.regs != rb.regs:
            bits.append(f"regs {ra.regs}->{rb.regs}")
        if ra and rb and ra.local_bytes != rb.local_bytes:
            bits.append(f"stack {ra.local_bytes}->{rb.local_bytes}")
        if sum(ca.values()) != sum(cb.values()):
            bits.append(f"instr {sum(ca.values())}->{sum(cb.values())}")
        moved = {op: cb[op] - ca[op] for op in set(ca) | set(cb) if cb[op] != ca[op]}
        if moved:
            top = sorted(moved.items(), key=lambda kv: (-abs(kv[1]), kv[0]))[:4]
            bits.append(" ".join(f"{op}{d:+d}" for op, d in top))
        elif ca and ca == cb and sass_a and sass_b:
            bits.append("same instructions, other order/registers/control bits")
        if bits:
            parts.append(f"{kernel_label(name)}: " + ", ".join(bits))
    return "; ".join(parts) or "code bytes differ"
