"""GPU-side commands: runner, scheduler, worker, bench, record, report, levels, diff, sass; each its
own function (``COMMANDS``) over the shared parts (the plan, the runner session, the
recording). No Qt anywhere."""

from __future__ import annotations

import argparse
import functools
import math
import shlex
import sys
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TextIO

import msgspec

from ..drive import cluster_serve, remote, targets
from ..drive.arch_skip import runnable_here
from ..drive.cluster_address import AddressRefused, SchedulerAddress, TlsFiles, parse_address
from ..drive.cluster_address import security as cluster_security
from ..drive.devices import DeviceSet
from ..drive.driver import Driver
from ..drive.session import (
    DEFAULT_START_TIMEOUT_S,
    RunnerSession,
    SessionState,
    default_runner_command,
)
from ..ladder import arch as arch_limits
from ..ladder import registry
from ..profile import ncu, ncu_reference
from ..profile.ncu_source_step import SourceCountersStep
from ..profile.ncu_source_step import add_options as add_ncu_source_options
from ..protocol import commands, events
from ..protocol import records as rec
from ..protocol.atomic_file import NewFile
from ..protocol.decoding import EventRecord, encode
from ..protocol.output_file import (
    OutputRefused,
    Stopped,
    abandon,
    output_file,
    stopped_by_signals,
)
from ..protocol.plan import SWEEP_SIZES, RunRequest, parse_shape, parse_sweep
from ..protocol.session_file import RecordingFailed, SessionWriter
from ..protocol.text_safety import terminal_text
from ..results.progress import Progress
from ..results.session_report import printable
from ..results.table import render
from ..toolchain import build_event, build_report
from . import report, serve, user_kernels

MAX_TIMEOUT_S = 7 * 24 * 3600.0  # a week: beyond that a timeout is no bound


class CliError(Exception):
    pass


