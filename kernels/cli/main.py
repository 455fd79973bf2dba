"""GPU-side commands: runner, scheduler, worker, bench, record, report, levels, diff, sass;
each its own function (``COMMANDS``) over the shared parts: the options and the plan
(``arguments``), the runner session and the recording (here). No Qt anywhere."""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TextIO

from ..drive import cluster_serve, remote, targets
from ..drive.arch_skip import runnable_here
from ..drive.cluster_address import AddressRefused
from ..drive.devices import DeviceSet
from ..drive.driver import Driver
from ..drive.session import (
    RunnerSession,
    default_runner_command,
)
from ..profile import launch_clocks, ncu, ncu_reference
from ..profile.ncu_source_step import BUDGET_S as SOURCE_BUDGET_S
from ..profile.ncu_source_step import SourceCountersStep, source_files
from ..protocol import commands, events
from ..protocol import records as rec
from ..protocol.decoding import EventRecord, encode
from ..protocol.interrupt import by_ctrl_c
from ..protocol.option_bounds import OptionRefused, split_command
from ..protocol.output_file import (
    Output,
    OutputRefused,
    Stopped,
    abandon,
    output_file,
    stopped_by_signals,
)
from ..protocol.plan import RunRequest
from ..protocol.session_file import RecordingFailed, SessionWriter
from ..protocol.text_safety import terminal_text
from ..results.counts import counted
from ..results.progress import Progress
from ..results.table import render
from ..toolchain import build_report
from . import compare, level_list, report, serve, update, update_plan, user_kernels
from .arguments import (
    CliError,
    ClusterTarget,
    build_parser,
    cluster_of,
    gpus,
    plan,
    remote_target,
)
from .options import scheduler_options, source_step, worker_options

__all__ = ["COMMANDS", "CliError", "build_parser", "main", "plan"]


# after the runs: called with the session clock and the recording's event sink
AfterRuns = Callable[[Callable[[], float], Callable[[dict[str, Any]], None]], None]


class ProfileStep(Protocol):
    """A step of ``record`` after the runs (ncu's counters, its source counters)."""

    failed: list[str]  # the levels it got nothing for

    def check(self) -> None: ...

    def summary(self) -> str: ...

    def __call__(self, now: Callable[[], float],
                 emit: Callable[[dict[str, Any]], None]) -> None: ...


def runner_command(args: argparse.Namespace) -> list[str]:
    """The runner a bench or record command drives: ``--remote HOST`` (over ssh),
    ``--runner CMD``, else this Python's."""
    target = remote_target(args.remote, args.runner)
    if target is not None:
        return remote.ssh_command(target, args.remote_command, extra=args.ssh_option)
    if args.runner:
        return split_command(args.runner)
    argv = default_runner_command(args.telemetry_hz)
    return argv + (["--levels-from", args.levels_from] if args.levels_from else [])


def open_session(args: argparse.Namespace, on_event: Callable[[EventRecord], None],
                 **kwargs: Any) -> Driver:
    """The runner session of a bench or record command: local, or over ssh
    (``--remote``: see :func:`remote.session_options`); with ``--device``/``--devices``
    one runner per GPU (:class:`DeviceSet`)."""
    asked = gpus(args)
    target = remote_target(args.remote, args.runner)
    if asked is not None:
        specs = targets.device_specs(asked, [] if target else runner_command(args), target,
                                     args.remote_command, args.ssh_option)
        return DeviceSet(on_event, specs, split=args.split, **kwargs)
    command = runner_command(args)
    options = remote.session_options(target) if target is not None else {}
    return RunnerSession(on_event, command, **options, **kwargs)


def run_plan(args: argparse.Namespace, runs: list[RunRequest], out_path: str | None,
             stderr: TextIO, after: AfterRuns | None = None,
             results: list[rec.Result] | None = None) -> list[rec.Result]:
    """Run ``runs`` through a runner session, recording to ``out_path``; then, with the
    runner gone, ``after`` may add events of its own (on the same clock, to the same
    file). ``results``: the list the results are collected in (the steps read it)."""
    results = [] if results is None else results
    on_event = Progress(stderr, len(runs)).sink(results)
    writer = SessionWriter(out_path) if out_path else None

    try:
        session = open_session(args, on_event, tap=writer, watchdog_s=args.timeout,
                               start_timeout_s=args.start_timeout)
        try:
            _drive(session, runs, args, after, stderr.write)
        finally:
            session.close()
    finally:
        if writer is not None:
            writer.close()
    return results


