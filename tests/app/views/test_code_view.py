"""The Code view on the bundled H200 recording: source, diff, SASS, occupancy and the mix
chart, each read back from what the widgets drew."""

from __future__ import annotations

import json
from importlib import resources

import fed_store
import pytest
import synthetic_session as syn
from PySide6.QtGui import QColor

from gemmscope.app.core import builds
from gemmscope.app.core.builds import MIX_PER_FMAS, main_loop_fmas
from gemmscope.app.core.store import Change, SessionStore
from gemmscope.app.theme import DIFF_COLORS, SASS_CLASS_COLORS, SASS_SELECTION
from gemmscope.kernels.protocol.decoding import of, to_builtins
from gemmscope.kernels.protocol.records import Build
from gemmscope.kernels.protocol.timeline import Timeline


@pytest.fixture(scope="module")
def events():
    path = resources.files("gemmscope.resources") / "sessions" / "h200-ladder.jsonl.gz"
    # without its per-line counters, whose heat map (tests/app/views/test_code_heat.py) would
    # colour the SASS lines these tests check
    return [e for e in syn.file_events(path) if e["type"] != "source_counters"]


def fed(events, drop: set[str] = frozenset()) -> SessionStore:
    return fed_store.fed(events, drop_builds=frozenset(drop))


@pytest.fixture
def view(code_view):
    return code_view


def rgb(c: QColor | None) -> str | None:
    return None if c is None else c.name()


def test_store_keeps_one_build_per_level_variant_params(events):
    store = fed(events)
    keys = {(e["level"], e["variant"], json.dumps(e.get("params"), sort_keys=True))
            for e in events if e["type"] == "build"}
    assert len(store.builds) == len(keys) and len(keys) < sum(e["type"] == "build"
                                                              for e in events)
    ev = store.build_for("cp_async")
    assert ev.variant == "vector" and ev.params["STAGES"] == 3
    assert store.build_for("cublas_fp32") is None
    assert Change.BUILD in fed(events[:0] + [e for e in events if e["type"] == "build"][:1]
                               ).take_changes()


def test_cp_async_source_diff_sass_and_click(view, events):
    store = fed(events)
    v = view(store, "cp_async")
    ev = store.build_for("cp_async")
    cu = ev.sources["kernels/cuda/cp_async.cu"]
    assert v.source.toPlainText() == cu
    # the diff against warp_tiling marks the lines this step changed, in the diff colours
    assert v.tabs.tabText(1) == "Diff against warp_tiling"
    changed = [i for i, r in enumerate(v.diff.rows) if r.tag in ("replace", "insert")]
    assert changed and any("cp.async" in v.diff.rows[i].right or "cp_async" in
                           v.diff.rows[i].right for i in changed)
    for i in changed[:20]:
        want = DIFF_COLORS["insert" if v.diff.rows[i].tag == "insert" else "replace"]
        assert rgb(v.diff.right.line_color(i)) == QColor(want).name()
    same = next(i for i, r in enumerate(v.diff.rows) if r.tag == "equal")
    assert v.diff.right.line_color(same) is None
    assert v.diff.right.toPlainText().splitlines()[changed[0]] == v.diff.rows[changed[0]].right
    # the SASS panel holds the main loop, FFMA and LDS.128 mnemonics in their colours
    first, last = ev.main_loop
    assert all(first <= ln.offset <= last for ln in v.sass.lines)
    text = v.sass.toPlainText().splitlines()
    for cls in ("FFMA", "LDS.128"):
        i = next(i for i, ln in enumerate(v.sass.lines) if ln.op_class == cls)
        assert cls.split(".")[0] in text[i]
        assert rgb(v.sass.mnemonic_color(i)) == QColor(SASS_CLASS_COLORS[cls]).name()
    # clicking a source line of the main loop selects its SASS lines
    ffma = next(ln for ln in v.sass.lines if ln.op_class == "FFMA")
    cu_path = "kernels/cuda/cp_async.cu"
    where = builds.in_file(ffma, cu_path)
    v.source.go_to_line(where[1])
    assert v.sass.selected and len(v.sass.selected) < len(v.sass.lines)
    assert v.sass.selected == [i for i, ln in enumerate(v.sass.lines)
                               if builds.in_file(ln, cu_path) == where]
    assert "FFMA" in {v.sass.lines[i].op_class for i in v.sass.selected}
    assert rgb(v.sass.line_color(v.sass.selected[0])) == QColor(SASS_SELECTION).name()
    assert v.sass.line_color(next(i for i in range(len(v.sass.lines))
                                  if i not in v.sass.selected)) is None


