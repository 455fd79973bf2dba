"""The facts `gemmscope doctor` judges, read from this machine. No Qt.

Qt's presence and plugins come from ``importlib`` and ``ldd`` (nothing Qt is imported),
CUDA facts from their owners: the driver probe (``gpu_probe``), NVML through
``gemmscope.kernels.device.telemetry``, CuPy through ``gemmscope.kernels.device.gpu``. The runner is
tried the way live mode starts it: the command, one ``quit`` on stdin, and its session
header read back, which names the GPU it found or why there is none.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ...kernels.device import CacheFolder, CupyBuild, NvmlFacts, cache_root
from ...kernels.device import folders as cache_folders
from .gpu_probe import GpuProbe, probe_driver
from .preferences_file import settings_file
from .qt_platform import (
    PluginLibs,
    platform_names,
    platforms_folder,
    plugin_libs,
    pyside6_folder,
    run_ldd,
)
from .runner_command import (
    RunnerChoice,
    RunnerSource,
    choose,
    confirmations_file,
    is_confirmed,
    is_frozen,
    read_preference,
)

NVIDIA_PARAMS = Path("/proc/driver/nvidia/params")
RUNNER_TIMEOUT_S = 60.0
NCU_SHAPE = 256  # a trial profile of the naive level: a few seconds under ncu


@dataclass(frozen=True, slots=True)
class StartFacts:
    """What decides whether a window can open."""

    env: Mapping[str, str]
    qt_version: str | None  # PySide6's version; None: not installed
    pyqtgraph_version: str | None
    plugins: tuple[PluginLibs, ...]  # the platforms Qt will try, then xcb
    linux: bool = True


@dataclass(frozen=True, slots=True)
class RunnerHello:
    """The runner's first answer: its session header names the device, or why there is none."""

    device: str | None = None
    no_gpu_reason: str | None = None
    error: str | None = None  # it did not start or did not answer


@dataclass(frozen=True, slots=True)
class GpuFacts:
    """What decides whether live runs work, and which extras do."""

    driver: GpuProbe
    nvml: NvmlFacts
    cupy: CupyBuild
    runner: RunnerChoice
    runner_found: bool = True  # the runner's program exists
    hello: RunnerHello | None = None  # None: the runner was not tried
    ncu_path: str | None = None
    profiling_admin_only: bool | None = None  # RmProfilingAdminOnly; None: unknown
    is_admin: bool = False
    ncu_output: str | None = None  # from a trial profile (--ncu); None: not tried
    no_gpu_env: bool = False  # GEMMSCOPE_NO_GPU is set
    suggested_runner: str | None = None  # a `gemmscope` on PATH that has a runner
    # the compilers' cache folders (kernels/device/build_cache.py); empty: not looked at
    caches: tuple[CacheFolder, ...] = ()
    cache_root: Path | None = None  # $GEMMSCOPE_CACHE_DIR or its default
    # the preferences file's runner command, not confirmed in the app: never started here
    unconfirmed_in: Path | None = None


def profiling_admin_only(params_text: str | None) -> bool | None:
    """RmProfilingAdminOnly from /proc/driver/nvidia/params (None: not there)."""
    found = re.search(r"^RmProfilingAdminOnly:\s*(\d+)", params_text or "", re.MULTILINE)
    return None if found is None else found[1] != "0"




def dist_version(names: tuple[str, ...], module: str,
                 find_spec: Callable[[str], object] = importlib.util.find_spec) -> str | None:
    """The version of the first installed distribution of ``names``; "present" where the
    module exists without metadata (a bundle); None: not installed."""
    import importlib.metadata  # tens of ms: only where versions are asked for

    if find_spec(module) is None:
        return None
    for name in names:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return "present"


def gather_start(env: Mapping[str, str] | None = None,
                 find_spec: Callable[[str], object] = importlib.util.find_spec,
                 ldd: Callable[[Path], str | None] | None = None,
                 with_xcb: bool = True) -> StartFacts:
    """``with_xcb``: check the X11 plugin too where Qt will not use it (the doctor does,
    so a headless user learns what a window would need; the start check does not)."""
    env = dict(os.environ if env is None else env)
    ldd = ldd or run_ldd
    qt = dist_version(("PySide6-Essentials", "PySide6"), "PySide6", find_spec)
    pg = dist_version(("pyqtgraph",), "pyqtgraph", find_spec)
    linux = sys.platform.startswith("linux")
    plugins: tuple[PluginLibs, ...] = ()
    if linux and qt is not None:
        folder = platforms_folder(env, pyside6_folder(find_spec))
        names = platform_names(env) + (["xcb"] if with_xcb else [])
        plugins = tuple(plugin_libs(folder, n, ldd) for n in dict.fromkeys(names))
    return StartFacts(env, qt, pg, plugins, linux)


