"""Small things a user meets: the help lists every command, a screenshot leaves the
preferences alone, closed panels come back from the View menu, and an empty Messages panel
takes no room."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from gemmscope.app import gui_args, gui_main
from gemmscope.kernels.cli.main import COMMANDS


def test_help_lists_every_subcommand(capsys):
    with pytest.raises(SystemExit):
        gui_main.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    for name in [*COMMANDS, "doctor", "replay"]:
        assert name in text, name


def test_a_screenshot_never_writes_the_users_preferences(tmp_path, monkeypatch,
                                                          synthetic_file):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    shot = tmp_path / "shot.png"
    assert gui_main.main(["replay", str(synthetic_file), "--screenshot", str(shot)]) == 0
    assert shot.exists()
    written = [p for p in tmp_path.rglob("*")
               if p.is_file() and p not in (shot, Path(synthetic_file))]
    assert written == []  # no gemmscope.conf anywhere under the user's folders


def _menu(window, title):
    menu = next(a.menu() for a in window.menuBar().actions() if a.text() == title)
    return {a.text().replace("&", ""): a for a in menu.actions()}


def test_a_closed_panel_comes_back_from_view_panels(make_window, qtbot):
    window = make_window()
    window.show()
    qtbot.waitExposed(window)
    panels = {a.text().replace("&", ""): a
              for a in _menu(window, "&View")["Panels"].menu().actions()}
    assert {"Ladder", "Run", "Messages", "Replay"} <= set(panels)
    window.ladder_dock.close()
    assert not window.ladder_dock.isVisible()
    panels["Ladder"].trigger()
    assert window.ladder_dock.isVisible()
    shortcuts = [a.text() for a in _menu(window, "&View")["Shortcuts"].menu().actions()]
    assert any(t.startswith("F11\t") for t in shortcuts)


def test_the_messages_panel_takes_no_room_until_there_is_a_message(make_window, qtbot,
                                                                   tmp_path):
    window = make_window()
    window.show()
    qtbot.waitExposed(window)
    assert window.messages.count() == 0 and not window.messages_dock.isVisible()
    assert not window.open_recording(tmp_path / "missing.jsonl")
    assert window.messages.count() == 1 and window.messages_dock.isVisible()


def test_the_window_is_on_screen_before_the_recording_is_read(make_window, qtbot,
                                                             synthetic_file, monkeypatch):
    # reading a recording in the background competes with the first paint for the GIL:
    # the source opens once the window is shown (issue #12: cold start)

    from PySide6.QtWidgets import QApplication

    window = make_window()
    seen = []
    opened = window.open_recording

    def open_recording(path, note="", background=False):
        seen.append((window.isVisible(), background))
        return opened(path, note, background)

    monkeypatch.setattr(window, "open_recording", open_recording)
    app = QApplication.instance()
    monkeypatch.setattr(app, "exec", lambda: qtbot.waitUntil(lambda: bool(seen)) or 0)
    args = gui_args.build_parser().parse_args(["replay", str(synthetic_file)])
    assert gui_main._run(app, window, args) == 0
    assert seen == [(True, True)]
    qtbot.waitUntil(lambda: window.replay is not None)  # and it is read


def test_the_app_takes_the_ssh_options_of_the_cli():
    """--remote, --remote-command and --ssh-option: one definition for the app and the
    CLI, so they take the same values with the same defaults."""
    from gemmscope.kernels.cli import main as cli

    def options(parser):
        return {a.dest: (a.option_strings, a.default, a.metavar, a.type, type(a))
                for a in parser._actions if a.dest in ("remote", "remote_command", "ssh_option")}

    bench = next(a for a in cli.build_parser()._actions
                 if isinstance(a, argparse._SubParsersAction)).choices["bench"]
    assert options(gui_args.build_parser()) == options(bench) and len(options(bench)) == 3
    argv = ["--remote", "gpu@box:2222", "--remote-command", "run it", "--ssh-option", "A=1"]
    app_args = gui_args.build_parser().parse_args(argv)
    cli_args = bench.parse_args(argv)
    assert [(a.remote, a.remote_command, a.ssh_option) for a in (app_args, cli_args)] == [
        ("gpu@box:2222", "run it", ["A=1"])] * 2


def test_info_events_open_no_panel_on_stage_or_in_a_replay_and_an_error_does(
        qtbot, make_window, tmp_path):
    """A replay's info lines wait in the Messages panel (closed); on stage too; an error
    opens it."""
    import synthetic_session as syn

    quiet = [e for e in syn.events() if e["type"] != "error"]
    quiet.insert(2, {"type": "info", "t": 0.01, "message": "ncu profiles naive"})
    for presentation in (False, True):
        window = make_window(tmp_path / f"prefs-{presentation}.ini")
        window.show()
        if presentation:
            window.set_presentation(True, full_screen=False)
        assert window.open_recording(str(syn.write(tmp_path / f"quiet-{presentation}.jsonl",
                                                   quiet)))
        window.play_instant()
        window.flush_views()
        assert window.messages.count() and not window.messages.has_errors()
        assert not window.messages_dock.isVisible(), presentation
    loud = make_window(tmp_path / "prefs-loud.ini")
    loud.show()
    assert loud.open_recording(str(syn.write(tmp_path / "loud.jsonl")))  # it has an error
    loud.play_instant()
    loud.flush_views()
    assert loud.messages.has_errors() and loud.messages_dock.isVisible()


def test_after_the_stage_every_plot_axis_title_is_in_the_normal_type(make_window):
    # plots made while on stage (a tab first shown there) resolved the stage's type from
    # the application font; leaving the stage must give them the normal type back
    import pyqtgraph as pg
    from PySide6.QtGui import QFont

    from gemmscope.app.theme import PRESENTATION

    window = make_window()
    window.show()
    window.set_presentation(True, full_screen=False)
    for i in range(window.tabs.count()):  # every tab made, on stage
        window.tabs.setCurrentIndex(i)
        window.flush_views()
    window.set_presentation(False, full_screen=False)
    window.flush_views()
    normal = QFont().pointSizeF()
    assert normal < PRESENTATION.font_pt
    titled = [(plot, name, plot.getPlotItem().getAxis(name))
              for plot in window.findChildren(pg.PlotWidget)
              for name in ("left", "bottom") if plot.getPlotItem().getAxis(name).labelText]
    assert len(titled) >= 5
    for plot, name, axis in titled:
        size = axis.labelStyle.get("font-size")
        shown = float(size.removesuffix("pt")) if size else axis.label.font().pointSizeF()
        assert shown < PRESENTATION.font_pt, (type(plot).__name__, name, axis.labelText)


def test_a_window_opened_on_stage_shows_its_chart_texts_in_the_normal_type_off_stage(
        make_window, tmp_path):
    # texts first styled on stage took the stage's type as their own, and kept it off
    # stage (the Charts tab's "not replayed yet" messages at 20 pt in the normal window)
    from gemmscope.app.plots.chart_base import Chart
    from gemmscope.app.theme import PRESENTATION

    window = make_window()
    window.set_presentation(True, full_screen=False)  # before any view was styled
    window.show()
    assert window.theme is PRESENTATION
    window.flush_views()
    window.set_presentation(False, full_screen=False)
    window.flush_views()
    charts = window.findChildren(Chart)
    assert len(charts) >= 3
    for chart in charts:
        assert chart.empty_text.textItem.font().pointSizeF() < PRESENTATION.font_pt, chart