def _add_run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--level", "-l", action="append", default=[], metavar="ID",
                   help="a level id (repeat or comma-separate); default: the whole ladder")
    p.add_argument("--all", action="store_true", help="every level and cuBLAS reference")
    p.add_argument("--size", "-s", action="append", type=parse_shape, default=[],
                   metavar="N|MxNxK", help="shape(s) to run (default 4096)")
    p.add_argument("--sweep", type=parse_sweep, nargs="?", const=list(SWEEP_SIZES), metavar="LO:HI",
                   help="also run square sizes in powers of two (default 256:8192)")
    p.add_argument("--repeats", "-r", type=int, default=commands.DEFAULT_REPEATS,
                   help=f"timed repeats (default {commands.DEFAULT_REPEATS})")
    p.add_argument("--warmup", type=int, default=commands.DEFAULT_WARMUP,
                   help=f"untimed launches first (default {commands.DEFAULT_WARMUP})")
    p.add_argument("--no-compare", action="store_true",
                   help="do not run the cuBLAS reference of each shape")
    sus = commands.SUSTAINED_FIELDS
    p.add_argument("--sustained", action="store_true",
                   help="launch back to back for a window, in trials with a cool-down "
                        "before each (docs/energy.md), instead of timed repeats")
    p.add_argument("--window-s", type=float, metavar="S",
                   help=f"sustained: GPU seconds per trial (default {sus['window_s'][0]:g})")
    p.add_argument("--trials", type=int,
                   help=f"sustained: trials per run (default {sus['trials'][0]:g})")
    p.add_argument("--cooldown-s", type=float, metavar="S",
                   help=f"sustained: idle seconds before each trial (default "
                        f"{sus['cooldown_s'][0]:g})")
    p.add_argument("--sustained-size", action="append", type=parse_shape, default=[],
                   metavar="N|MxNxK",
                   help="after the burst runs, run every level sustained at this shape too "
                        "(repeatable; the --window-s, --trials, --cooldown-s options apply)")
    p.add_argument("--telemetry-hz", type=float, default=50.0,
                   help="NVML sampling rate, 0 = off (default 50)")
    p.add_argument("--timeout", type=float, default=300.0, metavar="S",
                   help="seconds without an event (during a run, or from its start) before "
                        "the runner is restarted (default 300)")
    p.add_argument("--start-timeout", type=float, default=DEFAULT_START_TIMEOUT_S,
                   metavar="S",
                   help="seconds for a runner to become ready, all attempts together; then "
                        f"the command gives up (default {DEFAULT_START_TIMEOUT_S:g})")
    p.add_argument("--runner", metavar="CMD",
                   help="the runner command line (default: this Python's "
                        "`-m gemmscope.kernels runner`)")
    p.add_argument("--levels-from", help=argparse.SUPPRESS)
    user_kernels.add_kernel_options(p)
    targets.add_remote_options(p)
    targets.add_gpu_options(p)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="gemmscope", description=__doc__)
    sub = ap.add_subparsers(dest="command", required=True)
    serve.add_arguments(sub.add_parser(
        "runner", help="serve JSON-line commands on stdin (docs/protocol.md)"))
    sc = sub.add_parser("scheduler", help="a Dask scheduler for --cluster, on loopback "
                                          "unless --host (docs/cluster.md)")
    cluster_serve.add_scheduler_options(sc)
    w = sub.add_parser("worker", help="a Dask worker on one GPU (docs/cluster.md)")
    cluster_serve.add_worker_options(w)
    b = sub.add_parser("bench", help="run levels and print a table")
    _add_run_options(b)
    b.add_argument("-o", "--output", help="also record the event stream to this file")
    b.add_argument("--force", action="store_true", help="replace the --output file if it exists")
    b.add_argument("--json", action="store_true", help="print results as JSON lines")
    rec = sub.add_parser("record", help="record a session file (bench + events to a file)")
    _add_run_options(rec)
    rec.add_argument("-o", "--output", required=True, help="session file to write (.jsonl)")
    rec.add_argument("--force", action="store_true", help="replace the output file if it exists")
    rec.add_argument("--append", action="store_true",
                     help="continue the existing output file: its lines are kept and this "
                          "run's follow as a new runner of the same session (the file is "
                          "replaced atomically when the runs finish)")
    rec.add_argument("--ncu", nargs="?", const="ncu", metavar="PATH",
                     help="after the timed runs, profile each SIMT level once with Nsight "
                          "Compute (PATH: the ncu executable, default ncu on PATH) and "
                          "record its shared-memory counters as counters events; and each "
                          "reference's library call: its kernel's name, launch, resources "
                          "and SASS as library_kernel events")
    rec.add_argument("--ncu-size", type=parse_shape, default=(ncu.DEFAULT_SIZE,) * 3,
                     metavar="N|MxNxK", help=f"shape of the profiled launch (default "
                                             f"{ncu.DEFAULT_SIZE})")
    rec.add_argument("--ncu-timeout", type=float, default=ncu.TIMEOUT_S, metavar="S",
                     help=f"seconds per ncu run (default {ncu.TIMEOUT_S:g})")
    add_ncu_source_options(rec)
    rec.add_argument("--ceilings", action="store_true",
                     help="after the runs, probe this GPU's DRAM bandwidth and FFMA and "
                          "tensor-core ceilings per precision (a few seconds): the "
                          "roofline's measured roofs")
    rec.add_argument("--profile-only", action="store_true",
                     help="with --append: no timed runs, only the --ncu / --ncu-source "
                          "steps for the planned levels (a long recording in two calls)")
    report.add_arguments(sub.add_parser("report", help="print the results table of a recording"))
    lv = sub.add_parser("levels", help="list the levels (of a remote runner with --remote)")
    targets.add_remote_options(lv)
    lv.add_argument("--cc", metavar="X.Y", type=_compute_capability,
                    help="mark the levels a GPU of this compute capability cannot run "
                         "(8.9: an L4, L40S or RTX 4090); default: this machine's GPU, "
                         "where CuPy finds one")
    d = sub.add_parser("diff", help="source diff, resources and instruction mix of two levels "
                                    "(no GPU needed: NVRTC and nvdisasm from PyPI)")
    d.add_argument("a", metavar="A", help="level id")
    d.add_argument("b", metavar="B", help="level id")
    d.add_argument("--file", metavar="RECORDING",
                   help="read the build events of a recording instead of compiling")
    s = sub.add_parser("sass", help="the main loop's SASS, each instruction's class and "
                                    "source line (no GPU needed)")
    s.add_argument("level", metavar="LEVEL", help="level id")
    s.add_argument("--variant", choices=sorted(build_event.VEC_OF),
                   help="which compiled variant (default: the one an aligned shape runs)")
    s.add_argument("--whole", action="store_true", help="the whole kernel, not the main loop")
    s.add_argument("--file", metavar="RECORDING",
                   help="read the build events of a recording instead of compiling")
    user_kernels.add_check_parser(sub)
    return ap


