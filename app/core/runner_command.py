"""Which runner live mode starts, or why the app opens in replay. No Qt.

In order: ``--remote [user@]host[:port]`` (the runner over ssh, ``kernels/drive/remote.py``);
``--runner CMD``; the preference ``runner/command`` (File ▸ Live runner…); then
this installation's own runner (``python -m gemmscope.kernels runner``) where CuPy and a
CUDA device are present. A desktop bundle carries no CuPy and its program is not a Python
interpreter, so it has no runner of its own: it drives one started outside it, such as
``gemmscope runner`` from a pip install with the CUDA extra, or one over ssh.

The GUI keeps its preferences in an INI file (app/core/preferences_file.py) that
:func:`read_preference` reads the same way, so ``gemmscope doctor`` reports the same
command.

A preferences file can be handed over (``--settings handed.ini``, a colleague's file
copied into place), so its command is never started unasked: only once the user has
confirmed that command from that file in the app (the file's path shown), or typed it in
File ▸ Live runner…; ``--runner`` on the command line is the user's own word. A
confirmation is remembered as a hash of (the file's absolute path, the command) in
:func:`confirmations_file`, in the user's own configuration folder, never in the
preferences file itself (a handed file could carry a forged one). Where no one can be
asked (offscreen, a picture, a test) an unconfirmed command is not started and the app
says why.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from ...kernels import drive as ssh
from ...kernels.drive import default_runner_command
from ...kernels.files import FileRefused, Kind, read_text
from ...kernels.protocol import CommandRefused, split_command, write_text
from .gpu_probe import GpuProbe, probe
from .preferences_file import PreferencesFile, settings_file

PREFERENCE_KEY = "runner/command"
CONFIRMATIONS = "confirmed-runners"  # beside the default preferences file
MAX_CONFIRMATIONS = 200  # the latest kept
BUNDLE_REASON = ("this desktop bundle carries no CuPy: set a live runner command "
                 "(File ▸ Live runner…), e.g. `gemmscope runner` from a pip install")


class RunnerSource(StrEnum):
    OPTION = "--runner"
    PREFERENCE = "preferences (runner/command)"
    LOCAL = "this installation"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class RunnerChoice:
    """The command live mode would start (None: there is none) and where it came from."""

    command: tuple[str, ...] | None
    source: RunnerSource
    refused: str = ""  # why a command given could not be read (a quote left open)

    @property
    def external(self) -> bool:
        """Set by the user, so it runs whatever GPU it runs on, not this process's."""
        return self.source in (RunnerSource.OPTION, RunnerSource.PREFERENCE)

    @property
    def text(self) -> str:
        return shlex.join(self.command) if self.command else ""


@dataclass(frozen=True, slots=True)
class LivePlan:
    """What the GUI starts: live with ``command``, else replay saying ``reason``."""

    command: list[str] | None
    label: str  # shown as "live — <label>"
    reason: str
    remote: str | None = None  # the host the runner runs on, over ssh


def is_frozen() -> bool:
    """True inside a PyInstaller bundle."""
    return bool(getattr(sys, "frozen", False))


def local_command(executable: str | None = None) -> list[str]:
    """This installation's runner: the same interpreter, ``-m gemmscope.kernels runner``."""
    command = default_runner_command()
    return [executable, *command[1:]] if executable else command


def choose(option: str | None, preference: str | None, frozen: bool,
           executable: str | None = None) -> RunnerChoice:
    for text, source in ((option, RunnerSource.OPTION), (preference, RunnerSource.PREFERENCE)):
        try:  # the one reader of a command line (kernels/protocol/option_bounds.py)
            words = split_command(text) if text and text.strip() else []
        except CommandRefused as exc:  # started by no one; said where it is shown
            return RunnerChoice(None, source, f"the runner command ({source}) cannot be "
                                              f"read: {exc}")
        if words:
            return RunnerChoice(tuple(words), source)
    if frozen:
        return RunnerChoice(None, RunnerSource.NONE)
    return RunnerChoice(tuple(local_command(executable)), RunnerSource.LOCAL)


