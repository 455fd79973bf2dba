"""The GPU architectures the levels are built for, with the per-block and per-SM limits a
level's resources are checked against (CUDA C++ Programming Guide, "Features and Technical
Specifications", compute capabilities 8.0 to 12.0), and which of them a level claims.

A level that names no architecture (SIMT and mma.sync levels, no Hopper instructions)
claims every architecture here whose limits its launch fits: the ladder's parameters are
tuned on an H200, so a level whose shared memory stages outgrow 99 KiB per block runs on
sm_80 (163 KiB) and sm_90 (227 KiB) only. A level that names ``sm_90a`` (wgmma, TMA,
setmaxnreg) claims sm_90a alone: those instructions exist on compute capability 9.0 and
nowhere else, Blackwell included. At run time the device's own limits are read from the
device (kernels/device/gpu.py); these serve where there is none (CI, the registry)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

KIB = 1024


@dataclass(frozen=True, slots=True)
class Arch:
    name: str  # the -arch NVRTC takes
    cc: str  # compute capability, "8.6"
    family: str  # what people call it
    smem_per_block_optin_bytes: int  # static + dynamic, after opting in
    smem_per_sm_bytes: int
    max_threads_per_sm: int
    regs_per_sm: int = 64 * KIB
    regs_per_block: int = 64 * KIB
    max_regs_per_thread: int = 255
    max_threads_per_block: int = 1024
    static_smem_per_block_bytes: int = 48 * KIB  # without opt-in, the most a kernel declares


ARCHS: dict[str, Arch] = {a.name: a for a in (
    Arch("sm_80", "8.0", "Ampere (A100, A30)", 163 * KIB, 164 * KIB, 2048),
    Arch("sm_86", "8.6", "Ampere (A10, RTX 30)", 99 * KIB, 100 * KIB, 1536),
    Arch("sm_89", "8.9", "Ada (L4, L40S, RTX 40)", 99 * KIB, 100 * KIB, 1536),
    Arch("sm_90", "9.0", "Hopper (H100, H200)", 227 * KIB, 228 * KIB, 2048),
    Arch("sm_90a", "9.0", "Hopper only (wgmma, TMA)", 227 * KIB, 228 * KIB, 2048),
    Arch("sm_100", "10.0", "Blackwell (B200, GB200)", 227 * KIB, 228 * KIB, 2048),
    Arch("sm_120", "12.0", "Blackwell (RTX 50)", 99 * KIB, 100 * KIB, 1536),
)}
# what a level without an architecture of its own is built for (no sm_90a: nothing in it
# needs Hopper's own instructions, and sm_90 code runs on every 9.0 device)
PORTABLE = ("sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120")
FP8_ARCHS = ("sm_89", "sm_90", "sm_100", "sm_120")  # FP8 tensor cores: Ada and later


def fits(arch: Arch, threads: int, dyn_smem_bytes: int) -> str | None:
    """Why a block of ``threads`` threads with this much dynamic shared memory cannot
    launch on ``arch``, or None (what is known before compiling)."""
    if threads > arch.max_threads_per_block:
        return f"a block of {threads} threads; {arch.name} allows {arch.max_threads_per_block}"
    if dyn_smem_bytes > arch.smem_per_block_optin_bytes:
        return (f"{dyn_smem_bytes / KIB:.0f} KiB of shared memory per block; {arch.name} "
                f"allows {arch.smem_per_block_optin_bytes // KIB} KiB")
    return None


def claimed(own_arch: str | None, threads: int, dyn_smem_bytes: int) -> tuple[str, ...]:
    """The architectures a level claims (see the module's text)."""
    if own_arch is not None:
        return (own_arch,)
    return tuple(a for a in PORTABLE if fits(ARCHS[a], threads, dyn_smem_bytes) is None)


def device_arch(cc: str) -> str:
    """``sm_XY`` of a device's compute capability "X.Y"."""
    major, _, minor = cc.partition(".")
    return f"sm_{major}{minor or '0'}"


def runs_on(claims: tuple[str, ...], cc: str | None) -> bool:
    """Whether a level claiming ``claims`` runs on a device of compute capability ``cc``:
    sm_90a needs exactly 9.0; a portable level runs where its claims name the device's
    architecture, and on an architecture this table lacks (a newer minor, 10.3 or 12.1)
    where it claims one of the same major. None (no device known): True, the runner
    decides with the device's own limits."""
    if cc is None:
        return True
    here = device_arch(cc)
    if here in claims or (cc == "9.0" and "sm_90a" in claims):
        return True
    if here in ARCHS:
        return False
    major = cc.partition(".")[0]
    return any(ARCHS[c].cc.partition(".")[0] == major for c in claims
               if c in ARCHS and c != "sm_90a")


def need_text(own_arch: str | None, claims: tuple[str, ...]) -> str:
    """What a level needs, in a few words: "sm_90a only (Hopper)", "sm_80+", or the list
    where some are missing ("sm_80, sm_90, sm_100")."""
    if own_arch == "sm_90a":
        return "sm_90a only (Hopper)"
    if claims == PORTABLE:
        return "sm_80+"
    return ", ".join(claims) if claims else "no listed architecture"


class Claims(Protocol):
    """What a catalog entry says of the architectures it claims (protocol.records'
    CatalogEntry; None in a recording older than them)."""

    @property
    def id(self) -> str: ...
    @property
    def archs(self) -> list[str] | None: ...
    @property
    def arch_need(self) -> str | None: ...


def cannot_run(level_ids: Iterable[str], catalog: Iterable[Claims], cc: str | None
               ) -> dict[str, str]:
    """The levels of ``level_ids`` that a device of compute capability ``cc`` cannot run,
    each with why, by the ``archs`` their catalog entries claim (the session header's
    catalog: the runner's own levels). A level whose entry says no ``archs`` (a recording
    older than them) is left to the runner."""
    if cc is None:
        return {}
    entries: dict[str, Claims] = {}
    for e in catalog:
        if e.archs is not None:
            entries.setdefault(e.id, e)
    here = device_arch(cc)
    out = {}
    for level_id in dict.fromkeys(level_ids):
        entry = entries.get(level_id)
        if entry is not None and entry.archs is not None \
                and not runs_on(tuple(entry.archs), cc):
            need = entry.arch_need or ", ".join(entry.archs)
            out[level_id] = f"{level_id} needs {need}; this GPU is {here}"
    return out
