"""The Timeline view (issue 46 item 3): a measured trace drawn on SM lanes under the model's
animation of the same level; it follows the view state, zooms to one SM, names what the
pointer is on, and exports PNG, SVG and Chrome trace JSON. The trace here is synthetic
(the model's schedule, invented timings), fed in as a measured one would be."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import QSize

from gemmscope.app.core import trace_timeline as tt
from gemmscope.app.core.store import Change, SessionStore
from gemmscope.app.views.timeline import TimelineView
from gemmscope.app.views.timeline_canvas import PHASE_COLOURS, tile_colour
from gemmscope.kernels.ladder import registry
from gemmscope.kernels.ladder.shape import Shape
from gemmscope.kernels.models import trace_schedule
from gemmscope.kernels.protocol import decoding

SHAPE = Shape(1024, 2048, 512)
BUNDLED = (Path(__file__).resolve().parents[3] / "resources" / "sessions"
           / "h200-ladder.jsonl.gz")


def _measured(level_id: str, shape: Shape, sms: int = 132):
    model = trace_schedule.schedule(registry.get(level_id), shape.M, shape.N, shape.K, sms)
    event = trace_schedule.synthetic_trace(model, sms, seed=7)
    event["synthetic"] = False  # as the trace build's event: measured
    event["overhead_pct"] = 1.5
    return decoding.of(event)


def _shown(qtbot, trace, level_id: str, shape: Shape) -> TimelineView:
    """The Timeline view of ``trace`` at 1280x720, painted: the canvas lists what it drew."""
    store = SessionStore()
    store.handle(trace)
    store.view.set(shape=shape)
    v = TimelineView()
    qtbot.addWidget(v)
    v.bind(store)
    v.set_level(level_id)
    v.set_animated(False)
    v.resize(1280, 720)
    v.show()
    qtbot.waitExposed(v)
    v.canvas.grab()
    return v


@pytest.fixture
def view(qtbot):
    return _shown(qtbot, _measured("wgmma_stream_k", SHAPE), "wgmma_stream_k", SHAPE)


def test_the_measured_trace_of_the_level_and_shape_is_drawn_and_said(view):
    assert view.title.text().startswith(f"Measured by the trace build: wgmma_stream_k {SHAPE}")
    assert "+1.5% over plain" in view.title.text()
    tl = view.timeline
    assert len(view.canvas.drawn_pieces) == len(tl.pieces) > 0
    assert view.canvas.drawn_idle == tl.idle_sms  # 8 x 8 tiles: 132 blocks, none idle
    # the model's animation above is the same level
    assert view.animation() is view.model.canvas and view.model.canvas.level_id == \
        "wgmma_stream_k"


def test_each_piece_is_painted_in_its_tiles_colour_at_its_sm_and_time(view):
    img = view.canvas.image(QSize(1280, 1100))  # 8 px an SM: every piece has a middle
    checked = 0
    for rect, piece in view.canvas.drawn_pieces:
        if rect.width() >= 4 and rect.height() >= 3:
            c = img.pixelColor(rect.center().toPoint())
            assert c.name() == tile_colour(piece.tile, piece.wave).name(), piece
            checked += 1
    assert checked == len(view.timeline.pieces)


@pytest.mark.parametrize("tail_px", [2.0, 8.0, 60.0])
def test_the_word_tail_stays_whole_inside_the_canvas_however_short_the_tail(view, tail_px):
    """A launch whose last SM ran out of work just before the end has a tail a few pixels
    wide at the canvas's right edge: its word is drawn whole inside the canvas, as far
    right as it fits, and above the tail's start where there is room."""
    import dataclasses

    canvas = view.canvas
    tl = canvas.timeline
    plot_w = canvas.width() - canvas.LEFT - canvas.RIGHT
    start = tl.makespan_ns - int(tl.makespan_ns * tail_px / plot_w)
    canvas.set_timeline(dataclasses.replace(tl, tail_start_ns=start), None)
    canvas.grab()
    tail, label = canvas.drawn_tail, canvas.drawn_tail_label
    assert tail is not None and label is not None
    word = canvas.fontMetrics().horizontalAdvance("tail")
    assert 0 <= label.left() and label.right() <= canvas.width()
    assert label.width() >= word
    if tail.left() + 2 + word <= canvas.width():  # room above the tail's start
        assert label.left() == pytest.approx(tail.left() + 2)


def test_hover_names_block_tile_sm_and_times(view):
    rect, piece = max(view.canvas.drawn_pieces, key=lambda rp: rp[0].width())
    text = view.canvas.text_at(rect.center())
    assert text.startswith(f"block {piece.block} · tile {piece.tile}")
    assert f"SM {piece.sm}" in text and "µs" in text


