"""Nsight Compute on one level: the command, the run, and the counters it measured.

ncu is a separate program, so nothing here imports CuPy or Qt: the kernel is launched by
``python -m gemmscope.kernels.engine.launch LEVEL M N K`` in the process ncu starts, and ncu
prints its ``--csv --page raw`` report, which ``models.ncu_compare.parse_raw_csv`` reads.
``gemmscope record --ncu`` turns a profile into a ``counters`` event
(docs/protocol.md); ``benchmarks/bank_conflicts_ncu.py`` prints it beside the model.

A profile asks for the four bank-conflict and wavefront metrics plus, unless told not
to, the extra instruction and cp.async ones; if ncu gives no row with the extra names
(an ncu that does not know one refuses the whole run), it is run again with the four.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ..device.telemetry import Nvml, Sampler
from ..files.reading import FileRefused, Kind, read_bytes
from ..ladder import registry
from ..models.level_model import NCU_EXTRA_METRICS, NCU_METRICS
from ..models.ncu_compare import NcuKernelRow, NcuParseError, parse_raw_csv
from ..protocol.text_safety import terminal_text

TOOL = "ncu"
TIMEOUT_S = 300.0
DEFAULT_SIZE = 1024
TAIL_CHARS = 2000


def metric_names(extra: bool) -> list[str]:
    """The metrics a profile asks for: the core four, then the extra ones if ``extra``."""
    return [*NCU_METRICS.values(), *(NCU_EXTRA_METRICS.values() if extra else ())]


LAUNCH_MODULE = "gemmscope.kernels.engine.launch"
# a user's kernel (docs/user-kernels.md): its spec is read there, with msgspec
USER_LAUNCH_MODULE = "gemmscope.kernels.cli.user_launch"


def launch_command(level_id: str, M: int, N: int, K: int, one_block_per_sm: bool = True,
                   extra: Sequence[str] = (), module: str = LAUNCH_MODULE) -> list[str]:
    """The program ncu profiles: one launch of the level (gemmscope.kernels.engine.launch).

    By default with one block per SM (unused shared memory keeps a second block off):
    blocks sharing an SM contend for its banks, which l1tex counts as bank conflicts
    though no block's own accesses have any (docs/perf-notes.md, measured with
    benchmarks/ncu_residue.py); with one block per SM the counters equal the access
    model's. ``one_block_per_sm=False`` profiles the launch as the runner makes it.
    ``extra``, ``module``: a user's kernel's launch (USER_LAUNCH_MODULE) and its options
    (``--kernel SPEC.toml``, its ``--param``s)."""
    return [sys.executable, "-m", module, level_id, str(M), str(N),
            str(K), *(["--one-block-per-sm"] if one_block_per_sm else []), *extra]


def launch_mode(command: list[str]) -> str:
    """How the profiled launch was made, for the counters event."""
    return "one_block_per_sm" if "--one-block-per-sm" in command else "as_launched"


def ncu_command(ncu: str, level_id: str, M: int, N: int, K: int, extra: bool = False,
                one_block_per_sm: bool = True) -> list[str]:
    """ncu on the first launch of the level's kernel, clocks left as they are."""
    kernel = registry.get(level_id).kernel
    if kernel is None:
        raise ValueError(f"{level_id} has no kernel of its own to profile (a reference)")
    return [ncu, "--clock-control", "none", "--metrics", ",".join(metric_names(extra)),
            "--csv", "--page", "raw", "-k", f"regex:{kernel}", "-c", "1",
            *launch_command(level_id, M, N, K, one_block_per_sm)]


def find_ncu(ncu: str) -> str | None:
    """The ncu executable's path, or None where there is none."""
    return shutil.which(ncu)


def tool_version(exe: str) -> str | None:
    """``ncu --version``'s version ("2025.3.1.0"), or None where it says none: every event
    ncu's counters make names the profiler that read them (issue 41 item 6)."""
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True,
                             timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"Version\s+(\S+)", out)
    return m.group(1) if m else None


