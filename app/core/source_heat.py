"""Per-line counters (``source_counters`` events) placed on a level's compiled code, free
of Qt: the value of each SASS line for the chosen metric, their sums per source line, and
the SASS lines with excess shared-memory wavefronts (bank conflicts) with their source.

The lines of a ``source_counters`` event are joined to a ``build`` event's SASS by byte
offset. Both come from the same source and options, but not from the same compilation (the
profiled launch compiled its own), so the join is checked: where the instructions at the
same offsets differ, nothing is placed and :class:`Heat` says why. Absent data is a reason,
never a zero: a line is 0 only where the profiler gave it no count at all (idle lines the
event left out), and unknown (None) where the event cut it for size.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from ...kernels.protocol import Build, SourceCounters
from ...kernels.protocol import SassLine as Row
from ...kernels.toolchain import SassLine, parse
from .recording_contents import NOT_REPLAYED


class Metric(StrEnum):
    """What the heat map shows (a field of the event's lines)."""

    STALLS = "stall_samples"
    CONFLICTS = "smem_excess_wavefronts"
    WAVEFRONTS = "smem_wavefronts"


METRIC_TEXT = {Metric.STALLS: "warp-stall samples",
               Metric.CONFLICTS: "bank conflicts (excess shared wavefronts)",
               Metric.WAVEFRONTS: "shared-memory wavefronts"}
MIN_AGREEMENT = 0.9  # share of instructions that must match at the same offsets


def no_counters_text(level_id: str, coming: bool = False) -> str:
    """Why a level shows no per-line counters: the replay has not reached them yet
    (``coming``: the recording has them), or the recording has none."""
    if coming:
        return (f"per-line counters for {level_id}: {NOT_REPLAYED} (the recording has "
                "them; they show when the replay reaches them)")
    return (f"no per-line counters for {level_id} in this recording (record it with "
            "gemmscope record --ncu-source)")


def mnemonic(text: str | None) -> str:
    """The mnemonic of an instruction's text ("@P0 LDS.128 R4, [R2]" -> "LDS.128")."""
    words = (text or "").replace(";", " ").split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0] if words else ""


@dataclass(frozen=True, slots=True)
class Heat:
    """One metric of one level's event, by SASS offset; ``reason`` where none is shown."""

    metric: Metric
    values: dict[int, float] = field(default_factory=dict)  # offset -> value
    default: float | None = None  # the value of an offset the event does not list
    reason: str | None = None
    summary: str = ""

    def at(self, offset: int) -> float | None:
        return self.values.get(offset, self.default)

    def for_lines(self, lines: list[SassLine]) -> list[float | None]:
        return [self.at(ln.offset) for ln in lines] if self.reason is None else \
            [None] * len(lines)


