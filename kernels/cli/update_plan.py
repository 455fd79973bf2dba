"""``record --update FILE``: which runs bring a recording up to date with the code, why,
and about how much GPU time they take. Reads the file only: no GPU, no CuPy (so
``--update --dry-run`` works anywhere). No Qt.

A level is stale where its newest result at a shape and mode (the one readers show:
kernels/results/rows.py's ``newest``) ran other code than the level would run now: its
``code_key`` differs from the key this checkout's sources, options and instantiations give
(kernels/toolchain/nvrtc.py's ``expected_key``, with the result's own compiler string and
the device arch of its session header), or its template parameters differ from those the
registry picks for that shape. Each stale (level, shape, mode) is run again as the file
ran it (repeats, warmup, settle; a sustained run's window, trials and cool-down), with
its reference: the runner measures the reference first in the same session.

A profile in the file (ncu counters, per-line counters, launch clocks, a trace) is made
again where its level is, where a newer build of the level ran other code, and, for a
trace, where the level's trace build would be other code now (its trace lines changed:
the plain build, its results and their code keys stand, so no run is planned).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from ..ladder import registry
from ..ladder.level import Kind, Level
from ..ladder.shape import Shape
from ..protocol import records as rec
from ..protocol.commands import SustainedConfig
from ..protocol.events import DEFAULT_DISTRIBUTION, PROTOCOL_VERSION, Distribution, Mode
from ..protocol.plan import RunRequest
from ..protocol.recording import Session
from ..results.counts import counted
from ..toolchain import nvrtc

# the types an update reads (the rest of the file is passed over, not decoded)
READ = (rec.Result, rec.Build, rec.RunStart, rec.Kernel, rec.Restart, rec.Counters,
        rec.SourceCounters, rec.Trace, rec.LaunchClocks)

# the profiling steps an update runs again for a stale level the file holds events of:
# the event type's name, what the plan calls it, and its seconds where the event does not
# say (ncu's replay of one launch, a trace build's compile and paired launches)
PROFILES = {"counters": ("ncu counters", 15.0), "source_counters": ("per-line counters", 20.0),
            "trace": ("trace", 10.0), "launch_clocks": ("launch clocks", 15.0)}

# where the file has no run_start to time a run by (older files): a model of it
COMPILE_S = 2.0  # NVRTC, the first run of a level in a runner
ENERGY_WINDOW_S = 1.0  # a burst's energy window after its repeats (docs/energy.md)
RUNNER_START_S = 2.0  # a runner's start, where the file's first header does not say

RunKey = tuple[str, Shape, str, int]  # (level, shape, mode, GPU): rows.result_key's


class UpdateRefused(Exception):
    """The file cannot be updated; the message says why."""


# the reason of a run planned only because its ratio was not timed in pairs (--unpaired):
# its code is the file's, so its profiles stand
UNPAIRED = "unpaired ratio (timed before paired timing: measured again in pairs)"


@dataclass(frozen=True, slots=True)
class StaleRun:
    """One run again: the request, why, and its estimated GPU seconds (its reference's
    included where the reference runs first)."""

    request: RunRequest
    reasons: tuple[str, ...]
    seconds: float
    measured: bool  # the estimate comes from the file's own timing of this run


@dataclass(slots=True)
class StaleLevel:
    level: str
    reference: str | None
    runs: list[StaleRun] = field(default_factory=list)

    @property
    def reasons(self) -> list[str]:
        return list(dict.fromkeys(why for run in self.runs for why in run.reasons))

    @property
    def seconds(self) -> float:
        return sum(run.seconds for run in self.runs)

    @property
    def recoded(self) -> bool:
        """Whether it runs other code or parameters than the file's (not only to time its
        ratio in pairs, UNPAIRED): its profiles in the file are then of its old code."""
        return self.reasons != [UNPAIRED]


@dataclass(frozen=True, slots=True)
class ProfileAgain:
    """A profiling step again for a stale level: the file holds its ``kind`` event (a
    ``PROFILES`` key) of the level's old code at ``shape``; ``seconds``: the event's own,
    else the kind's model."""

    kind: str
    level: str
    shape: Shape
    seconds: float
    why: str = ""  # where its level is not re-run: why it is made again