def test_zoom_to_an_sm_draws_its_lanes_phases(view):
    sm = view.timeline.sms_with_phases()[0]
    view.zoom(sm)
    view.canvas.grab()
    spans = view.canvas.drawn_spans
    assert spans and {s.block for _, s in spans} <= {
        b for b, (s_, _, _) in view.timeline.block_spans.items() if s_ == sm}
    assert view.canvas.drawn_rows[:3] == [f"b{spans[0][1].block} producer",
                                          f"b{spans[0][1].block} consumer 1",
                                          f"b{spans[0][1].block} consumer 2"]
    img = view.canvas.grab().toImage()
    rect, span = max(spans, key=lambda rs: rs[0].width())
    assert img.pixelColor(rect.center().toPoint()).name() == PHASE_COLOURS[span.phase]
    assert view.canvas.text_at(rect.center()).startswith(f"SM {sm} · block {span.block}")


def test_a_zoomed_block_of_one_lane_is_named_by_its_number_whole_in_the_gutter(qtbot):
    # register_2d records from thread 0 of each block: its zoomed rows are the blocks that
    # ran on the SM, "b924", not "924 block (threa…" cut at both ends (stretch 20)
    v = _shown(qtbot, _measured("register_2d", SHAPE), "register_2d", SHAPE)
    sm = v.timeline.sms_with_phases()[0]
    v.zoom(sm)
    v.canvas.grab()
    blocks = [b for b, _ in v.timeline.lanes_of(sm)]
    assert blocks and v.canvas.drawn_rows == [f"b{b}" for b in blocks]
    metrics = v.canvas.fontMetrics()
    assert all(metrics.horizontalAdvance(name) <= v.canvas.LEFT - 6
               for name in v.canvas.drawn_rows)


def test_the_view_follows_the_view_state_shape_and_says_when_no_trace_was_measured(
        view, monkeypatch):
    from gemmscope.app.views import timeline

    # every ladder level has a trace build; smem_tiled here stands for a level without one
    # (a user's kernel, or a checkout before its trace build)
    monkeypatch.setattr(timeline, "traceable_id", lambda level_id: level_id != "smem_tiled")
    other = Shape(512, 512, 256)
    view.store.view.set(shape=other)
    view.refresh({Change.LADDER})
    # the recording's trace is of another shape: it is shown, and the title says so
    assert f"(the shape chosen is {other})" in view.title.text()
    assert view.set_level("wgmma_tma")  # a traced level with no measured trace: synthetic
    assert view.title.text().startswith(f"SYNTHETIC, not measured (the model's schedule, "
                                        f"invented times): wgmma_tma {other}")
    assert view.timeline.trace.M == 512
    assert view.set_level("smem_tiled")  # no trace build: its model, and why no timeline
    assert view.timeline is None and "no timeline" in view.title.text()
    assert "no trace build" in view.canvas.empty_text  # said once, in the lanes' room
    assert "no trace build" not in view.title.text()
    assert view.model_title.text() == f"the model says (smem_tiled, {other})"  # no dangling ':'
    # nothing to zoom into or export: the controls wait for a timeline
    assert not any(w.isEnabled() for w in (view.zoom_box, view.png_button,
                                           view.svg_button, view.json_button))
    assert view.model.canvas.level_id == "smem_tiled"
    assert view.set_level("wgmma_tma")
    assert all(w.isEnabled() for w in (view.zoom_box, view.png_button, view.svg_button,
                                       view.json_button))
    assert view.zoom_box.count() >= 1 and view.zoom_box.itemText(0) == "all SMs"


def test_a_level_without_k_stages_is_said_to_record_none_not_to_sample_them(view):
    shape = Shape(512, 512, 256)
    model = trace_schedule.schedule(registry.get("naive"), shape.M, shape.N, shape.K, 132)
    event = trace_schedule.synthetic_trace(model, 132, seed=3)
    event.update(synthetic=False, stage_every=64)  # as the bundled naive trace says
    view.store.handle(decoding.of(event))
    view.store.view.set(shape=shape)
    view.refresh({Change.LADDER})
    assert view.set_level("naive")
    notes = view.notes.text()
    assert "no K steps recorded" in notes and "sampled" not in notes
    assert "the whole tile (no K steps recorded) 100%" in notes


def test_exports_png_svg_and_perfetto_json(view, tmp_path):
    from PySide6.QtGui import QImage

    png = view.export(tmp_path / "t.png")
    assert QImage(str(png)).size() == QSize(1280, 720)
    svg = view.export(tmp_path / "t.svg").read_text()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg and "SM 0" in svg
    doc = json.loads(view.export(tmp_path / "t.json").read_text())
    assert len([e for e in doc["traceEvents"] if e["ph"] == "X" and e["cat"] == "tile"]) == \
        len(view.timeline.pieces)
    assert doc["otherData"]["measured"] is True
    with pytest.raises(ValueError, match=r"\.png, \.svg or \.json"):
        view.export(tmp_path / "t.txt")