def heat(event: SourceCounters | None, build: Build | None, metric: Metric,
         level_id: str = "", kernel: list[SassLine] | None = None,
         coming: bool = False, earlier: str | None = None) -> Heat:
    """The metric of each SASS offset of ``build``'s kernel, from ``event``. ``kernel``:
    the build's SASS parsed already (parsing a large kernel costs ~30 ms). ``coming``:
    without an event, the replay has not reached the level's (the recording has one).
    ``earlier``: the code key of the build ncu measured, where the session re-ran the
    level with other code after it (``SessionStore.earlier_code``)."""
    if event is None:
        return Heat(metric, reason=no_counters_text(level_id or "this level", coming))
    if event.lines is None:
        return Heat(metric, reason=f"ncu gave no per-line counters for {event.level} "
                                   f"({event.status}): {event.reason or '?'}")
    if metric.value not in (event.columns or {}):
        return Heat(metric, reason=f"ncu's source page had no column for {METRIC_TEXT[metric]}"
                                   f" (ncu {event.tool_version or '?'})")
    rows = event.lines
    shown, profiled = (build.variant if build else None), event.variant
    if shown is not None and profiled is not None and shown != profiled:
        # the consequence first: on a projector's narrow column the line is cut at the end
        return Heat(metric, reason=f"per-line counters not placed: ncu profiled the "
                                   f"{profiled} variant of {event.level}; this build is "
                                   f"the {shown} variant")
    other = other_instantiation(event, build)
    if other is not None:
        return Heat(metric, reason=f"per-line counters not placed: ncu profiled "
                                   f"{event.level} with {other[0]} (its pick at "
                                   f"{event.M}×{event.N}×{event.K}); this build has {other[1]}")
    if kernel is None and build is not None and build.sass is not None:
        kernel = parse(build.sass)
    problem = agreement_problem(rows, build, kernel)
    if problem is not None and earlier is not None and build is not None:
        return Heat(metric, reason=earlier_build_text(event.level, earlier, build.code_key))
    if problem is not None:
        return Heat(metric, reason=problem)
    name = metric.value
    values = {r.offset: v for r in rows if (v := getattr(r, name)) is not None}
    # an offset the event does not list had no count at all (an idle line left out), where
    # ncu's page listed every instruction of this build and none was cut for size;
    # otherwise it is unknown
    complete = (not event.cap_left_out and kernel is not None
                and event.lines_total == len(kernel))
    total = (event.totals or {}).get(name)
    summary = (f"{METRIC_TEXT[metric]}: {total:,.0f} in the kernel" if total is not None
               else METRIC_TEXT[metric])
    summary += ("; from the Nsight Compute report" if event.launch == "report" else
                f"; ncu {event.tool_version or '?'}, one launch at "
                f"{event.M}×{event.N}×{event.K}")
    if not complete:
        summary += "; lines not in the event: n/a"
    if earlier is not None:  # another code key, the same instructions: placed
        summary += f"; measured on the build before (code {earlier}), with these instructions"
    return Heat(metric, values, 0.0 if complete else None, None, summary)


def template_args(name: str | None) -> list[str] | None:
    """The template arguments of a kernel's name, as the build event ("k<128, 256, true>")
    or ncu ("void k<(int)128, (int)256, (bool)1>(int, ...)") writes them: casts dropped,
    true / false as 1 / 0; None where the name has no argument list."""
    if name is None or "<" not in name:
        return None
    args, depth, cur = [], 0, ""
    for ch in name[name.index("<") + 1:]:
        if ch == ">" and depth == 0:
            args.append(cur)
            break
        depth += (ch == "<") - (ch == ">")
        if ch == "," and depth == 0:
            args.append(cur)
            cur = ""
        else:
            cur += ch
    else:
        return None  # no closing ">"
    out = []
    for a in (x.strip() for x in args):
        if a.startswith("(") and ")" in a:
            a = a[a.index(")") + 1:].strip()
        out.append({"true": "1", "false": "0"}.get(a, a))
    return out


def other_instantiation(event: SourceCounters, build: Build | None
                        ) -> tuple[str, str] | None:
    """Where the profiled kernel is another instantiation of the build's template (a
    level that picks its parameters per shape: the FP8 tile width), the parameters that
    differ, as (profiled, built) texts ("BN=192", "BN=256"); None where they agree or
    either name is missing."""
    profiled = template_args(event.kernel)
    built = template_args(build.kernel if build else None)
    if profiled is None or built is None or profiled == built:
        return None
    if len(profiled) != len(built):
        return ("other template arguments", "its own")
    names = list(build.params) if build is not None and build.params else []
    names += [f"argument {i + 1}" for i in range(len(names), len(built))]
    pairs = [(n, p, b) for n, p, b in zip(names, profiled, built, strict=False) if p != b]
    return (", ".join(f"{n}={p}" for n, p, _ in pairs),
            ", ".join(f"{n}={b}" for n, _, b in pairs))


def profiled_build(event: SourceCounters | None, builds: Iterable[Build]) -> Build | None:
    """Of a level's builds, the one ncu profiled: the same variant and template
    arguments as the event's kernel (ncu's spelling or the build's); None where the
    session has no such build or either name lacks its arguments."""
    if event is None:
        return None
    profiled = template_args(event.kernel)
    if profiled is None:
        return None
    variant = event.variant
    return next((b for b in builds if template_args(b.kernel) == profiled
                 and (variant is None or b.variant == variant)), None)


