"""`gemmscope doctor`: can this machine open the app, and can it run the ladder live?

Each check is a small function from facts to a :class:`Finding` (what was found, and the
fix). The facts are gathered in :mod:`gemmscope.app.core.machine_facts`, so tests pass
fakes: ``ldd`` output, an environment, NVML and CuPy readings, a runner's first answer.
A finding's scope says what fails with it: ``start`` (the app cannot open: exit 2),
``live`` (only replay: exit 1) or ``extra`` (a feature such as telemetry or ncu counters;
never more than a warning). No Qt here: the doctor runs where PySide6 is missing.
"""

from __future__ import annotations

import json
import os
import textwrap
from dataclasses import asdict, dataclass
from enum import StrEnum
from pathlib import Path

from ...kernels.device import ENV as CACHE_ENV
from ...kernels.results import counted
from .machine_facts import (
    RUNNER_TIMEOUT_S,
    GpuFacts,
    StartFacts,
    gather_gpu,
    gather_start,
)
from .qt_platform import CONSOLE, HEADLESS, install_advice, platform_names
from .runner_command import RunnerSource

GIB = 2**30
LOW_MEMORY_BYTES = 2 * GIB  # 8192^3 FP32 with rotated inputs needs about this much
# the oldest driver branch each CUDA major runs on (CUDA's minor-version compatibility)
DRIVER_FOR_CUDA = {11: "R450", 12: "R525", 13: "R580"}
INSTALL_APP = "pip install 'gemmscope[app]' (or use the desktop bundle, README)"
COUNTERS_FIX = (
    "let every user read them: echo 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' "
    "| sudo tee /etc/modprobe.d/nvidia-profiling.conf, rebuild the initramfs (Debian/Ubuntu: "
    "sudo update-initramfs -u; Fedora: sudo dracut -f) and reboot; or profile as root "
    "(sudo -E gemmscope record --ncu ...)")


class Status(StrEnum):
    OK = "ok"
    WARN = "warn"
    FAIL = "fail"


class Scope(StrEnum):
    START = "start"  # the app cannot open a window
    LIVE = "live"  # no live runs: replay only
    EXTRA = "extra"  # one feature missing; a warning at most


@dataclass(frozen=True, slots=True)
class Finding:
    name: str
    status: Status
    detail: str
    fix: str = ""
    scope: Scope = Scope.EXTRA


# ------------------------------------------------------------------ parsing
def counters_denied(ncu_output: str) -> bool:
    """ncu stopped because this user may not read the GPU's performance counters."""
    return "ERR_NVGPUCTRPERM" in ncu_output


def _major(version: str | None) -> int | None:
    return int(version.split(".")[0]) if version and version.split(".")[0].isdigit() else None


def _gib(n: int) -> str:
    return f"{n / GIB:.1f} GiB"


# ------------------------------------------------------------------ start checks
def check_qt(facts: StartFacts) -> Finding:
    if facts.qt_version is None or facts.pyqtgraph_version is None:
        missing = " and ".join(n for n, v in (("PySide6", facts.qt_version),
                                               ("pyqtgraph", facts.pyqtgraph_version)) if v is None)
        return Finding("Qt", Status.FAIL, f"{missing} not installed: the window cannot open "
                       "(the GPU side, `gemmscope bench|record|runner`, needs neither)",
                       INSTALL_APP, Scope.START)
    return Finding("Qt", Status.OK, f"PySide6 {facts.qt_version}, pyqtgraph "
                   f"{facts.pyqtgraph_version}", scope=Scope.START)