@dataclass(slots=True)
class UpdatePlan:
    levels: list[StaleLevel]
    left_out: list[str]  # a line each: what an update cannot re-measure, and why
    startup_s: float  # a runner's start
    # the profiles of the stale levels' old code in the file, made again after the runs
    profiles: list[ProfileAgain] = field(default_factory=list)

    @property
    def runs(self) -> list[RunRequest]:
        return [run.request for lv in self.levels for run in lv.runs]

    @property
    def empty(self) -> bool:
        return not self.levels and not self.profiles

    @property
    def seconds(self) -> float:
        return (self.startup_s if not self.empty else 0.0) + sum(
            lv.seconds for lv in self.levels) + sum(p.seconds for p in self.profiles)

    def profiles_of(self, kind: str) -> dict[Shape, list[str]]:
        """The levels to profile again with ``kind``'s step, by shape, in plan order."""
        out: dict[Shape, list[str]] = {}
        for p in self.profiles:
            if p.kind == kind:
                out.setdefault(p.shape, []).append(p.level)
        return out


def check_protocol(session: Session) -> None:
    """An update appends this gemmscope's events to the file and compares by code key and
    parameters: a file of an older protocol is refused, with the reason."""
    got = session.header.protocol
    if got < PROTOCOL_VERSION:
        raise UpdateRefused(
            f"{session.path} is a protocol {got} recording and this gemmscope writes "
            f"protocol {PROTOCOL_VERSION}: an update appends to the file and compares code "
            f"keys, which an older recording does not carry in the same form; record it "
            f"anew (record -o NEW.jsonl ...)")


@dataclass(slots=True)
class _Newest:
    result: rec.Result
    header: rec.Session
    seconds: float | None  # its run_start to the next run's (or its result), in the file


def plan_update(session: Session, unpaired: bool = False,
                max_gpu_s: float | None = None) -> UpdatePlan:
    """The runs that bring ``session`` (read with ``only=READ``) up to date. ``unpaired``:
    also each level's newest result whose ratio to its reference was not timed in pairs
    (issue 41: a recording made again from paired runs, in parts); ``max_gpu_s``: the
    runs in plan order up to that estimate, the rest said as left for the next update
    (which continues where this one stopped, the file's newest results being these)."""
    newest, builds, user, profiled = _scan(session.events)
    levels: dict[str, StaleLevel] = {}
    left_out: dict[str, str] = {}
    timed = {key: n.seconds for key, n in newest.items()}
    estimated: set[RunKey] = set()  # references already in the estimate
    others = sorted({r.result.device_index for r in newest.values()} - {0})
    if others:  # an update is one runner: it brings the first GPU's results up to date
        left_out["GPU"] = (f"results on GPU {', '.join(map(str, others))}: left as "
                           f"recorded (an update runs one runner, for GPU 0's results)")
    for (level_id, _shape, _mode, device), found in newest.items():
        if device:
            continue
        level = registry.BY_ID.get(level_id)
        if level is None:
            left_out[level_id] = _left_out_reason(level_id, user)
            continue
        if level.kind is not Kind.LEVEL:
            continue  # a reference: measured again beside a stale level only
        reasons = _stale_reasons(level, found, builds)
        if isinstance(reasons, str):
            left_out[level_id] = reasons
            continue
        r = found.result
        if not reasons and unpaired and r.reference and not r.paired:
            reasons = [UNPAIRED]
        if not reasons:
            continue
        request = _request(r)
        seconds, measured = _estimate(found)
        ref = level.reference
        ref_key = (ref or "", r.shape, str(r.mode), 0)
        if ref is not None and ref_key not in estimated:
            estimated.add(ref_key)
            ref_s = timed.get(ref_key)
            seconds += ref_s if ref_s is not None else seconds  # a reference: as its level
            measured = measured and ref_s is not None
        stale = levels.setdefault(level_id, StaleLevel(level_id, ref))
        stale.runs.append(StaleRun(request, tuple(reasons), seconds, measured))
    order = {lv.id: i for i, lv in enumerate(registry.LEVELS)}
    ordered = sorted(levels.values(), key=lambda s: order.get(s.level, len(order)))
    start = session.header.t if 0 < session.header.t < 60 else RUNNER_START_S
    if max_gpu_s is not None:
        ordered, past = _within(ordered, max_gpu_s - start)
        if past:
            left_out[" budget"] = (
                f"{counted(past, 'run')} past --max-gpu-s {max_gpu_s:g}: left for the next "
                f"update (the same command again continues where this one stops)")
    # the profiles of a stale level's old code, and those of a level re-run since they
    # were made (an earlier update re-ran it and left them): made again of the new code
    rerun = {lv.level for lv in ordered if lv.recoded}
    again = [ProfileAgain(kind, level, shape, p.seconds, p.why or "")
             for (kind, level, shape), p in sorted(
                 profiled.items(), key=lambda kv: order.get(kv[0][1], len(order)))
             if (level in rerun or p.outdated) and level in registry.BY_ID
             and (kind != "trace" or nvrtc.traceable(registry.BY_ID[level]))]
    return UpdatePlan(ordered, list(left_out.values()), start, again)


