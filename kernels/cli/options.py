"""Options that several command lines share, and the typed options they make for the
layers below (argparse stays in cli/, issue 44 item 4: drive/ and profile/ take the
dataclasses, never a parsed command line).

Shapes and sweeps as argparse types (the plan's parsers say why not with a ValueError);
where runs go (``--remote``, ``--device``, ``--devices``, ``--split``, ``--cluster``, the
app's live mode shares them); the cluster's TLS files, scheduler and worker; the
source-counters step of ``record``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any, TextIO, TypeVar

from ..drive import remote
from ..drive.cluster_address import TlsFiles
from ..drive.cluster_serve import DEFAULT_PORT, SchedulerOptions, WorkerOptions
from ..profile.ncu_source_step import BUDGET_S, DEFAULT_SIZE, TIMEOUT_S, SourceCountersStep
from ..protocol.option_bounds import gpu_index, port, seconds
from ..protocol.plan import RunRequest, parse_shape, parse_sweep

T = TypeVar("T")
INSECURE_HELP = ("allow a plain tcp:// cluster beyond this machine: anyone who reaches "
                 "it can run code on every worker and in the client (docs/cluster.md)")


def argument_type(parse: Callable[[str], T]) -> Callable[[str], T]:
    """``parse`` as an argparse type: its ValueError becomes argparse's error, with its
    words (argparse would otherwise say only "invalid value")."""

    def convert(text: str) -> T:
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = parse.__name__  # argparse names a type by it in its messages
    return convert


shape = argument_type(parse_shape)  # N (a cube) or MxNxK
sweep = argument_type(parse_sweep)  # LO:HI, powers of two


# ------------------------------------------------------------------ where runs go
def add_remote_options(p: argparse.ArgumentParser, context: str = "") -> None:
    """``--remote``, ``--remote-command`` and ``--ssh-option``: the CLI's, and the app's
    (``context="live"`` says in their help which of the app's modes they serve)."""
    first, also = (f"{context}: ", f"{context}, with --remote: ") if context else ("", "")
    p.add_argument("--remote", metavar="[USER@]HOST[:PORT]",
                   help=f"{first}drive the runner on this host through ssh (batch mode: "
                        "your keys and ssh config; never a password)")
    p.add_argument("--remote-command", default=remote.DEFAULT_REMOTE_COMMAND, metavar="CMD",
                   help=f"{also}how to start the runner there (default "
                        f"`{remote.DEFAULT_REMOTE_COMMAND}`)")
    p.add_argument("--ssh-option", action="append", default=[], metavar="OPT",
                   help=f"{also}an ssh -o option, e.g. Port=2222 or IdentityFile=~/.ssh/gpu "
                        "(repeatable; one starting with - is passed as it is)")


def add_gpu_options(p: argparse.ArgumentParser, cluster: bool = True) -> None:
    p.add_argument("--device", type=gpu_index(), metavar="N",
                   help="run on GPU N (as nvidia-smi counts them)")
    p.add_argument("--devices", metavar="LIST",
                   help="one runner per GPU, one session: 0,1 or 0-3 or all; every GPU "
                        "runs the whole list unless --split")
    p.add_argument("--split", action="store_true",
                   help="with --devices: each run goes to the next free GPU (every run "
                        "once), instead of every GPU running all of them")
    if cluster:
        p.add_argument("--cluster", metavar="ADDRESS",
                       help="send the runs to the workers of a Dask scheduler (one worker "
                            "per GPU, `gemmscope worker ADDRESS --device N`; "
                            "docs/cluster.md) and merge their events into one session")
        add_tls_options(p, "this client")


# ------------------------------------------------------------------ the cluster
def add_tls_options(p: argparse.ArgumentParser, what: str) -> None:
    """``--tls-ca-file``, ``--tls-cert``, ``--tls-key`` and ``--insecure`` (the names
    ``dask worker`` uses); ``what`` names the end whose certificate it is."""
    p.add_argument("--tls-ca-file", metavar="PEM",
                   help="with tls://: the cluster's CA certificate(s)")
    p.add_argument("--tls-cert", metavar="PEM", help=f"with tls://: {what}'s certificate")
    p.add_argument("--tls-key", metavar="PEM",
                   help="with tls://: its private key (default: in the --tls-cert file)")
    p.add_argument("--insecure", action="store_true", help=INSECURE_HELP)


def tls_files(args: argparse.Namespace) -> TlsFiles:
    """The files of a command line parsed with :func:`add_tls_options`."""
    return TlsFiles(args.tls_ca_file, args.tls_cert, args.tls_key)


def add_scheduler_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1", metavar="ADDR",
                   help="the address it listens on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=port(), default=DEFAULT_PORT,
                   help=f"its port (default {DEFAULT_PORT}; 0: any free one)")
    p.add_argument("--scheduler-file", metavar="JSON",
                   help="write its address to this file (Dask's scheduler file)")
    p.add_argument("--dashboard", metavar="ADDR:PORT", nargs="?", const="",
                   help="serve Dask's dashboard (default: off; its HTTP server on "
                        "loopback); the address defaults to --host, port 8787")
    add_tls_options(p, "the scheduler")


