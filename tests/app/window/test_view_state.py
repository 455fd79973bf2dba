"""One view state: the shape, level, mode, GPU and step the person chose, which every
table, chart, caption and export follows; a replay adds shapes to the selector but never
changes the chosen one; the command line sets it."""

from __future__ import annotations

import csv
import io

import numpy as np
import places
import pytest
import synthetic_session as syn
from PySide6.QtCore import QPointF, Qt
from replay_seek import seek_whole

from gemmscope.app import gui_main
from gemmscope.app.core import export
from gemmscope.app.core.store import SessionStore
from gemmscope.app.core.view_state import (
    DEFAULT_SHAPE,
    ViewState,
    ViewStateModel,
    default_shape,
    shape_text,
)
from gemmscope.app.window.main_window import bundled_session
from gemmscope.kernels.ladder.shape import Shape
from gemmscope.kernels.protocol.decoding import of
from gemmscope.kernels.protocol.events import dumps
from gemmscope.kernels.results.rows import tflops_text

BIG = Shape(8192, 8192, 8192)
SYN = Shape(*syn.SHAPE)


# ------------------------------------------------------------------ the model (no Qt)
def test_the_model_tells_each_change_once_and_refuses_what_it_cannot_hold():
    model = ViewStateModel()
    heard: list[tuple[ViewState, ViewState]] = []
    model.subscribe(lambda before, after: heard.append((before, after)))
    assert model.set(shape=BIG, level="naive")
    assert not model.set(shape=BIG)  # the same: nobody hears of it
    assert len(heard) == 1 and heard[0][1] == ViewState(shape=BIG, level="naive")
    assert model.set(mode="sustained") and str(model.state.mode) == "sustained"
    for bad in ({"mode": "warm"}, {"device": -1}, {"step": -2}, {"shape": "4096"},
                {"colour": "red"}):
        with pytest.raises(ValueError):
            model.set(**bad)
    assert len(heard) == 2


def test_the_default_shape_is_4096_where_present_else_the_most_complete():
    small, odd = Shape(512, 512, 512), Shape(1000, 999, 1001)
    assert default_shape({small: 20, DEFAULT_SHAPE: 3, BIG: 20}) == DEFAULT_SHAPE
    assert default_shape({small: 20, BIG: 5, odd: 20}) == odd  # a tie: the larger
    assert default_shape({small: 20, odd: 20}) == default_shape({odd: 20, small: 20})
    assert default_shape({}) is None


def test_the_store_answers_for_the_state_not_for_the_latest_shape():
    store = SessionStore()
    for ev in syn.events():
        store.handle(of(ev))
    assert store.ladder_shape() == SYN  # the default: the synthetic ladder is at 4096³
    store.view.set(shape=BIG)
    assert store.ladder_result("register_2d").tflops == syn.SWEEP[8192]
    assert store.ladder_result("naive") is None  # no other shape stands in
    rows = list(csv.DictReader(io.StringIO(export.ladder_csv(store))))
    assert [r["level"] for r in rows] == ["register_2d"] and rows[0]["M"] == "8192"
    assert len(list(csv.DictReader(io.StringIO(export.results_csv(store))))) == \
        len(store.results)


# ------------------------------------------------------------------ the window
@pytest.fixture
def replayed(make_window, synthetic_file):
    window = make_window()
    assert window.open_recording(synthetic_file)
    window.play_instant()
    window.show()
    window.flush_views()
    return window


def test_a_replay_adds_shapes_but_never_changes_the_chosen_one(qtbot, make_window):
    path = bundled_session()
    assert path is not None
    window = make_window()
    titles: set[str] = set()
    shapes: set[Shape | None] = set()
    window.view_state_changed.connect(lambda _b, after: shapes.add(after.shape))
    assert window.open_recording(path)
    assert window.view_state.state.shape == DEFAULT_SHAPE  # chosen before any result
    window.show()
    replay = window.replay
    offered = []
    for fraction in np.linspace(0.02, 1.0, 25):  # the first-start replay, in steps
        seek_whole(window, replay.duration_s * fraction)
        titles.add(window.charts()["bars"].base_title)
        offered.append(len(window.ladder.shape_texts()))
    assert shapes <= {DEFAULT_SHAPE}
    assert {t.split(" at ")[-1] for t in titles if " at " in t} == {"4096³, burst"}
    assert offered[-1] >= 6 and offered == sorted(offered)  # shapes join the selector
    assert window.ladder.shape_box.currentText() == "4096³"


