"""The views draw what the models say: pixels read back from rendered images at
positions the widgets compute, plus mouse, keyboard and playback."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QPointF, QRectF, Qt
from PySide6.QtGui import QColor

from gemmscope.app.theme import ANIMATION
from gemmscope.app.views.banks import BanksView
from gemmscope.app.views.coalescing import CoalescingView
from gemmscope.app.views.playback import ViewPanel
from gemmscope.app.views.registry import VIEWS as VIEW_TABLE
from gemmscope.app.views.swizzle import AFTER, BEFORE, SwizzleView
from gemmscope.app.views.tiling import TilingView
from gemmscope.kernels.ladder.registry import ladder
from gemmscope.kernels.models import first_swizzled_level, model_for
from gemmscope.kernels.models.swizzle import IDENTITY, Swizzle

LEVELS = [lv.id for lv in ladder()]


def pixel(widget, point: QPointF) -> QColor:
    img = widget.grab().toImage()
    dpr = img.devicePixelRatio()
    return img.pixelColor(int(point.x() * dpr), int(point.y() * dpr))


def same(a: QColor, b: QColor) -> bool:
    return (a.red(), a.green(), a.blue()) == (b.red(), b.green(), b.blue())


def inside(rect: QRectF, fx: float = 0.5, fy: float = 0.5) -> QPointF:
    return QPointF(rect.left() + rect.width() * fx, rect.top() + rect.height() * fy)


def click(qtbot, widget, point: QPointF) -> None:
    qtbot.mouseClick(widget, Qt.MouseButton.LeftButton, pos=QPoint(int(point.x()),
                                                                   int(point.y())))


@pytest.fixture
def make(qtbot):
    def build(cls, level_id, size=(1100, 640)):
        view = cls(level_id)
        qtbot.addWidget(view)
        view.set_animated(False)
        view.resize(*size)
        view.show()
        qtbot.waitExposed(view)
        return view
    return build


# the animated views of the one view table, by name
ANIMATED = {spec.name: (spec.title, spec.factory) for spec in VIEW_TABLE
            if isinstance(spec.factory, type) and issubclass(spec.factory, ViewPanel)}


# -- registry ---------------------------------------------------------------------------
@pytest.mark.parametrize("view_id", sorted(ANIMATED))
def test_every_view_follows_every_level(qtbot, view_id):
    assert set(ANIMATED) == {"tiling", "banks", "swizzle", "coalescing"}
    title, factory = ANIMATED[view_id]
    view = factory(LEVELS[0])
    qtbot.addWidget(view)
    view.set_animated(False)
    view.resize(900, 560)
    assert title
    for level_id in LEVELS:
        view.set_level(level_id)
        assert view.canvas.n_steps() >= 1
        assert not view.grab().isNull()


# -- tiling -----------------------------------------------------------------------------
def test_tiling_draws_block_panels_warp_and_thread(qtbot, make):
    view = make(TilingView, "register_2d")
    c = view.canvas
    c.select_block(1, 2)
    c.set_step(2)
    c.select_thread(17)
    assert same(pixel(c, inside(c.c_block_rect(1, 2))), ANIMATION.color("c_block"))
    assert same(pixel(c, inside(c.c_block_rect(0, 0))), ANIMATION.color("panel"))
    assert same(pixel(c, inside(c.a_tile_rect(1, 2))), ANIMATION.color("a_operand"))
    assert same(pixel(c, inside(c.a_tile_rect(1, 0))), ANIMATION.color("a_panel"))
    assert same(pixel(c, inside(c.b_tile_rect(2, 2))), ANIMATION.color("b_operand"))
    assert same(pixel(c, inside(c.b_tile_rect(0, 2))), ANIMATION.color("b_panel"))
    m = model_for("register_2d")
    r, col = m.thread_outputs(17)[5]
    assert same(pixel(c, inside(c.tile_cell_rect(r, col))), ANIMATION.color("thread"))
    r, col = m.thread_outputs(3)[0]  # same warp, other thread
    assert same(pixel(c, inside(c.tile_cell_rect(r, col))), ANIMATION.color("warp"))
    r, col = m.thread_outputs(100)[0]  # another warp
    assert same(pixel(c, inside(c.tile_cell_rect(r, col))), ANIMATION.color("panel"))


def test_tiling_stages_fill_then_get_consumed(qtbot, make):
    view = make(TilingView, "smem_tiled")
    c = view.canvas
    c.setProperty("progress", 0.2)  # half way through loading the stage
    rect = c.stage_rect(0, 0)
    assert same(pixel(c, inside(rect, 0.1, 0.9)), ANIMATION.color("stage_filling"))
    assert same(pixel(c, inside(rect, 0.1, 0.1)), ANIMATION.color("stage_empty"))
    c.setProperty("progress", 1.0)
    assert same(pixel(c, inside(rect, 0.1, 0.1)), ANIMATION.color("stage_consuming"))
    view.set_level("double_buffer")
    assert same(pixel(c, inside(c.stage_rect(0, 0), 0.1, 0.1)),
                ANIMATION.color("stage_consuming"))
    assert same(pixel(c, inside(c.stage_rect(0, 1), 0.1, 0.1)), ANIMATION.color("stage_ready"))
    c.set_step(1)
    assert same(pixel(c, inside(c.stage_rect(0, 1), 0.1, 0.1)),
                ANIMATION.color("stage_consuming"))


def test_tiling_mouse_and_keys(qtbot, make):
    view = make(TilingView, "warp_tiling")
    c = view.canvas
    with qtbot.waitSignal(c.blockSelected):
        click(qtbot, c, inside(c.c_block_rect(3, 1)))
    assert c.block == (3, 1)
    out = c.model.thread_outputs(200)
    r, col = out[:, 0].min(), out[:, 1].min()  # the middle of the thread's first 4x4 piece
    click(qtbot, c, c.tile_cell_rect(r + 2, col + 2).topLeft())
    assert c.tid == 200 and c.warp == 6
    c.setFocus()
    qtbot.keyClick(c, Qt.Key.Key_Right)
    assert c.step == 1
    qtbot.keyClick(c, Qt.Key.Key_Left)
    assert c.step == 0
    qtbot.keyClick(c, Qt.Key.Key_Plus)
    assert c.speed == 2.0
    qtbot.keyClick(c, Qt.Key.Key_Space)
    assert c.is_playing()
    qtbot.keyClick(c, Qt.Key.Key_Space)
    assert not c.is_playing()


def test_playback_animates_and_steps_on_its_own(qtbot, make):
    view = make(TilingView, "register_2d")
    c = view.canvas
    c.set_animated(True)
    c.set_speed(4.0)
    c.set_step(1)
    assert c.progress < 1.0  # the transition has started, not jumped
    qtbot.waitUntil(lambda: c.progress == 1.0, timeout=3000)
    with qtbot.waitSignal(c.stepChanged, timeout=3000) as blocker:
        view.bar.play_button.click()
    assert blocker.args == [2]
    assert view.bar.play_button.text() == "Pause"
    view.bar.play_button.click()
    assert not c.is_playing()


# -- banks ------------------------------------------------------------------------------
def test_banks_marks_the_register_2d_conflict(qtbot, make):
    view = make(BanksView, "register_2d")
    c = view.banks
    view.select_instruction("LDS.128 Bs[k*BN")
    rep = c.report()
    assert (rep.n_way, rep.wavefronts, rep.conflicts) == (2, rep.ideal * 2, rep.ideal)
    bank = int(rep.lane_bank[0])
    assert c.bank_state(bank) == "conflict"
    assert same(pixel(c, inside(c.bank_header_rect(bank), 0.1, 0.1)), ANIMATION.color("conflict"))
    unused = next(b for b in range(32) if not rep.load[:, b].any())
    assert same(pixel(c, inside(c.bank_header_rect(unused), 0.1, 0.1)), ANIMATION.color("unused"))
    # the bank's second word in phase 0 is served by the second wavefront: lane 4's float4
    cell = c.cell_rect(0, 1, bank)
    assert same(pixel(c, QPointF(cell.left() + 4, cell.top() + 7)), ANIMATION.lane(4))


def test_banks_padding_and_swizzle_toggles_change_the_picture(qtbot, make):
    view = make(BanksView, "vectorized")
    c = view.banks
    view.select_instruction("As[(a_col+0)")  # transposing STS.32: two k-chunks 4*BM apart
    assert c.report().conflicts == 1
    view.pad_check.setChecked(True)  # rows of BM + 1: chunks 4*(BM+1) words, 4 banks apart
    assert c.report().conflicts == 1  # ... which 16 consecutive rows still overlap
    view.pad_box.setValue(4)  # BM + 4, as warp_tiling does: 16 banks apart
    assert c.report().conflicts == 0
    bank = int(c.report().lane_bank[0])
    assert same(pixel(c, inside(c.bank_header_rect(bank), 0.1, 0.1)), ANIMATION.color("ok"))
    view.pad_check.setChecked(False)
    assert c.report().conflicts == 1
    view.select_instruction("LDS.128 Bs[k*BN")
    assert c.report().conflicts > 0
    for box, v in zip(view.swz_boxes, (1, 2, 3), strict=True):
        box.setValue(v)
    before = c.step_summary()
    view.swizzle_check.setChecked(True)  # bit 5 into bit 2: tcol c and c+4 part
    assert c.report().conflicts == 0
    # the whole K step of the warp: the B reads' conflicts are gone (A reads had none)
    assert before[1] > 0 and c.step_summary()[1] == 0
    # a swizzle that would split an LDS.128 leaves it as written, with a message
    for box, v in zip(view.swz_boxes, (3, 0, 3), strict=True):
        box.setValue(v)
    assert c.layout_error and "splits" in view.message.text()


def test_banks_dims_unserved_wavefronts_and_selects_lanes(qtbot, make):
    view = make(BanksView, "register_2d")
    c = view.banks
    view.select_instruction("LDS.128 Bs[k*BN")
    bank = int(c.report().lane_bank[0])
    cell = c.cell_rect(0, 1, bank)
    c.setProperty("progress", 0.1)  # only the first wavefront served
    assert not same(pixel(c, QPointF(cell.left() + 4, cell.top() + 7)), ANIMATION.lane(4))
    c.setProperty("progress", 1.0)
    assert same(pixel(c, QPointF(cell.left() + 4, cell.top() + 7)), ANIMATION.lane(4))
    with qtbot.waitSignal(c.laneSelected):
        click(qtbot, c, inside(c.lane_rect(5)))
    assert c.selected_lane == 5


def test_banks_view_for_a_level_without_shared_memory(qtbot, make):
    view = make(BanksView, "naive")
    assert view.banks.report() is None and view.banks.n_steps() == 1
    assert not view.grab().isNull()


def test_banks_view_of_a_warp_specialized_level_opens_on_a_consumer_warp(qtbot, make):
    view = make(BanksView, "register_2d")
    view.set_level("wgmma_tma")
    b = view.banks
    assert b.model.shared_accesses(0, 0) == []  # warp 0 is the producer: no shared access
    assert b.warp == b.warps_with_accesses()[0] >= 4  # the first consumer warp
    assert view.warp_box.value() == b.warp
    rep = b.report()
    assert rep is not None and rep.conflicts == 0  # the swizzled staging stores
    b.set_warp(0)  # back to the producer: the picture says which warps to look at
    assert b.report() is None and not view.grab().isNull()


def test_banks_view_lists_mma_tmas_stmatrix_staging_as_conflict_free_stores(qtbot, make):
    view = make(BanksView, "mma_tma")
    b = view.banks
    assert b.warp == 4  # the first math warp: the producer's four issue no shared access
    labels = [a.label for a in b.accesses]
    assert sum(lb.startswith("ldmatrix.x4") for lb in labels) == 32
    assert sum(lb.startswith("stmatrix.x4 C") for lb in labels) == 16
    view.select_instruction("stmatrix.x4 C")
    rep = b.report()
    assert rep is not None and (rep.wavefronts, rep.conflicts) == (4, 0)
    view.grab()  # painted: the summary says what it is and that it meets no conflict
    assert any("[128-bit store, warp 4" in text for text in b.drawn_texts)
    assert any(text.startswith("no conflict: 4 wavefront(s)") for text in b.drawn_texts)
    assert view.instruction_box.currentText().startswith("stmatrix.x4 C")


def test_banks_instruction_box_follows_the_step(qtbot, make):
    view = make(BanksView, "smem_tiled")
    start = view.banks.step  # the level's own instruction (test_replay_truth.py)
    view.banks.step_forward()
    assert view.instruction_box.currentIndex() == start + 1
    view.instruction_box.setCurrentIndex(1)
    assert view.banks.step == 1


# -- swizzle ----------------------------------------------------------------------------
def test_swizzle_explorer_colours_cells_by_the_models_bank(qtbot, make):
    view = make(SwizzleView, "wmma", size=(1200, 700))
    c = view.explorer
    assert c.conflict_free(AFTER) and not c.conflict_free(BEFORE)
    assert "conflict-free" in view.message.text()
    for side, layout in ((BEFORE, c.before), (AFTER, c.after)):
        for r, col in ((1, 40), (5, 33), (9, 60)):
            want = ANIMATION.bank(int(layout.bank(r, col)))
            assert same(pixel(c, inside(c.cell_rect(side, r, col))), want), (side, r, col)


def test_swizzle_expression_errors_are_messages(qtbot, make):
    view = make(SwizzleView, "mma_sync")  # 128-byte rows, not padded
    c = view.explorer
    view.expr_edit.setText("__import__('os').system('echo hacked')")
    assert c.error and "not allowed" in c.error
    assert view.message.text().startswith("⚠")
    view.expr_edit.setText("col ^ ")
    assert "syntax" in c.error
    view.expr_edit.setText("col ^ ((row % 8) * 8)")  # fp16, 8 halves = 16 bytes
    assert c.error is None and c.conflict_free(AFTER)
    view.expr_edit.setText("col & 3")
    assert "not a valid layout" in c.error
    view.expr_edit.setText("")
    assert c.error is None


def test_swizzle_parameters_and_click(qtbot, make):
    view = make(SwizzleView, "mma_sync")  # Swizzle<3,4,3> on 128-byte rows
    c = view.explorer
    view.b_box.setValue(0)  # no swizzle: ldmatrix rows collide
    assert not c.conflict_free(AFTER)
    assert "still conflicts" in view.message.text()
    view.b_box.setValue(3)
    assert c.conflict_free(AFTER)
    view.s_box.setValue(1)  # S < B is not a swizzle
    assert "S >= B" in view.message.text()
    view.s_box.setValue(3)
    with qtbot.waitSignal(c.cellSelected):
        click(qtbot, c, inside(c.cell_rect(AFTER, 3, 10)))
    assert c.selected == (3, 10)
    assert "bank" in c.describe(3, 10)
    c.setFocus()
    qtbot.keyClick(c, Qt.Key.Key_Right)
    assert c.step == 1 and c.n_steps() == 4


def test_swizzle_explorer_opens_on_the_swizzled_levels_model(qtbot):
    view = SwizzleView()
    qtbot.addWidget(view)
    c = view.explorer
    layout = model_for(first_swizzled_level()).shared_layout()
    assert first_swizzled_level() == "mma_sync" and layout is not None
    assert (c.swizzle, c.unit, c.row_elems, c.pad_elems) == (
        Swizzle(3, 4, 3), layout.unit, layout.row_elems, layout.pad_elems)
    assert c.swizzle == layout.swizzle
    assert (view.b_box.value(), view.m_box.value(), view.s_box.value()) == (3, 4, 3)
    assert c.conflict_free(AFTER) and not c.conflict_free(BEFORE)


def test_swizzle_pattern_box_names_wgmma_beside_ldmatrix_for_a_hopper_level(qtbot):
    """fp8_deep issues no ldmatrix: its 8 x 16-byte phases are the core matrices wgmma
    reads, and the box names both readers while its data stays the pattern's."""
    view = SwizzleView()
    qtbot.addWidget(view)
    assert view.set_level("fp8_deep")
    assert view.pattern_box.currentData() == "ldmatrix"
    assert view.pattern_box.currentText() == "ldmatrix / wgmma"
    assert "wgmma" in view.pattern_box.toolTip()
    assert [view.pattern_box.itemText(i) for i in range(view.pattern_box.count())] == [
        "row", "column", "ldmatrix / wgmma"]


