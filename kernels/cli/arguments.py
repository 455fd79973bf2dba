"""The GPU-side command line's options and what they ask for: the parser of every
subcommand, the plan of runs a bench or record command asks for, its run mode, and the
``--remote``, ``--device(s)`` and ``--cluster`` targets, each checked before anything runs
(a CliError says what is wrong in one line)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..drive import remote, targets
from ..drive.cluster_address import AddressRefused, SchedulerAddress, TlsFiles, parse_address
from ..drive.cluster_address import security as cluster_security
from ..drive.session_types import DEFAULT_START_TIMEOUT_S
from ..ladder import registry
from ..ladder.shape import Shape
from ..profile import launch_clocks, ncu
from ..protocol import commands, events
from ..protocol.option_bounds import (
    OneLineParser,
    bounded,
    command_line,
    seconds,
    telemetry_hz,
)
from ..protocol.plan import SWEEP_SIZES, RunRequest
from ..protocol.text_safety import shown
from ..toolchain import build_event
from . import compare, report, serve, user_kernels
from .options import (
    add_gpu_options,
    add_remote_options,
    add_scheduler_options,
    add_source_step_options,
    add_worker_options,
    shape,
    sweep,
    tls_files,
)

DESCRIPTION = """GPU-side commands: runner, scheduler, worker, bench, record, report, compare,
levels, diff, sass; each its own function (``COMMANDS``) over the shared parts (the plan, the runner
session, the recording). No Qt anywhere."""



class CliError(Exception):
    pass


def add_run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--level", "-l", action="append", default=[], metavar="ID",
                   help="a level id (repeat or comma-separate); default: the whole ladder")
    p.add_argument("--all", action="store_true", help="every level and cuBLAS reference")
    p.add_argument("--size", "-s", action="append", type=shape, default=[],
                   metavar="N|MxNxK", help="shape(s) to run (default 4096)")
    p.add_argument("--sweep", type=sweep, nargs="?", const=list(SWEEP_SIZES),
                   metavar="LO:HI",
                   help="also run square sizes in powers of two (default 256:8192)")
    p.add_argument("--repeats", "-r", type=bounded(int, 1, commands.MAX_REPEATS),
                   default=commands.DEFAULT_REPEATS,
                   help=f"timed repeats (default {commands.DEFAULT_REPEATS})")
    p.add_argument("--warmup", type=bounded(int, 0, commands.MAX_WARMUP),
                   default=commands.DEFAULT_WARMUP,
                   help=f"untimed launches first (default {commands.DEFAULT_WARMUP})")
    p.add_argument("--settle-s", type=seconds(*commands.SETTLE_S[1:]), metavar="S",
                   help="burst: idle seconds before each run's warmup, so that every "
                        "burst and its reference start from the same rest of the power "
                        f"limiter ({commands.SETTLE_S[1]:g} to {commands.SETTLE_S[2]:g}; "
                        "default none)")
    p.add_argument("--energy-s", type=bounded(float, *commands.ENERGY_S[1:], off=0,
                                              unit="seconds"), metavar="S",
                   help="burst: GPU seconds of each run's energy window (docs/energy.md; "
                        f"{commands.ENERGY_S[1]:g} to {commands.ENERGY_S[2]:g}, 0: none; "
                        f"default {commands.ENERGY_S[0]:g})")
    lo_b, hi_b = commands.PAIR_BUDGET_S[1:]
    p.add_argument("--pair-budget-s", type=seconds(lo_b, hi_b), metavar="S",
                   help="burst: wall seconds for the paired loop of a level and its "
                        "reference, which stops sooner once the ratio's 95%% interval is "
                        f"within 0.5%% (--max-pairs at most; {lo_b:g} to {hi_b:g}; "
                        f"default {commands.PAIR_BUDGET_S[0]:g})")
    lo_p, hi_p = commands.MAX_PAIRS[1:]
    p.add_argument("--max-pairs", type=bounded(int, lo_p, hi_p), metavar="N",
                   help="burst: the most pairs of a paired loop, which stops sooner by "
                        f"precision or --pair-budget-s ({lo_p} to {hi_p}; default "
                        f"{commands.MAX_PAIRS[0]})")
    p.add_argument("--no-compare", action="store_true",
                   help="do not run the cuBLAS reference of each shape")
    p.add_argument("--operands", choices=tuple(events.Distribution),
                   default=str(events.DEFAULT_DISTRIBUTION),
                   help="what A and B are drawn from: uniform on [-1, 1), standard normal, "
                        "+-1, or zeros (to show the power the data costs; default "
                        f"{events.DEFAULT_DISTRIBUTION}); every result names it")
    sus = commands.SUSTAINED_FIELDS
    p.add_argument("--sustained", action="store_true",
                   help="launch back to back for a window, in trials with a cool-down "
                        "before each (docs/energy.md), instead of timed repeats")
    p.add_argument("--window-s", type=seconds(*sus["window_s"][1:]), metavar="S",
                   help=f"sustained: GPU seconds per trial (default {sus['window_s'][0]:g})")
    p.add_argument("--trials", type=bounded(int, *sus["trials"][1:]),
                   help=f"sustained: trials per run (default {sus['trials'][0]:g})")
    p.add_argument("--cooldown-s", type=seconds(*sus["cooldown_s"][1:]), metavar="S",
                   help=f"sustained: idle seconds before each trial (default "
                        f"{sus['cooldown_s'][0]:g})")
    p.add_argument("--sustained-size", action="append", type=shape, default=[],
                   metavar="N|MxNxK",
                   help="after the burst runs, run every level sustained at this shape too "
                        "(repeatable; the --window-s, --trials, --cooldown-s options apply)")
    p.add_argument("--telemetry-hz", type=telemetry_hz(), default=50.0,
                   help="NVML sampling rate, 0 = off (default 50)")
    p.add_argument("--timeout", type=seconds(), default=300.0, metavar="S",
                   help="seconds without an event (during a run, or from its start) before "
                        "the runner is restarted (default 300)")
    p.add_argument("--start-timeout", type=seconds(), default=DEFAULT_START_TIMEOUT_S,
                   metavar="S",
                   help="seconds for a runner to become ready, all attempts together; then "
                        f"the command gives up (default {DEFAULT_START_TIMEOUT_S:g})")
    p.add_argument("--runner", metavar="CMD", type=command_line,
                   help="the runner command line (default: this Python's "
                        "`-m gemmscope.kernels runner`)")
    p.add_argument("--levels-from", help=argparse.SUPPRESS)
    user_kernels.add_kernel_options(p)
    add_remote_options(p)
    add_gpu_options(p)


def build_parser() -> OneLineParser:
    ap = OneLineParser(prog="gemmscope", description=DESCRIPTION)
    sub = ap.add_subparsers(dest="command", required=True)
    serve.add_arguments(sub.add_parser(
        "runner", help="serve JSON-line commands on stdin (docs/protocol.md)"))
    sc = sub.add_parser("scheduler", help="a Dask scheduler for --cluster, on loopback "
                                          "unless --host (docs/cluster.md)")
    add_scheduler_options(sc)
    w = sub.add_parser("worker", help="a Dask worker on one GPU (docs/cluster.md)")
    add_worker_options(w)
    b = sub.add_parser("bench", help="run levels and print a table")
    add_run_options(b)
    b.add_argument("-o", "--output", help="also record the event stream to this file")
    b.add_argument("--force", action="store_true", help="replace the --output file if it exists")
    b.add_argument("--json", action="store_true", help="print results as JSON lines")
    rec = sub.add_parser("record", help="record a session file (bench + events to a file)")
    add_run_options(rec)
    rec.add_argument("-o", "--output",
                     help="session file to write (.jsonl); required unless --update")
    rec.add_argument("--force", action="store_true", help="replace the output file if it exists")
    rec.add_argument("--append", action="store_true",
                     help="continue the existing output file: its lines are kept and this "
                          "run's follow as a new runner of the same session (the file is "
                          "replaced atomically when the runs finish)")
    rec.add_argument("--update", metavar="FILE",
                     help="re-measure, in FILE's own shapes and modes, only the levels whose "
                          "code key or parameters differ from FILE's newest result of them "
                          "(each with its reference), and append the results to FILE (plain "
                          "or .gz; replaced atomically when the runs finish)")
    rec.add_argument("--unpaired", action="store_true",
                     help="with --update: also re-measure, in pairs, each level's newest "
                          "result whose ratio to its reference was not timed in pairs (a "
                          "recording made again from paired runs)")
    rec.add_argument("--max-gpu-s", type=bounded(float, 1, 86_400, unit="seconds"), metavar="S",
                     help="with --update: run the planned runs, in order, up to about S "
                          "seconds of GPU time (the file's own timings) and leave the rest "
                          "for the next update, which continues where this one stops")
    rec.add_argument("--dry-run", action="store_true",
                     help="with --update: list what would run, why, and an estimate of its "
                          "GPU time from FILE's own timings; nothing runs (no GPU needed)")
    rec.add_argument("--ncu", nargs="?", const="ncu", metavar="PATH",
                     help="after the timed runs, profile each SIMT level once with Nsight "
                          "Compute (PATH: the ncu executable, default ncu on PATH) and "
                          "record its shared-memory counters as counters events; and each "
                          "reference's library call: its kernel's name, launch, resources "
                          "and SASS as library_kernel events")
    rec.add_argument("--ncu-size", type=shape, default=(ncu.DEFAULT_SIZE,) * 3,
                     metavar="N|MxNxK", help=f"shape of the profiled launch (default "
                                             f"{ncu.DEFAULT_SIZE})")
    rec.add_argument("--ncu-timeout", type=seconds(), default=ncu.TIMEOUT_S, metavar="S",
                     help=f"seconds per ncu run (default {ncu.TIMEOUT_S:g})")
    add_source_step_options(rec)
    rec.add_argument("--ceilings", action="store_true",
                     help="after the runs, probe this GPU's DRAM bandwidth and FFMA and "
                          "tensor-core ceilings per precision (a few seconds): the "
                          "roofline's measured roofs")
    rec.add_argument("--trace", metavar="LEVELS",
                     help="after the runs, launch each of these levels' trace build once "
                          "(comma-separated ids, or 'all' for every level with one) and "
                          "record its measured timeline as a trace event, with its cost "
                          "against the plain build (docs/protocol.md, trace)")
    rec.add_argument("--trace-size", type=shape, default=None,
                     metavar="N|MxNxK",
                     help="shape of the traced launch (default "
                          f"{commands.DEFAULT_TRACE_SIZE})")
    rec.add_argument("--trace-pairs", type=bounded(int, 0, commands.TRACE_PAIRS[1]),
                     default=None, metavar="N",
                     help="plain and trace launches timed in alternation for the cost "
                          f"(default {commands.TRACE_PAIRS[0]})")
    rec.add_argument("--trace-every", type=bounded(int, 1, commands.STAGE_EVERY[-1]),
                     choices=commands.STAGE_EVERY, default=None,
                     metavar="N",
                     help="record the K-stage events of 3 in every N K steps (windows "
                          "of three steps in a row; one of "
                          f"{', '.join(map(str, commands.STAGE_EVERY))}; default: the least "
                          "sampling whose events one trace event holds)")
    rec.add_argument("--launch-clocks", metavar="LEVELS",
                     help="after the runs, read the SM clock inside launches of each of "
                          "these levels and of its reference with Nsight Compute "
                          "(comma-separated ids, or 'all'; ncu from --ncu PATH, default ncu "
                          "on PATH): the ratio at equal clocks then uses them "
                          "(docs/protocol.md, launch_clocks)")
    rec.add_argument("--launch-clocks-size", type=shape, default=None, metavar="N|MxNxK",
                     help=f"shape of those launches (default {launch_clocks.DEFAULT_SIZE})")
    rec.add_argument("--launch-clocks-launches",
                     type=bounded(int, 1, launch_clocks.MAX_CLOCK_LAUNCHES), default=None,
                     metavar="N", help="launches of each side, each alone under ncu "
                                       f"(default {launch_clocks.DEFAULT_LAUNCHES})")
    rec.add_argument("--profile-only", action="store_true",
                     help="with --append: no timed runs, only the --ncu / --ncu-source / "
                          "--ceilings / --trace / --launch-clocks steps (a long recording "
                          "in two calls)")
    report.add_arguments(sub.add_parser("report", help="print the results table of a recording"))
    compare.add_arguments(sub.add_parser(
        "compare", help="each level's %% of cuBLAS in two recordings, with intervals; exit 1 "
                        "where one fell (a regression gate for CI)"))
    lv = sub.add_parser("levels", help="list the levels (of a remote runner with --remote)")
    add_remote_options(lv)
    lv.add_argument("--cc", metavar="X.Y", type=compute_capability,
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
    settle_s = settle_option(args)  # (every number was bounded where it was parsed)
    energy_s = energy_option(args)
    pair_budget_s = pair_budget_option(args)
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
    runs = [RunRequest(level_id, Shape(M, N, K), args.repeats, warmup=args.warmup,
                       compare=not args.no_compare, settle_s=settle_s,
                       energy_s=energy_s, pair_budget_s=pair_budget_s,
                       max_pairs=args.max_pairs).with_mode(main_mode)
            for M, N, K in shapes for level_id in ids]
    try:
        runs += user_kernels.kernel_runs(args, shapes, main_mode, stderr=sys.stderr)
    except user_kernels.KernelOptionError as exc:
        raise CliError(str(exc)) from None
    # the default goes unsaid: the runner draws it, and every result names it
    operands = (None if args.operands == events.DEFAULT_DISTRIBUTION
                else events.Distribution(args.operands))
    if also:
        sustained = run_mode(args, True)
        runs += [RunRequest(level_id, Shape(M, N, K), args.repeats, warmup=args.warmup,
                            compare=not args.no_compare).with_mode(sustained)
                 for M, N, K in also for level_id in ids]
        try:
            runs += user_kernels.kernel_runs(args, also, sustained)
        except user_kernels.KernelOptionError as exc:
            raise CliError(str(exc)) from None
    return [replace(r, operands=operands) for r in runs]


def burst_option(value: float | None, flag: str, sustained: bool, sustained_has: str,
                 check: Callable[[Any], float]) -> float | None:
    """A burst run's option's ``value`` (--settle-s, --energy-s, --pair-budget-s), checked
    as the runner will (``check``, a commands.check_* rule) and refused with --sustained,
    whose run has ``sustained_has`` instead; None where it is not given."""
    if value is None:
        return None
    if sustained:
        raise CliError(f"{flag} applies to burst runs; a sustained run {sustained_has}")
    try:
        return check(value)
    except events.ProtocolError as exc:
        raise CliError(f"{flag}: {exc}") from None


def settle_option(args: argparse.Namespace) -> float | None:
    return burst_option(args.settle_s, "--settle-s", args.sustained,
                        "idles --cooldown-s before each trial", commands.check_settle_s)


def energy_option(args: argparse.Namespace) -> float | None:
    return burst_option(args.energy_s, "--energy-s", args.sustained,
                        "has its trials as its energy windows (--window-s)",
                        commands.check_energy_s)


def pair_budget_option(args: argparse.Namespace) -> float | None:
    return burst_option(args.pair_budget_s, "--pair-budget-s", args.sustained,
                        "is timed in windows (--window-s, --trials)",
                        commands.check_pair_budget_s)


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
    return cluster_target(args.cluster, tls_files(args), args.insecure)


def compute_capability(text: str) -> str:
    major, dot, minor = text.partition(".")
    if not (dot and major.isdigit() and minor.isdigit() and len(text) <= 6):
        raise argparse.ArgumentTypeError(f"{shown(text, 40)}: give a compute capability, "
                                         "e.g. 8.9")
    return f"{int(major)}.{int(minor)}"
