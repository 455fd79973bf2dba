"""Preferences are data (app/core/preferences_file.py): a pickled ``@Variant`` value, the
kind QSettings unpickles, never runs; a damaged or foreign value is its default with a
note; a picture, an export or a talk never writes the file; writes are whole and follow
a symlink. The payload is made by QSettings itself and shown to be live first, so the
test would see it run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gemmscope.app.core.preferences_file import PreferencesFile, settings_file
from gemmscope.kernels.ladder.shape import Shape

MAKE_PAYLOAD = """
import os, sys
from PySide6.QtCore import QSettings
class Payload:
    def __reduce__(self):
        return (os.system, ("touch " + sys.argv[2],))
s = QSettings(sys.argv[1], QSettings.Format.IniFormat)
for key in ("run/M", "window/geometry", "window/state", "replay/speed", "runner/command"):
    s.setValue(key, Payload())
s.sync()
"""
READ_WITH_QSETTINGS = """
import sys
from PySide6.QtCore import QSettings
QSettings(sys.argv[1], QSettings.Format.IniFormat).value("run/M")
"""


def run_python(code: str, *args: str, env: dict[str, str] | None = None):
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                          text=True, timeout=60, env=env, check=True)


@pytest.fixture
def evil_ini(tmp_path) -> tuple[Path, Path]:
    """A preferences file whose values are pickles that create ``marker``; checked live:
    QSettings.value() on it does create the marker."""
    ini, marker = tmp_path / "evil.ini", tmp_path / "marker"
    run_python(MAKE_PAYLOAD, str(ini), str(marker))
    assert "@Variant(" in ini.read_text(errors="replace") and not marker.exists()
    run_python(READ_WITH_QSETTINGS, str(ini), str(marker))
    assert marker.exists(), "the payload is live: QSettings runs it"
    marker.unlink()
    return ini, marker


def app_env(**extra: str) -> dict[str, str]:
    return dict(os.environ, QT_QPA_PLATFORM="offscreen", **extra)


def test_a_pickled_preference_never_runs_and_the_window_starts_with_defaults(
        evil_ini, make_window):
    ini, marker = evil_ini
    window = make_window(ini)
    assert (window.prefs.shape(), window.prefs.repeats) == (Shape(4096, 4096, 4096), 20)
    assert window.prefs.runner_command == "" and str(window.prefs.speed) == "4x"
    window.close()
    assert not marker.exists()
    notes = window.prefs.notes
    assert any("run/M" in n and "typed Qt value" in n for n in notes)
    assert any("run/M" in text for text in window.messages.texts())  # said in the window


def test_a_screenshot_with_pickled_settings_runs_nothing_and_writes_nothing(
        evil_ini, tmp_path, synthetic_file):
    ini, marker = evil_ini
    before = ini.read_bytes()
    out = tmp_path / "shot.png"
    proc = subprocess.run([sys.executable, "-m", "gemmscope.app.main", "replay",
                           str(synthetic_file), "--settings", str(ini), "--screenshot",
                           str(out), "--size", "800x600"],
                          capture_output=True, text=True, timeout=90, env=app_env())
    assert proc.returncode == 0, proc.stderr
    assert out.stat().st_size > 0 and not marker.exists()
    assert ini.read_bytes() == before  # a picture never writes the preferences
    assert "Traceback" not in proc.stderr and "run/M" in proc.stderr


def test_the_default_preferences_file_is_read_as_data_too(tmp_path, synthetic_file):
    env = app_env(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "cfg"))
    conf = settings_file(env)
    conf.parent.mkdir(parents=True)
    marker = tmp_path / "marker"
    run_python(MAKE_PAYLOAD, str(conf), str(marker))
    proc = subprocess.run([sys.executable, "-m", "gemmscope.app.main", "replay",
                           str(synthetic_file), "--exit-after-paint"],
                          capture_output=True, text=True, timeout=90, env=env)
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists() and "first paint" in proc.stdout
    # the app saved its layout on closing: plain data now, and still no pickle read
    saved = PreferencesFile(conf, writable=False)
    assert saved.blob("window/state") is not None


def test_an_export_with_the_users_settings_keeps_the_file_as_it_was(tmp_path, synthetic_file):
    ini = tmp_path / "mine.ini"
    ini.write_text("; my comment\n[replay]\nspeed=1x\n\n[run]\nM=512\n")
    before = ini.read_bytes()
    proc = subprocess.run([sys.executable, "-m", "gemmscope.app.main", "replay",
                           str(synthetic_file), "--settings", str(ini), "--export",
                           str(tmp_path / "out.csv")],
                          capture_output=True, text=True, timeout=90, env=app_env())
    assert proc.returncode == 0, proc.stderr
    assert ini.read_bytes() == before


@pytest.mark.parametrize("text, key, said", [
    ("[run]\nM=@Variant(\\0\\0\\0\\x7f\\0\\0\\0\\x18PySide::PyObjectWrapper\\0\\0\\0\\0\\x32",
     "run/M", "typed Qt value"),  # a pickle cut short: QSettings raised EOFError
    ("[window]\ngeometry=@ByteArray(\\x1\\xd9\\xd0\\xcb)\n", "window/geometry", "typed"),
    ("[window]\ngeometry=not base64!\n", "window/geometry", "base64"),
    ("[run]\nM=1e300\n", "run/M", "whole number"),
    ("[run]\nM=99999999999999999999999999\n", "run/M", "whole number"),
    ("[run]\nrepeats=-5\n", "run/repeats", "whole number"),
    ("[runner]\nwatchdog_s=nan\n", "runner/watchdog_s", "a number"),
    ("[runner]\nwatchdog_s=inf\n", "runner/watchdog_s", "a number"),
    ("[replay]\nspeed=ludicrous\n", "replay/speed", "one of"),
    ("[view]\npresentation=maybe\n", "view/presentation", "true or false"),
    ("[runner]\ncommand=\"a\\x1b]0;owned\\x07\"\n", "runner/command", "line of text"),
])
def test_a_damaged_or_foreign_value_is_its_default_with_a_note(make_window, tmp_path,
                                                              text, key, said):
    ini = tmp_path / "bad.ini"
    ini.write_text(text)
    window = make_window(ini)
    prefs = window.prefs
    assert (prefs.shape(), prefs.repeats) == (Shape(4096, 4096, 4096), 20)
    assert prefs.watchdog_s == 60.0 and str(prefs.speed) == "4x"
    assert prefs.presentation is False and prefs.runner_command == ""
    assert prefs.window_layout()[0] is None
    assert any(key in n and said in n for n in prefs.notes), prefs.notes
    assert all("\n" not in n and "\x1b" not in n for n in prefs.notes)


@pytest.mark.parametrize("content", [b"\xff\xfe\x00garbage[[[", b"[unclosed\nx=1\n",
                                     b"x" * (2 << 20)])
def test_an_unreadable_file_gives_defaults_and_is_never_overwritten(tmp_path, content):
    ini = tmp_path / "odd.ini"
    ini.write_bytes(content)
    prefs = PreferencesFile(ini)
    assert prefs.integer("run/M", 4096, 1, 1 << 20) == 4096
    prefs.set("run/M", 8)
    assert prefs.sync() is False and ini.read_bytes() == content


def test_a_fifo_or_device_is_not_read_as_preferences(tmp_path):
    fifo = tmp_path / "fifo.ini"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero")):
        prefs = PreferencesFile(path)  # returns at once: nothing is read from it
        assert prefs.text("runner/command", "") == "" and not prefs.writable
        assert "not a regular file" in prefs.notes[0]


def test_the_app_writes_only_plain_values(make_window, tmp_path):
    ini = tmp_path / "p.ini"
    window = make_window(ini)
    window.prefs.set_shape(Shape(128, 256, 512), 7)
    window.prefs.runner_command = "ssh -T gpu-box \"gemmscope runner\" --x a,b"
    window.close()
    text = ini.read_text()
    assert "@Variant" not in text and "@ByteArray" not in text and "\\x" not in text
    assert "M=128\n" in text
    again = PreferencesFile(ini, writable=False)
    assert again.integer("run/M", 0, 1, 1 << 20) == 128
    assert again.blob("window/geometry") and again.blob("window/state")


def test_a_write_goes_through_a_symlink_and_keeps_other_keys(tmp_path):
    real = tmp_path / "real.ini"
    real.write_text("[other]\nkept=\"yes, kept\"\n")
    link = tmp_path / "link.ini"
    link.symlink_to(real)
    prefs = PreferencesFile(link)
    prefs.set("run/M", 64)
    assert prefs.sync()
    assert link.is_symlink() and sorted(p.name for p in tmp_path.iterdir()) == [
        "link.ini", "real.ini"]
    again = PreferencesFile(real)
    assert again.integer("run/M", 0, 1, 100) == 64 and again.text("other/kept", "") == \
        "yes, kept"


def test_a_failed_write_keeps_the_old_file_and_says_so(tmp_path, monkeypatch):
    ini = tmp_path / "p.ini"
    ini.write_text("[run]\nM=1\n")
    prefs = PreferencesFile(ini)
    prefs.set("run/M", 2)

    def full(*_args, **_kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("gemmscope.app.core.preferences_file.write_text", full)
    assert prefs.sync() is False
    assert ini.read_text() == "[run]\nM=1\n"
    assert any("No space left" in n for n in prefs.notes)


text_values = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)),
                      max_size=200).filter(lambda s: s.strip() == s and s.isprintable())


@given(text_values)
def test_any_line_of_text_round_trips_as_text(tmp_path_factory, value):
    ini = tmp_path_factory.mktemp("rt") / "p.ini"
    prefs = PreferencesFile(ini)
    prefs.set("runner/command", value)
    assert prefs.sync()
    assert PreferencesFile(ini).text("runner/command", "<default>") == (value or "")
    assert "@Variant" not in ini.read_text(encoding="utf-8")


@given(st.text(max_size=300))
def test_any_value_in_the_file_is_read_or_refused_never_raised(tmp_path_factory, raw):
    ini = tmp_path_factory.mktemp("any") / "p.ini"
    ini.write_text("[run]\nM=" + raw.replace("\n", " ").replace("\r", " ") + "\n",
                   encoding="utf-8", errors="surrogatepass")
    prefs = PreferencesFile(ini)
    assert 1 <= prefs.integer("run/M", 4096, 1, 1 << 20) <= 1 << 20
    assert isinstance(prefs.text("run/M", ""), str)
    assert isinstance(prefs.boolean("run/M", False), bool)
    assert prefs.blob("run/M") is None or isinstance(prefs.blob("run/M"), bytes)
    assert all("\n" not in n for n in prefs.notes)
