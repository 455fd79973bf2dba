"""Cross-check of a model's shared-memory instructions against the compiled kernel.

Compiles a level offline (NVRTC through cuda-bindings, no GPU) for sm_90, disassembles it
with nvdisasm, finds the K loop (the loop with the most shared loads) and counts its
shared-memory instructions by kind (LDS, LDS.64, LDS.128, LDSM, STS..., STSM, LDGSTS). The loop
body is one K step, fully unrolled inside, so those counts must equal the model's per warp
per K step; prologues (the first tile of a double buffer, the first stages of a cp.async
ring, a peeled first k) sit outside the loop.

Optional tools: the ``nvrtc`` extra (cuda-bindings, nvidia-cuda-nvrtc, headers) and
nvdisasm (the nvidia-cuda-nvdisasm wheel, or on PATH). :func:`tools_missing` says which
are absent; nothing here is imported by the app.
"""

from __future__ import annotations

import collections
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..ladder import registry
from ..models.level_model import LevelModel, Op, WarpAccess
from . import nvrtc_options

_SASS_OP = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(@!?U?P\w+\s+)?((?:LDS|STS|LDSM|STSM|LDGSTS)"
                      r"(?:\.[A-Z0-9_]+)*)\s", re.M)
_SASS_LINE = re.compile(_SASS_OP.pattern + ".*$", re.M)  # the whole line of one


def sass_kind(acc: WarpAccess) -> str:
    """The SASS mnemonic family a modelled shared access compiles to."""
    if acc.op is Op.CP_ASYNC:
        return "LDGSTS"
    if "ldmatrix" in acc.label:
        return "LDSM"
    if "stmatrix" in acc.label:
        return "STSM"
    base = "LDS" if acc.op is Op.LOAD else "STS"
    return base + {4: "", 8: ".64", 16: ".128"}.get(acc.width_bytes, "")


def normalise(mnemonic: str) -> str:
    if mnemonic.startswith(("LDSM", "STSM")):
        return mnemonic[:4]
    if mnemonic.startswith("LDGSTS"):
        return "LDGSTS"
    parts = mnemonic.split(".")
    width = next((p for p in parts[1:] if p in {"64", "128"}), "")
    return parts[0] + (f".{width}" if width else "")


def nvdisasm_path() -> str | None:
    try:
        import nvidia

        for base in getattr(nvidia, "__path__", []):
            p = Path(base) / "cu13" / "bin" / "nvdisasm"
            if p.exists():
                return str(p)
    except ImportError:
        pass
    return shutil.which("nvdisasm")


def include_dirs() -> list[str]:
    found = []
    try:
        import nvidia

        for base in getattr(nvidia, "__path__", []):
            p = Path(base) / "cu13" / "include"
            if p.is_dir():
                found.append(str(p))
    except ImportError:
        pass
    return found + [d for d in ("/usr/local/cuda/include",) if Path(d).is_dir()]


def tools_missing() -> str | None:
    try:
        from cuda.bindings import nvrtc  # noqa: F401
    except ImportError:
        return "cuda-bindings (the nvrtc extra) is not installed"
    if nvdisasm_path() is None:
        return "nvdisasm is not installed (pip install nvidia-cuda-nvdisasm)"
    return None


def compiler_versions() -> str:
    """The NVRTC and nvdisasm releases the check runs with, e.g. "NVRTC 13.5, nvdisasm
    V13.5.37": a K loop is one compiler's schedule, so a mismatch names it."""
    from cuda.bindings import nvrtc

    _, major, minor = nvrtc.nvrtcVersion()
    tool = nvdisasm_path()
    out = subprocess.run([tool, "--version"], capture_output=True, text=True,
                         check=False).stdout if tool else ""
    release = re.search(r"V\d+(?:\.\d+)+", out)
    return f"NVRTC {major}.{minor}, nvdisasm {release.group(0) if release else '?'}"


