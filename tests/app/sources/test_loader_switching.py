"""While a recording is read on its worker thread, the GUI thread's waits for the GIL are
short (app/sources/replay.py: fine_thread_switching)."""

from __future__ import annotations

import sys

import pytest

pytest.importorskip("PySide6")

from gemmscope.app.sources import replay


def test_reading_lowers_the_switch_interval_and_restores_it_after_the_last_reader():
    before = sys.getswitchinterval()
    try:
        sys.setswitchinterval(0.004)
        with replay.fine_thread_switching():
            assert sys.getswitchinterval() == pytest.approx(replay.READ_SWITCH_INTERVAL_S)
            with replay.fine_thread_switching():  # a second reader at the same time
                assert sys.getswitchinterval() == pytest.approx(replay.READ_SWITCH_INTERVAL_S)
            # the first reader still runs: still fine
            assert sys.getswitchinterval() == pytest.approx(replay.READ_SWITCH_INTERVAL_S)
        assert sys.getswitchinterval() == pytest.approx(0.004)
    finally:
        sys.setswitchinterval(before)


def test_a_reader_that_fails_restores_the_switch_interval(tmp_path, qtbot):
    before = sys.getswitchinterval()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    loader = replay.RecordingLoader(bad)
    with qtbot.waitSignal(loader.failed, timeout=10_000) as failed:
        loader.start()
    loader.wait(10.0)
    assert "bad.jsonl" in failed.args[0]
    assert sys.getswitchinterval() == pytest.approx(before)
