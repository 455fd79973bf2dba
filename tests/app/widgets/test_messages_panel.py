"""The messages list follows its store: new lines added, and the newest line shown again
where the store folded a message into it (runner starts in a row)."""

from __future__ import annotations

import synthetic_session as syn

from gemmscope.app.core.store import SessionStore
from gemmscope.app.widgets.messages_panel import MessagesPanel
from gemmscope.kernels.protocol.decoding import of
from gemmscope.kernels.protocol.timeline import Timeline


def _feed(store: SessionStore, line: Timeline, events) -> None:
    for ev in events:
        store.handle(line.place(of(ev)))


def test_starts_in_a_row_stay_one_line_that_the_list_updates_in_place(qtbot):
    panel = MessagesPanel()
    qtbot.addWidget(panel)
    store, line = SessionStore(), Timeline()
    events = syn.events()
    _feed(store, line, [*events, dict(events[0], t=0.0)])
    panel.sync(store)
    n = panel.count()  # the synthetic session's own lines, then the start
    assert "(1 so far)" in panel.texts()[-1]
    panel.append("a note of the app's own", False)  # not the store's: left as it is
    _feed(store, line, [dict(events[0], t=0.0), dict(events[0], t=0.0)])
    panel.sync(store)
    texts = panel.texts()
    assert panel.count() == n + 1
    assert "3 times in a row" in texts[n - 1] and "(3 so far)" in texts[n - 1]
    assert texts[n - 1].startswith("ℹ ") and texts[n] == "ℹ a note of the app's own"
    _feed(store, line, [{"type": "error", "t": 1.0, "kind": "build", "message": "bad",
                         "level": "naive", "M": 64, "N": 64, "K": 64},
                        dict(events[0], t=0.0)])
    panel.sync(store)
    texts = panel.texts()
    assert len(texts) == n + 3 and "3 times in a row" in texts[n - 1]
    assert texts[n + 1].startswith("⚠ ") and "(4 so far)" in texts[n + 2]