def check_display(facts: StartFacts) -> Finding:
    env = facts.env
    if not facts.linux:
        return Finding("display", Status.OK, "not checked on this system", scope=Scope.START)
    names = platform_names(env)
    headless = [n for n in names if n in HEADLESS]
    if env.get("QT_QPA_PLATFORM") and headless:
        return Finding("display", Status.OK,
                       f"QT_QPA_PLATFORM={env['QT_QPA_PLATFORM']}: no window on a screen; "
                       "screenshots (--screenshot) and tests work", scope=Scope.START)
    if any(n in CONSOLE for n in names):
        return Finding("display", Status.OK, f"QT_QPA_PLATFORM={env['QT_QPA_PLATFORM']} "
                       "(the console's framebuffer)", scope=Scope.START)
    have = {"xcb": env.get("DISPLAY"), "wayland": env.get("WAYLAND_DISPLAY")}
    usable = [f"{n} ({'$DISPLAY' if n == 'xcb' else '$WAYLAND_DISPLAY'}={have[n]})"
              for n in names if have.get(n)]
    if usable:
        return Finding("display", Status.OK, ", ".join(usable), scope=Scope.START)
    if env.get("QT_QPA_PLATFORM"):
        detail = f"QT_QPA_PLATFORM={env['QT_QPA_PLATFORM']} but its display is not set"
    else:
        detail = "no display: neither $DISPLAY nor $WAYLAND_DISPLAY is set"
    return Finding("display", Status.FAIL, detail,
                   "start it from a desktop session (or ssh -X); for pictures without a "
                   "screen: QT_QPA_PLATFORM=offscreen gemmscope replay FILE --screenshot "
                   "out.png; `gemmscope bench` and `runner` need no display", Scope.START)


def check_plugins(facts: StartFacts) -> list[Finding]:
    """The platform plugins Qt will try (and the X11 one) and the libraries each lacks.

    The app cannot start only if none of the plugins Qt will try can load: on a Wayland
    session Qt falls back to xcb, so a broken Wayland plugin alone is a warning."""
    if not facts.linux or facts.qt_version is None:
        return []
    wanted = platform_names(facts.env)
    loadable = any(p.platform in wanted and p.path is not None and not p.missing
                   for p in facts.plugins)
    out = []
    for plugin in facts.plugins:
        name = f"Qt platform plugin {plugin.platform}"
        scope = Scope.START if plugin.platform in wanted else Scope.EXTRA
        blocks = scope is Scope.START and not loadable
        status = Status.FAIL if blocks else Status.WARN
        if plugin.path is None:
            out.append(Finding(name, status, f"PySide6 has no {plugin.platform} plugin",
                               "reinstall PySide6: " + INSTALL_APP, scope))
        elif not plugin.checked:
            out.append(Finding(name, Status.WARN, f"{plugin.path.name}: no ldd to check its "
                               "libraries", scope=scope))
        elif plugin.missing:
            why = ("the app cannot open a window" if blocks else
                   "Qt falls back to another plugin" if scope is Scope.START else
                   "a window on X11 would not open" if plugin.platform == "xcb" else
                   "unused here")
            out.append(Finding(name, status, f"{plugin.path.name} lacks "
                               f"{', '.join(plugin.missing)}: {why}",
                               install_advice(plugin.missing), scope))
        else:
            out.append(Finding(name, Status.OK, f"{plugin.path.name}: every library found",
                               scope=scope))
    return out


def diagnose_start(facts: StartFacts) -> list[Finding]:
    return [check_qt(facts), check_display(facts), *check_plugins(facts)]


# ------------------------------------------------------------------ GPU checks
def _local(facts: GpuFacts) -> Scope:
    """Driver and CuPy decide live mode only when the runner is this installation's."""
    return Scope.LIVE if facts.runner.source is RunnerSource.LOCAL else Scope.EXTRA


def _not_needed(facts: GpuFacts, name: str, what: str) -> Finding | None:
    if facts.runner.source is RunnerSource.LOCAL:
        return None
    if facts.runner.external:
        why = f"not needed here: live mode runs `{facts.runner.text}`"
    else:
        why = "not part of this bundle: live mode drives a runner started outside it"
    return Finding(name, Status.OK, f"{what} ({why})", scope=Scope.EXTRA)


def check_switch(facts: GpuFacts) -> Finding | None:
    if not facts.no_gpu_env:
        return None
    return Finding("GEMMSCOPE_NO_GPU", Status.FAIL, "set: the app replays even with a GPU",
                   "unset GEMMSCOPE_NO_GPU", Scope.LIVE)