def plan(args: argparse.Namespace) -> list[RunRequest]:
    """The runs a bench/record command asks for, in order."""
    ids: list[str] = []
    for item in args.level:
        ids += [x.strip() for x in item.split(",") if x.strip()]
    if args.all:  # references first, so each level finds its reference already measured
        ids = [lv.id for lv in (*registry.references(), *registry.ladder())]
    elif not ids and not args.kernel:  # --kernel alone: the user's kernels only
        ids = [lv.id for lv in registry.ladder()]
    unknown = [i for i in ids if i not in registry.BY_ID]
    if unknown:
        raise CliError(f"unknown level(s): {', '.join(unknown)}; known: "
                       f"{', '.join(registry.BY_ID)}")
    if args.repeats < 1 or args.warmup < 0:
        raise CliError("--repeats must be at least 1 and --warmup at least 0")
    for flag, value in (("--timeout", args.timeout), ("--start-timeout", args.start_timeout)):
        if not (math.isfinite(value) and 0 < value <= MAX_TIMEOUT_S):
            raise CliError(f"{flag}: give seconds from more than 0 to {MAX_TIMEOUT_S:g}, "
                           f"not {value:g}")
    try:
        commands.check_telemetry_hz(args.telemetry_hz)
    except events.ProtocolError as exc:
        raise CliError(f"--telemetry-hz: {exc}") from None
    also = list(args.sustained_size)
    if also and args.sustained:
        raise CliError("--sustained-size adds sustained runs after burst ones; with "
                       "--sustained every run is sustained already (use --size)")
    # with --sustained-size the window options are those of the added sustained runs
    main_mode = run_mode(args, args.sustained) if not also else commands.RunMode()
    shapes = list(args.size) or ([] if args.sweep else [(4096, 4096, 4096)])
    for n in args.sweep or []:
        if (n, n, n) not in shapes:
            shapes.append((n, n, n))
    runs = [RunRequest(level_id, M, N, K, args.repeats, warmup=args.warmup,
                       compare=not args.no_compare).with_mode(main_mode)
            for M, N, K in shapes for level_id in ids]
    try:
        runs += user_kernels.kernel_runs(args, shapes, main_mode, stderr=sys.stderr)
    except user_kernels.KernelOptionError as exc:
        raise CliError(str(exc)) from None
    if also:
        sustained = run_mode(args, True)
        runs += [RunRequest(level_id, M, N, K, args.repeats, warmup=args.warmup,
                            compare=not args.no_compare).with_mode(sustained)
                 for M, N, K in also for level_id in ids]
        try:
            runs += user_kernels.kernel_runs(args, also, sustained)
        except user_kernels.KernelOptionError as exc:
            raise CliError(str(exc)) from None
    return runs


def run_mode(args: argparse.Namespace, sustained: bool) -> commands.RunMode:
    """A burst or sustained run's mode (with the --window-s, --trials and --cooldown-s
    options, the runner's defaults for those not given), checked as the runner will."""
    given = {"window_s": args.window_s, "trials": args.trials, "cooldown_s": args.cooldown_s}
    given = {k: v for k, v in given.items() if v is not None}
    mode = events.Mode.SUSTAINED if sustained else events.Mode.BURST
    try:
        _, config = commands.check_mode_fields({"mode": str(mode), **given})
    except events.ProtocolError as exc:
        flag = next((f"--{k.replace('_', '-')}" for k in given if k in str(exc)), "--sustained")
        raise CliError(f"{flag}: {exc}") from None
    return commands.RunMode(mode, config if given else None)


# after the runs: called with the session clock and the recording's event sink
AfterRuns = Callable[[Callable[[], float], Callable[[dict[str, Any]], None]], None]


class ProfileStep(Protocol):
    """A step of ``record`` after the runs (ncu's counters, its source counters)."""

    failed: list[str]  # the levels it got nothing for

    def check(self) -> None: ...

    def summary(self) -> str: ...

    def __call__(self, now: Callable[[], float],
                 emit: Callable[[dict[str, Any]], None]) -> None: ...


def remote_target(remote_host: str | None, runner: str | None = None) -> remote.Target | None:
    """``--remote``, parsed (None: the runner is local; an empty one is refused, so an
    unset ``--remote "$HOST"`` never runs here unasked); ``runner``: ``--runner``, which
    cannot go with it."""
    if remote_host is None:
        return None
    if runner:
        raise CliError("give --runner or --remote, not both (--remote-command says how to "
                       "start the runner on the host)")
    try:
        return remote.parse_target(remote_host)
    except ValueError as exc:
        raise CliError(f"--remote: {exc}") from None


def gpus(args: argparse.Namespace) -> list[int] | None:
    """``--device``/``--devices`` of a bench or record command, checked."""
    try:
        return targets.gpus_of(args.device, args.devices, args.split, args.remote)
    except ValueError as exc:
        raise CliError(str(exc)) from None


