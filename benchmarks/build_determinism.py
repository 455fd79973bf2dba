"""Does every level compile to the same machine code in every process? (issue 31, item 1)

    python benchmarks/build_determinism.py [--levels a,b,...] [--processes 6] [--jobs J]
        [--backend nvrtc|cupy] [--arch sm_90] [--options "-Xptxas -O3"] [--drop -lineinfo]
        [--nvrtc-lib libnvrtc.so.13] [--plain] [--no-aslr] [--diff 40] [--json out.json]
        [--keep DIR]
    python benchmarks/build_determinism.py --smoke  # CI: naive, 2 processes, offline NVRTC

Compiles each level (its registry parameters) in N fresh child processes, each with
another heap layout: child i >= 1 runs with other malloc settings (MALLOC_PERTURB_,
MALLOC_ARENA_MAX, MALLOC_TOP_PAD_, MALLOC_MMAP_THRESHOLD_), an environment of another
size, a random number of Python objects and C-heap blocks allocated (some freed) before
it compiles, and the levels in another order; child 0 is a plain process. ASLR moves the
rest (``--no-aslr`` turns it off with setarch -R, to see whether addresses decide;
``--plain`` makes the children alike). The build's options (kernels.toolchain.nvrtc_options) hold
the rules that make the build deterministic; ``--drop`` leaves options out to measure
without them: ``--drop=-Xnvvm --drop=-Xopt --drop=-disable-LoadStoreVectorizerPass``,
``--drop=-frandom-seed=gemmscope``.

Backends: ``nvrtc`` compiles offline with cuda-bindings (kernels.toolchain.nvrtc.compile_offline:
no GPU; the Hopper levels for sm_90a, the others for ``--arch``, sm_90 by default, what
CuPy picks on an H200); ``cupy`` compiles as the app does (kernels.toolchain.nvrtc.compile_level,
a GPU machine), each child with an empty CUPY_CACHE_DIR of its own. ``auto`` is cupy where
CuPy sees a GPU, else nvrtc.

Per level the table gives the number of distinct codes (the kernels' .text sections and
their register and stack sizes, i.e. what the GPU runs; the disassembly where nvdisasm is
there), of distinct whole cubins and of distinct PTX (the copy the cubin carries with
-lineinfo), and what differs: per kernel the instruction and register counts and the
mnemonics whose counts moved, else the cubin sections that differ. ``--diff N`` prints N
lines of the SASS diff against the commonest code. The exit status is 1 when some
level's code differs between processes.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import difflib
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NamedTuple

import _smoke
from _args import amount, count, level_ids
from _cubins import (
    code_digest,
    describe,
    differing_sections,
    elf_only,
    embedded_ptx,
    nvdisasm_tool,
    sass_text,
)

SCRIPT = Path(__file__).resolve()
MALLOC_ENV = ("MALLOC_PERTURB_", "MALLOC_ARENA_MAX", "MALLOC_TOP_PAD_",
              "MALLOC_MMAP_THRESHOLD_", "GEMMSCOPE_ENV_PAD")


# ------------------------------------------------------------------ child side

def perturbed_env(seed: int, base: dict[str, str]) -> dict[str, str]:
    """The environment of child ``seed``: the parent's for seed 0, else other malloc
    settings and another environment size (which moves the stack and what follows)."""
    env = {k: v for k, v in base.items() if k not in MALLOC_ENV}
    if seed == 0:
        return env
    rng = random.Random(seed * 7919)
    env["MALLOC_PERTURB_"] = str(rng.randrange(1, 256))
    env["MALLOC_ARENA_MAX"] = str(rng.randrange(1, 9))
    env["MALLOC_TOP_PAD_"] = str(rng.randrange(0, 1 << 24))
    env["MALLOC_MMAP_THRESHOLD_"] = str(rng.choice([1 << 15, 1 << 17, 1 << 20, 1 << 25]))
    env["GEMMSCOPE_ENV_PAD"] = "x" * rng.randrange(1, 1 << 16)
    return env


def pad_heap(seed: int) -> list[Any]:
    """Allocate a random amount of Python objects and C-heap blocks, free some (holes of
    random sizes), keep the rest alive: the compiler's allocations land elsewhere."""
    if seed == 0:
        return []
    import ctypes

    rng = random.Random(seed * 104729)
    kept: list[Any] = [bytearray(rng.randrange(1, 8192))
                       for _ in range(rng.randrange(100, 60000))]
    kept += [{rng.random(): str(i)} for i in range(rng.randrange(0, 20000))]
    del kept[::rng.randrange(2, 5)]
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    blocks = [libc.malloc(rng.choice([rng.randrange(16, 512), rng.randrange(512, 1 << 18)]))
              for _ in range(rng.randrange(10, 4000))]
    for b in blocks[::rng.randrange(2, 4)]:
        libc.free(b)
    kept.append(blocks)  # never freed: the child exits
    return kept