def _drive(session: Driver, runs: list[RunRequest], args: argparse.Namespace,
           after: AfterRuns | None, say: Callable[[str], object]) -> None:
    try:
        header = session.wait_ready()
    except RuntimeError as exc:
        raise CliError(str(exc)) from None
    for entry in header.gpus() or [rec.DeviceEntry(id=0)]:
        if entry.name is None:
            which = (f"GPU {entry.gpu}: " if isinstance(session, DeviceSet)
                     and entry.gpu is not None else "")
            raise CliError(f"no GPU: {which}"
                           f"{entry.no_gpu_reason or header.no_gpu_reason}")
    runs = runnable_here(header, runs, say)
    session.submit(runs)
    session.wait_idle()
    if session.explainer is not None and session.lost_runs:
        # over ssh a lost run is a lost connection or runner: say so, exit 2
        raise CliError(session.failure_text)
    session.close()  # the GPU to the profiler alone
    if after is not None:
        after(session.now, session.emit)


def run_cluster(args: argparse.Namespace, target: ClusterTarget, runs: list[RunRequest],
                out_path: str | None, stderr: TextIO) -> tuple[list[rec.Result], int]:
    """The plan on a Dask cluster; returns the results and the runs lost with a worker."""
    from ..drive import cluster

    if args.remote is not None or args.device is not None or args.devices:
        raise CliError("--cluster picks GPUs through its workers; it cannot go with "
                       "--remote, --device or --devices")
    command = runner_command(args) if args.runner or args.levels_from else None
    address, security = target
    try:
        return cluster.record_plan(address, runs, out_path, stderr, command,
                                   args.timeout, args.telemetry_hz, security=security)
    except cluster.ClusterError as exc:
        raise CliError(str(exc)) from None


def main(argv: list[str] | None = None, stdout: TextIO | None = None,
         stderr: TextIO | None = None) -> int:
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    try:
        args = build_parser().parse_or_refuse(argv)
    except OptionRefused as exc:  # one line, naming the option and its range
        stderr.write(terminal_text(exc.line) + "\n")
        return 2
    try:
        return COMMANDS[args.command](args, stdout, stderr)
    except (CliError, OutputRefused, events.ProtocolError) as exc:
        # one line, whatever a runner, host or file put in it (kernels/protocol/text_safety.py)
        stderr.write(f"gemmscope {args.command}: {terminal_text(str(exc))}\n")
        return 2
    except Stopped as exc:  # the runner was stopped; abandon said where the data is
        stderr.write(f"gemmscope {args.command}: stopped by {exc.name}\n")
        return 128 + exc.signum
    except BrokenPipeError:  # the reader went away (`gemmscope report | head`)
        return report.reader_gone(stdout)
    except RecordingFailed as exc:  # a full disk: the message names the file
        stderr.write(f"gemmscope {args.command}: {terminal_text(exc.strerror or str(exc))}\n")
        return 1
    except OSError as exc:  # a file that cannot be read or written: one line, its name
        where = f"{exc.filename}: " if exc.filename else ""
        stderr.write(f"gemmscope {args.command}: {terminal_text(where)}"
                     f"{terminal_text(exc.strerror or str(exc))}\n")
        return 1
    except BaseException as exc:  # Ctrl-C, or an error raised because of one (interrupt.py)
        if not by_ctrl_c(exc):
            raise
        stderr.write("interrupted\n")
        return 130