def test_swizzle_explorer_takes_each_levels_layout_from_its_model(qtbot):
    view = SwizzleView()
    qtbot.addWidget(view)
    c = view.explorer
    for level_id in LEVELS:
        before = (c.swizzle, c.row_elems, c.pad_elems, c.elem_bytes)
        assert view.set_level(level_id)
        layout = model_for(level_id).shared_layout()
        if layout is None:  # no shared memory (naive, coalesced): the tile stays
            assert (c.swizzle, c.row_elems, c.pad_elems, c.elem_bytes) == before
            continue
        assert (c.swizzle, c.unit, c.row_elems, c.pad_elems, c.elem_bytes) == (
            layout.swizzle, layout.unit, layout.row_elems, layout.pad_elems,
            layout.elem_bytes), level_id
        # the boxes say what the canvas shows, so the next edit starts from it
        assert (view.b_box.value(), view.m_box.value(), view.s_box.value(),
                view.width_box.value(), view.pad_box.value(),
                view.elem_box.currentData()) == (
            layout.swizzle.bits, layout.swizzle.base, layout.swizzle.shift,
            layout.row_elems, layout.pad_elems, layout.elem_bytes), level_id
    # wmma pads its rows by 8 halves and swizzles nothing; ldmatrix is conflict-free anyway
    view.set_level("wmma")
    assert c.swizzle == IDENTITY and c.pad_elems == 8 and c.conflict_free(AFTER)


