"""Only the tab on screen is redrawn per frame; a hidden tab catches up when shown, and
every tab when the window is flushed for a picture."""

from __future__ import annotations

import synthetic_session as syn

from gemmscope.app.core.store import Change
from gemmscope.kernels.protocol.decoding import of


def _spy(window):
    calls: dict[str, list[set[Change]]] = {name: [] for name in window.views}
    for name, view in window.views.items():
        original = view.refresh

        def record(changes, name=name, original=original):
            calls[name].append(set(changes))
            original(changes)

        view.refresh = record
    return calls


def test_a_hidden_tab_is_redrawn_when_shown(qtbot, make_window):
    window = make_window()
    window.show()
    window.handle(of(syn.header()))
    window.flush_views()
    window.named_widget("tiling")
    calls = _spy(window)
    ev = next(e for e in syn.events() if e["type"] == "result" and e["level"] == "naive")
    window.handle(of(ev))
    qtbot.waitUntil(lambda: any(Change.LADDER in c for c in calls["tiling"]))  # a frame
    assert calls["charts"] == [] and calls["code"] == []  # hidden: not redrawn
    window.named_widget("charts")  # shown: what it missed, at once
    assert len(calls["charts"]) == 1 and Change.LADDER in calls["charts"][0]
    assert window.views["charts"].bars.rows[0].level == ev["level"]
    window.named_widget("tiling")
    window.named_widget("charts")  # nothing new: no second redraw
    assert len(calls["charts"]) == 1


def test_a_flush_brings_every_tab_up_to_date(qtbot, make_window):
    window = make_window()
    window.show()
    window.handle(of(syn.header()))
    window.flush_views()
    calls = _spy(window)
    window.handle(of(next(e for e in syn.events() if e["type"] == "result")))
    window.flush_views()  # screenshots and exports draw hidden tabs too
    for name in window.views:
        assert calls[name] and Change.LADDER in calls[name][-1], name


def test_a_flush_of_the_shown_tab_leaves_the_hidden_ones_for_later(qtbot, make_window):
    window = make_window()
    window.show()
    window.handle(of(syn.header()))
    for ev in syn.events():
        if ev["type"] in ("build", "result"):
            window.handle(of(ev))
    window.flush_views()
    levels = window.level_ids()
    assert len(levels) >= 2
    window.named_widget("tiling")
    window.select_level(levels[0])
    window.flush_views()
    window.named_widget("banks")
    window.select_level(levels[1])
    window.flush_shown()
    assert window.views["banks"].canvas.level_id == levels[1]  # shown: up to date
    tiling = window.views.made["tiling"]  # (views[name] would pay it)
    assert tiling.canvas.level_id == levels[0]  # hidden: owed
    window.named_widget("tiling")  # and paid when shown
    assert tiling.canvas.level_id == levels[1]
