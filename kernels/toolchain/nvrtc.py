"""Building the levels: one source string per level, compiled by NVRTC.

The shared header is pasted into each level's source before compiling, because CuPy's
disk cache keys on the source string and options but not on included files: an edited
header must never reuse a stale cubin. On a GPU machine CuPy compiles (RawModule); on a
machine without a GPU, :func:`compile_offline` drives NVRTC through cuda-bindings, which
is how CI proves every level compiles for sm_90a.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..device import build_cache
from ..ladder.registry import Level, cuda_dir, source_file
from . import nvrtc_options

# a local header of kernels/cuda (common.cuh, hopper.cuh), pasted in place of its #include,
# or a level's .cu (an attempt source in benchmarks/attempts may build on its level's file)
_INCLUDE_LOCAL = re.compile(r'^\s*#include\s+"([A-Za-z0-9_]+\.cuh?)"\s*$', re.M)
# the trace build's lines (kernels/cuda/trace.cuh): a hook, one statement alone on its line,
# and the header's #include; the plain build's source is the file without them
TRACE_HEADER = "trace.cuh"
TRACE_DEFINE = "-DGEMMSCOPE_TRACE"
_TRACE_LINE = re.compile(r'^\s*(?:GS_TRACE\w*\(|#include\s+"trace\.cuh")')
# a loop body the trace build runs in two copies (split_regions): the marker's condition
# picks the copy with the trace lines, else the plain build's lines run
_SPLIT_BEGIN = re.compile(r"^\s*GS_TRACE_SPLIT\((.*)\);?\s*$")  # its comment cut off
# the same with the plain copy run as a loop of its own: GS_TRACE_SPLIT_RUN(cond, more, step)
_SPLIT_RUN_BEGIN = re.compile(r"^\s*GS_TRACE_SPLIT_RUN\((.*)\);?\s*$")
_SPLIT_END = re.compile(r"^\s*GS_TRACE_SPLIT_END\(\);?\s*$")
BASE_OPTIONS: tuple[str, ...] = nvrtc_options.BASE  # with the options that make builds identical


class CompileError(RuntimeError):
    """NVRTC rejected a level; the message carries the compiler log."""


def assemble(level: Level, trace: bool = False) -> str:
    """The level's source with each local header (common.cuh, hopper.cuh) pasted in place
    of its #include, once, transitively. ``#line`` directives keep every line numbered as
    in its own file (repository paths, see :func:`source_files`), so compiler messages and
    the cubin's line info (-lineinfo) point into the real files, not the pasted string.

    ``trace``: the trace build's source (kernels/cuda/trace.cuh), its hooks kept; without
    it every trace line is left out (:func:`plain_text`)."""
    return assemble_file(source_file(level), trace)


def plain_text(text: str) -> str:
    """A CUDA file as the plain build reads it: without its trace lines (a ``GS_TRACE*``
    hook alone on its line, the ``#include "trace.cuh"``). A file with none is unchanged,
    and a traced level's plain text is its source before it was traced, so its code key and
    cubin are too (tests/kernels/toolchain/test_trace_build.py)."""
    if "GS_TRACE" not in text and TRACE_HEADER not in text:
        return text
    kept = [line for line in text.splitlines(keepends=True) if not _TRACE_LINE.match(line)]
    return "".join(kept)


def _top_level_args(text: str) -> list[str]:
    """A macro's arguments: ``text`` cut at its commas outside parentheses and brackets."""
    args: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            args.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    args.append("".join(cur).strip())
    return args


def split_regions(text: str, key: str) -> str:
    """A file as the trace build reads it: each region between ``GS_TRACE_SPLIT(cond)`` and
    ``GS_TRACE_SPLIT_END()`` (each alone on its line, inside a loop's body) in two copies,
    ``if (cond) { the lines } else { the lines without their trace lines }``, so that a K
    step the sampling leaves out runs the plain build's code, not a branch around each of
    its records (issue 46 item 2). ``cond`` is the same in every thread and holds wherever
    a record of the region's would be kept (``gs_tr.samples`` of each step it records).
    It pays where a loop's steps are long and its records many (cp_async_interior +5.3 ->
    +3.6%, smem_padded +2.9 -> +0.2% at 4096^3). Two copies can take registers past the
    plain build's occupancy (double_buffer 32 -> 40, one block an SM instead of two: +51%;
    vectorized 127 -> 129: +61%), which a ``GS_TRACE_DO(__launch_bounds__(...))`` line
    before the kernel holds back; and a short step pays for the test itself, so ``cond``
    can be one compare with the next kept step, kept in a register the recording copy
    advances (smem_tiled, double_buffer, wmma: docs/perf-notes.md, stretch 16). A level
    takes the form measured cheapest for it. ``#line`` directives (file ``key``) number
    both copies as the file's own lines, and the lines after the region as before.

    ``GS_TRACE_SPLIT_RUN(cond, more, step)`` takes the test out of the steps it leaves
    out: the plain copy runs as a loop of its own, ``for (;;) { the lines; if (!(more))
    break; step; }``, from a step the test left out to the last before the next it keeps,
    so those steps run the plain build's loop with no test of their own. ``more`` says
    whether the step after this one is run here too (the loop's own bound and the next
    kept step, e.g. ``t + 1 < min(tiles, gs_kn)``), ``step`` advances the loop's variable
    as the loop's own increment does (which runs after the copy, as before); the region
    must not ``continue`` or ``break``.

    A line that begins ``#line`` is the region's own directive; :func:`assemble_file`
    passes it on. The plain build never sees the markers (:func:`plain_text`). Raises
    ValueError for a marker without its pair, a region inside a region, or a
    ``GS_TRACE_SPLIT_RUN`` without its three arguments."""
    if "GS_TRACE_SPLIT" not in text:
        return text

    def code(line: str) -> str:  # a marker's line without its comment
        return line.split("//")[0]

    def begins(line: str) -> re.Match[str] | None:
        return _SPLIT_BEGIN.match(code(line)) or _SPLIT_RUN_BEGIN.match(code(line))

    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        begin = begins(lines[i])
        if begin is None:
            if _SPLIT_END.match(code(lines[i])):
                raise ValueError(f"{key}:{i + 1}: GS_TRACE_SPLIT_END() without its "
                                 "GS_TRACE_SPLIT(cond)")
            out.append(lines[i])
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines))
                    if _SPLIT_END.match(code(lines[j])) or begins(lines[j])), None)
        if end is None or not _SPLIT_END.match(code(lines[end])):
            raise ValueError(f"{key}:{i + 1}: GS_TRACE_SPLIT(cond) without its "
                             "GS_TRACE_SPLIT_END() (regions do not nest)")
        run = begin.re is _SPLIT_RUN_BEGIN
        args = _top_level_args(begin.group(1)) if run else [begin.group(1)]
        if run and (len(args) != 3 or not all(args)):
            raise ValueError(f"{key}:{i + 1}: GS_TRACE_SPLIT_RUN(cond, more, step) needs "
                             "its three arguments")
        region = lines[i + 1:end]
        plain = ["" if _TRACE_LINE.match(line) else line for line in region]
        # line i + 1 (1-based): the test; then the region's lines i + 2 .. end, as they are
        out.append(f"if (__builtin_expect(!!({args[0]}), 0)) {{")
        out += region
        out.append("} else {" + (" for (;;) {" if run else ""))  # on the end marker's line
        out.append(f'#line {i + 2} "{key}"')
        out += plain
        out.append(f"if (!({args[1]})) break; {args[2]}; }} }}" if run else "}")
        out.append(f'#line {end + 2} "{key}"')
        i = end + 1
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def traceable(level: Level) -> bool:
    """Whether the level has a trace build: its own source marks its lanes
    (``GS_TRACE_LANE``, or ``GS_TRACE_T0_LANE``: kernels/cuda/trace.cuh)."""
    try:
        text = source_file(level).read_text(encoding="utf-8")
        return "GS_TRACE_LANE" in text or "GS_TRACE_T0_LANE" in text
    except (ValueError, OSError):  # a reference (no source), a user's file gone
        return False


