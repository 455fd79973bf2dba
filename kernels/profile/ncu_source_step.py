"""``gemmscope record --ncu-source``: Nsight Compute's source page of every level and of
every ``--kernel`` (a user's kernel, CUDA or Triton: docs/user-kernels.md), one
``source_counters`` event each (kernels/protocol/source_counters.py, docs/protocol.md).

After the timed runs (the runner has exited: the GPU is the profiler's), each level with
a kernel of its own, Tensor Core ones included, is launched once in a process ncu starts::

    ncu --section SourceCounters --section WarpStateStats --import-source yes \\
        --clock-control none -k regex:KERNEL -c 1 -f -o REPORT \\
        python -m gemmscope.kernels.engine.launch LEVEL M N K

(a user's kernel: ``python -m gemmscope.kernels.cli.user_launch ID M N K --kernel SPEC
--param ...`` and a ``-k`` of its own name, ``ncu_targets.py``), and the report is
printed as CSV twice, without the GPU: ``--print-source sass`` (the counters of each
SASS line, :func:`ncu_source.parse_sass_page`) and ``cuda,sass`` (the source line each
one sits under). Never made up: where ncu is missing, refused
(ERR_NVGPUCTRPERM), runs past its time, fails or prints a page this reader does not know,
the level's event has no lines, and its ``status`` and ``reason`` say why.

The launch is made as the runner makes it (blocks share SMs), so the stall samples are
those of the real launch; the per-line wavefronts are counted per instruction, so blocks
sharing an SM add none of the residue the whole-kernel l1tex counters show
(docs/perf-notes.md). The step has a time budget; a level reached after it ran out gets
an event saying so.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from ..ladder import registry
from ..protocol import source_counters as sc
from ..protocol.plan import RunRequest
from ..protocol.source_counters import Status
from ..protocol.text_safety import terminal_text
from ..results import counts
from . import ncu
from .ncu import tool_version
from .ncu_source import (
    COLUMNS,
    PageLine,
    SourcePage,
    SourcePageError,
    parse_cuda_sass_page,
    parse_sass_page,
)
from .ncu_targets import Target, level_targets, user_targets

SECTIONS = ("SourceCounters", "WarpStateStats")
DEFAULT_SIZE = 1024
TIMEOUT_S = 90.0  # per profiling run; the H200 pages took 12 passes of one launch
# the whole step, every level; a level begun near the end may take its exports' minimum
# past it: under 3 minutes all told
BUDGET_S = 150.0
EXPORT_MIN_S = 10.0  # printing a report's pages, at least (no GPU: a few seconds)
TAIL_LINES = 4


def profile_command(exe: str, level_id: str, M: int, N: int, K: int, report: Path,
                    target: Target | None = None) -> list[str]:
    """ncu on the first launch of the level's kernel (or of ``target``, a user's kernel),
    writing ``report`` (.ncu-rep)."""
    if target is None:
        kernel = registry.get(level_id).kernel
        if kernel is None:
            raise ValueError(f"{level_id} has no kernel of its own to profile (a reference)")
        target = Target(level_id, kernel)
    sections = [a for s in SECTIONS for a in ("--section", s)]
    launch = ncu.launch_command(level_id, M, N, K, one_block_per_sm=False,
                                extra=target.options,
                                module=ncu.USER_LAUNCH_MODULE if target.user
                                else ncu.LAUNCH_MODULE)
    return [exe, *sections, "--import-source", "yes", "--clock-control", "none",
            "-k", target.regex, "-c", "1", "-f", "-o", str(report), *launch]


def page_command(exe: str, report: Path, print_source: str) -> list[str]:
    return [exe, "-i", str(report), "--page", "source", "--csv", "--print-source",
            print_source]


def _error_lines(text: str) -> list[str]:
    """ncu's ``==ERROR==`` lines, else the last lines of the text."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("==ERROR==")]
    return (errors or lines)[-TAIL_LINES:]


def launch_report(stdout: str) -> dict[str, Any]:
    """The launch's own JSON line (``kernels/engine/launch.py``), passed through by ncu."""
    for line in reversed(stdout.splitlines()):
        if line.startswith("{"):
            try:
                out = json.loads(line)
            except ValueError:
                continue
            if isinstance(out, dict) and "level" in out:
                return out
    return {}


