"""File ▸ Live runner…: the command is kept in the preferences and live mode starts it
(how the desktop bundle, which has no CuPy, drives a runner started outside it)."""

from __future__ import annotations

import shlex
import sys

from PySide6.QtWidgets import QInputDialog

from gemmscope.app.core.runner_command import is_confirmed, read_preference
from gemmscope.app.window import menus
from gemmscope.kernels.drive.session import SessionState


def answer(monkeypatch, text: str, ok: bool = True) -> None:
    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *a, **k: (text, ok)))


def test_a_set_runner_is_kept_and_started(qtbot, make_window, tmp_path, fake_runner,
                                          monkeypatch):
    monkeypatch.delenv("GEMMSCOPE_NO_GPU", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # its confirmation
    ini = tmp_path / "prefs.ini"
    window = make_window(ini)
    command = shlex.join([sys.executable, str(fake_runner)])
    answer(monkeypatch, command)
    menus.runner_dialog(window)
    assert window.mode_text().startswith(f"live — runner `{command}`")
    qtbot.waitUntil(lambda: window.live.state is SessionState.READY, timeout=20_000)
    window.prefs.sync()
    assert read_preference(ini) == command  # what `gemmscope doctor` will check
    assert is_confirmed(ini, command)  # typed here: started at the next launch too


def test_a_cancelled_dialog_changes_nothing(make_window, monkeypatch):
    window = make_window()
    window.set_runner_command("")  # (cleared first: nothing starts)
    window.prefs.runner_command = "gemmscope runner"
    answer(monkeypatch, "something else", ok=False)
    menus.runner_dialog(window)
    assert window.prefs.runner_command == "gemmscope runner" and window.live is None


def test_clearing_the_runner_says_what_the_next_start_uses(make_window, monkeypatch):
    window = make_window()
    window.set_runner_command("")  # (cleared first: nothing starts)
    window.prefs.runner_command = "gemmscope runner"
    answer(monkeypatch, "")
    menus.runner_dialog(window)
    assert window.prefs.runner_command == "" and window.live is None
    assert "this installation's runner" in window.statusBar().currentMessage()


def test_the_file_menu_offers_it(make_window):
    window = make_window()
    file_menu = window.menuBar().actions()[0].menu()
    assert "Live &runner…" in [a.text() for a in file_menu.actions()]