def runner_command(args: argparse.Namespace) -> list[str]:
    """The runner a bench or record command drives: ``--remote HOST`` (over ssh),
    ``--runner CMD``, else this Python's."""
    target = remote_target(args.remote, args.runner)
    if target is not None:
        return remote.ssh_command(target, args.remote_command, extra=args.ssh_option)
    if args.runner:
        return shlex.split(args.runner)
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
             stderr: TextIO, after: AfterRuns | None = None) -> list[rec.Result]:
    """Run ``runs`` through a runner session, recording to ``out_path``; then, with the
    runner gone, ``after`` may add events of its own (on the same clock, to the same
    file)."""
    results: list[rec.Result] = []
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


ClusterTarget = tuple[SchedulerAddress, Any]  # the address and its Dask Security (or None)


def cluster_target(cluster: str | None, tls: TlsFiles,
                   insecure: bool) -> ClusterTarget | None:
    """``--cluster`` parsed and its TLS settings (``--tls-*``, ``--insecure``) loaded
    (None: no cluster); an empty or malformed address, missing certificates, or plain
    tcp:// beyond loopback without ``insecure`` is refused in a line
    (kernels/drive/cluster_address.py)."""
    if cluster is None:
        if tls.given() or insecure:
            raise CliError("--tls-ca-file, --tls-cert, --tls-key and --insecure go with "
                           "--cluster")
        return None
    try:
        address = parse_address(cluster)
        return address, cluster_security(address, tls, "client", insecure)
    except AddressRefused as exc:
        raise CliError(f"--cluster: {exc}") from None


def cluster_of(args: argparse.Namespace) -> ClusterTarget | None:
    """The cluster of a bench or record command (:func:`cluster_target`)."""
    return cluster_target(args.cluster, TlsFiles.of(args), args.insecure)


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
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args, stdout, stderr)
    except (CliError, OutputRefused, events.ProtocolError) as exc:
        # one line, whatever a runner, host or file put in it (kernels/protocol/text_safety.py)
        stderr.write(f"gemmscope {args.command}: {terminal_text(str(exc))}\n")
        return 2
    except Stopped as exc:  # the runner was stopped; abandon said where the data is
        stderr.write(f"gemmscope {args.command}: stopped by {exc.name}\n")
        return 128 + exc.signum
    except KeyboardInterrupt:
        stderr.write("interrupted\n")
        return 130
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
    asked = gpus(args)  # the options first, then the file: nothing is replaced unasked
    on_cluster = cluster_of(args)
    here = remote_target(args.remote, args.runner) is None and asked is None
    for flag, given in (("--ncu", args.ncu), ("--ncu-source", args.ncu_source),
                        ("--ceilings", args.ceilings)):
        if given and not (here and on_cluster is None):
            raise CliError(f"{flag} profiles on this machine's GPU; it cannot go with "
                           "--remote, --device(s) or --cluster")
    if args.profile_only and not (args.append and (args.ncu or args.ncu_source
                                                   or args.ceilings)):
        raise CliError("--profile-only adds profiling steps (--ncu, --ncu-source, "
                       "--ceilings) to a recording: pass --append and at least one of them")
    if args.append and (asked or on_cluster is not None):
        raise CliError("--append continues a session of one runner; a session of several "
                       "GPUs (--device, --devices, --cluster) is recorded to a new file")
    planned = plan(args)  # every option checked before the file is made
    out = output_file(args.output, args.force, args.append)  # then the name, before any tool
    try:
        counters = ncu.CountersStep(ncu_levels(planned), args.ncu, args.ncu_size,
                                    args.ncu_timeout, stderr) if args.ncu else None
        # the references' kernels: which kernel the library ran (issue 33 item 4)
        library = ncu_reference.ReferenceKernelsStep(
            ncu_reference.references_of(planned), args.ncu, args.ncu_size,
            args.ncu_timeout, stderr) if args.ncu else None
        sources = SourceCountersStep.from_args(args, [r.level for r in planned], stderr)
        ceilings = None
        if args.ceilings:
            from ..engine.ceilings import CeilingsStep  # CuPy in this process, at the step

            ceilings = CeilingsStep()
        steps = [s for s in (counters, library, sources, ceilings) if s is not None]
        for step in steps:
            step.check()
    except BaseException:  # nothing ran: no file left behind
        if out is not None:
            out.discard()
        raise
    runs = [] if args.profile_only else planned
    results, lost = record_runs(args, on_cluster, runs, out, steps, stderr)
    stdout.write(render(results) + "\n")
    return finish(args, results, lost, steps, stderr, runs_asked=bool(runs))