def compile_sass(level_id: str, src_dir: Path, arch: str | None = None) -> str:
    """SASS text of the level's fast-path (VEC) instantiation, for ``arch`` or else the
    level's own (sm_90a for the wgmma levels: wgmma and setmaxnreg exist only there) or
    sm_90."""
    from cuda.bindings import nvrtc

    level = registry.get(level_id)
    arch = arch or level.arch or "sm_90"
    assert level.source is not None
    # a level kept outside the ladder's folder (source_dir: a test's, a newcomer's level
    # before it moves in) is read from there; its includes from src_dir, then the ladder's
    folder = Path(level.source_dir) if level.source_dir else src_dir
    from .nvrtc import plain_text  # the plain build's text: no trace line (issue 46)

    text = plain_text((folder / level.source).read_text(encoding="utf-8"))
    name = level.name_expression(True)

    def check(result: object, what: str) -> Any:
        err, *rest = result if isinstance(result, tuple) else (result,)
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise RuntimeError(f"{level_id}: {what}: {err}")
        return rest[0] if len(rest) == 1 else rest

    prog = check(nvrtc.nvrtcCreateProgram(text.encode(), level.source.encode(), 0, [], []),
                 "create")
    check(nvrtc.nvrtcAddNameExpression(prog, name.encode()), "name")
    # the build's options: the code checked is the code that runs (one in every process)
    opts = [*(o.encode() for o in nvrtc_options.BASE), f"-arch={arch}".encode(), b"-ftz=true",
            f"-I{src_dir}".encode(), f"-I{registry.cuda_dir()}".encode()]
    opts += [f"-I{d}".encode() for d in include_dirs()]
    if nvrtc.nvrtcCompileProgram(prog, len(opts), opts)[0] != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        size = check(nvrtc.nvrtcGetProgramLogSize(prog), "log")
        log = b" " * int(size)
        nvrtc.nvrtcGetProgramLog(prog, log)
        raise RuntimeError(f"{level_id}: NVRTC failed:\n{log.decode(errors='replace')}")
    size = check(nvrtc.nvrtcGetCUBINSize(prog), "cubin size")
    cubin = b" " * int(size)
    check(nvrtc.nvrtcGetCUBIN(prog, cubin), "cubin")
    nvrtc.nvrtcDestroyProgram(prog)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{level_id}.cubin"
        path.write_bytes(cubin)
        tool = nvdisasm_path()
        assert tool is not None
        out = subprocess.run([tool, "-c", str(path)], capture_output=True, text=True,
                             check=True)
    return out.stdout


_LABEL = re.compile(r"^(\.L_x_\d+):", re.M)
_BRANCH = re.compile(r"BRA\s+`?\(?(\.L_x_\d+)\)?")


def main_loop(sass: str) -> str:
    """The body of the loop with the most shared loads (the K loop): the text from a
    label to the last backward branch to it. The compiler may rotate that loop (issue the
    first k of the next tile at the bottom, with a peeled copy before the loop), so the
    body, not the whole kernel, holds one K step's instructions. Of two loops with as many
    shared loads (some: a loop without any, such as a tile loop around a wgmma K loop,
    is judged by length alone), the one with more tensor-core instructions
    (fp8_block_scaled's copy for whole tiles beside the one for tiles half past N, which
    reads as many scales), then the shorter: e.g. the guard-free copy of a K loop beside
    its guarded one (cp_async_interior), where interior blocks spend their time. Never a
    loop that holds another loop with shared loads. The whole text when there is no loop."""
    labels = {m.group(1): m.start() for m in _LABEL.finditer(sass)}
    spans: dict[str, tuple[int, int]] = {}  # label -> its text up to its last backward branch
    # code after the last EXIT is out of line: the retry of an mbarrier wait branches back
    # to the wait from there (fp8_deep), which closes no loop of the kernel's body
    exits = [m.start() for m in _EXIT.finditer(sass)]
    body_end = exits[-1] if exits else len(sass)
    for m in _BRANCH.finditer(sass):
        start = labels.get(m.group(1))
        if start is None or start > m.start() or m.start() > body_end:
            continue  # a forward branch, or one from out-of-line code
        spans[m.group(1)] = (start, m.end())
    loads = {span: sum(v for k, v in sass_counts(sass[span[0]:span[1]]).items()
                       if k.startswith("LDS"))
             for span in spans.values()}
    # a loop around loops with shared loads (a persistent kernel's loop over its tiles,
    # around one or two copies of the K loop) is not the K loop: innermost ones only
    inner = [s for s in loads
             if not any(o != s and s[0] <= o[0] and o[1] <= s[1] and loads[o] for o in loads)]
    best, best_key = sass, (-1, -1)
    for span in inner:
        body = sass[span[0]:span[1]]
        key = (loads[span], _tensor_ops(body) if loads[span] else 0)
        if key > best_key or (key == best_key and len(body) < len(best)):
            best, best_key = body, key
    return best