class Outcome:
    """What one level's profile gave: a page, or a status and the reason."""

    def __init__(self, status: Status, reason: str | None = None,
                 page: SourcePage | None = None, where: dict[int, tuple[str, int]] | None = None,
                 variant: str | None = None, seconds: float | None = None,
                 command: list[str] | None = None):
        self.status, self.reason, self.page = status, reason, page
        self.where = where or {}
        self.variant, self.seconds, self.command = variant, seconds, command or []


def profile(exe: str, level_id: str, M: int, N: int, K: int, timeout_s: float = TIMEOUT_S,
            files: list[str] | None = None, target: Target | None = None) -> Outcome:
    """Profile one level (or ``target``) and read its source page (see the module doc);
    ``timeout_s`` bounds the profiling run, and the printing of the pages gets what is
    left of it (at least EXPORT_MIN_S)."""
    with tempfile.TemporaryDirectory(prefix="gemmscope-ncu-") as tmp:
        report = Path(tmp) / level_id
        cmd = profile_command(exe, level_id, M, N, K, report, target)
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return Outcome(Status.TIMEOUT, f"ncu ran past {timeout_s:g} s", command=cmd,
                           seconds=round(time.perf_counter() - t0, 1))
        except OSError as exc:
            return Outcome(Status.MISSING, f"cannot start {exe}: {exc.strerror or exc}",
                           command=cmd)
        seconds = round(time.perf_counter() - t0, 1)
        said = proc.stderr + "\n" + proc.stdout
        variant = launch_report(proc.stdout).get("variant")
        variant = variant if isinstance(variant, str) else None
        rep = report.with_suffix(".ncu-rep")
        if "ERR_NVGPUCTRPERM" in said:
            return Outcome(Status.REFUSED, " ".join(
                ln for ln in _error_lines(said) if "ERR_NVGPUCTRPERM" in ln)[:500],
                command=cmd, seconds=seconds, variant=variant)
        if proc.returncode or not rep.exists():
            why = "; ".join(_error_lines(said)) or "no output"
            what = (f"ncu exit code {proc.returncode}" if proc.returncode
                    else "ncu wrote no report (no kernel profiled?)")
            return Outcome(Status.FAILED, f"{what}: {why}"[:sc.MAX_TEXT_CHARS], command=cmd,
                           seconds=seconds, variant=variant)
        left = max(EXPORT_MIN_S, timeout_s - (time.perf_counter() - t0))
        done = _read_report(exe, rep, files or [], left)
        # the whole of it, printing the pages included: what the step's budget pays
        done.command, done.variant = cmd, variant
        done.seconds = round(time.perf_counter() - t0, 1)
        return done