def try_runner(command: list[str] | tuple[str, ...], timeout_s: float = RUNNER_TIMEOUT_S
               ) -> RunnerHello:
    """Start the runner, ask it to quit, and read its session header."""
    from ...kernels.protocol import ProtocolError, Session, decode

    try:
        proc = subprocess.run(list(command), input='{"cmd": "quit"}\n', capture_output=True,
                              text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return RunnerHello(error=f"no answer within {timeout_s:g} s")
    except OSError as exc:
        return RunnerHello(error=f"cannot start it: {exc.strerror or exc}")
    for line in proc.stdout.splitlines():
        if not line.strip():
            continue
        try:
            event = decode(line)
        except ProtocolError as exc:
            return RunnerHello(error=f"its output is not the protocol: {exc}")
        if isinstance(event, Session):
            return RunnerHello(device=event.device.name if event.device else None,
                               no_gpu_reason=event.no_gpu_reason or "no device")
    tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return RunnerHello(error=f"exit code {proc.returncode} before a session line ({tail})")


def runner_found(choice: RunnerChoice) -> bool:
    if choice.command is None:
        return False
    program = choice.command[0]
    return shutil.which(program) is not None or Path(program).is_file()


def gemmscope_elsewhere() -> str | None:
    """A pip-installed `gemmscope` on PATH other than this program (for a bundle)."""
    found = shutil.which("gemmscope")
    if found is None or Path(found).resolve() == Path(sys.executable).resolve():
        return None
    return found


def trial_profile(timeout_s: float) -> str | None:
    """ncu's output for one small launch of the naive level (None: no ncu)."""
    from ...kernels.profile import TOOL, find_ncu
    from ...kernels.profile import profile as ncu_profile

    path = find_ncu(TOOL)
    if path is None:
        return None
    p = ncu_profile(path, "naive", NCU_SHAPE, NCU_SHAPE, NCU_SHAPE, timeout_s, extra=False)
    return "\n".join(x for x in (p.error, p.stdout_tail, p.stderr_tail) if x)


def gather_gpu(env: Mapping[str, str] | None = None, runner_option: str | None = None,
               settings: Path | None = None, try_the_runner: bool = True,
               profile_ncu: bool = False, timeout_s: float = RUNNER_TIMEOUT_S) -> GpuFacts:
    from ...kernels.device import cupy_build, nvml_facts
    from ...kernels.profile import TOOL, find_ncu

    env = os.environ if env is None else env
    frozen = is_frozen()
    settings = settings or settings_file(env)
    preference = read_preference(settings)
    choice = choose(runner_option, preference, frozen)
    # a file's command runs only once the user confirmed it (runner_command.py): the
    # doctor never starts one that was not, even to see it answer
    unconfirmed = choice.source is RunnerSource.PREFERENCE and not is_confirmed(
        settings, preference or "", confirmations_file(env))
    try:
        params = NVIDIA_PARAMS.read_text()
    except OSError:
        params = None
    found = runner_found(choice)
    return GpuFacts(
        driver=probe_driver(), nvml=nvml_facts(), cupy=cupy_build(), runner=choice,
        runner_found=found,
        hello=try_runner(choice.command, timeout_s) if try_the_runner and found and
        choice.command and not unconfirmed else None,
        unconfirmed_in=settings if unconfirmed else None,
        ncu_path=find_ncu(TOOL), profiling_admin_only=profiling_admin_only(params),
        is_admin=hasattr(os, "geteuid") and os.geteuid() == 0,
        ncu_output=trial_profile(timeout_s) if profile_ncu and not frozen else None,
        no_gpu_env=bool(env.get("GEMMSCOPE_NO_GPU")),
        suggested_runner=gemmscope_elsewhere() if frozen else None,
        caches=tuple(cache_folders(env)), cache_root=cache_root(env))