def test_occupancy_panel_states_the_limit(view, events):
    store = fed(events)
    for level in ("cp_async", "wmma"):
        v = view(store, level)
        occ = store.build_for(level).occupancy
        text = v.occupancy.text()
        limits = " and ".join(builds.RESOURCE_TEXT[r] for r in occ["limited_by"])
        assert f"limited by {limits}" in text
        assert f"{occ['blocks_per_sm']} block" in text
        assert "one register more:" in text and "1 KB shared memory more:" in text


def test_occupancy_what_if_recomputed_without_the_field():
    ev = Build(t=0.0, level="x", variant="vector", regs=255, threads_per_block=256,
               smem_static_bytes=0, smem_dynamic_bytes=0,
               occupancy={"blocks_per_sm": 1, "warps_per_sm": 8, "limited_by": ["registers"]})
    w = builds.what_if(ev)
    assert w["regs+1"] is None and w["regs-1"] == 1
    assert "one register more: impossible" in "\n".join(builds.occupancy_lines(ev))


def test_mix_chart_has_one_bar_per_level_with_a_build(view, events):
    store = fed(events, drop={"naive"})
    v = view(store, "cp_async")
    # a build without SASS (its reason shown instead) has no instruction mix to chart
    with_builds = [lv.id for lv in store.ladder_levels() if store.build_for(lv.id)
                   and (store.build_for(lv.id).instruction_mix or {}).get("main_loop")]
    assert v.mix.levels == with_builds and "naive" not in v.mix.levels
    y0, h = v.mix.stacks["FFMA"]
    i = v.mix.levels.index("cp_async")
    build = store.build_for("cp_async")
    mix = build.instruction_mix["main_loop"]
    per = MIX_PER_FMAS / main_loop_fmas(build)  # counted per 1000 multiply-adds
    # FFMA at the bottom, LDS.128 stacked on it
    assert (y0[i], h[i]) == (0, pytest.approx(mix["FFMA"] * per))
    assert v.mix.stacks["LDS.128"][0][i] == pytest.approx((mix["FFMA"] + mix["LDS"]) * per)
    assert v.mix.items["FFMA"].opts["brush"] == SASS_CLASS_COLORS["FFMA"]
    ticks = v.mix.getPlotItem().getAxis("bottom")._tickLevels[0]
    assert [t.strip("\n") for _, t in ticks] == with_builds  # names on alternating lines


def test_a_level_without_a_build_event_says_so(view, events):
    v = view(fed(events, drop={"naive"}), "naive")
    want = "this recording has no build event for naive (recorded before build events existed)"
    assert v.notice.text() == want
    assert v.source.toPlainText() == want and v.sass.lines == []
    # and coalesced's diff says its predecessor has none
    v.set_level("coalesced")
    assert v.diff.left.toPlainText() == builds.no_build_text("naive")


def test_markup_in_sources_is_shown_literally(view, events):
    store = fed(events)
    ev = to_builtins(store.build_for("naive"))
    evil = '<b>bold</b> <img src="x"> &amp;\n__global__ void k() {}\n'
    ev["sources"] = {"kernels/cuda/naive.cu": evil}
    ev["kernel"] = "<i>k</i>"
    store.handle(of(ev))
    v = view(store, "naive")
    assert v.source.toPlainText() == evil
    assert "<i>k</i>" in v.notice.text()
    assert v.diff.rows == [] or "<b>" in v.diff.right.toPlainText()


def test_a_level_with_its_predecessors_source_says_which_parameters_changed(view, events):
    v = view(fed(events), "wgmma_stream_k")
    assert v.tabs.tabText(1) == "Diff against wgmma_tma"
    assert v.diff.rows == []
    assert v.diff.left.toPlainText() == ("the same source as wgmma_tma; template parameters: "
                                         "GM 16 -> 8, SK 0 -> 2")


def test_diff_rows_align_changes():
    rows = builds.diff_rows("a\nb\nc\n", "a\nB\nc\nd\n")
    assert [r.tag for r in rows] == ["equal", "replace", "equal", "insert"]
    assert (rows[3].left_no, rows[3].right_no, rows[3].right) == (None, 4, "d")


def test_odd_fields_of_a_build_event_do_not_break_the_view(view, events):
    store = fed(events)
    before = len(store.builds)
    ev = to_builtins(store.build_for("naive"))
    ev.update(main_loop=["a", None], occupancy="n/a", instruction_mix={"main_loop": {
        "FFMA": "many"}}, regs=None)
    store.handle(of(ev))
    store.handle(of({**ev, "params": [1, {"x": float("nan")}]}))  # another key, kept apart
    assert len(store.builds) == before + 1
    v = view(store, "naive")
    assert v.sass.lines  # no usable span: the whole kernel
    assert v.occupancy.text() == "the build event has no occupancy"
    assert v.mix.stacks.get("FFMA", ([], [0.0] * 13))[1][0] == 0.0


