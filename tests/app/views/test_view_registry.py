"""The one table of views: each is a tab with a name for --view, and follows the level."""

from __future__ import annotations

from PySide6.QtCore import QElapsedTimer, QTimer

from gemmscope.app.views import registry
from gemmscope.app.window.redraw import RedrawThrottle


def test_every_view_in_the_table_is_a_tab_with_its_title(make_window):
    window = make_window()
    titles = [(window.tabs.tabText(i), window.tabs.tabToolTip(i))
              for i in range(window.tabs.count())]
    assert titles == [(spec.title, spec.tip) for spec in registry.VIEWS]
    window.flush_views()  # every view made (views of tabs not shown are made when needed)
    tabs = [(window.tabs.widget(i).objectName(), window.tabs.tabText(i))
            for i in range(window.tabs.count())]
    assert tabs == [(f"view_{spec.name}", spec.title) for spec in registry.VIEWS]
    assert all(spec.name in window.view_names() for spec in registry.VIEWS)


def _followers(window, monkeypatch) -> dict[str, list[str]]:
    """Each view's set_level calls, by view name, from now on."""
    followed: dict[str, list[str]] = {}
    for spec in registry.VIEWS:
        view = window.named_widget(spec.name)
        got = followed.setdefault(spec.name, [])
        monkeypatch.setattr(view, "set_level", lambda level_id, got=got: got.append(level_id))
    return followed


def test_the_shown_view_follows_the_level_at_once_and_each_hidden_one_when_shown(
        make_window, synthetic_file, monkeypatch):
    window = make_window()
    followed = _followers(window, monkeypatch)
    window.open_recording(synthetic_file)
    window.play_instant()
    assert window.view_state.state.level != "register_2d"
    assert window.select_level("register_2d")
    shown = next(s.name for s in registry.VIEWS if window.views.is_made(s.name)
                 and window.views.made[s.name] is window.tabs.currentWidget())
    assert followed[shown][-1] == "register_2d"
    hidden = [name for name in followed if name != shown]
    # a level switch pays for the tab on screen only
    assert all("register_2d" not in followed[name] for name in hidden)
    for name in hidden:
        window.named_widget(name)
        assert followed[name][-1] == "register_2d", name


def test_every_view_follows_the_level_before_a_screenshot(make_window, synthetic_file,
                                                          monkeypatch):
    window = make_window()
    followed = _followers(window, monkeypatch)
    window.open_recording(synthetic_file)
    window.play_instant()
    assert window.select_level("register_2d")
    window.flush_views()  # what a screenshot, an export and the gallery do first
    assert {name: levels[-1] for name, levels in followed.items()} == {
        spec.name: "register_2d" for spec in registry.VIEWS}


def test_an_unknown_level_is_not_selected(make_window, synthetic_file):
    window = make_window()
    window.open_recording(synthetic_file)
    window.play_instant()
    assert not window.select_level("no_such_level")


def test_throttle_coalesces_pokes_into_a_bounded_rate(qtbot):
    calls = []
    pokes = []
    throttle = RedrawThrottle(lambda: calls.append(1), interval_ms=50)
    poker = QTimer()
    poker.timeout.connect(lambda: (pokes.append(1), throttle.poke()))
    clock = QElapsedTimer()
    clock.start()
    poker.start(1)  # pokes up to 1000 times a second
    qtbot.wait(500)
    poker.stop()
    throttle.stop()
    elapsed_ms = clock.elapsed()
    assert len(pokes) > 3 * len(calls)  # many pokes folded into few redraws
    assert 3 <= len(calls) <= elapsed_ms / 50 + 2  # never more than one per interval