def _within(levels: list[StaleLevel], seconds: float) -> tuple[list[StaleLevel], int]:
    """The runs, in plan order, whose estimates add up to at most ``seconds`` (the first
    run at least, so that an update always moves on), and how many are left."""
    kept: list[StaleLevel] = []
    spent, past = 0.0, 0
    for lv in levels:
        runs: list[StaleRun] = []
        for run in lv.runs:
            if past or (spent + run.seconds > seconds and (kept or runs)):
                past += 1
                continue
            spent += run.seconds
            runs.append(run)
        if runs:
            kept.append(StaleLevel(lv.level, lv.reference, runs))
    return kept, past


def _scan(events: Iterable[object]) -> tuple[dict[RunKey, _Newest], dict[str, rec.Build],
                                             set[str], dict[tuple[str, str, Shape], _Profiled]]:
    """The newest result of each (level, shape, mode, GPU), each with its session header
    and how long its run took; the builds by code key; the ids of users' kernels; the
    profiles in the file, (kind, level, shape) -> seconds (the event's own, else the
    kind's model)."""
    profiled: dict[tuple[str, str, Shape], _Profiled] = {}
    codes: dict[tuple[str, str, str], str] = {}  # (level, variant, params) -> newest code
    newest: dict[RunKey, _Newest] = {}
    builds: dict[str, rec.Build] = {}
    user: set[str] = set()
    starts: dict[tuple[object, str], float] = {}
    header: rec.Session | None = None
    # the last run finished and when it began: it lasts until the next run starts (its
    # build event, SASS and all, comes after its result)
    last: tuple[_Newest, float] | None = None
    for e in events:
        # a new runner (the file's first, or a later one: the timeline makes its header a
        # restart that carries it): its run ids start again, its catalog says its params
        if isinstance(e, rec.Session):
            header, starts, last = e, {}, None
        elif isinstance(e, rec.Restart):
            header, starts, last = e.runner or header, {}, None
        elif isinstance(e, rec.RunStart):
            starts[(e.id, e.level)] = e.t
            if last is not None and e.t >= last[1]:
                last[0].seconds = e.t - last[1]
            last = None
        elif isinstance(e, rec.Result) and header is not None:
            began = starts.pop((e.id, e.level), None)
            seconds = e.t - began if began is not None and e.t >= began else None
            newest.pop(key := (e.level, e.shape, str(e.mode), e.device_index), None)
            newest[key] = found = _Newest(e, header, seconds)
            last = (found, began) if began is not None else None
        elif isinstance(e, rec.Build) and e.code_key:
            builds[e.code_key] = e
            codes[(e.level, e.variant, repr(sorted((e.params or {}).items())))] = e.code_key
        elif isinstance(e, rec.Kernel):
            user.add(e.level)
        elif isinstance(e, rec.Counters | rec.SourceCounters | rec.Trace | rec.LaunchClocks):
            kind = ("counters" if isinstance(e, rec.Counters) else
                    "source_counters" if isinstance(e, rec.SourceCounters) else
                    "launch_clocks" if isinstance(e, rec.LaunchClocks) else "trace")
            own = getattr(e, "seconds", None)
            then = {key: code for key, code in codes.items() if key[0] == e.level}
            profiled[(kind, e.level, e.shape)] = _Profiled(
                float(own) if own else PROFILES[kind][1], then,
                trace=e if isinstance(e, rec.Trace) else None, header=header)
    for (_, level, _), made in profiled.items():
        # a build of the same key and other code came later, or one of other parameters
        # (a retuned level: its profiles are of the parameters it no longer runs)
        now = {key: code for key, code in codes.items() if key[0] == level}
        if any(now.get(key, code) != code for key, code in made.codes.items()) \
                or bool(now.keys() - made.codes.keys()):
            made.why = OLDER_BUILD
        elif made.trace is not None and _trace_build_changed(made.trace, made.header, builds):
            made.why = TRACE_BUILD
    return newest, builds, user, profiled