def check_driver(facts: GpuFacts) -> Finding:
    drv, nv = facts.driver, facts.nvml
    version = (f"driver {nv.driver} (CUDA {nv.cuda_driver})" if nv.driver else
               "driver version unknown (no NVML)")
    if drv.available:
        count = f", {drv.device_count} devices" if drv.device_count > 1 else ""
        return Finding("CUDA driver", Status.OK, f"{drv.name}{count}; {version}",
                       scope=_local(facts))
    fix = ("install the NVIDIA driver (Debian: nvidia-driver; Ubuntu: sudo ubuntu-drivers "
           "install; Fedora: akmod-nvidia from RPM Fusion); without a GPU the app replays "
           "recordings" if "libcuda" in drv.reason else
           "nvidia-smi should list the GPU; check the driver is loaded (lsmod | grep nvidia) "
           "and that this user may open /dev/nvidia*")
    status = Status.FAIL if facts.runner.source is RunnerSource.LOCAL else Status.WARN
    return Finding("CUDA driver", status, drv.reason, fix, _local(facts))


def check_cupy(facts: GpuFacts) -> Finding:
    cp, nv = facts.cupy, facts.nvml
    driver_cuda = nv.cuda_driver or cp.driver_cuda
    have = f"{cp.distribution} {cp.version}" if cp.distribution else "CuPy"
    skip = _not_needed(facts, "CuPy", f"{have} here" if cp.distribution else "not installed")
    if skip is not None:
        return skip
    driver_major = _major(driver_cuda)
    extra = "cuda12" if driver_major == 12 else "cuda13"
    if cp.also_installed:
        names = " ".join((cp.distribution or "", *cp.also_installed))
        return Finding("CuPy", Status.FAIL, f"several CuPy builds installed ({names}); they "
                       "overwrite each other's files", f"pip uninstall -y {names} && pip install "
                       f"'gemmscope[{extra}]'", Scope.LIVE)
    if cp.distribution is None:
        need = f" (this driver supports CUDA {driver_cuda})" if driver_cuda else ""
        return Finding("CuPy", Status.FAIL, f"not installed{need}: the app can only replay",
                       f"pip install 'gemmscope[{extra}]'" + ("" if driver_cuda else
                       " ([cuda12] for drivers older than R580)"), Scope.LIVE)
    if cp.cuda_major and driver_major and driver_major < cp.cuda_major:
        older = f"gemmscope[cuda{driver_major}]" if driver_major in (12, 13) else "a driver update"
        return Finding("CuPy", Status.FAIL, f"{have} is built for CUDA {cp.cuda_major}; this "
                       f"driver supports CUDA {driver_cuda} at most",
                       f"update the driver to {DRIVER_FOR_CUDA.get(cp.cuda_major, 'a newer one')}"
                       f" or newer, or pip uninstall -y {cp.distribution} && pip install "
                       f"'{older}'", Scope.LIVE)
    if cp.reason:
        return Finding("CuPy", Status.FAIL, f"{have}: {cp.reason}",
                       "`python -c 'import cupy; cupy.show_config()'` shows what it found",
                       Scope.LIVE)
    suits = f"; the driver supports CUDA {driver_cuda}" if driver_cuda else ""
    return Finding("CuPy", Status.OK, f"{have}, CUDA runtime {cp.runtime}{suits}",
                   scope=Scope.LIVE)


def check_nvml(facts: GpuFacts) -> Finding:
    nv = facts.nvml
    if nv.available:
        return Finding("NVML", Status.OK, f"driver {nv.driver}, {nv.device_count} device(s); "
                       "clocks, power, energy and throttle reasons are recorded")
    return Finding("NVML", Status.WARN, f"{nv.reason}: no telemetry beside the runs",
                   "NVML (libnvidia-ml.so.1) comes with the NVIDIA driver")


def _no_gpu(facts: GpuFacts, name: str) -> Finding | None:
    """The GPU's extras are moot where there is no NVIDIA driver at all."""
    if facts.driver.available or facts.nvml.available:
        return None
    return Finding(name, Status.WARN, "no NVIDIA GPU here")


def check_gpm(facts: GpuFacts) -> Finding:
    nv = facts.nvml
    if (moot := _no_gpu(facts, "GPM")) is not None:
        return moot
    if nv.available and nv.gpm_supported:
        return Finding("GPM", Status.OK, "SM occupancy, tensor, FP32 and DRAM utilisation")
    why = "no NVML" if not nv.available else f"{nv.device or 'this GPU'} has no GPM"
    return Finding("GPM", Status.WARN, f"{why}: the utilisation strips stay empty",
                   "GPM metrics need a Hopper (or newer) data-centre GPU")