def test_the_shape_selector_and_keys_change_every_table_and_chart(qtbot, replayed):
    window = replayed
    box = window.ladder.shape_box
    texts = window.ladder.shape_texts()
    assert shape_text(BIG) in texts and box.currentText() == shape_text(SYN)
    box.activated.emit(texts.index(shape_text(BIG)))
    window.flush_views()
    assert window.view_state.state.shape == BIG
    assert window.ladder.cell_text("register_2d", "TFLOPS") == tflops_text(syn.SWEEP[8192])
    assert window.ladder.cell_text("naive", "TFLOPS") == "–"
    bars = window.charts()["bars"]
    assert [r.level for r in bars.rows] == ["register_2d"]
    assert bars.base_title.endswith(f"at {shape_text(BIG)}, burst")
    window.ladder.table.setFocus()
    qtbot.keyClick(window.ladder.table, Qt.Key.Key_BracketLeft)
    window.flush_views()
    assert window.view_state.state.shape == SYN  # the next smaller shape with results
    qtbot.keyClick(window.ladder.table, Qt.Key.Key_M)
    assert str(window.view_state.state.mode) == "sustained"
    window.flush_views()
    assert window.ladder.mode_box.currentText() == "sustained"
    assert window.charts()["bars"].base_title.endswith("sustained")