# why a profile of a level that runs the file's code is made again
OLDER_BUILD = "the file's are of a build before its newest: other code or parameters"
TRACE_BUILD = "its trace build is other code now: the trace lines changed"


def _trace_build_changed(trace: rec.Trace, header: rec.Session | None,
                         builds: dict[str, rec.Build]) -> bool:
    """Whether a measured trace ran a trace build other than this checkout's for its
    parameters: a change to the trace lines alone (kernels/cuda/trace.cuh, a level's
    GS_TRACE lines) leaves the plain build, its results and their code keys as they were.
    False where it cannot be told (no code key, no compiler or arch said, a synthetic
    trace, parameters this checkout does not take)."""
    level = registry.BY_ID.get(trace.level)
    build = builds.get(trace.plain_code_key or "")
    device = _device(header) if header is not None else None
    if (trace.synthetic or not trace.code_key or level is None or build is None
            or not build.compiler or device is None or device.arch is None
            or not nvrtc.traceable(level)):
        return False
    try:
        fitted = level.with_params(trace.params) if trace.params else level
    except ValueError:
        return False
    return nvrtc.expected_key(fitted, device.arch, build.compiler, trace=True) != trace.code_key


@dataclass(slots=True)
class _Profiled:
    seconds: float
    codes: dict[tuple[str, str, str], str]  # the level's builds' code keys then
    trace: rec.Trace | None = None  # the event, where it is a trace
    header: rec.Session | None = None  # the header of its runner
    why: str | None = None  # why it is outdated though its level is not (None: it is not)

    @property
    def outdated(self) -> bool:
        return self.why is not None


def _left_out_reason(level_id: str, user: set[str]) -> str:
    if level_id in user:
        return (f"{level_id}: a user's kernel (--kernel): not updated, the recording does "
                f"not say where its spec file is; re-measure it with record --append "
                f"--kernel SPEC")
    return f"{level_id}: not a level of this gemmscope (removed or renamed): left as recorded"


def _stale_reasons(level: Level, found: _Newest, builds: dict[str, rec.Build]
                   ) -> list[str] | str:
    """Why the newest result no longer matches the code ([]: it does); a string: why it
    cannot be told (the level is left out)."""
    r, header = found.result, found.header
    device = _device(header)
    if device is None or device.arch is None or device.sm_count is None:
        return f"{level.id}: its session header names no GPU arch: cannot tell its code key"
    try:
        fitted = level.for_shape(r.M, r.N, r.K, device.sm_count)
    except ValueError as exc:
        return f"{level.id}: {exc}"
    reasons: list[str] = []
    catalog = {c.id: c for c in header.catalog or []}
    was = r.params or (catalog[level.id].params if level.id in catalog else None)
    if was is not None and dict(was) != fitted.params:
        changed = [f"{k} {was.get(k, '–')} → {fitted.params.get(k, '–')}"
                   for k in dict.fromkeys([*was, *fitted.params])
                   if was.get(k) != fitted.params.get(k)]
        reasons.append(f"params {', '.join(changed)}")
    if r.code_key is None:
        reasons.append("no code key recorded (a result from before code keys)")
        return reasons
    now = nvrtc.expected_key(fitted, device.arch, r.compiler or "")
    if now != r.code_key:
        reasons.append(f"code key {r.code_key[:8]}… → {now[:8]}… "
                       f"({_why_key(fitted, builds.get(r.code_key))})")
    return reasons


def _device(header: rec.Session) -> rec.DeviceInfo | None:
    """The GPU a runner's header names (its first, where it lists several)."""
    return header.device or (header.gpus()[0] if header.gpus() else None)


def _why_key(level: Level, build: rec.Build | None) -> str:
    """What made the key differ, as far as the recorded build says."""
    if build is None or not build.sources:
        return "code key differs; the file holds no build event with its sources"
    now = nvrtc.source_files(level)
    changed = [p for p in dict.fromkeys([*build.sources, *now])
               if build.sources.get(p) != now.get(p)]
    if changed:
        return ", ".join(changed) + " changed"
    main = next(iter(now.values()), "")  # the level's .cu
    if any(o.startswith("-I") for o in build.options or ()) or "<mma.h>" in main:
        return ("sources as recorded: the key rule changed, include folders are no longer "
                "hashed; once per level")
    return "sources as recorded: the NVRTC options or instantiations differ"