@dataclass(frozen=True, slots=True)
class NcuProfile:
    """One ncu run on one level (or a CSV that ncu wrote earlier)."""

    level: str
    M: int
    N: int
    K: int
    command: list[str] = field(default_factory=list)
    row: NcuKernelRow | None = None
    error: str | None = None
    extra_metrics: bool = False
    returncode: int | None = None
    seconds: float | None = None
    stderr_tail: str = ""
    stdout_tail: str = ""
    file: str | None = None
    first_try: NcuProfile | None = None  # the run with the extra metrics, where it failed

    @property
    def asked(self) -> list[str]:
        return metric_names(self.extra_metrics)

    def problem(self) -> str | None:
        """Why this profile gives no counters (None: it does)."""
        if self.error is not None:
            return self.error
        if self.row is None:
            return "ncu profiled no kernel"
        kernel = registry.BY_ID[self.level].kernel if self.level in registry.BY_ID else None
        if kernel and kernel not in self.row.kernel:
            return f"ncu profiled {self.row.kernel!r}, not {kernel}"
        if all(self.row.values.get(m) is None for m in NCU_METRICS.values()):
            return "ncu reported none of the shared-memory metrics (all n/a)"
        return None

    def metrics(self) -> dict[str, float | int | None]:
        """Every metric asked for, as ncu reported it (None where it read n/a; counts
        as integers)."""
        values = self.row.values if self.row is not None else {}
        return {m: _count(values.get(m)) for m in self.asked}

    def as_dict(self) -> dict[str, Any]:
        """The profile as benchmarks/bank_conflicts_ncu.py writes it to JSON."""
        out: dict[str, Any] = {}
        if self.file is not None:
            out["file"] = self.file
        else:
            out.update(command=self.command, returncode=self.returncode,
                       seconds=self.seconds, extra_metrics=self.extra_metrics,
                       stderr_tail=self.stderr_tail)
        if self.error is not None or self.row is None:
            out["error"] = self.error or "ncu profiled no kernel"
            if self.file is None:
                out["stdout_tail"] = self.stdout_tail
        else:
            out.update(kernel=self.row.kernel, measured=self.row.values, units=self.row.units)
        if self.first_try is not None:
            out["first_try"] = self.first_try.as_dict()
        return out


def _count(value: float | None) -> float | int | None:
    return int(value) if value is not None and value.is_integer() else value


def profile(ncu: str, level_id: str, M: int, N: int, K: int, timeout_s: float = TIMEOUT_S,
            extra: bool = True, one_block_per_sm: bool = True) -> NcuProfile:
    """Run ncu once; with ``extra``, retry with the four core metrics alone if the run
    with the extra ones gave no row (an unknown metric name, say)."""
    first = _profile_once(ncu, level_id, M, N, K, timeout_s, extra, one_block_per_sm)
    if extra and first.row is None:
        retry = _profile_once(ncu, level_id, M, N, K, timeout_s, False, one_block_per_sm)
        return dataclasses.replace(retry, first_try=first)
    return first


def _profile_once(ncu: str, level_id: str, M: int, N: int, K: int, timeout_s: float,
                  extra: bool, one_block_per_sm: bool = True) -> NcuProfile:
    cmd = ncu_command(ncu, level_id, M, N, K, extra, one_block_per_sm)
    failed = functools.partial(NcuProfile, level_id, M, N, K, cmd, extra_metrics=extra)
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return failed(error=f"ncu ran past {timeout_s:g} s")
    except OSError as exc:
        return failed(error=f"cannot start {ncu}: {exc.strerror or exc}")
    seconds = round(time.perf_counter() - t0, 1)
    try:
        rows = parse_raw_csv(proc.stdout)
        error = "ncu profiled no kernel"
    except NcuParseError as exc:
        rows, error = [], str(exc)
    if rows:
        return NcuProfile(level_id, M, N, K, cmd, rows[0], None, extra, proc.returncode,
                          seconds, proc.stderr[-TAIL_CHARS:])
    if proc.returncode:
        error += f" (ncu exit code {proc.returncode})"
    return failed(error=error, returncode=proc.returncode, seconds=seconds,
                  stderr_tail=proc.stderr[-TAIL_CHARS:], stdout_tail=proc.stdout[-TAIL_CHARS:])


def from_csv_file(path: Path, level_id: str, M: int, N: int, K: int) -> NcuProfile:
    """A profile read from a CSV that ncu wrote earlier (same layout as its stdout)."""
    try:  # a regular file, bounded (kernels/files/reading.py)
        data = read_bytes(path, Kind.NCU_CSV)
        rows = parse_raw_csv(data.decode("utf-8", errors="replace"))
    except (FileRefused, NcuParseError) as exc:
        return NcuProfile(level_id, M, N, K, file=str(path), error=str(exc))
    if not rows:
        return NcuProfile(level_id, M, N, K, file=str(path),
                          error="no profiled kernel in the file")
    return NcuProfile(level_id, M, N, K, file=str(path), row=rows[0])