def assemble_file(main: Path, trace: bool = False) -> str:
    """A CUDA file with its local headers pasted in, as :func:`assemble` does for a level
    (the ceiling probes of kernels/cuda/probes use it too)."""
    seen: set[str] = set()

    def expand(path: Path) -> str:
        key = source_key(path)
        out = [f'#line 1 "{key}"']
        body = path.read_text(encoding="utf-8")
        lineno = 0  # of the line before this one, in the file
        for text in (split_regions(body, key) if trace else plain_text(body)).splitlines():
            if text.startswith("#line "):  # a split region's own numbering
                out.append(text)
                lineno = int(text.split()[1]) - 1
                continue
            lineno += 1
            m = _INCLUDE_LOCAL.match(text)
            if m is None:
                out.append("" if text.strip() == "#pragma once" else text)
                continue
            name = m.group(1)
            if name not in seen:
                seen.add(name)
                out += [expand(_local_header(path, name)), f'#line {lineno + 1} "{key}"']
            else:
                out.append("")
        return "\n".join(out)

    return expand(main) + "\n"


def source_files(level: Level, trace: bool = False) -> dict[str, str]:
    """Every file the level's source is built from, by repository path
    (``kernels/cuda/cp_async.cu``, ``kernels/cuda/common.cuh``), to its text: the .cu and
    each local header it includes, transitively, in include order. The plain build's texts
    are without their trace lines (:func:`plain_text`), as it compiled them, so the lines
    of its cubin's line info are theirs; ``trace``: the trace build's, whole."""
    files: dict[str, str] = {}

    def walk(path: Path) -> None:
        text = path.read_text(encoding="utf-8")
        text = text if trace else plain_text(text)
        files[source_key(path)] = text
        for m in _INCLUDE_LOCAL.finditer(text):
            header = _local_header(path, m.group(1))
            if source_key(header) not in files:
                walk(header)

    walk(source_file(level))
    return files


