"""``gemmscope scheduler`` and ``gemmscope worker``: the Dask processes of a cluster,
started so that they listen only where they must. No Qt; Dask is run, not imported.

Dask listens on every interface unless told otherwise, and its HTTP server (dashboard,
metrics) listens even with the dashboard off. Here the scheduler binds loopback unless
``--host`` says another address; a worker binds the address through which it reaches the
scheduler (loopback for a scheduler on loopback), or ``--host``/``--interface``; each
HTTP server binds loopback on a free port unless ``--dashboard`` asks for it. Plain
tcp:// beyond loopback takes ``--insecure`` (kernels/drive/cluster_address.py says why),
and so does a dashboard beyond loopback (it has no login).
"""

from __future__ import annotations

import importlib.util
import os
import socket
import sys
from dataclasses import dataclass, field

from ..protocol.text_safety import shown
from .cluster_address import (
    AddressRefused,
    SchedulerAddress,
    TlsFiles,
    is_loopback,
    parse_address,
    security,
)

DEFAULT_PORT = 8786
ALLOWED_FAILURES_ENV = "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES"


@dataclass(frozen=True, slots=True)
class SchedulerOptions:
    """``gemmscope scheduler``'s options (the command line's, kernels/cli/drive_options.py)."""

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    scheduler_file: str | None = None
    dashboard: str | None = None  # "" asks for it at the default address
    tls: TlsFiles = field(default_factory=TlsFiles)
    insecure: bool = False


@dataclass(frozen=True, slots=True)
class WorkerOptions:
    """``gemmscope worker``'s options: the scheduler's address, the GPU, where it listens."""

    address: str
    device: int = 0
    host: str | None = None
    interface: str | None = None
    dashboard: str | None = None
    tls: TlsFiles = field(default_factory=TlsFiles)
    insecure: bool = False


def _listen_host(text: str) -> str:
    """``--host``: an IP address or a name, said in a line when it is not one."""
    try:
        parse_address(f"tcp://{text if ':' not in text else f'[{text}]'}:1")
    except AddressRefused:
        raise AddressRefused(f"--host {shown(text)}: give an IP address or a host "
                             "name") from None
    return text


def interface_address(name: str) -> str:
    """The IPv4 address of the network interface ``name``."""
    import psutil  # type: ignore[import-untyped]  # a dependency of Dask distributed

    found = psutil.net_if_addrs()
    if name not in found:
        raise AddressRefused(f"--interface {shown(name)}: no such interface (this machine "
                             f"has {', '.join(sorted(found))})")
    for info in found[name]:
        if info.family == socket.AF_INET:
            return str(info.address)
    raise AddressRefused(f"--interface {shown(name)}: it has no IPv4 address")


def route_to(address: SchedulerAddress) -> str:
    """The local address through which ``address`` is reached (a UDP socket connected
    to it: the kernel picks the route, nothing is sent)."""
    if address.loopback:
        return "::1" if address.host == "::1" else "127.0.0.1"
    try:
        family, _, _, _, where = socket.getaddrinfo(address.host, address.port,
                                                    type=socket.SOCK_DGRAM)[0]
        with socket.socket(family, socket.SOCK_DGRAM) as s:
            s.connect(where)
            return str(s.getsockname()[0])
    except OSError as exc:
        raise AddressRefused(f"cannot tell which interface reaches {address.host} "
                             f"({exc.strerror or exc}): give --host or --interface") from None


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def dashboard_address(text: str, host: str, default_port: int, insecure: bool) -> str:
    """``--dashboard [ADDR:PORT]`` (empty: the listening host, ``default_port``) as Dask
    takes it. Dask's dashboard has no login and its HTTP server answers anyone who
    reaches it, so an address beyond loopback (``0.0.0.0``, ``::``, an empty host: every
    interface) takes ``--insecure``, as plain tcp:// does."""
    if not text:
        where, port = host, default_port
    else:
        head, colon, port_text = text.rpartition(":")
        if not colon or not (port_text.isascii() and port_text.isdigit()) \
                or int(port_text) > 65535:
            raise AddressRefused(f"--dashboard {shown(text)}: give ADDR:PORT, the port "
                                 "a number from 0 to 65535")
        port = int(port_text)
        where = head[1:-1] if head.startswith("[") and head.endswith("]") else head
        if where:
            try:
                _listen_host(where)
            except AddressRefused:
                raise AddressRefused(f"--dashboard {shown(text)}: give an IP address or "
                                     "a host name before the port") from None
    if not is_loopback(where) and not insecure:
        named = shown(where) if where else "every interface"
        raise AddressRefused(
            f"--dashboard {shown(text or where)}: {named} is not loopback, and Dask's "
            "dashboard answers anyone who reaches it: serve it on 127.0.0.1 (an ssh "
            "tunnel reaches it) or pass --insecure on a network that is yours alone")
    return f"{_bracketed(where)}:{port}"


