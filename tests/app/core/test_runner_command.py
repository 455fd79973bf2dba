"""Which runner live mode starts (app/core/runner_command.py), and the preference that
sets it: written by the GUI through QSettings, read back by the doctor without Qt."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from gemmscope.app.core.gpu_probe import GpuProbe
from gemmscope.app.core.preferences_file import settings_file
from gemmscope.app.core.runner_command import (
    BUNDLE_REASON,
    RunnerSource,
    choose,
    local_command,
    plan_live,
    read_preference,
)

H200 = GpuProbe(True, "NVIDIA H200", "", 1)
NO_CUPY = GpuProbe(False, None, "no CuPy (install gemmscope[cuda12] or [cuda13])")


def test_the_option_wins_over_the_preference_which_wins_over_this_installation():
    assert choose("ssh -T box gemmscope runner", "gemmscope runner", False).command == (
        "ssh", "-T", "box", "gemmscope", "runner")
    pref = choose(None, "gemmscope runner", True)
    assert (pref.command, pref.source, pref.external) == (
        ("gemmscope", "runner"), RunnerSource.PREFERENCE, True)
    local = choose("  ", "", False, executable="/venv/bin/python")
    assert local.command == ("/venv/bin/python", "-m", "gemmscope.kernels", "runner")
    assert local.source is RunnerSource.LOCAL and not local.external


def test_a_bundle_has_no_runner_of_its_own():
    choice = choose(None, None, frozen=True)
    assert (choice.command, choice.source) == (None, RunnerSource.NONE)
    plan = plan_live(None, None, frozen=True, gpu_probe=lambda: H200, env={})
    assert plan.command is None and plan.reason == BUNDLE_REASON


def test_plan_live_uses_a_set_runner_without_a_local_gpu():
    plan = plan_live(None, "ssh -T box gemmscope runner", frozen=True,
                     gpu_probe=lambda: NO_CUPY, env={})
    assert plan.command == ["ssh", "-T", "box", "gemmscope", "runner"]
    assert plan.label == "runner `ssh -T box gemmscope runner`"


def test_plan_live_with_this_installation_needs_cupy_and_a_device():
    assert plan_live(None, None, frozen=False, gpu_probe=lambda: NO_CUPY, env={}).reason == \
        NO_CUPY.reason
    plan = plan_live(None, None, frozen=False, gpu_probe=lambda: H200, env={})
    assert plan.command == local_command() and plan.label == "NVIDIA H200"


def test_gemmscope_no_gpu_forces_replay_of_this_installations_runner_only():
    off = GpuProbe(False, None, "GPU use switched off (GEMMSCOPE_NO_GPU is set)")
    plan = plan_live(None, None, frozen=False, gpu_probe=lambda: off,
                     env={"GEMMSCOPE_NO_GPU": "1"})
    assert plan.command is None and "GEMMSCOPE_NO_GPU" in plan.reason
    # a runner the user named may run on another machine's GPU: live all the same
    plan = plan_live("gemmscope runner", None, frozen=False, gpu_probe=lambda: off,
                     env={"GEMMSCOPE_NO_GPU": "1"})
    assert plan.command == ["gemmscope", "runner"]
    # --session-file asks for live with this installation's runner, GPU or not
    plan = plan_live(None, None, frozen=False, gpu_probe=lambda: off,
                     env={"GEMMSCOPE_NO_GPU": "1"}, asked_live=True)
    assert plan.command == local_command()


@pytest.mark.parametrize("command", [
    "gemmscope runner",
    'ssh -T gpu-box "gemmscope runner" --x a,b',
    r"C:\tools\gemmscope.exe runner",
    "@home/runner",
])
def test_the_preference_qsettings_writes_is_read_back_without_qt(tmp_path, command):
    from gemmscope.app.window.preferences import Preferences, open_settings

    ini = tmp_path / "prefs.ini"
    prefs = Preferences(open_settings(str(ini)))
    prefs.runner_command = command
    prefs.sync()
    assert read_preference(ini) == command
    assert Preferences(open_settings(str(ini))).runner_command == command


def test_no_preference_file_or_key_reads_as_none(tmp_path):
    assert read_preference(tmp_path / "missing.conf") is None
    (tmp_path / "other.ini").write_text("[view]\npresentation=true\n")
    assert read_preference(tmp_path / "other.ini") is None


def test_settings_file_follows_xdg_config_home():
    assert str(settings_file({"XDG_CONFIG_HOME": "/cfg"})) == "/cfg/gemmscope/gemmscope.conf"
    assert str(settings_file({"HOME": "/home/me"})) == \
        "/home/me/.config/gemmscope/gemmscope.conf"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="QSettings' path on Linux")
def test_settings_file_is_where_qsettings_keeps_the_apps_preferences(tmp_path):
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
           "PATH": os.environ.get("PATH", "")}
    code = ("from PySide6.QtCore import QSettings\n"
            "print(QSettings('gemmscope', 'gemmscope').fileName())")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=60, check=True)
    assert out.stdout.strip() == str(settings_file(env))