def _local_header(including: Path, name: str) -> Path:
    """A local header: next to the file that includes it, else in kernels/cuda."""
    beside = including.parent / name
    return beside if beside.is_file() else cuda_dir() / name


def source_key(path: Path) -> str:
    """A source file's name in events: ``kernels/cuda/<file>`` for the package's own CUDA
    files (as the session header's ``levels`` map says), else the path relative to the
    repository root where it lies inside it (test levels), else the file name."""
    path = path.resolve()
    if path.parent == cuda_dir().resolve():
        return f"kernels/cuda/{path.name}"
    root = Path(__file__).resolve().parents[2]
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.name


def options(level: Level, trace: bool = False) -> tuple[str, ...]:
    # GEMMSCOPE_NVRTC_OPTIONS: extra NVRTC options for experiments (e.g. a ptxas flag), part
    # of CuPy's cache key like every option
    opts = (*BASE_OPTIONS, *os.environ.get("GEMMSCOPE_NVRTC_OPTIONS", "").split())
    if trace:  # the trace build (kernels/cuda/trace.cuh)
        opts = (*opts, TRACE_DEFINE)
    if level.arch:
        opts = (*opts, f"-arch={level.arch}")
    if "<mma.h>" in source_file(level).read_text(encoding="utf-8"):
        # CuPy puts the pip CUDA headers first; some of those installs lack crt/mma.h,
        # which <mma.h> includes. Name a folder that has it.
        opts = (*opts, *(f"-I{d}" for d in _dirs_with("crt/mma.h")[:1]))
    return opts


def _dirs_with(relpath: str) -> list[str]:
    return [d for d in nvrtc_include_dirs() if (Path(d) / relpath).is_file()]


_ERROR_LINE = re.compile(r"^(?:.*?\(\d+\): )?(?:catastrophic )?error\b.*$", re.M | re.I)


def first_error(log: str) -> str:
    """The compiler log's first error, without the temporary file's path (a long NVRTC
    log opens with what went wrong, e.g. a kernel's static_assert)."""
    m = _ERROR_LINE.search(log)
    line = m.group(0) if m else (log.strip().splitlines() or ["compile error"])[0]
    return re.sub(r"^.*?\((\d+)\): ", r"line \1: ", line.strip())


def variants(level: Level, params: dict[str, int] | None = None) -> dict[bool, str]:
    """Name expressions of the fast (vector) and edge (element-wise) instantiations; one
    (VEC=true) for a level without an edge variant (TMA handles its edges)."""
    flags = (True, False) if level.edge_variant else (True,)
    return {vec: level.name_expression(vec, params) for vec in flags}


# ------------------------------------------------------------------ GPU (CuPy)

def code_key(source: str, options: tuple[str, ...], names: list[str], compiler: str) -> str:
    """What a build's machine code is a function of, hashed: the assembled source, the
    options, the instantiations and the compiler. With the deterministic build
    (nvrtc_options.DETERMINISTIC: one cubin in every process), one key is one cubin, so
    results and build events with the same key ran the same code (issue 31 item 2).

    Include folders (``-I``) are left out: they name where this machine keeps the CUDA
    headers, which the compiler's version already names, so the key of a level is the
    same on every machine and ``record --update`` can tell offline what changed
    (:func:`expected_key`). Keys made before this rule hashed them (a level including
    <mma.h>: wmma, mma_sync...), so such a level shows as changed once."""
    kept = [o for o in options if not o.startswith("-I")]
    h = hashlib.sha256()
    for part in (source, "\0".join(kept), "\0".join(names), compiler):
        h.update(part.encode() + b"\x1e")
    return h.hexdigest()[:16]