def _runner(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    return serve.run(args)


def ncu_levels(runs: list[RunRequest]) -> list[str]:
    """The SIMT levels of the plan, in order, each once: the ones ncu profiles."""
    from ..models import SIMT_LEVELS

    return list(dict.fromkeys(r.level for r in runs if r.level in SIMT_LEVELS))


def run_steps(steps: Sequence[AfterRuns], telemetry_hz: float, now: Callable[[], float],
              emit: Callable[[dict[str, Any]], None]) -> None:
    """The profiling steps after the runs, NVML sampled all the while."""
    with ncu.sampling(now, emit, telemetry_hz) as emit_one:
        for step in steps:
            step(now, emit_one)


def _bench(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    gpus(args)  # the options first, then the file: nothing is replaced unasked
    on_cluster = cluster_of(args)
    remote_target(args.remote, args.runner)  # a malformed or empty --remote: said now
    runs = plan(args)
    out = output_file(args.output, args.force)  # the name, refused before any run
    results, lost = record_runs(args, on_cluster, runs, out, [], stderr)
    if args.json:
        for r in results:
            stdout.write(encode(r) + "\n")
    else:
        stdout.write(render(results) + "\n")
    return finish(args, results, lost, [], stderr, runs_asked=True)


def _record(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    update.check_options(args, build_parser())
    if os.environ.get(events.OPERAND_SEED, "").strip():
        raise CliError(f"{events.OPERAND_SEED} is set: it makes every run draw the same "
                       "operands, for experiments; a recording draws fresh ones. Unset it "
                       "to record")
    if args.update is not None:
        return _update(args, stdout, stderr)
    if not args.output:
        raise CliError("give the file to record to: -o FILE (or --update FILE)")
    asked = gpus(args)  # the options first, then the file: nothing is replaced unasked
    on_cluster = cluster_of(args)
    here = remote_target(args.remote, args.runner) is None and asked is None
    for flag, given in (("--ncu", args.ncu), ("--ncu-source", args.ncu_source),
                        ("--ceilings", args.ceilings), ("--trace", args.trace),
                        ("--launch-clocks", args.launch_clocks)):
        if given and not (here and on_cluster is None):
            raise CliError(f"{flag} profiles on this machine's GPU; it cannot go with "
                           "--remote, --device(s) or --cluster")
    if args.profile_only and not (args.append and (args.ncu or args.ncu_source
                                                   or args.ceilings or args.trace
                                                   or args.launch_clocks)):
        raise CliError("--profile-only adds profiling steps (--ncu, --ncu-source, "
                       "--ceilings, --trace, --launch-clocks) to a recording: pass --append "
                       "and at least one of them")
    if not args.launch_clocks:
        given = [flag for flag, v in (("--launch-clocks-size", args.launch_clocks_size),
                                      ("--launch-clocks-launches",
                                       args.launch_clocks_launches)) if v is not None]
        if given:
            raise CliError(f"{', '.join(given)} shape the --launch-clocks step: pass "
                           "--launch-clocks LEVELS too")
    if not args.trace:
        given = [flag for flag, v in (("--trace-size", args.trace_size),
                                      ("--trace-pairs", args.trace_pairs),
                                      ("--trace-every", args.trace_every)) if v is not None]
        if given:
            raise CliError(f"{', '.join(given)} shape the --trace step: pass --trace LEVELS "
                           "too")
    if args.append and (asked or on_cluster is not None):
        raise CliError("--append continues a session of one runner; a session of several "
                       "GPUs (--device, --devices, --cluster) is recorded to a new file")
    planned = plan(args)  # every option checked before the file is made
    out = output_file(args.output, args.force, args.append)  # then the name, before any tool
    seen: list[rec.Result] = []  # the runs' results, as they come (a Triton kernel's name)
    try:
        counters = ncu.CountersStep(ncu_levels(planned), args.ncu, args.ncu_size,
                                    args.ncu_timeout, stderr) if args.ncu else None
        # the references' kernels: which kernel the library ran (issue 33 item 4)
        library = ncu_reference.ReferenceKernelsStep(
            ncu_reference.references_of(planned), args.ncu, args.ncu_size,
            args.ncu_timeout, stderr) if args.ncu else None
        sources = source_step(args, planned, stderr, seen)
        ceilings = None
        if args.ceilings:
            from ..engine.ceilings import CeilingsStep  # CuPy in this process, at the step

            ceilings = CeilingsStep()
        traces = None
        if args.trace:
            from ..engine.trace_launch import TraceStep, traceable_ids  # CuPy at the step

            ids = [x.strip() for x in args.trace.split(",") if x.strip()]
            ids = traceable_ids() if ids == ["all"] else ids
            untraced = [i for i in ids if i not in traceable_ids()]
            if untraced or not ids:
                raise CliError(f"--trace: {', '.join(untraced) or 'no level'}: no trace "
                               f"build; the levels with one: {', '.join(traceable_ids())}")
            traces = TraceStep(ids, args.trace_size or (commands.DEFAULT_TRACE_SIZE,) * 3,
                               commands.TRACE_PAIRS[0] if args.trace_pairs is None
                               else args.trace_pairs, args.trace_every)
        clocks = None
        if args.launch_clocks:
            try:
                ids = launch_clocks.clock_levels(
                    [x.strip() for x in args.launch_clocks.split(",") if x.strip()])
            except ValueError as exc:
                raise CliError(str(exc)) from None
            clocks = launch_clocks.LaunchClocksStep(
                ids, args.ncu or "ncu",
                args.launch_clocks_size or (launch_clocks.DEFAULT_SIZE,) * 3,
                args.launch_clocks_launches or launch_clocks.DEFAULT_LAUNCHES,
                launch_clocks.TIMEOUT_S, stderr)
        steps = [s for s in (counters, library, sources, ceilings, traces, clocks)
                 if s is not None]
        for step in steps:
            step.check()
    except BaseException:  # nothing ran: no file left behind
        if out is not None:
            out.discard()
        raise
    runs = [] if args.profile_only else planned
    results, lost = record_runs(args, on_cluster, runs, out, steps, stderr, seen)
    stdout.write(render(results) + "\n")
    return finish(args, results, lost, steps, stderr, runs_asked=bool(runs))


def _update(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    """``record --update FILE``: the stale levels again, appended to FILE (kernels/cli/
    update.py); 0 when nothing changed or every new result is verified."""
    prepared = update.prepare(args, stdout)
    if prepared is None:
        return 0
    plan, out = prepared
    try:
        steps = update_steps(plan, args.ncu or "ncu", stderr)
        for step in steps:
            step.check()
    except BaseException:  # nothing ran: the file as it was
        out.discard()
        raise
    results, lost = record_runs(args, None, plan.runs, out, steps, stderr)
    stdout.write(render(results) + "\n")
    stderr.write(f"appended {counted(len(results), 'result')} to {args.update}\n")
    return finish(args, results, lost, steps, stderr, runs_asked=bool(plan.runs))


def update_steps(plan: update_plan.UpdatePlan, exe: str, stderr: TextIO) -> list[ProfileStep]:
    """The profiling steps of an update: each profile the file holds of a stale level's
    old code (ncu counters, per-line counters, launch clocks, a trace; a trace also where
    only its trace build changed), made again of the new code at the file's shape, after
    the runs (kernels/cli/update_plan.py's ``profiles``)."""
    steps: list[ProfileStep] = []
    for shape, levels in plan.profiles_of("counters").items():
        dims = (shape.M, shape.N, shape.K)
        steps.append(ncu.CountersStep(levels, exe, dims, ncu.TIMEOUT_S, stderr))
    for shape, levels in plan.profiles_of("source_counters").items():
        dims = (shape.M, shape.N, shape.K)
        steps.append(SourceCountersStep(levels, exe, dims, SOURCE_BUDGET_S, stderr,
                                        source_files))
    for shape, levels in plan.profiles_of("launch_clocks").items():
        dims = (shape.M, shape.N, shape.K)
        steps.append(launch_clocks.LaunchClocksStep(levels, exe, dims,
                                                    launch_clocks.DEFAULT_LAUNCHES,
                                                    launch_clocks.TIMEOUT_S, stderr))
    traced = plan.profiles_of("trace")
    if traced:
        from ..engine.trace_launch import TraceStep  # CuPy in this process, at the step

        steps += [TraceStep(levels, (shape.M, shape.N, shape.K))
                  for shape, levels in traced.items()]
    return steps


def record_runs(args: argparse.Namespace, on_cluster: ClusterTarget | None,
                runs: list[RunRequest], out: Output | None, steps: Sequence[ProfileStep],
                stderr: TextIO, results: list[rec.Result] | None = None
                ) -> tuple[list[rec.Result], int]:
    """The runs (on ``on_cluster``, the ``--cluster``, else through a runner session),
    then the profiling ``steps``, recorded to ``out`` (renamed onto its path when all went
    well, else abandoned); returns the results (collected in ``results`` where given)
    and the runs lost with a worker.

    SIGTERM, SIGHUP, SIGINT raise Stopped here, so the runner is stopped (the sessions'
    close) and what was measured kept and said (abandon); ``main`` exits 128+N."""
    lost = 0
    with stopped_by_signals():
        try:
            if on_cluster is not None:
                results, lost = run_cluster(args, on_cluster, runs,
                                            str(out.temp) if out else None, stderr)
            else:
                results = run_plan(args, runs, str(out.temp) if out else None, stderr,
                                   functools.partial(run_steps, steps, args.telemetry_hz)
                                   if steps else None, results)
            if out is not None:
                try:
                    out.commit()
                except FileExistsError:
                    raise CliError(f"{out.path} appeared during the runs; not replaced "
                                   "(pass --force to replace it)") from None
                except OSError as exc:
                    raise CliError(f"cannot write {out.path}: {exc.strerror or exc}"
                                   ) from None
        except BaseException:
            if out is not None:
                abandon(out, stderr)
            raise
    return results, lost


def finish(args: argparse.Namespace, results: list[rec.Result], lost: int,
           steps: Sequence[ProfileStep], stderr: TextIO, runs_asked: bool) -> int:
    """What bench and record say after the table; the exit code: 0 when there are
    results (or no runs were asked: ``record --profile-only``), every one verified, no run
    was lost and no step failed."""
    if args.output:
        stderr.write(f"recorded {counted(len(results), 'result')} to {args.output}\n")
    for step in steps:
        stderr.write(terminal_text(step.summary()) + "\n")
    if any(step.failed for step in steps):
        return 1
    if lost:
        stderr.write(f"{lost} run(s) lost with their worker: error events in the recording\n")
        return 1
    return 0 if (results or not runs_asked) and all(r.verified for r in results) else 1


def _report(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    return report.run(args, stdout, stderr)


def _compare(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    return compare.run(args, stdout, stderr)


def _diff(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    try:
        text, missing = build_report.diff(args.a, args.b, args.file)
    except build_report.Unavailable as exc:
        raise CliError(str(exc)) from None
    stdout.write(terminal_text(text, keep_newlines=True))
    if missing is not None:
        raise CliError(missing)
    return 0


def _sass(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    try:
        stdout.write(terminal_text(build_report.sass_listing(
            args.level, args.variant, args.file, args.whole), keep_newlines=True))
    except build_report.Unavailable as exc:
        raise CliError(str(exc)) from None
    return 0


def _check(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    try:
        return user_kernels.run_check(args, stdout)
    except user_kernels.KernelOptionError as exc:
        raise CliError(str(exc)) from None


def _scheduler(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    try:
        argv, env = cluster_serve.scheduler_command(scheduler_options(args))
    except AddressRefused as exc:
        raise CliError(str(exc)) from None
    return cluster_serve.run(argv, env)


def _worker(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    try:
        argv, env = cluster_serve.worker_command(worker_options(args))
    except AddressRefused as exc:
        raise CliError(str(exc)) from None
    return cluster_serve.run(argv, env)


# in the order of subcommands.NAMES, which the app routes by without importing this module
COMMANDS: dict[str, Callable[[argparse.Namespace, TextIO, TextIO], int]] = {
    "runner": _runner, "scheduler": _scheduler, "worker": _worker, "bench": _bench,
    "record": _record, "report": _report, "compare": _compare, "levels": level_list.run,
    "diff": _diff, "sass": _sass, "check": _check,
}