def scheduler_options(args: argparse.Namespace) -> SchedulerOptions:
    return SchedulerOptions(args.host, args.port, args.scheduler_file, args.dashboard,
                            tls_files(args), args.insecure)


def add_worker_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("address", metavar="ADDRESS",
                   help="the scheduler: tcp://127.0.0.1:8786, or tls://HOST:8786")
    p.add_argument("--device", type=gpu_index(), default=0, metavar="N",
                   help="the GPU it drives (as nvidia-smi counts them; default 0)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--host", metavar="ADDR",
                       help="the address it listens on (default: the one through which "
                            "it reaches the scheduler)")
    where.add_argument("--interface", metavar="NAME",
                       help="listen on this network interface's address (eth0, ib0)")
    p.add_argument("--dashboard", metavar="ADDR:PORT", nargs="?", const="",
                   help="serve the worker's dashboard (default: off); the address "
                        "defaults to the listening one, any free port")
    add_tls_options(p, "the worker")


def worker_options(args: argparse.Namespace) -> WorkerOptions:
    return WorkerOptions(args.address, args.device, args.host, args.interface,
                         args.dashboard, tls_files(args), args.insecure)


# ------------------------------------------------------------------ record's steps
def add_source_step_options(rec: argparse.ArgumentParser) -> None:
    """``record``'s options of the source-counters step (kernels/profile/ncu_source_step.py)."""
    rec.add_argument("--ncu-source", nargs="?", const="ncu", metavar="PATH",
                     help="after the timed runs, profile each level and --kernel once with "
                          "Nsight Compute's source counters (PATH: the ncu executable, "
                          "default ncu on PATH) and record per-SASS-line counters as "
                          "source_counters events")
    rec.add_argument("--ncu-source-size", type=shape, default=(DEFAULT_SIZE,) * 3,
                     metavar="N|MxNxK", help=f"shape of that launch (default {DEFAULT_SIZE})")
    # (0: no time, so every level says the budget ran out)
    rec.add_argument("--ncu-source-budget", type=seconds(0), default=BUDGET_S, metavar="S",
                     help=f"seconds for the whole step, every level (default {BUDGET_S:g}; "
                          f"each run at most {TIMEOUT_S:g})")


def source_step(args: argparse.Namespace, planned: list[RunRequest], stderr: TextIO,
                results: Sequence[Any] = ()) -> SourceCountersStep | None:
    """The source-counters step ``record``'s options ask for (None without --ncu-source)."""
    return SourceCountersStep.for_runs(args.ncu_source, args.ncu_source_size,
                                       args.ncu_source_budget, args.kernel, planned, stderr,
                                       results)
