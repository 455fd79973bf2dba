"""Every registered view follows the one view state: walked through two shapes and two
levels, what each view draws says the chosen shape (where it draws one) and level, and
no other shape of the session."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from gemmscope.app.core.view_state import shape_text
from gemmscope.app.views.registry import VIEWS
from gemmscope.kernels.ladder import registry
from gemmscope.kernels.ladder.shape import Shape

SHAPES = (Shape(512, 512, 512), Shape(2048, 2048, 2048))  # neither is a default
LEVELS = ("smem_tiled", "register_2d")  # both with shared memory (banks, swizzle)


def _title(chart) -> str:
    return getattr(chart, "base_title", None) or chart.getPlotItem().titleLabel.text


def _charts(view) -> tuple[str, str | None]:
    """The bars' title names the shape; the per-repeat chart (its title, or its note
    where the level has no run there) the level and shape."""
    bars, stream = _title(view.charts()["bars"]), view.charts()["stream"]
    said = stream.empty_text.toPlainText() if stream.empty else _title(stream)
    found = re.search(r"(?:— |of )(\S+) at (\S+) \(", said)  # "naive at 4096³ (burst"
    assert found is not None, said
    level, shape = found.groups()
    assert bars.partition(" at ")[2].partition(",")[0] == shape, (bars, said)
    return level, shape


def _coalescing(view) -> tuple[str, str | None]:
    summary = view.canvas.drawn_texts[0]  # "A[row*K + k] ... [ld, ..., 512×512×512]"
    found = re.findall(r"\d+×\d+×\d+", summary)
    return view.canvas.level_id, found[-1] if found else "none in " + summary


def _roofline(view) -> tuple[str, str | None]:
    title = _title(view.charts()["roofline"])  # "Roofline at 512³, <GPU>"
    return view.chart.selected, title.partition(" at ")[2].partition(",")[0]


def _code(view) -> tuple[str, str | None]:
    """The notice over the source names the level ("<level>: <kernel> (...)", or why
    there is no build of it)."""
    ids = {entry["id"] for entry in registry.catalog()}
    words = re.findall(r"[a-z0-9_]+", view.notice.text())
    return next((w for w in words if w in ids), view.notice.text()), None


def _timeline(view) -> tuple[str, str | None]:
    """The title names the level and the trace's shape ("Measured by the trace build:
    <level> <shape>...", or "<level> <shape>: no trace ..."), and the shape chosen where
    the trace shown was measured at another."""
    title = view.title.text()
    named = re.search(r"([a-z0-9_]+) (\d+×\d+×\d+)", title)
    if named is None:
        return title, None
    chosen = re.search(r"the shape chosen is (\S+)\)", title)
    return named.group(1), chosen.group(1) if chosen else named.group(2)


# what each view says of the state: (level, shape text, or None: it draws no GEMM shape)
SAYS: dict[str, Callable[[object], tuple[str, str | None]]] = {
    "charts": _charts,
    "telemetry": lambda v: (v.selected, None),  # the session's time axis: every run
    "tiling": lambda v: (v.canvas.drawn_texts[0].partition(":")[0], None),  # tiles only
    "banks": lambda v: (v.canvas.level_id, None),  # shared memory: no M, N, K in it
    "swizzle": lambda v: (v.explorer.level_id, None),
    "coalescing": _coalescing,
    "code": _code,
    "roofline": _roofline,
    "timeline": _timeline,
}


def test_every_registered_view_says_what_it_shows():
    assert set(SAYS) == {spec.name for spec in VIEWS}  # a new view says it here too


@pytest.fixture
def window(make_window, synthetic_file, qtbot):
    w = make_window()
    assert w.open_recording(synthetic_file)
    w.play_instant()
    w.set_animated(False)
    w.show()
    qtbot.waitExposed(w)
    assert set(SHAPES) <= set(w.store.shapes())
    return w


def test_every_view_follows_two_shapes_and_two_levels(window):
    others = window.store.shapes()
    for spec in VIEWS:
        for shape in SHAPES:
            for level in LEVELS:
                window.choose(shape=shape, level=level)
                window.named_widget(spec.name)  # its tab on screen
                window.flush_views()
                view = window.views[spec.name]
                view.grab()  # painted: canvases list what they drew
                said_level, said_shape = SAYS[spec.name](view)
                where = (spec.name, str(shape), level)
                assert said_level == level, where
                if said_shape is not None:
                    assert said_shape in (shape_text(shape), str(shape)), (where, said_shape)
                canvas = view.animation()
                if canvas is not None:  # and no other shape of the session
                    drawn = " ".join(canvas.drawn_texts)
                    for other in others:
                        if other != shape:
                            assert str(other) not in drawn, (where, other)


def test_the_animations_draw_the_form_a_level_ran_at_the_shape_shown(window):
    """fp8_deep's shape rule picks its tile width, stages and C staging per shape (four
    stages and C box by box at 8192³, 64-column tiles at 1024³, three stages at 2048³):
    the Tiling, Banks and Coalescing pictures are of that form, whichever tab is on
    screen when the shape changes."""
    rule = registry.get("fp8_deep").for_shape
    shapes = (Shape(8192, 8192, 8192), Shape(1024, 1024, 1024), Shape(2048, 2048, 2048))
    assert set(shapes) <= set(window.store.shapes())
    sms = window.store.device_entry(0).sm_count or 132
    forms = {s: rule(s.M, s.N, s.K, sms).params for s in shapes}
    said = {s: (f["STAGES"], f["EPC"], f["BN"]) for s, f in forms.items()}
    assert len(set(said.values())) == 3  # three forms, none of them the registry's alone
    assert said[shapes[0]][:2] == (4, 1)
    for shape in (*shapes, shapes[0]):
        window.choose(shape=shape, level="fp8_deep")
        window.named_widget("tiling")
        window.flush_views()
        for name in ("tiling", "banks", "coalescing"):
            window.named_widget(name)  # shown after the change: paid what it was told
            window.flush_views()
            model = window.views[name].canvas.model
            assert (model.stages, model.epc, model.bn) == said[shape], (name, shape)
        tiling = window.named_widget("tiling")
        window.flush_views()
        tiling.grab()  # painted: the canvas lists what it drew
        assert (tiling.canvas.scene.M, tiling.canvas.scene.N) == (shape.M, shape.N)
        assert f"(C {shape.M}x{shape.N})" in tiling.canvas.drawn_texts[0]  # the map: its C


def test_a_new_shape_with_the_same_form_keeps_the_animation_where_it_was(window):
    """A level that ran in one form at two shapes (register_2d has no shape rule): moving
    between them leaves the Banks and Tiling pictures at the step the user stepped to,
    since neither draws the shape; a new form is drawn from its first step (the test
    above)."""
    level, first, second = "register_2d", SHAPES[0], SHAPES[1]
    assert window.store.run_form(level, first) == window.store.run_form(level, second)
    for name in ("banks", "tiling"):
        window.choose(shape=first, level=level)
        view = window.named_widget(name)
        window.flush_views()
        assert not view.canvas.draws_shape()
        view.canvas.set_step(3)
        window.choose(shape=second, level=level)
        window.flush_views()
        assert view.canvas.step == 3, name
