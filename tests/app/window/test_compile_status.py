"""The status bar while a ladder's levels compile (issue 40 item 3): "compiling LEVEL at
SHAPE (i/n)" from the runner's ``phase`` ``compile`` event, then "running" once it
measures; a fake runner holds each compile until the test lets it go."""

from __future__ import annotations

import sys

import synthetic_session as syn

from gemmscope.kernels.ladder.shape import Shape


def test_the_status_bar_says_which_level_compiles_and_where_the_ladder_stands(
        qtbot, make_window, tmp_path, fake_runner, monkeypatch):
    gate = tmp_path / "gate"
    gate.mkdir()
    monkeypatch.setenv("FAKE_RUNNER_COMPILE_GATE", str(gate))
    window = make_window()
    path = window.start_live("Fake GPU", [sys.executable, str(fake_runner)],
                             tmp_path / "live.jsonl")
    window.controls.set_values(Shape(64, 64, 64), 3)
    window.run_ladder()
    levels = [lv.id for lv in window.store.ladder_levels()]
    n = len(levels)
    qtbot.waitUntil(lambda: window.run_label.text() ==
                    f"compiling {levels[0]} at 64×64×64 (1/{n})", timeout=20_000)
    (gate / levels[0]).touch()
    qtbot.waitUntil(lambda: window.run_label.text() ==
                    f"compiling {levels[1]} at 64×64×64 (2/{n})", timeout=20_000)
    with qtbot.waitSignal(window.live.idle, timeout=30_000):
        for level in levels[1:]:
            (gate / level).touch()
    assert window.run_label.text() == ""  # nothing running, nothing queued
    results = [e for e in syn.file_events(path) if e["type"] == "result"]
    assert len(results) == n
    assert all((r["compile_s"], r["compile_cached"]) == (1.5, False) for r in results)


def test_a_ladder_that_measures_says_running_and_its_place(qtbot, make_window, tmp_path,
                                                           fake_runner):
    window = make_window()
    window.start_live("Fake GPU", [sys.executable, str(fake_runner), "--mode", "slow"],
                      tmp_path / "live.jsonl")
    window.controls.set_values(Shape(64, 64, 64), 3)
    window.run_ladder()
    levels = [lv.id for lv in window.store.ladder_levels()]
    qtbot.waitUntil(lambda: window.run_label.text() ==
                    f"running {levels[0]} at 64×64×64 (1/{len(levels)})", timeout=20_000)
    with qtbot.waitSignal(window.live.idle, timeout=20_000):
        window.runs.stop()