def _read_report(exe: str, rep: Path, files: list[str], timeout_s: float) -> Outcome:
    deadline = time.perf_counter() + timeout_s
    try:
        sass = subprocess.run(page_command(exe, rep, "sass"), capture_output=True,
                              text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return Outcome(Status.TIMEOUT, f"ncu -i ran past {timeout_s:.0f} s printing the "
                                       "source page")
    except (OSError, subprocess.SubprocessError) as exc:
        return Outcome(Status.FAILED, f"ncu -i could not print the source page: {exc}")
    try:
        page = parse_sass_page(sass.stdout)
    except SourcePageError as exc:
        tail = "; ".join(_error_lines(sass.stderr))
        return Outcome(Status.UNREADABLE, str(exc) + (f" (ncu said: {tail})" if tail else ""))
    where: dict[int, tuple[str, int]] = {}
    try:  # the source lines are a help, not the measurement: without them, no source
        both = subprocess.run(page_command(exe, rep, "cuda,sass"), capture_output=True,
                              text=True,
                              timeout=max(EXPORT_MIN_S, deadline - time.perf_counter()))
        where = parse_cuda_sass_page(both.stdout, files)
    except (OSError, subprocess.SubprocessError, SourcePageError):
        pass
    return Outcome(Status.OK, page=page, where=where)


# ------------------------------------------------------------------ the event

def _weight(line: PageLine) -> tuple[int, float]:
    """How much a line matters when lines must be cut: conflicts first, then samples,
    then instructions."""
    v = line.values
    return (1 if v.get("smem_excess_wavefronts") else 0,
            float(v.get("stall_samples") or 0) + float(v.get("inst_executed") or 0) * 1e-12)


def _counted(line: PageLine) -> bool:
    return any(v for v in line.values.values()) or bool(line.stalls)


def rows_of(page: SourcePage, where: dict[int, tuple[str, int]]
            ) -> tuple[list[list[Any]], dict[str, Any]]:
    """The page's lines as event rows (``source_counters.FIELDS``), and the event's fields
    saying what was cut: ``cut`` (text), ``idle_left_out`` (lines without any count or
    sample: their values are 0), ``cap_left_out`` (counted lines cut for size: unknown)."""
    counted = [ln for ln in page.lines if _counted(ln)]
    cut = []
    idle = len(page.lines) - len(counted)
    capped = max(0, len(counted) - sc.MAX_LINES)
    if idle:
        cut.append(f"{counts.counted(idle, 'line')} with no count and no sample (never "
                   "executed: padding, cold paths) left out")
    if len(counted) > sc.MAX_LINES:
        keep = set(map(id, sorted(counted, key=_weight, reverse=True)[:sc.MAX_LINES]))
        cut.append(f"{len(counted) - sc.MAX_LINES} counted lines past the {sc.MAX_LINES} "
                   "with the most excess wavefronts and stall samples left out (totals "
                   "include them)")
        counted = [ln for ln in counted if id(ln) in keep]
    if any(len(ln.stalls) > sc.MAX_REASONS for ln in counted):
        cut.append(f"stall reasons past the {sc.MAX_REASONS} largest of a line left out "
                   "(stall_samples is the line's total)")
    rows = []
    for ln in counted:
        src = where.get(ln.offset)
        stalls = dict(sorted(ln.stalls.items(), key=lambda kv: -kv[1])[:sc.MAX_REASONS])
        rows.append([ln.offset, ln.sass[:sc.MAX_SASS_CHARS],
                     [src[0], src[1]] if src else None,
                     *(ln.values.get(f) for f in sc.NUMBER_FIELDS), stalls or None])
    return rows, {"cut": "; ".join(cut) or None, "idle_left_out": idle,
                  "cap_left_out": capped}


def totals_of(page: SourcePage) -> tuple[dict[str, int | float | None], dict[str, int | float]]:
    """Sums over every line of the page (cut ones included): by field, and by stall reason.
    The n-way column is per line, not a count: it has no total."""
    sums: dict[str, int | float | None] = {}
    for f in COLUMNS:
        if f in page.columns and f != "smem_conflicts_n_way":
            vals = [ln.values[f] for ln in page.lines if ln.values.get(f) is not None]
            sums[f] = sum(vals) if vals else None  # type: ignore[arg-type]
    stalls: dict[str, int | float] = {}
    for ln in page.lines:
        for reason, n in ln.stalls.items():
            stalls[reason] = stalls.get(reason, 0) + n
    return sums, dict(sorted(stalls.items(), key=lambda kv: -kv[1]))


def event(level_id: str, M: int, N: int, K: int, outcome: Outcome, t: float,
          version: str | None, params: dict[str, int] | None = None) -> dict[str, Any]:
    """The level's ``source_counters`` event (docs/protocol.md); ``params``: a user
    kernel's variant, which it carries."""
    ev: dict[str, Any] = {
        "type": sc.TYPE, "t": t, "level": level_id, "M": M, "N": N, "K": K,
        "tool": ncu.TOOL, "tool_version": version, "status": str(outcome.status),
        "reason": outcome.reason, "variant": outcome.variant, "launch": "as_launched",
        "command": list(outcome.command), "seconds": outcome.seconds,
        "fields": list(sc.FIELDS), "lines": None}
    if params is not None:
        ev["params"] = dict(params)
    page = outcome.page
    if page is not None:
        rows, cut = rows_of(page, outcome.where)
        totals, stalls = totals_of(page)
        ev.update(cut, kernel=page.kernel, lines=rows, lines_total=len(page.lines),
                  totals=totals, stall_totals=stalls,
                  columns={f: c for f, c in page.columns.items()}
                  | ({"source": "--print-source cuda,sass: Line No"} if outcome.where
                     else {}))
        if page.kernels > 1:
            held = counts.counted(page.kernels, "kernel")
            ev["reason"] = f"the page held {held}; the first was read"
    return ev


# ------------------------------------------------------------------ the record step

class SourceCountersStep:
    """After the runs: ncu's source page of each level and user kernel, one event each
    whatever happened (one without lines says why)."""

    def __init__(self, levels: list[str] | list[Target], exe: str,
                 size: tuple[int, int, int], budget_s: float, stderr: TextIO,
                 files: Callable[[str], list[str]] | None = None,
                 results: Sequence[Any] = ()):
        """``levels``: level ids or targets; ``results``: the runs' results as they come
        (a list the session fills), where a Triton kernel's compiled name is read."""
        self.targets = [t if isinstance(t, Target) else Target(t, _kernel_of(t))
                        for t in levels]
        self.levels = [t.level for t in self.targets]
        self.asked = exe
        self.exe = ncu.find_ncu(exe)
        self.size = size
        self.budget_s = budget_s
        self.stderr = stderr
        self.files = files or (lambda level_id: [])
        self.results = results
        self.failed: list[str] = []
        self.recorded: list[str] = []

    @classmethod
    def for_runs(cls, exe: str | None, size: tuple[int, int, int], budget_s: float,
                 kernel_specs: Sequence[str], planned: list[RunRequest], stderr: TextIO,
                 results: Sequence[Any] = ()) -> SourceCountersStep | None:
        """The step ``record``'s options ask for (None without --ncu-source, ``exe``):
        each planned level with a kernel of its own, once, in order, then each --kernel
        spec (``kernel_specs``) that has a planned run."""
        if not exe:
            return None
        targets = level_targets(r.level for r in planned if r.kernel is None)
        targets += user_targets(kernel_specs, planned, size)
        return cls(targets, exe, size, budget_s, stderr, source_files, results)

    def say(self, text: str) -> None:
        self.stderr.write(f"gemmscope record: {terminal_text(text)}\n")
        self.stderr.flush()

    def check(self) -> None:
        if self.exe is None:
            self.say(f"--ncu-source: {self.asked!r} not found; each level's source_counters "
                     "event will say so (pass --ncu-source /path/to/ncu)")

    def compiled(self, target: Target) -> Target:
        """A Triton kernel under the name its runs said Triton compiled it as."""
        if not target.triton:
            return target
        names = [getattr(r, "kernel", None) for r in self.results
                 if getattr(r, "level", None) == target.level]
        return target.compiled_as(next((n for n in names if isinstance(n, str)), None))

    def __call__(self, now: Callable[[], float], emit: Callable[[dict[str, Any]], None]
                 ) -> None:
        M, N, K = self.size
        version = tool_version(self.exe) if self.exe else None
        start = time.monotonic()
        for target in self.targets:
            level_id = target.level
            left = self.budget_s - (time.monotonic() - start)
            if target.refused is not None:
                out = Outcome(Status.FAILED, target.refused[:sc.MAX_TEXT_CHARS])
            elif self.exe is None:
                out = Outcome(Status.MISSING, f"{self.asked!r} not found (no Nsight Compute "
                                              "on this machine)")
            elif left < 5:
                out = Outcome(Status.FAILED, f"not profiled: the step's {self.budget_s:g} s "
                                             "ran out before this level")
            else:
                self.say(f"ncu source counters {level_id} {M}x{N}x{K} ...")
                files = (list(target.files) if target.files is not None
                         else self.files(level_id))
                out = profile(self.exe, level_id, M, N, K, min(TIMEOUT_S, left), files,
                              self.compiled(target) if target.user else None)
            emit(event(level_id, M, N, K, out, now(), version, target.params))
            if out.status is Status.OK:
                self.recorded.append(level_id)
            else:
                self.failed.append(level_id)
                if self.exe is not None:
                    self.say(f"ncu source counters of {level_id}: {out.status}: {out.reason}")

    def summary(self) -> str:
        text = f"source counters of {len(self.recorded)} level(s) recorded"
        if self.failed:
            text += f"; none for {', '.join(self.failed)} (their events say why)"
        return text


def _kernel_of(level_id: str) -> str:
    kernel = registry.get(level_id).kernel
    if kernel is None:
        raise ValueError(f"{level_id} has no kernel of its own to profile (a reference)")
    return kernel


def source_files(level_id: str) -> list[str]:
    """The repository paths of the level's sources, to name ncu's absolute paths by."""
    from ..toolchain.nvrtc import source_files as files_of

    try:
        return list(files_of(registry.get(level_id)))
    except (OSError, KeyError, ValueError):  # then paths are named by their file name
        return []