def check_ncu(facts: GpuFacts) -> Finding:
    if facts.ncu_path is None:
        return Finding("ncu", Status.WARN, "Nsight Compute (ncu) is not on PATH: no "
                       "shared-memory counters (`gemmscope record --ncu`)",
                       "install Nsight Compute (CUDA toolkit, or NVIDIA's nsight-compute "
                       "package) and put ncu on PATH")
    return Finding("ncu", Status.OK, facts.ncu_path)


def check_counters(facts: GpuFacts) -> Finding:
    name = "performance counters"
    if facts.ncu_output is None and (moot := _no_gpu(facts, name)) is not None:
        return moot
    if facts.ncu_output is not None:
        if counters_denied(facts.ncu_output):
            return Finding(name, Status.WARN, "ncu stopped with ERR_NVGPUCTRPERM: this user "
                           "may not read the GPU's performance counters", COUNTERS_FIX)
        return Finding(name, Status.OK, "ncu profiled a kernel (--ncu)")
    if facts.profiling_admin_only is None:
        return Finding(name, Status.WARN, "unknown (no /proc/driver/nvidia/params)",
                       "`gemmscope doctor --ncu` profiles one kernel to find out")
    if not facts.profiling_admin_only:
        return Finding(name, Status.OK, "every user may read them (RmProfilingAdminOnly: 0)")
    if facts.is_admin:
        return Finding(name, Status.OK, "admin only (RmProfilingAdminOnly: 1); this user is root")
    return Finding(name, Status.WARN, "admin only (RmProfilingAdminOnly: 1): ncu will stop with "
                   "ERR_NVGPUCTRPERM for this user", COUNTERS_FIX)


def check_memory(facts: GpuFacts) -> Finding:
    if (moot := _no_gpu(facts, "GPU memory")) is not None:
        return moot
    free = facts.nvml.memory_free_bytes or facts.cupy.memory_free_bytes
    total = facts.nvml.memory_total_bytes or facts.cupy.memory_total_bytes
    if free is None or total is None:
        return Finding("GPU memory", Status.WARN, "unknown (neither NVML nor CuPy answered)")
    text = f"{_gib(free)} free of {_gib(total)}"
    if free < LOW_MEMORY_BYTES:
        return Finding("GPU memory", Status.WARN, f"{text}: large shapes will not fit",
                       "nvidia-smi lists the processes holding it")
    return Finding("GPU memory", Status.OK, text)


def check_runner(facts: GpuFacts) -> Finding:
    choice, hello = facts.runner, facts.hello
    if choice.refused:
        return Finding("runner", Status.FAIL, choice.refused,
                       "set the runner command again (File ▸ Live runner…, or --runner CMD)",
                       Scope.LIVE)
    if choice.command is None:
        found = (f"; found here: {facts.suggested_runner} runner" if facts.suggested_runner
                 else "")
        return Finding("runner", Status.FAIL, "this desktop bundle carries no CuPy and no "
                       "runner is set", "File ▸ Live runner… (or --runner CMD): `gemmscope "
                       "runner` from pip install 'gemmscope[cuda13]', or `ssh -T HOST gemmscope "
                       f"runner`{found}", Scope.LIVE)
    where = f"`{choice.text}` ({choice.source})"
    if not facts.runner_found:
        return Finding("runner", Status.FAIL, f"{where}: {choice.command[0]} not found",
                       "set the runner command (File ▸ Live runner…, or --runner CMD)",
                       Scope.LIVE)
    if facts.unconfirmed_in is not None:
        return Finding("runner", Status.WARN, f"{where}; not tried: the preferences file "
                       f"{facts.unconfirmed_in} names it and it was not confirmed in the app",
                       "start `gemmscope` and confirm it when asked (or File ▸ Live "
                       "runner…), or give --runner", Scope.LIVE)
    if hello is None:
        return Finding("runner", Status.OK if choice.source is RunnerSource.LOCAL else
                       Status.WARN, f"{where}; not tried (--no-try-runner)", scope=Scope.LIVE)
    if hello.error:
        return Finding("runner", Status.FAIL, f"{where}: {hello.error}",
                       "run the command by hand: it should print a session line and "
                       "`ready`", Scope.LIVE)
    if hello.device is None:
        fix = ("the CUDA driver and CuPy findings say why" if choice.source is
               RunnerSource.LOCAL else "`gemmscope doctor` where it runs says why")
        return Finding("runner", Status.FAIL, f"{where} answered, with no GPU: "
                       f"{hello.no_gpu_reason}", fix, Scope.LIVE)
    return Finding("runner", Status.OK, f"{where} answered: {hello.device}", scope=Scope.LIVE)