def compile_nvrtc(level: Any, arch: str) -> bytes:
    from gemmscope.kernels.toolchain import nvrtc as build

    return build.compile_offline(level, arch=level.arch or arch).cubin


def compile_cupy(level: Any, arch: str) -> bytes:
    """Compile as the app does and take the cubin CuPy made for this level: what its
    NVRTC step returned (CuPy 14 calls ``_compile_using_nvrtc_no_warning``; older ones
    ``compile_using_nvrtc``), else the one cache file this compile added to the child's
    (empty, own) cache folder, decoded as CuPy stores it (a SHA-1 prefix, then the
    mangled names and the cubin). A scan of the whole folder would find the cubin of
    whichever level was compiled first in this child (the order is shuffled per child):
    the cause of the "2-6 codes per level" this script once reported under CuPy."""
    import cupy

    from gemmscope.kernels.toolchain import nvrtc as build

    compiler = cupy.cuda.compiler
    got: list[bytes] = []
    spied = [n for n in ("_compile_using_nvrtc_no_warning", "compile_using_nvrtc")
             if hasattr(compiler, n)]
    originals = {n: getattr(compiler, n) for n in spied}

    def spy_of(original: Any) -> Any:
        def spy(*args: Any, **kwargs: Any) -> Any:
            out = original(*args, **kwargs)
            binary = out[0] if isinstance(out, tuple) else out
            if isinstance(binary, bytes | bytearray):
                got.append(bytes(binary))
            return out
        return spy

    cache = Path(os.environ["CUPY_CACHE_DIR"])
    before = {p for p in cache.rglob("*") if p.is_file()}
    for n, original in originals.items():
        setattr(compiler, n, spy_of(original))
    try:
        build.compile_level(level)
    finally:
        for n, original in originals.items():
            setattr(compiler, n, original)
    elf = [b for b in got if b[:4] == b"\x7fELF"]
    if elf:
        return elf_only(elf[-1])
    added = sorted(p for p in cache.rglob("*") if p.is_file() and p not in before
                   and not p.name.endswith(".cu"))
    if len(added) != 1:
        raise RuntimeError(f"{level.id}: {len(added)} new files in CuPy's cache, not one: "
                           "cannot tell which cubin is this level's")
    data = added[0].read_bytes()[40:]  # the SHA-1 hex of the payload, then the payload
    at = data.find(b"\x7fELF")
    if at < 0:
        raise RuntimeError(f"{level.id}: no cubin in CuPy's cache file (a PTX module is "
                           "JIT-compiled by the driver, which this script cannot see)")
    return elf_only(data[at:])


def child(args: argparse.Namespace) -> int:
    kept = pad_heap(args.seed)
    if args.nvrtc_lib:  # loaded first, cuda-bindings then uses it (e.g. the H200's 13.0)
        import ctypes

        lib = Path(args.nvrtc_lib)
        for builtins in sorted(lib.parent.glob("libnvrtc-builtins.so.*")):  # its dlopen
            ctypes.CDLL(str(builtins), mode=ctypes.RTLD_GLOBAL)
        ctypes.CDLL(str(lib), mode=ctypes.RTLD_GLOBAL)
    from gemmscope.kernels.ladder import registry
    from gemmscope.kernels.toolchain import nvrtc as build

    drop = set(args.drop or ())
    build.BASE_OPTIONS = tuple(o for o in build.BASE_OPTIONS if o not in drop)
    levels = list(args.levels)
    if args.seed:
        random.Random(args.seed).shuffle(levels)
    compile_one = compile_cupy if args.backend == "cupy" else compile_nvrtc
    out = Path(args.out)
    timing = {}
    for level_id in levels:
        t0 = time.perf_counter()
        cubin = compile_one(registry.get(level_id), args.arch)
        timing[level_id] = round(time.perf_counter() - t0, 2)
        (out / f"{level_id}.cubin").write_bytes(cubin)
    (out / "child.json").write_text(json.dumps({"seconds": timing, "pad": len(kept),
                                                "compiler": compiler_name(args.backend)}))
    return 0