def record_runs(args: argparse.Namespace, on_cluster: ClusterTarget | None,
                runs: list[RunRequest], out: NewFile | None, steps: Sequence[ProfileStep],
                stderr: TextIO) -> tuple[list[rec.Result], int]:
    """The runs (on ``on_cluster``, the ``--cluster``, else through a runner session),
    then the profiling ``steps``, recorded to ``out`` (renamed onto its path when all went
    well, else abandoned); returns the results and the runs lost with a worker.

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
                                   if steps else None)
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
        stderr.write(f"recorded {len(results)} results to {args.output}\n")
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


def _levels(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    target = remote_target(args.remote)
    entries = (msgspec.convert([lv.catalog_entry(i) for i, lv in enumerate(registry.LEVELS)],
                               list[rec.CatalogEntry])
               if target is None else remote_levels(args, target))
    cc = args.cc if args.cc is not None or target is not None else _local_cc()
    cannot = arch_limits.cannot_run([e.id for e in entries], entries, cc)
    rows = [(printable(str(entry.id)), printable(str(entry.precision)),
             printable(str(entry.arch_need or "?")),
             printable(str(entry.title)),
             printable(", ".join(f"{k}={v}" for k, v in (entry.params or {}).items())
                       + (f"  [cannot run here: {arch_limits.device_arch(cc)}]"
                          if cc is not None and entry.id in cannot else "")))
            for entry in entries]
    # columns as wide as their longest cell (an id longer than the rest, such as a remote
    # runner's, moves every row's columns with it, never only its own)
    widths = [max((len(row[i]) for row in rows), default=0) for i in range(4)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        stdout.write(("  ".join(cells) + "  " + row[4]).rstrip() + "\n")
    return 0


def _compute_capability(text: str) -> str:
    major, dot, minor = text.partition(".")
    if not (dot and major.isdigit() and minor.isdigit() and len(text) <= 6):
        raise argparse.ArgumentTypeError(f"{text!r}: give a compute capability, e.g. 8.9")
    return f"{int(major)}.{int(minor)}"


def _local_cc() -> str | None:
    """This machine's GPU's compute capability, where CuPy is installed and finds one."""
    import importlib.util

    if importlib.util.find_spec("cupy") is None:
        return None
    from ..device import gpu

    cp, _reason = gpu.get_cupy()
    if cp is None:
        return None
    major, minor = cp.cuda.Device().compute_capability[0], cp.cuda.Device().compute_capability[1:]
    return f"{major}.{minor}"


def remote_levels(args: argparse.Namespace, target: remote.Target) -> list[rec.CatalogEntry]:
    """The catalog of the runner on ``--remote``, asked with ``{"cmd": "levels"}``."""
    import time

    answers: list[rec.Levels] = []
    session = RunnerSession(lambda ev: answers.append(ev) if isinstance(ev, rec.Levels) else None,
                            remote.ssh_command(target, args.remote_command,
                                               extra=args.ssh_option),
                            **remote.session_options(target))
    try:
        try:
            session.wait_ready()
        except RuntimeError as exc:
            raise CliError(str(exc)) from None
        session.send({"cmd": "levels", "id": "levels"})
        deadline = time.monotonic() + remote.HEADER_TIMEOUT_S
        while not answers:
            if session.state is SessionState.FAILED:
                raise CliError(session.failure_text)
            if time.monotonic() > deadline:
                raise CliError(f"the runner on {args.remote} did not list its levels "
                               f"within {remote.HEADER_TIMEOUT_S:g} s")
            session.pump(0.1)
    finally:
        session.close()
    return answers[0].levels


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
        argv, env = cluster_serve.scheduler_command(args)
    except AddressRefused as exc:
        raise CliError(str(exc)) from None
    return cluster_serve.run(argv, env)


def _worker(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    try:
        argv, env = cluster_serve.worker_command(args)
    except AddressRefused as exc:
        raise CliError(str(exc)) from None
    return cluster_serve.run(argv, env)


# in the order of subcommands.NAMES, which the app routes by without importing this module
COMMANDS: dict[str, Callable[[argparse.Namespace, TextIO, TextIO], int]] = {
    "runner": _runner, "scheduler": _scheduler, "worker": _worker, "bench": _bench,
    "record": _record, "report": _report, "levels": _levels, "diff": _diff, "sass": _sass,
    "check": _check,
}