def test_a_hidden_timeline_makes_no_trace_until_it_is_shown(qtbot, monkeypatch):
    # every level change reaches every view; a synthetic trace costs a fifth of a second
    # on the GUI thread, so the hidden tab leaves it to its showEvent
    made: list[tuple[str, Shape]] = []
    real = tt.synthetic

    def counting(level_id, shape):
        made.append((level_id, shape))
        return real(level_id, shape)

    monkeypatch.setattr(tt, "synthetic", counting)
    store = SessionStore()
    store.view.set(shape=SHAPE)
    v = TimelineView()
    qtbot.addWidget(v)
    v.bind(store)
    for level in ("wgmma_tma", "mma_tma", "wgmma_stream_k"):
        assert v.set_level(level)
    assert made == [] and v.trace is None
    v.resize(1280, 720)
    v.show()
    qtbot.waitExposed(v)
    assert made == [("wgmma_stream_k", SHAPE)]
    assert v.trace is not None and v.trace.synthetic
    assert v.title.text().startswith("SYNTHETIC, not measured") and \
        f"wgmma_stream_k {SHAPE}" in v.title.text()


def test_going_back_to_a_level_shows_its_timeline_without_building_it_again(view,
                                                                           monkeypatch):
    built: list[str] = []
    real = tt.build

    def counting(trace):
        built.append(trace.level)
        return real(trace)

    monkeypatch.setattr(tt, "build", counting)
    first = view.timeline
    for level in ("wgmma_tma", "wgmma_stream_k", "wgmma_tma", "wgmma_stream_k"):
        assert view.set_level(level)
    assert built == ["wgmma_tma"]  # wgmma_stream_k's was built when the view opened
    assert view.timeline is first


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)])
def test_on_stage_the_timeline_keeps_its_lanes_its_status_word_and_whole_tick_labels(
        qtbot, make_window, size):
    from PySide6.QtWidgets import QApplication, QLabel

    from gemmscope.app.views.timeline import MIN_LANES_PX

    window = make_window()
    assert window.open_recording(str(BUNDLED))
    window.set_animated(False)
    window.play_instant()
    window.set_presentation(True, full_screen=False)
    window.resize(*size)
    window.show()
    qtbot.waitExposed(window)
    window.select_level("wgmma_stream_k")
    view = window.views["timeline"]
    window.tabs.setCurrentWidget(view)
    for _ in range(3):
        QApplication.processEvents()
        window.flush_views()
    canvas = view.canvas
    lanes = canvas.height() - canvas.TOP - canvas.BOTTOM
    assert lanes >= MIN_LANES_PX, (lanes, canvas.height())
    # the status word leads the title, and the title shows it (the export buttons are
    # the desk's: hidden on stage)
    assert not view.png_button.isVisible() and not view.json_button.isVisible()
    word = "SYNTHETIC," if view.trace.synthetic else "Measured by"
    assert view.title.text().startswith(word)
    assert QLabel.text(view.title).startswith(word)  # what the label shows, cut or not
    canvas.grab()
    ticks = canvas.drawn_ticks
    assert len(ticks) >= 2
    metrics = canvas.fontMetrics()
    total_us = canvas.timeline.makespan_ns / 1000
    plot_w = canvas.width() - canvas.LEFT - canvas.RIGHT
    # the labels' centres are a tick apart; each is narrower than that, with a gap
    step = float(ticks[1].split()[0]) - float(ticks[0].split()[0])
    assert plot_w * step / total_us >= max(metrics.horizontalAdvance(t) for t in ticks) + 12


def test_the_notes_give_the_sm_clock_the_launch_ran_at_from_its_own_clocks(view):
    """A traced launch's slope of %globaltimer over clock64 is the SM clock inside it: the
    bundled wgmma_tma trace ran at about 1570 MHz while NVML said 1980 around its pairs."""
    store = view.store
    event = trace_schedule.synthetic_trace(
        trace_schedule.schedule(registry.get("mma_tma"), SHAPE.M, SHAPE.N, SHAPE.K, 132), 132,
        seed=5)
    event.update(synthetic=False, ns_per_cycle=1000.0 / 1650.0)  # 1650 MHz
    store.handle(decoding.of(event))
    view.refresh({Change.TRACE})
    assert view.set_level("mma_tma")
    assert "SM clock in the launch 1650 MHz (clock64 over %globaltimer)" in view.notes.text()


@pytest.mark.parametrize("slope, mhz", [(0.50505, 1980.0), (1.0, 1000.0), (None, None),
                                        (0.0, None), (float("nan"), None), (10.0, None),
                                        (0.1, None)])
def test_a_launch_clock_is_said_only_where_the_slope_is_a_clock(slope, mhz):
    got = tt.launch_clock_mhz(slope)
    assert (got is None) if mhz is None else abs(got - mhz) < 0.5


def test_every_measured_bundled_trace_says_its_launch_clock_within_a_gpus_range():
    """The H200's traces: the SIMT levels at 1980 MHz, the Tensor Core ones lower
    (their launches' SMs slowed while NVML's samples between launches said 1980)."""
    from gemmscope.kernels.protocol import recording
    from gemmscope.kernels.protocol import records as rec

    traces = [e for e in recording.read_session(BUNDLED, only=(rec.Trace,)).events
              if isinstance(e, rec.Trace) and not e.synthetic]
    clocks = {t.level: tt.launch_clock_mhz(t.ns_per_cycle) for t in traces}
    assert len(clocks) >= 20 and all(c is not None for c in clocks.values())
    assert 1950 <= clocks["cp_async_interior"] <= 2000
    assert clocks["wgmma_tma"] < clocks["cp_async_interior"] - 200