def expected_key(level: Level, arch: str, compiler: str, trace: bool = False) -> str:
    """The code key :func:`compile_level` gives ``level`` (with its parameters, as picked
    for a shape) on a GPU of ``arch`` (``sm_90``: CuPy's ``-arch`` where the level names
    none) with ``compiler``; no GPU and no CuPy needed (``record --update --dry-run``).
    ``trace``: its trace build's, as a trace event names it."""
    arch_option = () if level.arch else (f"-arch={arch}",)
    return code_key(assemble(level, trace), (*options(level, trace), *arch_option),
                    list(variants(level, level.params).values()), compiler)


def cupy_compiler(cp: Any) -> str:
    """The compiler CuPy builds with, as build events name it."""
    try:
        version = ".".join(str(v) for v in cp.cuda.nvrtc.getVersion())
    except Exception:
        version = "?"
    return f"NVRTC {version} through CuPy {cp.__version__}"


@dataclass(slots=True)
class Compiled:
    level: Level
    params: dict[str, int]
    module: Any  # cupy.RawModule
    kernels: dict[bool, Any]  # vec flag -> cupy.RawKernel
    code_key: str = ""  # see code_key(): the same in every result of this build
    compiler: str = ""
    # how this process got it: seconds in CuPy (NVRTC, or loading the cubin from CuPy's
    # cache folder), and whether the cache folder had it (None: cannot tell, see
    # compile_level)
    compile_s: float = 0.0
    cached: bool | None = None

    def attributes(self, vec: bool) -> dict[str, int]:
        k = self.kernels[vec]
        return {"regs": int(k.num_regs), "smem_bytes": int(k.shared_size_bytes),
                "local_bytes": int(k.local_size_bytes)}


# keyed by the level's id, its source file (a variant's folder is other code under the
# same id and parameters: benchmarks' --variant-source), its parameters and the build
_cache: dict[tuple[str, str, tuple[tuple[str, int], ...], bool], Compiled] = {}


def compile_level(level: Level, params: dict[str, int] | None = None,
                  on_compile: Callable[[], None] | None = None,
                  trace: bool = False) -> Compiled:
    """Compile (or fetch from this process's cache) both variants of a level with CuPy;
    ``on_compile()`` is called first where this process has not built it yet (CuPy then
    compiles, or loads the cubin from its cache folder). ``trace``: its trace build
    (kernels/cuda/trace.cuh), whose module holds the ``gs_trace`` global."""
    from ..device.gpu import require_cupy

    cp = require_cupy()
    params = dict(params or level.params)
    key = (level.id, str(source_file(level)) if level.source else "",
           tuple(params.items()), trace)
    if key in _cache:
        return _cache[key]
    if on_compile is not None:
        on_compile()
    names = variants(level, params)
    source, opts = assemble(level, trace), options(level, trace)
    folder = cupy_cache_folder()
    before = build_cache.entry_names(folder) if folder is not None else frozenset()
    started = time.perf_counter()
    try:
        module = cp.RawModule(code=source, options=opts,
                              name_expressions=list(names.values()))
        kernels = {vec: module.get_function(name) for vec, name in names.items()}
    except cp.cuda.compiler.CompileException as exc:
        log = exc.get_message()
        raise CompileError(f"{level.id}: {first_error(log)}\n{log}") from None
    compiler = cupy_compiler(cp)
    # CuPy adds the arch of the device where the level names none
    arch = () if level.arch else (f"-arch=sm_{cp.cuda.Device().compute_capability}",)
    compile_s = time.perf_counter() - started
    # CuPy writes one file per build it compiles and none when its folder had the cubin;
    # another process compiling into the same folder meanwhile makes a hit read as a
    # compile, never the other way round
    cached = (None if folder is None else
              not (build_cache.entry_names(folder) - before))
    built = Compiled(level, params, module, kernels,
                     code_key(source, (*opts, *arch), list(names.values()), compiler), compiler,
                     compile_s, cached)
    _cache[key] = built
    return built


def cupy_cache_folder() -> Path | None:
    """CuPy's kernel cache folder (build_cache.configure set it before CuPy was
    imported); None where CuPy keeps its builds in memory only."""
    if os.environ.get("CUPY_CACHE_IN_MEMORY", "0") not in ("", "0"):
        return None
    return Path(os.environ.get("CUPY_CACHE_DIR") or "~/.cupy/kernel_cache").expanduser()


