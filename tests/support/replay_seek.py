"""Seeking a window's replay in a test, every due event delivered before it goes on.

A seek delivers what one tick's budget allows (app/sources/replay.py, TICK_BUDGET_S) and
the replay's timer the rest; a test that seeks and reads the views at once reads them
half fed when the machine is loaded (CI with every core busy). ``seek_whole`` catches the
replay up before the views are brought up to date."""

from __future__ import annotations

from typing import Any


def seek_whole(window: Any, t: float) -> None:
    replay = window.replay
    replay.seek(t)
    while replay.clock.behind:
        replay.clock.catch_up()
    window.flush_views()