def earlier_build_text(level: str, measured: str, shown: str | None) -> str:
    """Why a measurement is not shown on a build: it was made on the level's code before
    the session re-ran the level (``record --update`` re-measures and re-profiles)."""
    return (f"ncu measured an earlier build of {level} (code {measured}); the recording "
            f"re-ran it since with other code ({shown or '?'}): per-line counters not "
            f"placed. `gemmscope record --update FILE` profiles the new code again")


def agreement_problem(rows: list[Row], build: Build | None,
                      kernel: list[SassLine] | None = None) -> str | None:
    """Why the event's lines cannot be placed on the build's SASS (None: they can).
    ``kernel``: that SASS parsed already."""
    if build is None or build.sass is None:
        return "the recording has no SASS of this level to place the counters on"
    by_offset = {ln.offset: ln.mnemonic for ln in (kernel or parse(build.sass))}
    listed = [(r.offset, mnemonic(r.sass)) for r in rows if r.sass is not None]
    if not listed:
        return None
    same = sum(1 for off, mn in listed if by_offset.get(off) == mn)
    if same < MIN_AGREEMENT * len(listed):
        return (f"the profiled kernel's instructions differ from the build's at "
                f"{len(listed) - same} of {len(listed)} offsets (another variant or "
                f"compiler?): per-line counters not placed")
    return None


def source_sums(h: Heat, lines: list[SassLine], path: str) -> dict[int, float]:
    """The heat of each source line of ``path``: the sum over the SASS lines whose
    innermost location in that file is it (``builds.in_file``)."""
    if h.reason is not None:
        return {}
    sums: dict[int, float] = {}
    for ln in lines:
        where = next((w for w in ln.where if w[0] == path), None)
        value = h.at(ln.offset)
        if where is not None and value:
            sums[where[1]] = sums.get(where[1], 0.0) + value
    return sums


def intensity(values: list[float | None]) -> list[float | None]:
    """Each value as a share of the largest (0..1); None stays None."""
    top = max((v for v in values if v is not None), default=0.0)
    return [None if v is None else (v / top if top > 0 else 0.0) for v in values]


# ------------------------------------------------------------------ bank conflicts

@dataclass(frozen=True, slots=True)
class ConflictLine:
    """A SASS line with excess shared-memory wavefronts, and where it comes from."""

    offset: int
    sass: str
    excess: float
    wavefronts: float | None
    ideal: float | None
    source: tuple[str, int] | None  # (repository path, line) the Code view can show

    def text(self) -> str:
        where = f"{self.source[0].rsplit('/', 1)[-1]}:{self.source[1]}" if self.source \
            else "no source line"
        ideal = "" if self.ideal is None or self.wavefronts is None else \
            f" ({self.wavefronts:,.0f} wavefronts, ideal {self.ideal:,.0f})"
        return f"{where}  /*{self.offset:05x}*/ {self.sass}: {self.excess:,.0f} excess{ideal}"


def conflict_lines(event: SourceCounters | None, build: Build | None
                   ) -> list[ConflictLine]:
    """The event's lines with excess wavefronts, most first; the source line from the
    build's line info (innermost location in one of its files), else the event's own."""
    if event is None:
        return []
    rows = event.lines or []
    sources = (build.sources if build is not None else None) or {}
    placed = {}
    if build is not None and build.sass is not None and \
            agreement_problem(rows, build) is None:
        placed = {ln.offset: ln for ln in parse(build.sass)}
    out = []
    for r in rows:
        excess = r.smem_excess_wavefronts
        if excess is None or excess <= 0:
            continue
        ln = placed.get(r.offset)
        src = next((w for w in ln.where if w[0] in sources), None) if ln else None
        if src is None and r.source is not None:
            src = r.source
        out.append(ConflictLine(r.offset, r.sass or "?", excess, r.smem_wavefronts,
                                r.smem_wavefronts_ideal, src))
    out.sort(key=lambda c: -c.excess)
    return out