def forget(level_id: str) -> None:
    """Drop this process's compiled kernels of a level (a user's kernel whose source
    changed under the same id)."""
    for key in [k for k in _cache if k[0] == level_id]:
        del _cache[key]


# ------------------------------------------------------------------ no GPU (NVRTC)

def nvrtc_include_dirs() -> list[str]:
    """CUDA headers for NVRTC: pip's nvidia/cu13/include, else $CUDA_PATH, else /usr/local."""
    found: list[str] = []
    try:
        import nvidia  # namespace package of the nvidia-cuda-* wheels

        for base in getattr(nvidia, "__path__", []):
            for sub in ("cu13/include", "cuda_runtime/include", "cuda_nvrtc/include"):
                p = Path(base) / sub
                if p.is_dir():
                    found.append(str(p))
    except ImportError:
        pass
    for env in ("CUDA_PATH", "CUDA_HOME"):
        if os.environ.get(env):
            found.append(str(Path(os.environ[env]) / "include"))
    found.append("/usr/local/cuda/include")
    return [d for d in dict.fromkeys(found) if Path(d).is_dir()]


@dataclass(frozen=True, slots=True)
class OfflineBuild:
    level: str
    arch: str
    cubin_bytes: int
    lowered: dict[str, str]  # name expression -> mangled name
    log: str
    options: tuple[str, ...] = ()  # as given to NVRTC, include folders left out
    cubin: bytes = field(default=b"", repr=False)

    @property
    def cubin_sha256(self) -> str:
        return hashlib.sha256(self.cubin).hexdigest()


def compile_offline(level: Level, arch: str = "sm_90a",
                    params: dict[str, int] | None = None, trace: bool = False) -> OfflineBuild:
    """Compile a level to a cubin with NVRTC (cuda-bindings), no GPU needed: the source
    and options that :func:`compile_level` gives CuPy, for ``arch`` (one ``-arch``) and
    with CuPy's ``-ftz=true``; ``trace``: its trace build."""
    return compile_source(level.id, assemble(level, trace),
                          list(variants(level, params).values()),
                          offline_options(level, arch, trace), arch)


def offline_options(level: Level, arch: str, trace: bool = False) -> tuple[str, ...]:
    """The level's options for NVRTC with one ``-arch`` and CuPy's ``-ftz=true``
    (include folders are added when compiling)."""
    return (*(o for o in options(level, trace) if not o.startswith(("-arch=", "-I"))),
            f"-arch={arch}", "-ftz=true")


def compile_source(program: str, source: str, names: list[str], given: tuple[str, ...],
                   arch: str) -> OfflineBuild:
    """NVRTC (cuda-bindings) from a source string to a cubin, instantiating ``names``."""
    from cuda.bindings import nvrtc  # optional dependency: the `nvrtc` extra

    def check(result: Any, what: str) -> Any:
        err, *rest = result if isinstance(result, tuple) else (result,)
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise CompileError(f"{program}: {what} failed ({err})")
        return rest[0] if len(rest) == 1 else rest

    prog = check(nvrtc.nvrtcCreateProgram(source.encode(), f"{program}.cu".encode(), 0, [],
                                          []), "create")
    for name in names:
        check(nvrtc.nvrtcAddNameExpression(prog, name.encode()), "add name")
    opts = [o.encode() for o in given] + [f"-I{d}".encode() for d in nvrtc_include_dirs()]
    status = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)[0]
    size = check(nvrtc.nvrtcGetProgramLogSize(prog), "log size")
    log = b" " * size
    nvrtc.nvrtcGetProgramLog(prog, log)
    log_text = log.decode(errors="replace").strip("\x00 \n")
    if status != nvrtc.nvrtcResult.NVRTC_SUCCESS or nvrtc_options.UNKNOWN_OPTION in log_text:
        # NVVM ignores an option it does not know, with only a line in the log
        raise CompileError(f"{program}: NVRTC ({arch}):\n{log_text}")
    lowered = {}
    for name in names:
        mangled = check(nvrtc.nvrtcGetLoweredName(prog, name.encode()), "lowered name")
        lowered[name] = mangled.decode() if isinstance(mangled, bytes) else str(mangled)
    cubin_size = int(check(nvrtc.nvrtcGetCUBINSize(prog), "cubin size"))
    cubin = b" " * cubin_size
    check(nvrtc.nvrtcGetCUBIN(prog, cubin), "cubin")
    nvrtc.nvrtcDestroyProgram(prog)
    return OfflineBuild(program, arch, cubin_size, lowered, log_text, given, cubin)