# -- coalescing -------------------------------------------------------------------------
def test_coalescing_naive_touches_32_sectors(qtbot, make):
    view = make(CoalescingView, "naive")
    c = view.coalescing
    rep = c.report()
    assert rep.n_sectors == 32 and rep.ideal_sectors == 4
    assert same(pixel(c, inside(c.word_rect(0, 0))), ANIMATION.lane(0))
    assert same(pixel(c, inside(c.word_rect(0, 1))), ANIMATION.color("unused"))
    assert same(pixel(c, inside(c.word_rect(5, 0))), ANIMATION.lane(5))


def test_coalescing_coalesced_b_load_fills_4_sectors(qtbot, make):
    view = make(CoalescingView, "coalesced")
    c = view.coalescing
    c.set_step(1)  # B[k*N + col]
    assert c.report().n_sectors == 4 and c.report().efficiency == 1.0
    for w in range(8):
        assert same(pixel(c, inside(c.word_rect(1, w))), ANIMATION.lane(8 + w))
    with qtbot.waitSignal(c.laneSelected):
        click(qtbot, c, inside(c.lane_rect(9)))
    assert c.selected_lane == 9
    assert view.instruction_box.currentIndex() == 1


@pytest.mark.parametrize("view_id", sorted(ANIMATED))
def test_a_level_without_a_model_keeps_the_picture(qtbot, view_id):
    view = ANIMATED[view_id][1]("register_2d")
    qtbot.addWidget(view)
    view.set_animated(False)
    if view_id == "swizzle":  # level-independent: any id is fine
        assert view.set_level("cublas_fp32")
        return
    assert not view.set_level("cublas_fp32")
    assert "no access model" in view.message.text()
    assert view.canvas.level_id == "register_2d"
    assert not view.grab().isNull()