def counters_event(p: NcuProfile, t: float, version: str | None = None) -> dict[str, Any]:
    """The ``counters`` event of a profile that has counters (see ``problem``);
    ``version``: the ncu's (:func:`tool_version`)."""
    why = p.problem()
    if why is not None:
        raise ValueError(f"no counters for {p.level}: {why}")
    assert p.row is not None
    level = registry.BY_ID.get(p.level)
    return {"type": "counters", "t": t, "level": p.level, "M": p.M, "N": p.N, "K": p.K,
            "tool": TOOL, "metrics": p.metrics(), "kernel": p.row.kernel,
            "params": dict(level.params) if level is not None else None,
            "launch": launch_mode(list(p.command)), "command": list(p.command),
            "tool_version": version}


@contextlib.contextmanager
def sampling(now: Callable[[], float], emit: Callable[[dict[str, Any]], None], hz: float
             ) -> Iterator[Callable[[dict[str, Any]], None]]:
    """NVML sampled at ``hz`` (0: not at all) while the profiling steps run, so that the
    recording's telemetry lasts as long as its events. The runner (and its sampler) has
    gone by then, so that ncu has the GPU alone; the samples are taken without GPM (ncu
    needs the performance monitor), and one last sample ends them. Yields the emit to use
    meanwhile: the sampler's thread and the steps write one file."""
    lock = threading.Lock()

    def emit_one(event: dict[str, Any]) -> None:
        with lock:
            emit(event)

    sampler = Sampler(Nvml(gpm=False), emit_one, now, hz=hz) if hz > 0 else None
    if sampler is not None:
        sampler.start()
    try:
        yield emit_one
    finally:
        if sampler is not None:
            sampler.stop()
            if sampler.nvml.available:  # the last sample: telemetry ends with the steps
                emit_one(sampler.sample_now())


class CountersStep:
    """`record --ncu`: after the runs, ncu once per SIMT level, one counters event each.
    A level ncu gives nothing for is said on stderr and gets no event.

    Each profile is said in an ``info`` event (one launch under ncu, not timed), so the
    timeline says what each stretch is; NVML goes on being sampled (:func:`sampling`)."""

    def __init__(self, levels: list[str], exe: str, size: tuple[int, int, int],
                 timeout_s: float, stderr: TextIO):
        """``exe``: the ncu to run (a name on PATH or a path), as ``--ncu`` gave it."""
        self.levels = levels
        self.asked = exe
        self.exe = find_ncu(exe)
        self.size = size
        self.timeout_s = timeout_s
        self.stderr = stderr
        self.failed: list[str] = []
        self.recorded: list[str] = []

    def say(self, text: str) -> None:
        self.stderr.write(f"gemmscope record: {terminal_text(text)}\n")
        self.stderr.flush()

    def check(self) -> None:
        """Before the runs: say now what will be missing."""
        if self.exe is None:
            self.say(f"--ncu: {self.asked!r} not found; the recording will have no "
                     "counters (pass --ncu /path/to/ncu)")
        elif not self.levels:
            self.say("--ncu: no SIMT level in this recording; nothing to profile")

    def __call__(self, now: Callable[[], float], emit: Callable[[dict[str, Any]], None]
                 ) -> None:
        if self.exe is None:
            self.failed = list(self.levels)
            return
        self._profile_all(self.exe, now, emit)

    def _profile_all(self, exe: str, now: Callable[[], float],
                     emit: Callable[[dict[str, Any]], None]) -> None:
        M, N, K = self.size
        version = tool_version(exe)
        for level_id in self.levels:
            self.say(f"ncu {level_id} {M}x{N}x{K} ...")
            emit({"type": "info", "t": now(), "level": level_id, "M": M, "N": N, "K": K,
                  "message": f"ncu profiles {level_id} at {M}×{N}×{K}: one launch under "
                             "Nsight Compute, not timed"})
            prof = profile(exe, level_id, M, N, K, self.timeout_s)
            why = prof.problem()
            if why is not None:
                tail = prof.stderr_tail.strip().splitlines()[-3:]
                self.say(f"ncu on {level_id}: {why}; no counters recorded for it"
                         + "".join(f"\n  {line}" for line in tail))
                self.failed.append(level_id)
                continue
            emit(counters_event(prof, now(), version))
            self.recorded.append(level_id)

    def summary(self) -> str:
        text = f"counters of {len(self.recorded)} level(s) recorded"
        if self.failed:
            text += f"; none for {', '.join(self.failed)}"
        return text