_EXIT = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+EXIT\b", re.M)
_TENSOR_OPS = ("HMMA", "HGMMA", "QGMMA", "IMMA", "IGMMA")


def _tensor_ops(sass: str) -> int:
    return sum(n for op, n in mnemonic_counts(sass).items() if op.startswith(_TENSOR_OPS))


_ANY_OP = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(@!?U?P\w+\s+)?"
                     r"([A-Z][A-Z0-9_]*(?:\.[A-Za-z0-9_]+)*)", re.M)


def mnemonic_counts(sass: str) -> dict[str, int]:
    """Every instruction by its full mnemonic (``ST.E``, ``HGMMA.64x256x16.F32.BF16``...),
    never-executed ones (@!PT) left out: for instructions ``sass_counts`` does not sort,
    such as generic stores that reach shared memory."""
    counts: collections.Counter[str] = collections.Counter()
    for m in _ANY_OP.finditer(sass):
        if m.group(1) and m.group(1).strip().startswith("@!PT"):
            continue
        counts[m.group(2)] += 1
    return dict(counts)


def sass_counts(sass: str) -> dict[str, int]:
    """Shared-memory instructions by kind; never-executed ones (@!PT) are left out."""
    counts: collections.Counter[str] = collections.Counter()
    for m in _SASS_OP.finditer(sass):
        if m.group(1) and m.group(1).strip().startswith("@!PT"):
            continue
        counts[normalise(m.group(2))] += 1
    return dict(counts)


def model_counts(model: LevelModel, warp: int = 0, k_step: int = 0) -> dict[str, int]:
    counts: collections.Counter[str] = collections.Counter()
    for acc in model.main_loop_accesses(warp, k_step):
        counts[sass_kind(acc)] += 1
    return dict(counts)


@dataclass(frozen=True, slots=True)
class SassComparison:
    level: str
    sass: dict[str, int]
    model: dict[str, int]
    loop: str = field(default="", repr=False)  # the K loop's SASS text

    def lines_of(self, kinds: Iterable[str]) -> list[str]:
        """The K loop's instructions of these kinds (``LDS``, ``LDS.128``...), as
        nvdisasm printed them, never-executed ones included: what a mismatch is made of."""
        wanted = set(kinds)
        return [m.group(0).strip() for m in _SASS_LINE.finditer(self.loop)
                if normalise(m.group(2)) in wanted]

    @property
    def mismatches(self) -> dict[str, tuple[int, int]]:
        """Shared instruction kinds whose count in the K loop differs from the model's
        per-K-step count, as (sass, model)."""
        kinds = set(self.sass) | set(self.model)
        return {k: (self.sass.get(k, 0), self.model.get(k, 0)) for k in sorted(kinds)
                if self.sass.get(k, 0) != self.model.get(k, 0)}


def compare_level(level_id: str, model: LevelModel, src_dir: Path) -> SassComparison:
    loop = main_loop(compile_sass(level_id, src_dir))
    per_step = model_counts(model, model.sass_warp)
    # a K loop unrolled over the ring's stages (fp8_deep) holds that many K steps a trip
    return SassComparison(level_id, sass_counts(loop),
                          {k: v * model.sass_k_steps for k, v in per_step.items()}, loop)