def test_swizzle_explorer_padding_fixes_a_column_read(qtbot, make):
    view = make(SwizzleView, "register_2d")
    c = view.explorer
    view.elem_box.setCurrentIndex(2)  # 4-byte elements
    view.width_box.setValue(32)
    view.rows_box.setCurrentIndex(2)  # 32 rows
    view.pattern_box.setCurrentIndex(view.pattern_box.findData("column"))
    view.access_box.setCurrentIndex(view.access_box.findData(4))
    view.b_box.setValue(0)
    assert c.access[AFTER].report.n_way == 32
    view.pad_box.setValue(1)
    assert c.conflict_free(AFTER) and not c.conflict_free(BEFORE)
    # the "after" picture puts element (r, 0) of a padded row in bank r
    for r in (1, 7, 30):
        assert c.after.bank(r, 0) == r
        assert same(pixel(c, inside(c.cell_rect(AFTER, r, 20))),
                    ANIMATION.bank(int(c.after.bank(r, 20))))


def test_presentation_theme_enlarges_the_canvas_text(qtbot, make):
    from gemmscope.app.theme import NORMAL, PRESENTATION

    view = make(BanksView, "register_2d")
    own = view.canvas.font().pointSizeF()  # the window's type, before any theme
    view.apply_theme(NORMAL)
    normal_row = view.canvas.line_px()
    view.apply_theme(PRESENTATION)
    on_stage = view.canvas.font().pointSize()
    assert on_stage > NORMAL.font_pt
    assert view.canvas.line_px() > normal_row  # the picture's rows of text grow with it
    view.apply_theme(NORMAL)
    assert view.canvas.font().pointSizeF() == own < on_stage  # its own type back
    assert view.canvas.line_px() == normal_row  # metrics kept only while the font is
    assert not view.grab().isNull()
    # the banks' grid is kept per size: a wider canvas has wider bank columns
    width = view.canvas.bank_header_rect(0).width()
    view.canvas.resize(view.canvas.width() + 320, view.canvas.height())
    assert view.canvas.bank_header_rect(0).width() == pytest.approx(width + 10, abs=0.01)