def test_clicking_a_bar_selects_its_level(qtbot, replayed):
    window = replayed
    window.named_widget("charts")
    window.flush_views()
    bars = window.charts()["bars"]
    qtbot.waitExposed(bars)
    levels = [r.level for r in bars.rows]
    i = levels.index("warp_tiling")
    vb = bars.getPlotItem().vb
    (_, _), (y0, y1) = vb.viewRange()
    scene = vb.mapViewToScene(QPointF(i, y0 + 0.1 * (y1 - y0)))
    pos = bars.mapFromScene(scene)
    qtbot.mouseClick(bars.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    qtbot.waitUntil(lambda: window.view_state.state.level == "warp_tiling", timeout=3000)
    assert window.ladder.selected_level() == "warp_tiling"


def test_the_per_repeat_chart_follows_the_selected_level_and_shape(replayed):
    window = replayed
    stream = window.charts()["stream"]
    assert window.select_level("coalesced")
    window.flush_views()
    run = window.store.shown_stream()
    assert run is not None and run.level == "coalesced" and run.shape == SYN
    assert np.array_equal(stream.shown[1], run.arrays()[1])
    assert "coalesced at 4096³" in stream.base_title
    last = window.store.stream  # the last run recorded is another one
    assert (last.level, last.shape) != ("coalesced", SYN)
    # integer repeats on the x axis, and no TFLOPS below zero on the y axis
    axis = stream.getPlotItem().getAxis("bottom")
    (x0, x1), (y0, _y1) = stream.getPlotItem().vb.viewRange()
    ticks = [v for _s, values in axis.tickValues(x0, x1, 400) for v in values]
    assert ticks and all(float(v).is_integer() for v in ticks)
    assert y0 >= 0
    window.choose(level="naive", shape=BIG)
    window.flush_views()
    assert stream.empty and "naive at 8192³ (burst)" in stream.empty_text.toPlainText()


def test_exports_follow_the_view_state(replayed, tmp_path):
    window = replayed
    window.choose(shape=BIG, level="register_2d")
    md = window.export_report(tmp_path / "ladder.md").read_text()
    assert "Shown: 8192³, burst" in md
    # (a recording's text is escaped in Markdown, an underscore too: it renders as itself)
    assert "| register\\_2d | FP32 | 8192×8192×8192 |" in md
    assert "| naive | FP32 | – |" in md  # no 4096³ number stands in for 8192³
    assert "GPUs side by side" not in md and not (tmp_path / "ladder-devices.png").exists()
    rows = list(csv.DictReader(io.StringIO(window.export_csv(tmp_path / "l.csv")
                                           .read_text())))
    assert [(r["level"], r["M"]) for r in rows] == [("register_2d", "8192")]
    every = window.export_csv(tmp_path / "all.csv", every=True).read_text()
    assert len(every.strip().splitlines()) == len(window.store.results) + 1


def test_the_command_line_sets_the_view_state(synthetic_file, tmp_path):
    out = tmp_path / "r.md"
    assert gui_main.main(["replay", str(synthetic_file), "--export", str(out),
                          "--shape", "8192", "--level", "register_2d"]) == 0
    assert "Shown: 8192³, burst" in out.read_text()
    csv_out = tmp_path / "r.csv"
    assert gui_main.main(["replay", str(synthetic_file), "--export", str(csv_out),
                          "--shape", "4096", "--mode", "burst"]) == 0
    assert len(csv_out.read_text().strip().splitlines()) == 1 + len(syn.LADDER_TFLOPS) + \
        len(syn.REFERENCE_TFLOPS)
    png = tmp_path / "t.png"
    assert gui_main.main(["replay", str(synthetic_file), "--export", str(png), "--chart",
                          "tiling", "--level", "register_2d", "--step", "3"]) == 0


def test_the_command_line_refuses_a_shape_the_session_lacks(synthetic_file, tmp_path,
                                                            capsys):
    assert gui_main.main(["replay", str(synthetic_file), "--screenshot",
                          str(tmp_path / "x.png"), "--shape", "777"]) == 2
    assert "no ladder results at 777³" in capsys.readouterr().err
    assert gui_main.main(["replay", str(synthetic_file), "--screenshot",
                          str(tmp_path / "x.png"), "--tab", "charts", "--step", "2"]) == 2
    assert "--step" in capsys.readouterr().err


def test_repeats_export_follows_the_chosen_level(make_window, synthetic_file, tmp_path):
    window = make_window()
    window.choose(level="warp_tiling")
    assert window.open_recording(synthetic_file)
    window.play_instant()
    window.show()
    window.export_named(tmp_path / "r.png", "repeats")
    stream = window.charts()["stream"]
    assert "warp_tiling at 4096³" in stream.base_title
    run = window.store.shown_stream()
    assert run is not None and run.level == "warp_tiling"


def test_a_live_run_selects_its_shape_only_when_asked(qtbot, make_window, tmp_path,
                                                      fake_runner):
    import sys

    window = make_window()
    cmd = [sys.executable, str(fake_runner), "--state", str(tmp_path / "state")]
    window.start_live("Fake GPU", cmd, tmp_path / "live.jsonl")
    window.choose(shape=SYN, level="naive", pin=False)
    window.controls.set_values(Shape(64, 32, 16), 3)
    with qtbot.waitSignal(window.live.idle, timeout=20_000):
        window.run_selected()
    window.flush_views()
    assert window.view_state.state.shape == Shape(64, 32, 16)
    assert window.ladder.cell_text("naive", "TFLOPS") != "–"
    # a run the person did not ask for (here: another source's results) leaves it
    window.handle(of({"type": "result", "t": 99.0, "level": "naive", "M": 128, "N": 128,
                      "K": 128, "dtype": "fp32", "median_ms": 1.0, "tflops": 1.0,
                      "verified": True, "rel_err": 0.0, "repeats": 3}))
    window.flush_views()
    assert window.view_state.state.shape == Shape(64, 32, 16)


def test_a_one_gpu_report_has_no_side_by_side_chart_and_two_gpus_have(make_window,
                                                                      tmp_path):
    two = places.SESSIONS / "h200x2-ladder.jsonl.gz"
    window = make_window()
    assert window.open_recording(two)
    window.play_instant()
    window.show()
    md = window.export_report(tmp_path / "two.md").read_text()
    assert "GPUs side by side" in md
    devices = window.charts()["devices"]
    window.views["charts"].set_log_axis(True)
    assert devices.log_axis and "log" in devices.getPlotItem().getAxis("left").labelText
    drawn = devices.drawn_values()
    assert np.allclose(np.sort(drawn), np.sort(devices.values()), rtol=1e-6)
    window.views["charts"].set_log_axis(False)
    assert not devices.log_axis


def test_a_recording_without_4096_opens_on_its_most_complete_shape(make_window, tmp_path):
    events = [e for e in syn.events()
              if not (e["type"] in ("result", "run_start", "repeat", "done")
                      and (e.get("M"), e.get("N"), e.get("K")) == syn.SHAPE)]
    path = tmp_path / "no4096.jsonl"
    path.write_text("".join(dumps(e) + "\n" for e in events), encoding="utf-8")
    window = make_window()
    assert window.open_recording(path)
    # every remaining shape has register_2d alone: a tie, the larger
    assert window.view_state.state.shape == BIG


def test_a_step_from_the_command_line_waits_for_the_level(make_window, synthetic_file):
    window = make_window()
    window.named_widget("tiling")  # as `gemmscope replay FILE --tab tiling --step 4`
    window.step_once_ready(3)
    assert window.open_recording(synthetic_file)
    window.play_instant()  # the header chooses the first level: the step comes after
    canvas = window.views["tiling"].canvas
    assert canvas.step == 3 and window.view_state.state.step == 3
    assert window.view_state.state.level == "naive"


def test_the_app_refuses_a_tab_it_does_not_have(synthetic_file, capsys):
    assert gui_main.main(["replay", str(synthetic_file), "--tab", "tilling"]) == 2
    assert "no view called 'tilling'" in capsys.readouterr().err