def _picture(v) -> dict:
    """What the view shows, read back from its widgets."""
    return {"notice": v.notice.text(), "files": [v.file_box.itemText(i)
                                                 for i in range(v.file_box.count())],
            "source": v.source.toPlainText(), "diff": (v.tabs.tabText(1), v.diff.rows,
                                                      v.diff.left.toPlainText(),
                                                      v.diff.right.toPlainText()),
            "sass": (v.sass_title.text(), v.sass.toPlainText(), v.sass.lines),
            "occupancy": v.occupancy.text(), "mix": (v.mix.levels, v.mix.stacks),
            "mix axes": (v.mix.getPlotItem().getAxis("bottom")._tickLevels,
                         v.mix.getPlotItem().vb.targetRange(),
                         [label.text for _sample, label in v.mix.legend.items])}


def test_a_new_build_is_drawn_a_part_a_frame_and_ends_as_one_redraw(view, events):
    builds_seen = [i for i, e in enumerate(events) if e["type"] == "build"]
    early = fed(events[:builds_seen[4]])  # naive .. double_buffer
    v = view(early, "register_2d")  # no build for it yet: says so
    assert v.sass.lines == [] and "register_2d" in v.notice.text()
    line = Timeline()
    for ev in events[builds_seen[4]:]:
        early.handle(line.place(of(ev)))
    v.refresh(early.take_changes())
    drawn = []
    while v.parts_left():  # the mix (bars, then axes), source, diff, SASS: a frame each
        before, name = _picture(v), v._parts[0]
        v.step()
        drawn.append((name, _picture(v) != before))
    # (then the heat: the counters changed, and these events carry no per-line ones)
    assert drawn[:5] == [("mix", True), ("mix axes", True), ("source", True),
                         ("diff", True), ("sass", True)]
    assert _picture(v) == _picture(view(fed(events), "register_2d"))


def test_a_restarts_copy_of_the_shown_build_redraws_nothing(view, events):
    store = fed(events)
    v = view(store, "register_2d")
    revisions = [p.document().revision() for p in (v.source, v.sass, v.diff.left,
                                                   v.diff.right)]
    copy = {**to_builtins(store.build_for("register_2d")), "t": 1e4, "id": "restarted"}
    store.handle(of(copy))
    v.refresh(store.take_changes())
    v.settle()
    assert v.build is store.build_for("register_2d")  # the newest copy, drawn as before
    assert [p.document().revision() for p in (v.source, v.sass, v.diff.left,
                                              v.diff.right)] == revisions
    changed = dict(copy, sources={k: s + "// changed\n"
                                  for k, s in copy["sources"].items()})
    store.handle(of(changed))
    v.refresh(store.take_changes())
    v.settle()
    assert v.source.toPlainText().endswith("// changed\n")


def test_line_colours_follow_the_view_and_stay_few(qtbot):
    """Qt walks every extra selection on every repaint: only the lines in view get one,
    and scrolling colours the lines that come into view."""
    from gemmscope.app.views.code_panels import TextPanel

    p = TextPanel()
    qtbot.addWidget(p)
    p.resize(500, 300)
    p.show()
    p.set_text("\n".join(f"line {i}" for i in range(3000)))
    p.paint_lines({i: "#804040" for i in range(0, 3000, 2)})
    shown = [s.cursor.blockNumber() for s in p.extraSelections()]
    assert 0 < len(shown) < 60 and shown[0] == 0
    p.verticalScrollBar().setValue(2000)
    shown = [s.cursor.blockNumber() for s in p.extraSelections()]
    first = p.firstVisibleBlock().blockNumber()
    assert shown and min(shown) >= first >= 1990 and all(b % 2 == 0 for b in shown)
    assert p.line_color(2999 - 1) is not None and p.line_color(2999) is None


@pytest.mark.parametrize("pt", [13.5, 20.0])
def test_on_stage_the_code_takes_the_installed_monospace_that_fits_most_lines(qtbot, pt):
    """The system's fixed font may be tall (Noto Sans Mono: 26 px a line at 14 pt, 17 lines
    of SASS at 1280x720 where the stage's rule is 20); the stage takes the family of least
    line height among it and the compact ones installed."""
    from PySide6.QtGui import QFont, QFontDatabase, QFontMetricsF

    from gemmscope.app.views.code_panels import COMPACT_MONO, mono, stage_mono_family

    def height(family: str) -> float:
        font = QFont(family)
        font.setPointSizeF(pt)
        return QFontMetricsF(font).lineSpacing()

    chosen = stage_mono_family(pt)
    candidates = [mono().family()] + [f for f in COMPACT_MONO if QFontDatabase.hasFamily(f)]
    assert chosen in candidates
    assert height(chosen) == min(height(f) for f in candidates)
