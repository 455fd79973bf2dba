"""A preferences file never starts a process unasked (app/core/runner_command.py): the
runner command a file names starts only once the user confirmed that command from that
file in the app (the file's path shown), or typed it in File ▸ Live runner…, or gave
--runner. Where no one can be asked (offscreen, a picture) it is not started and the
window says why. A confirmation is a hash of (file, command) kept in the user's own
configuration folder, so a handed file cannot carry one."""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from gemmscope.app import gui_main
from gemmscope.app.core import runner_command as rc
from gemmscope.app.core.preferences_file import encode_value
from gemmscope.app.window import runner_confirm


def _marker_commands(marker: Path) -> list[str]:
    """Commands that would leave ``marker`` behind, were they ever started."""
    py = shlex.join([sys.executable, "-c", f"open({str(marker)!r}, 'w')"])
    return [py, f"touch {shlex.quote(str(marker))}",
            f"sh -c {shlex.quote(f'echo owned > {marker}')}"]


def _handed(tmp_path: Path, command: str, name: str = "handed.ini") -> Path:
    ini = tmp_path / "downloads" / name
    ini.parent.mkdir(parents=True, exist_ok=True)
    forged = rc.confirmation_key(ini, command)  # what a forger would put in the file
    ini.write_text(f"[runner]\ncommand={encode_value(command)}\nconfirmed={forged}\n")
    return ini


@pytest.mark.parametrize("which", range(3))
def test_a_handed_settings_files_runner_is_not_started_at_launch(tmp_path, which):
    marker = tmp_path / "started"
    command = _marker_commands(marker)[which]
    ini = _handed(tmp_path, command)
    home = tmp_path / "home"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HOME=str(home),
               XDG_CONFIG_HOME=str(home / ".config"))
    env.pop("GEMMSCOPE_NO_GPU", None)  # started even where a GPU was never asked for
    proc = subprocess.run([sys.executable, "-m", "gemmscope.app.main", "--settings", str(ini),
                           "--screenshot", str(tmp_path / "shot.png")],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert not marker.exists()  # the command never ran
    assert (tmp_path / "shot.png").stat().st_size > 1000


def _args(**kw) -> argparse.Namespace:
    base = {"runner": None, "remote": None, "screenshot": None, "export": None}
    return argparse.Namespace(**{**base, **kw})


@pytest.fixture
def own_config(tmp_path, monkeypatch) -> Path:
    """The user's configuration folder (where confirmations are kept), in tmp_path."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return rc.confirmations_file()


def _window_with(make_window, tmp_path: Path, command: str):
    window = make_window(_handed(tmp_path, command))
    assert window.runner_command() == command
    return window


def test_no_one_to_ask_means_not_started_and_said(make_window, tmp_path, own_config,
                                                  monkeypatch):
    command = _marker_commands(tmp_path / "m")[0]
    window = _window_with(make_window, tmp_path, command)
    asked: list[str] = []
    monkeypatch.setattr(runner_confirm, "ask_to_start", lambda *a: asked.append("x"))
    assert not runner_confirm.can_ask()  # offscreen: no one in front of it
    assert gui_main._confirmed_preference(window, _args()) is None
    assert not asked
    note = window.statusBar().currentMessage()
    assert "not started" in note and str(window.prefs.settings.path) in note
    assert any("not started" in t for t in window.messages.texts())


@pytest.mark.parametrize("answer", [True, False])
def test_the_user_is_asked_once_per_file_and_command(make_window, tmp_path, own_config,
                                                     monkeypatch, answer):
    command = _marker_commands(tmp_path / "m")[1]
    window = _window_with(make_window, tmp_path, command)
    asked: list[tuple[Path, str]] = []
    monkeypatch.setattr(runner_confirm, "can_ask", lambda: True)
    monkeypatch.setattr(runner_confirm, "ask_to_start",
                        lambda _w, settings, cmd: asked.append((settings, cmd)) or answer)
    got = gui_main._confirmed_preference(window, _args())
    assert asked == [(window.prefs.settings.path, command)]  # the file's path shown
    assert got == (command if answer else None)
    assert rc.is_confirmed(window.prefs.settings.path, command) is answer
    gui_main._confirmed_preference(window, _args())
    assert len(asked) == (1 if answer else 2)  # a yes is kept; a no is asked again
    # a picture never asks
    assert gui_main._confirmed_preference(window, _args(screenshot="x.png")) == \
        (command if answer else None)


def test_a_command_given_on_the_command_line_or_typed_in_the_app_needs_no_question(
        make_window, tmp_path, own_config, monkeypatch):
    command = _marker_commands(tmp_path / "m")[0]
    window = _window_with(make_window, tmp_path, command)
    monkeypatch.setattr(runner_confirm, "can_ask", lambda: True)
    monkeypatch.setattr(runner_confirm, "ask_to_start", lambda *a: pytest.fail("asked"))
    assert gui_main._confirmed_preference(window, _args(runner="gemmscope runner")) \
        == command  # (--runner comes first in plan_live: the preference is not used)
    window.set_runner_command("")  # cleared: nothing starts, nothing is confirmed
    monkeypatch.setenv("GEMMSCOPE_NO_GPU", "1")
    typed = "ssh -T gpu-box gemmscope runner"
    monkeypatch.setattr(window, "start_live", lambda *a, **k: None)
    window.set_runner_command(typed)  # File ▸ Live runner…: the user's own word
    assert rc.is_confirmed(window.prefs.settings.path, typed)
    assert gui_main._confirmed_preference(window, _args()) == typed


@pytest.mark.parametrize("change", ["command", "file"])
def test_a_confirmation_holds_for_that_file_and_command_only(tmp_path, change):
    store = tmp_path / "config" / "confirmed-runners"
    ini, command = tmp_path / "a.ini", "gemmscope runner"
    assert rc.confirm(ini, command, store) is None
    assert rc.is_confirmed(ini, command, store)
    other = (ini, "gemmscope runner --evil") if change == "command" else \
        (tmp_path / "b.ini", command)
    assert not rc.is_confirmed(*other, store)


@pytest.mark.parametrize("store_is", ["/dev/zero", "fifo", "garbage", "folder"])
def test_an_unreadable_confirmations_file_confirms_nothing(tmp_path, store_is):
    store = tmp_path / "confirmed-runners"
    if store_is == "fifo":
        os.mkfifo(store)
    elif store_is == "folder":
        store.mkdir()
    elif store_is == "garbage":
        store.write_bytes(os.urandom(4096))
    else:
        store.symlink_to(store_is)
    assert not rc.is_confirmed(tmp_path / "a.ini", "gemmscope runner", store)


def test_the_doctor_never_tries_an_unconfirmed_command(tmp_path, monkeypatch):
    from gemmscope.app.core import doctor, machine_facts

    marker = tmp_path / "started"
    command = _marker_commands(marker)[1]
    ini = _handed(tmp_path, command)
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "HOME": str(tmp_path)}
    facts = machine_facts.gather_gpu(env=env, settings=ini, timeout_s=10)
    assert not marker.exists() and facts.hello is None and facts.unconfirmed_in == ini
    finding = doctor.check_runner(facts)
    assert "not confirmed" in finding.detail and str(ini) in finding.detail
    assert rc.confirm(ini, command, rc.confirmations_file(env)) is None
    machine_facts.gather_gpu(env=env, settings=ini, timeout_s=10)
    assert marker.exists()  # confirmed: the doctor tries it, as the app would start it
