"""A live session file that cannot be made (a FIFO or a device at its name, a link planted
in a folder others may write, a folder that is a file) is said in one line and starts no
runner, from ``--session-file`` and from the preferences' sessions folder alike; never a
traceback (issue 45, held-out: ``--session-file FIFO`` was one)."""

from __future__ import annotations

import os
import shlex
import sys

import pytest

from gemmscope.app import gui_main


def _fifo(tmp_path):
    path = tmp_path / "live.jsonl"
    os.mkfifo(path)
    return path


def _planted_link(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)  # a sticky folder others may write, as /tmp
    victim = tmp_path / "victim.jsonl"
    victim.write_text("mine\n")
    link = shared / "live.jsonl"
    link.symlink_to(victim)
    return link


def _under_a_file(tmp_path):
    (tmp_path / "a_file").write_text("x")
    return tmp_path / "a_file" / "live.jsonl"


@pytest.mark.parametrize("make", [_fifo, _planted_link, _under_a_file])
def test_a_session_file_that_cannot_be_made_is_one_line_and_no_runner(
        make, tmp_path, fake_runner, capsys):
    path = make(tmp_path)
    shot = tmp_path / "shot.png"
    code = gui_main.main(["--runner", shlex.join([sys.executable, str(fake_runner)]),
                          "--session-file", str(path), "--screenshot", str(shot),
                          "--settings", str(tmp_path / "prefs.ini")])
    err = capsys.readouterr().err
    said = [ln for ln in err.splitlines() if ln.startswith("gemmscope:")]
    assert code == 0 and shot.exists()  # the window opened, on the bundled recording
    assert len(said) == 1 and "cannot record the live session" in said[0], err
    assert "Traceback" not in err
    if make is _planted_link:
        assert (tmp_path / "victim.jsonl").read_text() == "mine\n"


def test_a_sessions_folder_that_is_a_file_starts_nothing(make_window, tmp_path, fake_runner):
    window = make_window()
    (tmp_path / "a_file").write_text("x")
    window.prefs.settings.set("runner/sessions_dir", str(tmp_path / "a_file"))
    assert window.start_live("test", [sys.executable, str(fake_runner)]) is None
    assert window.live is None
    assert any("cannot record the live session" in t for t in window.messages.texts())