def test_banks_view_shows_what_the_mma_sync_swizzle_buys(qtbot, make):
    view = make(BanksView, "mma_sync")
    c = view.banks
    view.select_instruction("ldmatrix.x4 A")
    assert c.report().conflicts == 0
    for box, v in zip(view.swz_boxes, (0, 4, 3), strict=True):
        box.setValue(v)
    view.swizzle_check.setChecked(True)  # B = 0: the same tile, not swizzled
    rep = c.report()
    assert rep.n_way == 8
    bank = int(rep.lane_bank[0])
    assert same(pixel(c, inside(c.bank_header_rect(bank), 0.1, 0.1)), ANIMATION.color("conflict"))


def test_tiling_starts_on_a_thread_that_computes_outputs(qtbot, make):
    """mma_tma's first four warps are its producer and own no outputs: on that level the
    view moves to the first math thread, and back on another level keeps the thread."""
    view = make(TilingView, "mma_sync")
    c = view.canvas
    c.select_thread(5)
    view.set_level("mma_tma")
    assert c.tid == 128 and len(c.model.thread_outputs(c.tid)) > 0
    assert c.warp == 4
    view.set_level("mma_persistent")
    assert c.tid == 128


@pytest.mark.parametrize("size", [(1280, 480), (1366, 520), (1280, 620)],
                         ids=lambda s: f"{s[0]}x{s[1]}")
def test_tiling_on_a_short_stage_canvas_draws_every_launch_order(qtbot, make, size):
    """Under a talk's caption the stage's canvas is wide and short: C's cells grow wider
    than tall rather than leave their launch order ("#10".."#15") out; every label of
    every block-tiled level's picture is drawn, none cut, none under the stage's type."""
    from gemmscope.app.theme import PRESENTATION, min_text_pt

    view = make(TilingView, "register_2d", size=size)
    view.apply_theme(PRESENTATION)
    c = view.canvas
    checked = 0
    for level_id in LEVELS:
        view.set_level(level_id)
        if c.scene is not None:  # warp-specialized levels: their own picture
            continue
        c.grab()  # paints: what was cut or left out is listed
        assert (level_id, c.left_out, c.cut_texts) == (level_id, [], [])
        assert c.smallest_pt >= min_text_pt(PRESENTATION) - 0.01, level_id
        cells = [c.c_block_rect(r, col) for r in range(4) for col in range(4)]
        assert all(cell.width() >= cell.height() - 0.01 for cell in cells)
        checked += 1
    assert checked >= 10