def _http_options(dashboard: str | None, host: str, default_port: int,
                  insecure: bool) -> list[str]:
    if dashboard is None:  # off, and the HTTP server it leaves (metrics) on loopback
        return ["--no-dashboard", "--dashboard-address",
                "[::1]:0" if host == "::1" else "127.0.0.1:0"]
    return ["--dashboard", "--dashboard-address",
            dashboard_address(dashboard, host, default_port, insecure)]


def _tls_options(tls: TlsFiles) -> list[str]:
    return [arg for flag, value in (("--tls-ca-file", tls.ca_file), ("--tls-cert", tls.cert),
                                    ("--tls-key", tls.key)) if value
            for arg in (flag, value)]


def _need_dask() -> None:
    if importlib.util.find_spec("distributed") is None:
        raise AddressRefused("this needs Dask distributed: pip install 'gemmscope[cluster]'")


def scheduler_command(args: SchedulerOptions) -> tuple[list[str], dict[str, str]]:
    """``dask scheduler`` on ``--host`` only, its dashboard off unless asked, each lost
    run said rather than run again (allowed-failures 0 unless the environment says)."""
    _need_dask()
    host = _listen_host(args.host)
    if not 0 <= args.port < 65536:
        raise AddressRefused(f"--port {args.port}: give a number from 0 to 65535")
    tls = args.tls
    scheme = "tls" if tls.given() else "tcp"
    address = SchedulerAddress(scheme, host, args.port or DEFAULT_PORT)
    security(address, tls, "scheduler", args.insecure, listen_host=host)  # checked now
    argv = [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", host,
            "--port", str(args.port), "--protocol", scheme,
            *_http_options(args.dashboard, host, 8787, args.insecure), *_tls_options(tls)]
    if args.scheduler_file:
        argv += ["--scheduler-file", args.scheduler_file]
    env = dict(os.environ)
    env.setdefault(ALLOWED_FAILURES_ENV, "0")
    return argv, env


def worker_command(args: WorkerOptions) -> tuple[list[str], dict[str, str]]:
    """``dask worker`` for one GPU: one process, one thread, one ``GPU`` resource, the GPU
    chosen by its environment (kernels/device/gpu_select.py) and named in the worker's name,
    listening only where it reaches the scheduler (see the module docstring)."""
    from ..device.gpu_select import gpu_env

    _need_dask()
    if args.device < 0:
        raise AddressRefused("--device: a GPU index is 0 or more")
    address = parse_address(args.address)
    if args.interface:
        host = interface_address(args.interface)
    elif args.host:
        host = _listen_host(args.host)
    else:
        host = route_to(address)
    tls = args.tls
    security(address, tls, "worker", args.insecure, listen_host=host)  # checked now
    argv = [sys.executable, "-m", "distributed.cli.dask_worker", str(address),
            "--nworkers", "1", "--nthreads", "1", "--resources", "GPU=1",
            "--name", f"gpu{args.device}@{socket.gethostname()}", "--host", host,
            *_http_options(args.dashboard, host, 0, args.insecure), *_tls_options(tls)]
    return argv, gpu_env(args.device)


def run(argv: list[str], env: dict[str, str]) -> int:
    """Become the Dask process (exec): a signal to ``gemmscope worker`` reaches Dask
    itself, which closes its worker and tells the scheduler, and nothing is orphaned."""
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(argv[0], argv, env)
    except OSError as exc:
        raise AddressRefused(f"cannot start {argv[0]}: {exc.strerror or exc}") from None
    return 0  # not reached: exec replaced this process