def _request(r: rec.Result) -> RunRequest:
    """The run again, as the file ran it (on the same operand distribution)."""
    return replace(_measured_as(r), operands=_operands(r.operands))


def _operands(name: str | None) -> Distribution | None:
    """A result's distribution as a run asks for it: None for the default (unsaid) and for
    a name this checkout does not know (the default then: said by the new result)."""
    if name is None or name not in tuple(Distribution) or name == DEFAULT_DISTRIBUTION:
        return None
    return Distribution(name)


def _measured_as(r: rec.Result) -> RunRequest:
    if r.mode == Mode.SUSTAINED:
        defaults = SustainedConfig()
        config = SustainedConfig(
            float(r.window_s) if r.window_s is not None else defaults.window_s,
            int(r.trials) if r.trials is not None else defaults.trials,
            float(r.cooldown_s) if r.cooldown_s is not None else defaults.cooldown_s)
        return RunRequest(r.level, r.shape, r.repeats, warmup=r.warmup, compare=True,
                          mode=Mode.SUSTAINED, sustained=config)
    # a paired burst's repeats are the pairs its loop took; the command's bound was max_pairs
    paired = bool(r.paired)
    return RunRequest(r.level, r.shape, r.repeats, warmup=r.warmup, compare=True,
                      settle_s=float(r.settle_s) if r.settle_s else None,
                      pair_budget_s=float(r.budget_s_per_pair)
                      if paired and r.budget_s_per_pair else None,
                      max_pairs=int(r.max_pairs) if paired and r.max_pairs else None)


def _estimate(found: _Newest) -> tuple[float, bool]:
    """The run's seconds: as long as it took in the file (its run_start to the next run's:
    its build event included; to its result where it was the last), else
    a model of it (compile, warmup and repeats at its median, the energy window; a
    sustained run's trials of cool-down and window)."""
    if found.seconds is not None:
        return found.seconds, True
    r = found.result
    if r.mode == Mode.SUSTAINED:
        config = _request(r).sustained or SustainedConfig()
        return COMPILE_S + config.trials * (config.window_s + config.cooldown_s), False
    launches = (r.warmup or 0) + r.repeats
    return COMPILE_S + launches * float(r.median_ms) / 1e3 + ENERGY_WINDOW_S, False


def plan_lines(plan: UpdatePlan, estimate: bool) -> list[str]:
    """What the update re-measures and why, a line per level (with ``estimate``: its GPU
    seconds, and a run a line); then what it leaves out."""
    lines: list[str] = []
    for lv in plan.levels:
        shapes = list(dict.fromkeys(run.request.shape_text for run in lv.runs))
        modes = "/".join(dict.fromkeys(str(run.request.mode) for run in lv.runs))
        ref = f", reference {lv.reference}" if lv.reference else ""
        cost = f", ~{lv.seconds:.0f} s" if estimate else ""
        lines.append(f"{lv.level}: {'; '.join(lv.reasons)}; {len(shapes)} shape"
                     f"{'s' * (len(shapes) != 1)} × {modes}{ref}{cost}")
        if estimate:
            for run in lv.runs:
                how = "as timed in the file" if run.measured else "modelled"
                lines.append(f"    {run.request.describe()}: ~{run.seconds:.1f} s ({how})")
    stale = {lv.level for lv in plan.levels if lv.recoded}
    for level in dict.fromkeys(p.level for p in plan.profiles):
        again = [p for p in plan.profiles if p.level == level]
        cost = f", ~{sum(p.seconds for p in again):.0f} s" if estimate else ""
        why = ("as the file holds them of its old code" if level in stale else
               "; ".join(dict.fromkeys(p.why or OLDER_BUILD for p in again)))
        lines.append(f"{level}: profiled again ({why}): " + ", ".join(
            f"{PROFILES[p.kind][0]} at {p.shape}" for p in again) + cost)
    lines += [f"left out: {why}" for why in plan.left_out]
    if estimate and not plan.empty:
        what = [counted(len(plan.runs), "run") + " and their references"] if plan.runs else []
        what += [counted(len(plan.profiles), "profile")] if plan.profiles else []
        lines.append(f"estimated GPU time: ~{plan.seconds:.0f} s for {', '.join(what)} (an "
                     f"estimate from the file's own timings, a runner start of "
                     f"{plan.startup_s:.1f} s included)")
    return lines
