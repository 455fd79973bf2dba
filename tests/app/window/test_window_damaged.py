"""The window on damaged recordings and its live start-up: what is readable is shown, the
first bad line is named, and --runner/--session-file/--watchdog-s start live mode."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from gemmscope.app import gui_main
from gemmscope.kernels.protocol import recording


def test_a_damaged_recording_shows_what_is_readable_and_names_the_first_bad_line(
        make_window, synthetic_file, tmp_path):
    lines = Path(synthetic_file).read_text().splitlines()
    damaged = tmp_path / "damaged.jsonl"
    bad_at = 5  # 1-based line number of the first bad line
    damaged.write_text("\n".join([*lines[:bad_at - 1], "{not json", *lines[bad_at - 1:],
                                  "[" * 100]) + "\n")
    window = make_window()
    assert window.open_recording(damaged)
    window.play_instant()
    good = recording.read_session(synthetic_file)
    assert len(window.store.results) == len(good.results)  # every readable result shown
    shown = window.messages.texts()
    assert any(f"damaged.jsonl:{bad_at}: not JSON" in t and "1 more" in t for t in shown)
    assert f"damaged.jsonl:{bad_at}" in window.statusBar().currentMessage()


def test_markup_in_a_catalog_is_shown_as_text(make_window, synthetic_file, tmp_path):
    lines = Path(synthetic_file).read_text().splitlines()
    header = json.loads(lines[0])
    entry = header["catalog"][0]
    entry["title"] = '<img src="/etc/hosts"><b>bold</b>'
    entry["adds"] = "<script>x</script>"
    hostile = tmp_path / "hostile.jsonl"
    hostile.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    window = make_window()
    assert window.open_recording(hostile)
    window.play_instant()
    window.select_level(entry["id"])
    detail = window.ladder.detail.text()
    assert "&lt;img src=&quot;/etc/hosts&quot;&gt;&lt;b&gt;bold&lt;/b&gt;" in detail
    assert "<img" not in detail and "<script>" not in detail


def test_runner_session_file_and_watchdog_start_live_without_a_local_gpu(
        tmp_path, fake_runner, capsys):
    """GEMMSCOPE_NO_GPU is set for every test: the named runner starts all the same."""
    session_file = tmp_path / "live.jsonl"
    shot = tmp_path / "live.png"
    runner = shlex.join([sys.executable, str(fake_runner)])
    code = gui_main.main(["--runner", runner, "--session-file", str(session_file),
                          "--watchdog-s", "5", "--screenshot", str(shot),
                          "--settings", str(tmp_path / "prefs.ini")])
    assert code == 0 and shot.exists()
    status = capsys.readouterr().out
    assert "status: live — runner `" in status and "fake_runner.py" in status
    first = json.loads(session_file.read_text().splitlines()[0])
    assert first["type"] == "session"  # the runner's header, recorded as it arrived