def compiler_name(backend: str) -> str:
    if backend == "cupy":
        import cupy

        try:
            major, minor = cupy.cuda.nvrtc.getVersion()
        except (AttributeError, RuntimeError):
            return f"CuPy {cupy.__version__}, NVRTC ?"
        return f"CuPy {cupy.__version__}, NVRTC {major}.{minor}"
    from cuda.bindings import nvrtc

    _, major, minor = nvrtc.nvrtcVersion()
    return f"cuda-bindings NVRTC {major}.{minor}"


# ------------------------------------------------------------------ parent side

class Settings(NamedTuple):
    """How the children compile (the command line's options, for tests too)."""

    backend: str = "nvrtc"
    arch: str = "sm_90"
    options: str = ""  # extra NVRTC options (GEMMSCOPE_NVRTC_OPTIONS)
    drop: tuple[str, ...] = ()  # base options left out
    nvrtc_lib: str | None = None
    no_aslr: bool = False
    plain: bool = False  # children alike: no padding, the parent's environment, one order


def run_children(settings: Settings, levels: list[str], processes: int, jobs: int,
                 work: Path) -> list[Path]:
    def one(i: int) -> Path:
        out = work / f"p{i}"
        out.mkdir(exist_ok=True)
        seed = 0 if settings.plain else i
        env = perturbed_env(seed, dict(os.environ))
        if settings.backend == "cupy":
            env["CUPY_CACHE_DIR"] = str(out / "cupy_cache")
        if settings.options:
            env["GEMMSCOPE_NVRTC_OPTIONS"] = settings.options
        cmd = [sys.executable, str(SCRIPT), "--child", "--out", str(out), "--seed", str(seed),
               "--levels", ",".join(levels), "--backend", settings.backend,
               "--arch", settings.arch, *(f"--drop={d}" for d in settings.drop)]
        cmd += ["--nvrtc-lib", settings.nvrtc_lib] if settings.nvrtc_lib else []
        if settings.no_aslr:
            cmd = ["setarch", os.uname().machine, "-R", *cmd]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"child {i} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
        return out

    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        return list(pool.map(one, range(processes)))


def analyse(levels: list[str], outs: list[Path], diff_lines: int = 0,
            disassemble: bool = True) -> list[dict[str, Any]]:
    """A row per level: how many distinct codes, SASS texts (None without nvdisasm or
    ``disassemble``), whole cubins and PTX copies; the ELF sections that differ; what
    differs in words; ``diff_lines`` of SASS diff per code besides the commonest."""
    tool = nvdisasm_tool() if disassemble else None
    paths = [(lv, o / f"{lv}.cubin") for lv in levels for o in outs]
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        texts = dict(zip(paths, pool.map(lambda lp: sass_text(tool, lp[1]), paths),
                         strict=True))
    rows = []
    for level_id in levels:
        cubins = [(o / f"{level_id}.cubin").read_bytes() for o in outs]
        got_sass = [texts[(level_id, o / f"{level_id}.cubin")] for o in outs]
        disassembled = bool(tool) and all(t is not None for t in got_sass)
        sass = [t or "" for t in got_sass]
        codes = [code_digest(c) for c in cubins]
        ptx = [hashlib.sha256(embedded_ptx(c).encode()).hexdigest()[:12] for c in cubins]
        whole = [hashlib.sha256(c).hexdigest()[:12] for c in cubins]
        sass_h = [hashlib.sha256(s.encode()).hexdigest()[:12] for s in sass]
        common = collections.Counter(codes).most_common(1)[0][0]
        ref = codes.index(common)
        what, diffs = [], []
        for code in dict.fromkeys(codes):
            if code == common:
                continue
            i = codes.index(code)
            what.append(f"{codes.count(code)}x: " + describe(sass[ref], sass[i], cubins[ref],
                                                               cubins[i]))
            if diff_lines and sass[ref]:
                d = difflib.unified_diff(sass[ref].splitlines(), sass[i].splitlines(),
                                         f"p{ref}", f"p{i}", n=1, lineterm="")
                diffs.append("\n".join(list(d)[:diff_lines]))
        sections = sorted({s for c in cubins for s in differing_sections(cubins[ref], c)})
        if not what and sections:
            what.append("code the same; sections differ: " + ", ".join(sections))
        rows.append({"level": level_id, "processes": len(outs),
                     "codes": len(set(codes)), "sass": len(set(sass_h)) if disassembled else None,
                     "cubins": len(set(whole)), "ptx": len(set(ptx)), "sections": sections,
                     "code_digests": codes, "cubin_sha": whole, "what": what, "diffs": diffs})
    return rows