def check_cache(facts: GpuFacts) -> Finding | None:
    """Where compiled kernels are kept between runs (kernels/device/build_cache.py): a
    ladder compiles once per machine, or once per folder carried between machines."""
    if not facts.caches or facts.cache_root is None:
        return None
    parts = []
    for c in facts.caches:
        set_by = f" (${c.variable})" if not c.own and c.variable else ""
        parts.append(f"{c.name} {c.path}{set_by}: {counted(c.entries, 'file')}, "
                     f"{c.size_bytes / 2**20:.1f} MiB")
    return Finding("build cache", Status.OK, f"{facts.cache_root} (${CACHE_ENV}; "
                   "tar it to carry it to another GPU machine): " + "; ".join(parts))


def diagnose_gpu(facts: GpuFacts) -> list[Finding]:
    checks = [check_switch(facts), check_driver(facts), check_cupy(facts), check_nvml(facts),
              check_gpm(facts), check_ncu(facts), check_counters(facts),
              check_memory(facts), check_cache(facts), check_runner(facts)]
    return [f for f in checks if f is not None]


# ------------------------------------------------------------------ verdict
def exit_code(findings: list[Finding]) -> int:
    """0: the app can run live; 1: only replay; 2: it cannot start."""
    failed = {f.scope for f in findings if f.status is Status.FAIL}
    return 2 if Scope.START in failed else 1 if Scope.LIVE in failed else 0


VERDICTS = {0: "the app can run the ladder live",
            1: "the app opens in replay only (recordings, animations, charts)",
            2: "the app cannot open its window"}


def render(findings: list[Finding], columns: int = 100) -> str:
    width = max((len(f.name) for f in findings), default=0)
    indent = " " * (width + 8)
    lines = []
    for f in findings:
        lines += _wrap(f.detail, columns, f"{f.status:<5} {f.name:<{width}}  ", indent)
        for fix_line in f.fix.splitlines():
            lines += _wrap(fix_line, columns, indent + "fix: ", indent + "     ")
    code = exit_code(findings)
    lines.append(f"verdict: {VERDICTS[code]} (exit {code})")
    return "\n".join(lines)


def _wrap(text: str, columns: int, first: str, rest: str) -> list[str]:
    """Wrapped at spaces only, so package names and commands stay whole."""
    return textwrap.wrap(text, columns, initial_indent=first, subsequent_indent=rest,
                         break_on_hyphens=False, break_long_words=False)


def as_json(findings: list[Finding]) -> str:
    return json.dumps({"exit": exit_code(findings), "findings": [asdict(f) for f in findings]},
                      indent=1)


# ------------------------------------------------------------------ commands
def start_blockers(env: dict[str, str] | None = None) -> list[Finding]:
    """What stops the window from opening (checked before Qt is imported, in a few ms)."""
    return [f for f in diagnose_start(gather_start(env, with_xcb=False))
            if f.status is Status.FAIL and f.scope is Scope.START]


def explain_blockers(blockers: list[Finding]) -> str:
    lines = ["gemmscope cannot open its window:"]
    for f in blockers:
        lines.append(f"  {f.name}: {f.detail}")
        lines.extend(f"    fix: {x}" for x in f.fix.splitlines())
    lines.append("(`gemmscope doctor` checks everything else too)")
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class DoctorOptions:
    """What ``gemmscope doctor`` is asked (its command line is app/main.py's)."""

    runner: str | None = None  # this runner command line instead of the preferences'
    settings: Path | None = None  # the preferences file the app was given
    try_runner: bool = True  # start the runner to ask which GPU it sees
    ncu: bool = False  # profile one small kernel with ncu
    timeout_s: float = RUNNER_TIMEOUT_S
    as_json: bool = False


def run(options: DoctorOptions) -> int:
    """Check this machine as ``options`` say, print the findings; the exit code."""
    env = dict(os.environ)
    findings = diagnose_start(gather_start(env)) + diagnose_gpu(gather_gpu(
        env, options.runner, options.settings, options.try_runner, options.ncu,
        options.timeout_s))
    print(as_json(findings) if options.as_json else render(findings))
    return exit_code(findings)
