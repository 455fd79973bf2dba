"""The animations' frame clock (app/views/frame_clock.py): its timers tick often enough
for a 60 Hz screen within Qt's millisecond accuracy, and a step animation eases from 0 to
1 over its duration, read from the time elapsed."""

from __future__ import annotations

from PySide6.QtCore import Qt

from gemmscope.app.views.frame_clock import (
    FRAME_TICK_MS,
    StepAnimation,
    frame_ticks,
    frame_timer,
)


def test_frame_timers_are_precise_and_a_tick_under_a_60hz_frame_even_a_ms_late(qtbot):
    timer = frame_timer()
    assert timer.timerType() == Qt.TimerType.PreciseTimer
    assert timer.interval() == FRAME_TICK_MS and FRAME_TICK_MS + 1 < 1000 / 60
    with qtbot.waitSignal(frame_ticks().ticked, timeout=1000):
        timer.start()
    timer.stop()


def test_a_step_animation_eases_from_0_to_1_and_ends_at_1(qtbot):
    seen: list[float] = []
    anim = StepAnimation(seen.append)
    anim.start(5_000)  # long: however late a tick comes, some fall in between
    assert seen == [0.0] and anim.is_running()
    qtbot.waitUntil(lambda: len(seen) >= 3, timeout=4000)
    anim.stop()
    assert all(0.0 < v < 0.5 for v in seen[1:3])  # eased: slow at first
    anim.start(50)
    qtbot.waitUntil(lambda: not anim.is_running(), timeout=2000)
    assert seen[-1] == 1.0 and seen.count(1.0) == 1
    assert seen == sorted(seen[:3]) + sorted(seen[3:])  # never backwards within a step


def test_a_step_animation_of_no_duration_is_at_1_at_once_and_stops_where_told(qtbot):
    seen: list[float] = []
    anim = StepAnimation(seen.append)
    anim.start(0)
    assert seen == [1.0] and not anim.is_running()
    anim.start(10_000)
    anim.stop()
    qtbot.wait(3 * FRAME_TICK_MS)
    assert seen == [1.0, 0.0] and not anim.is_running()