def measure(levels: list[str], processes: int, settings: Settings, jobs: int = 0,
            diff_lines: int = 0, keep: str | None = None,
            disassemble: bool = True) -> tuple[str, list[dict[str, Any]]]:
    """Compile ``levels`` in ``processes`` children; the compiler's name and a row per
    level (see :func:`analyse`)."""
    jobs = jobs or max(1, min(processes, os.cpu_count() or 1))
    work = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="gs_determinism_"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        outs = run_children(settings, levels, processes, jobs, work)
        rows = analyse(levels, outs, diff_lines, disassemble)
        compiler = json.loads((outs[0] / "child.json").read_text())["compiler"]
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    return compiler, rows


def table(rows: list[dict[str, Any]]) -> str:
    head = f"{'level':<18} {'N':>2} {'code':>4} {'sass':>4} {'cubin':>5} {'ptx':>4}  what differs"
    lines = [head]
    for r in rows:
        sass = "-" if r["sass"] is None else str(r["sass"])
        what = " | ".join(r["what"]) or "-"
        lines.append(f"{r['level']:<18} {r['processes']:>2} {r['codes']:>4} {sass:>4} "
                     f"{r['cubins']:>5} {r['ptx']:>4}  {what}")
    return "\n".join(lines)


def pick_backend(wanted: str) -> str:
    if wanted != "auto":
        return wanted
    try:
        from gemmscope.kernels.device.gpu import get_cupy

        return "cupy" if get_cupy()[1] is None else "nvrtc"
    except ImportError:
        return "nvrtc"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--levels", type=level_ids(), default="",
                   help="comma-separated ids (default: every level)")
    p.add_argument("--processes", "-n", type=count, default=6)
    p.add_argument("--jobs", "-j", type=amount, default=0, help="children at once (CPUs)")
    p.add_argument("--backend", choices=("auto", "nvrtc", "cupy"), default="auto")
    p.add_argument("--arch", default="sm_90", help="for the levels without their own")
    p.add_argument("--options", default="", help="extra NVRTC options for every level")
    p.add_argument("--drop", action="append", help="a base option to leave out")
    p.add_argument("--nvrtc-lib", help="nvrtc backend: this libnvrtc.so instead of pip's")
    p.add_argument("--plain", action="store_true",
                   help="children alike (no heap padding, same environment and order)")
    p.add_argument("--no-aslr", action="store_true", help="children under setarch -R")
    p.add_argument("--diff", type=amount, default=0, help="SASS diff lines per differing code")
    p.add_argument("--json", help="write the rows here")
    p.add_argument("--keep", help="keep the cubins in this folder")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    _smoke.add_flag(p)
    args = p.parse_args(argv)
    if args.smoke:
        args.levels, args.processes, args.backend = args.levels or ["naive"], 2, "nvrtc"
    if args.child:
        return child(args)
    from gemmscope.kernels.ladder import registry

    levels = args.levels or [lv.id for lv in registry.ladder()]  # unknown ids: refused above
    settings = Settings(pick_backend(args.backend), args.arch, args.options,
                        tuple(args.drop or ()), args.nvrtc_lib, args.no_aslr, args.plain)
    t0 = time.perf_counter()
    compiler, rows = measure(levels, args.processes, settings, args.jobs, args.diff, args.keep)
    for r in rows:
        for d in r["diffs"]:
            print(f"--- {r['level']}: SASS diff against the commonest code\n{d}\n")
    if args.json:
        Path(args.json).write_text(json.dumps({"compiler": compiler, "rows": rows}, indent=1))
    extra = f", options {args.options!r}" if args.options else ""
    extra += f", without {' '.join(args.drop)}" if args.drop else ""
    extra += ", ASLR off" if args.no_aslr else ""
    extra += ", children alike" if args.plain else ""
    print(f"{compiler}, {settings.backend}, {args.processes} processes{extra}: "
          f"{time.perf_counter() - t0:.0f} s")
    print(table(rows))
    return 1 if any(r["codes"] > 1 for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
