"""Where the CLI's runs go: the options ``--remote HOST`` (a runner over ssh),
``--device N``, ``--devices 0,1|all``, ``--split`` and ``--cluster ADDRESS``, and the
runner specs they make (kernels/drive/devices.py). No Qt."""

from __future__ import annotations

import argparse

from ..device.gpu_select import gpu_env, gpu_shell_prefix, parse_devices
from ..protocol.option_bounds import gpu_index
from . import remote
from .cluster_address import add_tls_options
from .devices import DeviceSpec


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


def gpus_of(device: int | None, devices: str | None, split: bool = False,
            remote: str | None = None) -> list[int] | None:
    """The GPU indices ``--device``/``--devices`` ask for (None: the runner's default GPU),
    with ``--split`` and ``--remote`` as given. ValueError says what is wrong with them."""
    if device is not None and devices:
        raise ValueError("give --device or --devices, not both")
    if device is not None:
        if device < 0:
            raise ValueError("--device: a GPU index is 0 or more")
        return [device]
    if split and not devices:
        raise ValueError("--split spreads runs over --devices; give them")
    if not devices:
        return None
    count = None
    if devices.strip().lower() == "all":
        if remote:
            raise ValueError("--devices all counts this machine's GPUs; with --remote give "
                             "the indices (0,1)")
        from ..device.telemetry import nvml_facts

        count = nvml_facts().device_count
    return parse_devices(devices, count)


def device_specs(gpus: list[int], command: list[str], target: remote.Target | None = None,
                 remote_command: str = remote.DEFAULT_REMOTE_COMMAND,
                 ssh_options: list[str] | None = None) -> list[DeviceSpec]:
    """A runner per GPU: locally ``command`` with ``CUDA_VISIBLE_DEVICES`` set; over ssh
    the remote command behind an ``env`` that sets it there."""
    if target is None:
        return [DeviceSpec(gpu, command, env=gpu_env(gpu)) for gpu in gpus]
    return [DeviceSpec(gpu, remote.ssh_command(target, gpu_shell_prefix(gpu) + remote_command,
                                               extra=ssh_options or ()),
                       host=str(target), options=remote.session_options(target))
            for gpu in gpus]
