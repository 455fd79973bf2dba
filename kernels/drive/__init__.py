"""Starting and driving runners: one local runner process, over ssh, one per GPU, and on a
Dask cluster; which targets a command line names.

The face (``__all__``) is what the app may use, loaded name by name at first use
(``kernels/faces.py``); the rest of the GPU side imports the modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..faces import lazy

__all__ = [
    "DEFAULT_REMOTE_COMMAND",
    "DEFAULT_WATCHDOG_S",
    "MAX_CONSECUTIVE_FAILURES",
    "DeviceSet",
    "DeviceSpec",
    "Driver",
    "RunRequest",
    "RunnerSession",
    "SessionState",
    "Tap",
    "default_runner_command",
    "device_specs",
    "gpus_of",
    "parse_target",
    "runnable_here",
    "session_options",
    "ssh_command",
]

if TYPE_CHECKING:  # the same names, for the type checker and the import contracts
    from .arch_skip import runnable_here
    from .devices import DeviceSet, DeviceSpec
    from .driver import Driver
    from .remote import DEFAULT_REMOTE_COMMAND, parse_target, session_options, ssh_command
    from .session import RunnerSession, RunRequest
    from .session_types import (
        DEFAULT_WATCHDOG_S,
        MAX_CONSECUTIVE_FAILURES,
        SessionState,
        Tap,
        default_runner_command,
    )
    from .targets import device_specs, gpus_of
else:
    __getattr__, __dir__ = lazy(__name__, {
        "arch_skip": ("runnable_here",),
        "devices": ("DeviceSet", "DeviceSpec"),
        "driver": ("Driver",),
        "remote": ("DEFAULT_REMOTE_COMMAND", "parse_target", "session_options", "ssh_command"),
        "session": ("RunRequest", "RunnerSession"),
        "session_types": ("DEFAULT_WATCHDOG_S", "MAX_CONSECUTIVE_FAILURES", "SessionState",
                          "Tap", "default_runner_command"),
        "targets": ("device_specs", "gpus_of"),
    })
