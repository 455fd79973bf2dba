"""Where the CLI's runs go: the GPUs that ``--device N``, ``--devices 0,1|all`` and
``--split`` ask for, and the runner specs they make, locally or over ssh (``--remote
HOST``; kernels/drive/devices.py). The options themselves are the command line's
(kernels/cli/drive_options.py). No Qt."""

from __future__ import annotations

from ..device.gpu_select import gpu_env, gpu_shell_prefix, parse_devices
from . import remote
from .devices import DeviceSpec


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
