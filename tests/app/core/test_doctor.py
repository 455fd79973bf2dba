"""`gemmscope doctor`'s checks on made-up machines (app/core/doctor.py): facts in, findings
and an exit code out. Nothing here touches this machine's Qt, GPU or runner."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest

from gemmscope.app.core import doctor
from gemmscope.app.core.doctor import Scope, Status
from gemmscope.app.core.gpu_probe import GpuProbe
from gemmscope.app.core.machine_facts import (
    GpuFacts,
    RunnerHello,
    StartFacts,
    profiling_admin_only,
    try_runner,
)
from gemmscope.app.core.qt_platform import PluginLibs
from gemmscope.app.core.runner_command import RunnerChoice, RunnerSource, local_command
from gemmscope.kernels.device.gpu import CupyBuild
from gemmscope.kernels.device.telemetry import NvmlFacts

XCB = Path("/site/PySide6/Qt/plugins/platforms/libqxcb.so")
OFFSCREEN = Path("/site/PySide6/Qt/plugins/platforms/libqoffscreen.so")
H200 = GpuProbe(True, "NVIDIA H200", "", 1)
NVML_H200 = NvmlFacts(True, None, "580.159", "13.0", "NVIDIA H200", 1, True, 140 * 2**30,
                      143 * 2**30)
CUPY_13 = CupyBuild("cupy-cuda13x", "14.2.0", 13, "13.2", "13.0", 140 * 2**30, 143 * 2**30)
LOCAL = RunnerChoice(tuple(local_command("/usr/bin/python3")), RunnerSource.LOCAL)


def start(env: dict[str, str], plugins: tuple[PluginLibs, ...] = (), qt: str | None = "6.12.0"
          ) -> StartFacts:
    return StartFacts(env, qt, "0.14.0" if qt else None, plugins)


def gpu(**changes) -> GpuFacts:
    """A working H200 machine, with ``changes``."""
    base = GpuFacts(driver=H200, nvml=NVML_H200, cupy=CUPY_13, runner=LOCAL,
                    hello=RunnerHello(device="NVIDIA H200"), ncu_path="/usr/local/cuda/bin/ncu",
                    profiling_admin_only=False)
    return dataclasses.replace(base, **changes)


def by_name(findings: list[doctor.Finding]) -> dict[str, doctor.Finding]:
    return {f.name: f for f in findings}


def test_a_working_h200_desktop_can_run_live():
    findings = (doctor.diagnose_start(start({"DISPLAY": ":0"}, (PluginLibs("xcb", XCB),)))
                + doctor.diagnose_gpu(gpu()))
    assert [f.name for f in findings if f.status is not Status.OK] == []
    assert doctor.exit_code(findings) == 0
    assert "the app can run the ladder live (exit 0)" in doctor.render(findings)


def test_no_display_is_a_start_failure_with_exit_2():
    findings = doctor.diagnose_start(start({}, (PluginLibs("xcb", XCB),)))
    display = by_name(findings)["display"]
    assert (display.status, display.scope) == (Status.FAIL, Scope.START)
    assert "neither $DISPLAY nor $WAYLAND_DISPLAY" in display.detail
    assert "QT_QPA_PLATFORM=offscreen" in display.fix
    assert doctor.exit_code(findings + doctor.diagnose_gpu(gpu())) == 2


@pytest.mark.parametrize("platform", ["offscreen", "minimal", "vnc"])
def test_a_headless_qt_platform_counts_as_able_to_start(platform):
    facts = start({"QT_QPA_PLATFORM": platform}, (PluginLibs(platform, OFFSCREEN),))
    display = by_name(doctor.diagnose_start(facts))["display"]
    assert display.status is Status.OK and "--screenshot" in display.detail


def test_qt_platform_xcb_without_display_fails():
    display = doctor.check_display(start({"QT_QPA_PLATFORM": "xcb"}))
    assert display.status is Status.FAIL and "its display is not set" in display.detail


def test_missing_xcb_libraries_name_the_debian_and_fedora_packages():
    plugin = PluginLibs("xcb", XCB, ("libxcb-cursor.so.0", "libxcb-icccm.so.4",
                                     "libxcb-keysyms.so.1"))
    finding = by_name(doctor.diagnose_start(start({"DISPLAY": ":0"}, (plugin,))))[
        "Qt platform plugin xcb"]
    assert (finding.status, finding.scope) == (Status.FAIL, Scope.START)
    assert "libxcb-icccm.so.4" in finding.detail
    debian, fedora = finding.fix.splitlines()
    assert debian == "Debian/Ubuntu: sudo apt install libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1"
    assert fedora == "Fedora: sudo dnf install xcb-util-cursor xcb-util-wm xcb-util-keysyms"


def test_xcb_libraries_missing_under_offscreen_only_warn():
    plugins = (PluginLibs("offscreen", OFFSCREEN), PluginLibs("xcb", XCB, ("libEGL.so.1",)))
    findings = doctor.diagnose_start(start({"QT_QPA_PLATFORM": "offscreen"}, plugins))
    xcb = by_name(findings)["Qt platform plugin xcb"]
    assert (xcb.status, xcb.scope) == (Status.WARN, Scope.EXTRA)
    assert "libegl1" in xcb.fix and "libglvnd-egl" in xcb.fix
    assert doctor.exit_code(findings) == 0


def test_wayland_session_starts_although_xcb_lacks_libraries():
    plugins = (PluginLibs("wayland", XCB.with_name("libqwayland.so")),
               PluginLibs("xcb", XCB, ("libxcb-icccm.so.4",)))
    findings = doctor.diagnose_start(start({"WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0"},
                                           plugins))
    assert doctor.exit_code(findings) == 0
    assert by_name(findings)["Qt platform plugin xcb"].status is Status.WARN


def test_a_broken_wayland_plugin_falls_back_to_xcb_and_only_warns():
    wayland = XCB.with_name("libqwayland.so")
    env = {"WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0"}
    broken = PluginLibs("wayland", wayland, ("libwayland-cursor.so.0",))
    findings = by_name(doctor.diagnose_start(start(env, (broken, PluginLibs("xcb", XCB)))))
    assert findings["Qt platform plugin wayland"].status is Status.WARN
    assert "libwayland-cursor0" in findings["Qt platform plugin wayland"].fix
    assert doctor.exit_code(list(findings.values())) == 0
    both = (broken, PluginLibs("xcb", XCB, ("libxcb-icccm.so.4",)))
    assert doctor.exit_code(doctor.diagnose_start(start(env, both))) == 2


def test_no_pyside6_cannot_start_and_says_how_to_install_it():
    findings = doctor.diagnose_start(start({"DISPLAY": ":0"}, qt=None))
    qt = by_name(findings)["Qt"]
    assert (qt.status, qt.scope) == (Status.FAIL, Scope.START)
    assert "gemmscope[app]" in qt.fix and "PySide6 and pyqtgraph not installed" in qt.detail
    assert doctor.exit_code(findings) == 2


def test_no_cupy_means_replay_only_exit_1_with_the_extra_that_suits_the_driver():
    no_cupy = CupyBuild(None, None, None, reason="CuPy is not installed (cupy)")
    findings = doctor.diagnose_gpu(gpu(cupy=no_cupy, hello=RunnerHello(
        no_gpu_reason="CuPy is not installed (cupy)")))
    cupy = by_name(findings)["CuPy"]
    assert (cupy.status, cupy.scope) == (Status.FAIL, Scope.LIVE)
    assert cupy.fix == "pip install 'gemmscope[cuda13]'"
    assert doctor.exit_code(findings) == 1
    older = dataclasses.replace(NVML_H200, cuda_driver="12.4")
    assert by_name(doctor.diagnose_gpu(gpu(cupy=no_cupy, nvml=older)))["CuPy"].fix == \
        "pip install 'gemmscope[cuda12]'"


def test_a_cuda13_cupy_on_a_cuda12_driver_is_named_with_both_fixes():
    facts = gpu(nvml=dataclasses.replace(NVML_H200, driver="550.54", cuda_driver="12.4"),
                cupy=CupyBuild("cupy-cuda13x", "14.2.0", 13,
                               reason="no CUDA driver or device (cudaErrorInsufficientDriver)"))
    cupy = doctor.check_cupy(facts)
    assert cupy.status is Status.FAIL
    assert "built for CUDA 13; this driver supports CUDA 12.4 at most" in cupy.detail
    assert "R580" in cupy.fix and "pip install 'gemmscope[cuda12]'" in cupy.fix


def test_two_cupy_builds_installed_fail():
    both = dataclasses.replace(CUPY_13, distribution="cupy-cuda12x",
                               also_installed=("cupy-cuda13x",))
    cupy = doctor.check_cupy(gpu(cupy=both))
    assert cupy.status is Status.FAIL and "cupy-cuda12x cupy-cuda13x" in cupy.fix


def test_no_driver_means_replay_only_and_the_gpu_extras_are_not_nagged():
    facts = gpu(driver=GpuProbe(False, None, "no CUDA driver (libcuda not found)"),
                nvml=NvmlFacts(False, "NVML: NVML Shared Library Not Found"),
                hello=RunnerHello(no_gpu_reason="no CUDA driver or device"))
    findings = by_name(doctor.diagnose_gpu(facts))
    assert findings["CUDA driver"].status is Status.FAIL
    assert "install the NVIDIA driver" in findings["CUDA driver"].fix
    for name in ("GPM", "GPU memory", "performance counters"):
        assert (findings[name].detail, findings[name].fix) == ("no NVIDIA GPU here", "")
    assert doctor.exit_code(list(findings.values())) == 1


def test_gemmscope_no_gpu_is_reported_as_the_reason_for_replay():
    findings = doctor.diagnose_gpu(gpu(no_gpu_env=True))
    assert by_name(findings)["GEMMSCOPE_NO_GPU"].fix == "unset GEMMSCOPE_NO_GPU"
    assert doctor.exit_code(findings) == 1


NCU_DENIED = """==PROF== Connected to process 4242 (/usr/bin/python3.12)
==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU \
Performance Counters on the target device 0.
==PROF== Disconnected from process 4242
==WARNING== No kernels were profiled.
"""


def test_err_nvgpuctrperm_in_ncu_output_gives_the_modprobe_fix():
    assert doctor.counters_denied(NCU_DENIED)
    assert not doctor.counters_denied("==PROF== Disconnected from process 1\n\"ID\",\"Kernel\"")
    counters = doctor.check_counters(gpu(ncu_output=NCU_DENIED))
    assert counters.status is Status.WARN and "ERR_NVGPUCTRPERM" in counters.detail
    assert "NVreg_RestrictProfilingToAdminUsers=0" in counters.fix
    assert "root" in counters.fix
    assert doctor.check_counters(gpu(ncu_output="ok")).status is Status.OK


def test_driver_params_decide_the_counter_permission_without_ncu():
    params = "ResmanDebugLevel: 4294967295\nRmProfilingAdminOnly: 1\nEnableMSI: 1\n"
    assert profiling_admin_only(params) is True
    assert profiling_admin_only(params.replace("AdminOnly: 1", "AdminOnly: 0")) is False
    assert profiling_admin_only("EnableMSI: 1\n") is None
    user = doctor.check_counters(gpu(profiling_admin_only=True))
    assert user.status is Status.WARN and "NVreg_RestrictProfilingToAdminUsers=0" in user.fix
    assert doctor.check_counters(gpu(profiling_admin_only=True, is_admin=True)).status \
        is Status.OK
    # extras never change the verdict
    assert doctor.exit_code(doctor.diagnose_gpu(gpu(profiling_admin_only=True,
                                                    ncu_path=None))) == 0


def test_gpm_missing_and_low_memory_warn():
    a100 = dataclasses.replace(NVML_H200, device="NVIDIA A100", gpm_supported=False,
                               memory_free_bytes=2**29)
    findings = by_name(doctor.diagnose_gpu(gpu(nvml=a100)))
    assert findings["GPM"].status is Status.WARN and "NVIDIA A100 has no GPM" in \
        findings["GPM"].detail
    assert findings["GPU memory"].status is Status.WARN
    assert findings["GPU memory"].detail.startswith("0.5 GiB free of 143.0 GiB")


def test_a_bundle_without_a_runner_is_replay_only_and_suggests_one():
    facts = gpu(runner=RunnerChoice(None, RunnerSource.NONE), runner_found=False, hello=None,
                cupy=CupyBuild(None, None, None, reason="CuPy is not installed (cupy)"),
                suggested_runner="/home/me/.local/bin/gemmscope")
    findings = by_name(doctor.diagnose_gpu(facts))
    assert findings["CuPy"].status is Status.OK  # not needed: the runner brings its own
    runner = findings["runner"]
    assert runner.status is Status.FAIL and "File ▸ Live runner" in runner.fix
    assert "/home/me/.local/bin/gemmscope runner" in runner.fix
    assert doctor.exit_code(list(findings.values())) == 1


def test_an_external_runner_that_answers_with_a_gpu_is_live_without_local_cupy():
    remote = RunnerChoice(("ssh", "-T", "gpu-box", "gemmscope", "runner"),
                          RunnerSource.PREFERENCE)
    facts = gpu(runner=remote, driver=GpuProbe(False, None, "no CUDA driver (libcuda not found)"),
                nvml=NvmlFacts(False, "no NVML"), cupy=CupyBuild(None, None, None, reason="x"),
                hello=RunnerHello(device="NVIDIA H200"))
    findings = doctor.diagnose_gpu(facts)
    assert doctor.exit_code(findings) == 0
    assert by_name(findings)["runner"].detail == (
        "`ssh -T gpu-box gemmscope runner` (preferences (runner/command)) answered: "
        "NVIDIA H200")
    dead = dataclasses.replace(facts, hello=RunnerHello(error="no answer within 60 s"))
    assert doctor.exit_code(doctor.diagnose_gpu(dead)) == 1


def test_try_runner_reads_the_device_from_the_runners_session_line(fake_runner):
    hello = try_runner([sys.executable, str(fake_runner)], timeout_s=30)
    assert hello == RunnerHello(device="Fake GPU", no_gpu_reason="no device")
    missing = try_runner(["/nonexistent/gemmscope", "runner"], timeout_s=5)
    assert missing.device is None and "cannot start it" in missing.error
    quiet = try_runner([sys.executable, "-c", "import sys; sys.exit(3)"], timeout_s=30)
    assert quiet.error == "exit code 3 before a session line (no output)"


def test_json_output_carries_every_finding_and_the_exit_code():
    findings = doctor.diagnose_gpu(gpu(no_gpu_env=True))
    data = json.loads(doctor.as_json(findings))
    assert data["exit"] == 1
    assert {f["name"] for f in data["findings"]} == {f.name for f in findings}
    assert data["findings"][0] == {"name": "GEMMSCOPE_NO_GPU", "status": "fail",
                                   "detail": "set: the app replays even with a GPU",
                                   "fix": "unset GEMMSCOPE_NO_GPU", "scope": "live"}


def test_render_keeps_package_names_whole_when_wrapping():
    plugin = PluginLibs("xcb", XCB, ("libxcb-cursor.so.0", "libxcb-icccm.so.4",
                                     "libxcb-keysyms.so.1", "libxkbcommon-x11.so.0"))
    text = doctor.render(doctor.diagnose_start(start({"DISPLAY": ":0"}, (plugin,))), columns=60)
    assert "libxkbcommon-x11-0" in text.split()
    assert "xcb-util-keysyms" in text.split()


def test_the_build_cache_folder_is_shown_with_its_files_and_the_variable(tmp_path):
    from gemmscope.kernels.device import build_cache

    (tmp_path / "cupy").mkdir()
    (tmp_path / "cupy" / "k.cubin").write_bytes(b"\0" * 3 * 2**20)
    env = {"GEMMSCOPE_CACHE_DIR": str(tmp_path), "TRITON_CACHE_DIR": "/elsewhere"}
    found = by_name(doctor.diagnose_gpu(gpu(caches=tuple(build_cache.folders(env)),
                                            cache_root=build_cache.cache_root(env))))
    cache = found["build cache"]
    assert cache.status is Status.OK
    assert f"{tmp_path} ($GEMMSCOPE_CACHE_DIR" in cache.detail
    assert f"cupy {tmp_path / 'cupy'}: 1 file, 3.0 MiB" in cache.detail
    assert "triton /elsewhere ($TRITON_CACHE_DIR): 0 files" in cache.detail
    assert "build cache" not in by_name(doctor.diagnose_gpu(gpu()))  # not looked at