def plan_live(option: str | None, preference: str | None, frozen: bool | None = None,
              gpu_probe: Callable[[], GpuProbe] = probe,
              env: Mapping[str, str] | None = None, asked_live: bool = False,
              remote: str | None = None,
              remote_command: str = ssh.DEFAULT_REMOTE_COMMAND,
              ssh_options: Sequence[str] = ()) -> LivePlan:
    """Live or replay, as ``gemmscope`` decides at start.

    A runner the user named (``--runner``, the preference) starts live whether or not this
    machine has a GPU: it may run on another one. So does this installation's runner when
    the user asked for live (``asked_live``: ``--session-file``). Otherwise this machine's
    GPU decides (``GEMMSCOPE_NO_GPU`` says it has none).

    ``remote`` (``--remote [user@]host[:port]``) comes before all of them: the runner
    named by ``remote_command``, started on that host through ssh. A host that cannot be
    parsed raises ValueError."""
    if remote is not None:  # an empty one is refused, never local unasked
        target = ssh.parse_target(remote)
        return LivePlan(ssh.ssh_command(target, remote_command, extra=ssh_options),
                        f"{target} (ssh)", "", remote=str(target))
    env = os.environ if env is None else env
    choice = choose(option, preference, is_frozen() if frozen is None else frozen)
    if choice.refused:
        return LivePlan(None, "", choice.refused)
    if choice.external:
        return LivePlan(list(choice.command or ()), f"runner `{choice.text}`", "")
    if choice.command is None:
        return LivePlan(None, "", BUNDLE_REASON)
    if asked_live:
        return LivePlan(list(choice.command), "this installation's runner", "")
    if env.get("GEMMSCOPE_NO_GPU"):
        return LivePlan(None, "", gpu_probe().reason)
    gpu = gpu_probe()
    if not gpu.available:
        return LivePlan(None, "", gpu.reason)
    return LivePlan(list(choice.command), gpu.name or "CUDA device", "")


def read_preference(path: Path, key: str = PREFERENCE_KEY) -> str | None:
    """A string preference from the app's preferences file, without Qt (None: not set,
    or not a line of text: app/core/preferences_file.py)."""
    return PreferencesFile(path, writable=False).text(key, "") or None


# ------------------------------------------------------------------ confirmations
def confirmations_file(env: Mapping[str, str] | None = None) -> Path:
    """Where the confirmed (preferences file, runner command) pairs are kept: the user's
    own configuration folder (XDG_CONFIG_HOME or ~/.config), whatever ``--settings``."""
    return settings_file(env).parent / CONFIRMATIONS


def confirmation_key(settings: str | Path, command: str) -> str:
    """The hash that stands for "the user confirmed ``command`` from ``settings``"."""
    where = os.path.abspath(settings)
    return hashlib.sha256(f"gemmscope runner\0{where}\0{command.strip()}".encode()
                          ).hexdigest()


def _confirmed_keys(store: Path) -> list[str]:
    try:
        text = read_text(store, Kind.PREFERENCES)
    except FileRefused:  # none yet, or not readable: nothing is confirmed
        return []
    return [line.strip() for line in text.splitlines() if len(line.strip()) == 64]


def is_confirmed(settings: str | Path, command: str, store: Path | None = None) -> bool:
    """Whether the user confirmed ``command`` from the preferences file ``settings``."""
    store = confirmations_file() if store is None else store
    return confirmation_key(settings, command) in _confirmed_keys(store)


def confirm(settings: str | Path, command: str, store: Path | None = None) -> str | None:
    """Remember that the user confirmed ``command`` from ``settings``; None, or why it
    could not be kept (then it is asked again at the next start)."""
    store = confirmations_file() if store is None else store
    key = confirmation_key(settings, command)
    keys = [k for k in _confirmed_keys(store) if k != key][-(MAX_CONFIRMATIONS - 1):]
    try:
        store.parent.mkdir(parents=True, exist_ok=True)
        write_text(store, "".join(f"{k}\n" for k in (*keys, key)))
    except OSError as exc:
        return f"cannot remember the confirmation in {store}: {exc.strerror or exc}"
    return None


def unconfirmed_note(settings: str | Path, command: str) -> str:
    """What the app says where a preferences file's runner command is not started."""
    return (f"the preferences file {settings} names a runner command ({shlex.quote(command)})"
            " that was not confirmed here: not started (confirm it in File ▸ Live runner…, "
            "or give --runner)")
