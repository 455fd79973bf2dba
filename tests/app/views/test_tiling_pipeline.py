"""The tiling view of the warp-specialized levels draws what their models say: stage
states and count, the consumers' halves of the tile, no C for the producer, the selected
thread's fragment, the wgmma step along k, and the selected SM's walk over tiles. Pixels
are read back from rendered images at positions the widget computes; animations off."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QImage

from gemmscope.app.theme import ANIMATION, PRESENTATION, STAGE_TEXT_PX, px_to_pt
from gemmscope.app.views.tiling import TilingView
from gemmscope.app.views.tiling_pipeline import DISPLAY_MN, K_STEPS_SHOWN, STATE_COLOR
from gemmscope.kernels.models import model_for
from gemmscope.kernels.models.hopper import PromoteOp, WgmmaOp
from gemmscope.kernels.models.pipeline import StageState, Work

HOPPER = ["wgmma_tma", "fp8_block_scaled"]
SIZE = (1600, 1000)  # zoom cells of about 3 pixels: one pixel per cell is unambiguous


def rgb(color: QColor) -> tuple[int, int, int]:
    return color.red(), color.green(), color.blue()


def grab(widget) -> QImage:
    img = widget.grab().toImage()
    assert img.devicePixelRatio() == 1.0
    return img


def at(img: QImage, point: QPointF) -> tuple[int, int, int]:
    return rgb(img.pixelColor(int(point.x()), int(point.y())))


def inside(rect: QRectF, fx: float = 0.5, fy: float = 0.5) -> QPointF:
    return QPointF(rect.left() + rect.width() * fx, rect.top() + rect.height() * fy)


@pytest.fixture
def hopper_view(qtbot):
    def build(level_id: str) -> TilingView:
        view = TilingView(level_id)
        qtbot.addWidget(view)
        view.set_animated(False)
        view.resize(*SIZE)
        view.show()
        qtbot.waitExposed(view)
        return view
    return build


def show(canvas, step: int, progress: float) -> None:
    canvas.set_step(step)
    canvas.setProperty("progress", progress)


@pytest.mark.parametrize("level_id", HOPPER)
def test_stage_ring_shows_the_models_states(hopper_view, level_id):
    view = hopper_view(level_id)
    c = view.canvas
    scene = c.scene
    m = model_for(level_id)
    assert scene is not None and scene.n_steps() == c.n_steps()
    seen = set()
    for step, progress in ((0, 0.1), (0, 0.3), (0, 1.0), (1, 0.4), (K_STEPS_SHOWN, 0.5),
                           (K_STEPS_SHOWN + 2, 0.2)):
        show(c, step, progress)
        img = grab(c)
        states = scene.stages()
        assert [v.stage for v in states] == list(range(m.stages))
        # count the boxes on a line through the ring: as many as the model's stages
        y = inside(scene.stage_rect(0), 0.5, 0.97).y()
        x0 = scene.producer_rect().right() + 4
        x1 = scene.stage_rect(m.stages - 1).right() + 3
        bg = rgb(ANIMATION.color("background"))
        runs, inside_box = 0, False
        for x in range(int(x0), int(x1)):
            box = rgb(img.pixelColor(x, int(y))) != bg
            runs += box and not inside_box
            inside_box = box
        assert runs == m.stages
        for v in states:
            seen.add(v.state)
            rect = scene.stage_rect(v.stage)
            fy = 1 - v.fill / 2 if v.state is StageState.FILLING else 0.8
            want = ANIMATION.color(STATE_COLOR[v.state])
            assert at(img, inside(rect, 0.5, fy)) == rgb(want), (step, progress, v)
    assert seen == set(StageState)


@pytest.mark.parametrize("level_id", HOPPER)
def test_consumer_halves_in_their_colours_and_the_producer_owns_no_c(hopper_view, level_id):
    view = hopper_view(level_id)
    c = view.canvas
    scene = c.scene
    m = model_for(level_id)
    show(c, 1, 0.5)
    c.select_thread(5)  # a producer thread
    img = grab(c)
    colours = [rgb(ANIMATION.consumer(i)) for i in range(m.consumers)]
    assert len(set(colours)) == m.consumers
    for r in list(range(2, 62, 7)) + list(range(66, 126, 7)):
        for col in range(10, m.bn - 10, 20):  # away from the wgmma outlines
            got = at(img, inside(scene.tile_cell_rect(r, col)))
            assert got == colours[r // 64], (r, col)
    zoom = scene.zoom_rect()
    thread_or_warp = {rgb(ANIMATION.color("thread")), rgb(ANIMATION.color("warp"))}
    found = {rgb(img.pixelColor(x, y))
             for x in range(int(zoom.left()) + 2, int(zoom.right()) - 2, 2)
             for y in range(int(zoom.top()) + 2, int(zoom.bottom()) - 2, 2)}
    assert not found & thread_or_warp
    assert "owns no C" in scene.describe_thread()
    # a consumer thread: its accumulators pink, the rest of its warp violet
    tid = 256 + 32 + 6  # consumer 1, warp 9, lane 6
    c.select_thread(tid)
    img = grab(c)
    outputs = m.thread_outputs(tid)
    for r, col in outputs[::5]:
        assert at(img, inside(scene.tile_cell_rect(r, col))) == rgb(ANIMATION.color("thread"))
    warp = m.warp_tile(9)
    assert at(img, inside(scene.tile_cell_rect(warp.row + 3, 40))) == rgb(ANIMATION.color("warp"))
    assert at(img, inside(scene.tile_cell_rect(warp.row - 3, 40))) == colours[1]


@pytest.mark.parametrize("level_id", HOPPER)
def test_the_operand_strips_follow_the_wgmma_step(hopper_view, level_id):
    view = hopper_view(level_id)
    c = view.canvas
    scene = c.scene
    m = model_for(level_id)
    a_rect, b_rect, _ = scene._zoom_parts()
    seen_ops = set()
    for progress in (0.1, 0.35, 0.6, 0.85):
        show(c, 2, progress)
        op = scene.current_op()
        assert scene.consumer().work is Work.MMA
        seen_ops.add(op.index)
        img = grab(c)
        for k in range(m.wgmma_k // 2, m.bk, m.wgmma_k):  # the middle of each k band
            a_pt = QPointF(a_rect.left() + (k + 0.5) * a_rect.width() / m.bk,
                           a_rect.top() + 10.5 * a_rect.height() / m.bm)
            hot = isinstance(op, WgmmaOp) and op.a.col <= k < op.a.col + op.a.cols
            assert at(img, a_pt) == rgb(ANIMATION.color("a_operand" if hot else "a_panel"))
            b_pt = QPointF(b_rect.left() + (m.bn - 20.5) * b_rect.width() / m.bn,
                           b_rect.top() + (k + 0.5) * b_rect.height() / m.bk)
            hot_b = (isinstance(op, WgmmaOp) and op.b.row + op.b.rows > m.bn - 21
                     and op.a.col <= k < op.a.col + op.a.cols)
            assert at(img, b_pt) == rgb(ANIMATION.color("b_operand" if hot_b else "b_panel"))
    ops = m.wgmma_ops(0, 0)
    assert len(seen_ops) == len(seen_ops & {o.index for o in ops}) >= 3
    if level_id == "fp8_block_scaled":
        assert any(isinstance(o, PromoteOp) for o in ops)


@pytest.mark.parametrize("level_id", HOPPER)
def test_epilogue_marks_the_stored_columns(hopper_view, level_id):
    view = hopper_view(level_id)
    c = view.canvas
    scene = c.scene
    m = model_for(level_id)
    show(c, K_STEPS_SHOWN, 0.8)  # the first tile's epilogue, chunks 0..2 stored
    work = scene.consumer()
    assert work.work is Work.EPILOGUE and 2 <= work.op < m.bn // 64
    img = grab(c)
    stored = work.op * 64
    assert at(img, inside(scene.tile_cell_rect(30, stored - 30))) == rgb(ANIMATION.color("c_done"))
    assert at(img, inside(scene.tile_cell_rect(100, stored + 30))) == rgb(ANIMATION.consumer(1))
    # the producer is already on the next tile: every stage holds tile 2
    assert {v.tile for v in scene.stages()} == {1}


@pytest.mark.parametrize("level_id", HOPPER)
def test_the_selected_sm_walks_its_tiles(qtbot, hopper_view, level_id):
    view = hopper_view(level_id)
    c = view.canvas
    scene = c.scene
    m = model_for(level_id)
    tiles = m.block_tiles(0, *DISPLAY_MN)
    assert scene.tiles == tiles and c.n_steps() == len(tiles) * (K_STEPS_SHOWN + 1)
    show(c, K_STEPS_SHOWN + 1, 1.0)  # the second tile's first K step
    img = grab(c)
    assert at(img, inside(scene.tile_rect(*tiles[0]))) == rgb(ANIMATION.color("c_done"))
    assert at(img, inside(scene.tile_rect(*tiles[1]))) == rgb(ANIMATION.color("c_block"))
    assert at(img, inside(scene.tile_rect(*tiles[2]))) == rgb(ANIMATION.color("sm_tile"))
    assert scene.next_tile() == tiles[2]
    other = next((r, col) for r in range(scene.gm) for col in range(scene.gn)
                 if (r, col) not in tiles)
    assert at(img, inside(scene.tile_rect(*other))) == rgb(ANIMATION.color("panel"))
    # clicking a tile follows the SM that computes it; the spin box follows
    r, col = 9, 5
    with qtbot.waitSignal(c.smSelected):
        qtbot.mouseClick(c, Qt.MouseButton.LeftButton,
                         pos=QPoint(*[int(v) for v in (inside(scene.tile_rect(r, col)).x(),
                                                        inside(scene.tile_rect(r, col)).y())]))
    gm, gn = scene.gm, scene.gn
    want = int(m.block_order(gm, gn)[r, col]) % scene.grid
    assert scene.sm == want == view.sm_box.value()
    assert (r, col) in scene.tiles
    c.setFocus()
    qtbot.keyClick(c, Qt.Key.Key_BracketRight)
    assert scene.sm == want + 1 == view.sm_box.value()
    view.sm_box.setValue(3)
    assert scene.sm == 3 and scene.tiles == m.block_tiles(3, *DISPLAY_MN)
    qtbot.keyClick(c, Qt.Key.Key_Right)
    assert c.step == min(K_STEPS_SHOWN + 2, c.n_steps() - 1)


def test_clicks_on_warpgroups_and_the_zoom_select_threads(qtbot, hopper_view):
    view = hopper_view("wgmma_tma")
    c = view.canvas
    scene = c.scene
    pt = inside(scene.consumer_rect(1))
    qtbot.mouseClick(c, Qt.MouseButton.LeftButton, pos=QPoint(int(pt.x()), int(pt.y())))
    assert c.tid == 256
    pt = inside(scene.producer_rect())
    qtbot.mouseClick(c, Qt.MouseButton.LeftButton, pos=QPoint(int(pt.x()), int(pt.y())))
    assert c.tid == 0
    m = model_for("wgmma_tma")
    r, col = m.thread_outputs(128 + 70)[7]  # consumer 0, warp 6, lane 6
    pt = inside(scene.tile_cell_rect(r, col))
    qtbot.mouseClick(c, Qt.MouseButton.LeftButton, pos=QPoint(int(pt.x()), int(pt.y())))
    assert c.tid == 128 + 70


def test_other_levels_keep_their_picture_and_hide_the_sm_box(hopper_view):
    view = hopper_view("wgmma_tma")
    assert view.canvas.scene is not None and not view.sm_box.isHidden()
    view.set_level("mma_sync")
    assert view.canvas.scene is None and view.sm_box.isHidden()
    assert view.canvas.n_steps() == 4
    img = grab(view.canvas)
    c = view.canvas
    assert at(img, inside(c.c_block_rect(0, 0))) == rgb(ANIMATION.color("c_block"))


# the canvas a stage gives the picture: under a talk's caption at 1280x720, the tab on
# stage at 1280x720 and 1366x768, and a smaller projector's share
STAGE_CANVASES = [(1258, 375), (1258, 494), (1344, 542), (1180, 360)]


@pytest.mark.parametrize("level_id", HOPPER)
@pytest.mark.parametrize("size", STAGE_CANVASES)
def test_on_stage_every_label_and_aside_is_drawn_at_the_stage_size(qtbot, level_id, size):
    """On stage the picture keeps its zoom and every aside, none under 18 px, in the room
    a 1280x720 talk leaves it: at each step and for producer and consumer threads."""
    view = TilingView(level_id)
    qtbot.addWidget(view)
    view.set_animated(False)
    view.apply_theme(PRESENTATION)
    c = view.canvas
    c.setFixedSize(*size)
    view.show()
    qtbot.waitExposed(view)
    scene = c.scene
    line_px = STAGE_TEXT_PX
    for step in (0, 2, K_STEPS_SHOWN, K_STEPS_SHOWN + 1, c.n_steps() - 1):
        for tid in (0, 128 + 70, 256 + 38):
            c.select_thread(tid)
            show(c, step, 0.5)
            grab(c)
            assert c.cut_texts == [] and c.left_out == [], (step, tid)
            assert c.smallest_pt >= px_to_pt(STAGE_TEXT_PX) - 0.01
            zoom, square = scene.zoom_rect(), scene.map_rect()
            assert zoom.height() >= 3 * line_px and square.height() >= 3 * line_px
            for rect in (zoom, square, scene.producer_rect(), *map(scene.consumer_rect, (0, 1)),
                         scene.stage_rect(0)):
                assert QRectF(c.rect()).contains(rect), (rect, size)
            assert not scene.zoom_rect().intersects(scene.consumer_rect(1))


def test_the_tile_map_shows_the_shapes_c_unless_it_has_too_many_tiles():
    from gemmscope.app.views.tiling_pipeline import MAX_MAP_TILES, map_mn
    from gemmscope.kernels.models import model_for

    m = model_for("fp8_deep", {"BN": 88, "STAGES": 4})
    assert map_mn(m, None) == DISPLAY_MN
    assert map_mn(m, (4096, 2112)) == (4096, 2112)  # 16 x 24 tiles: the run's C
    gm, gn = m.grid(65536, 65536)
    assert gm * gn > MAX_MAP_TILES and map_mn(m, (65536, 65536)) == DISPLAY_MN


@pytest.mark.parametrize("cl", [1, 2])
def test_the_header_names_the_cluster_pair_where_fp8_deep_runs_2_cta_clusters(
        hopper_view, cl):
    """fp8_deep's CL 2 form: CTAs 2c and 2c + 1 share each A tile, which the first
    multicasts; the header says so, and which SM sends the selected one's A or takes it."""
    view = hopper_view("fp8_block_scaled")
    view.canvas.set_level("fp8_deep", {"CL": cl})
    scene = view.canvas.scene
    scene.set_sm(5)
    first, second = scene.header_text().splitlines()
    if cl == 2:
        assert first.endswith("2-CTA clusters") and second.startswith("SM 5 (A from SM 4), ")
        scene.set_sm(4)
        assert scene.header_text().splitlines()[1].startswith("SM 4 (A to SM 5), tile 1/")
    else:
        assert first.endswith("3 warpgroups") and second.startswith("SM 5, tile 1/")
        assert "cluster" not in first + second


@pytest.mark.parametrize("size", STAGE_CANVASES)
def test_on_stage_fp8_deeps_cluster_header_leaves_every_aside_drawn(qtbot, size):
    """The 2-CTA form's header on stage, in the room a 1280x720 talk leaves: no text cut,
    nothing left out (a longer header once pushed the zoom's labels out)."""
    view = TilingView("fp8_block_scaled")
    qtbot.addWidget(view)
    view.set_animated(False)
    view.apply_theme(PRESENTATION)
    c = view.canvas
    c.set_level("fp8_deep", {"CL": 2})
    c.setFixedSize(*size)
    view.show()
    qtbot.waitExposed(view)
    c.scene.set_sm(5)
    for step in (0, 2, K_STEPS_SHOWN, c.n_steps() - 1):
        show(c, step, 0.5)
        grab(c)
        assert c.cut_texts == [] and c.left_out == [], step
        assert c.smallest_pt >= px_to_pt(STAGE_TEXT_PX) - 0.01


@pytest.mark.parametrize(("level_id", "params", "count"), [
    ("wgmma_tma", None, 2), ("fp8_block_scaled", None, 2),
    ("fp8_deep", {"WREL": 2}, 8), ("fp8_deep", {"WREL": 1}, 2),
    ("fp8_deep", {"WREL": 2, "CL": 2}, 16)])
def test_a_stages_lamp_counts_the_arrivals_its_empty_barrier_waits_for(level_id, params,
                                                                      count):
    """The lamp's "E n/N": N is the source's mbarrier count (fp8_deep.cu: (WREL == 2 ? 8 :
    2) * CL; the others one arrival a consumer warpgroup), and a consumer that frees the
    stage adds its share."""
    from gemmscope.app.views import tiling_pipeline_text as words
    from gemmscope.kernels.models.pipeline import StageState, StageView

    m = model_for(level_id, params)
    assert m.empty_count == count
    view = StageView(stage=0, state=StageState.EMPTY, iteration=4, tile=0, k_step=1,
                     fill=0.0, round=1, empty_arrivals=1)
    assert words.lamp(m, view).endswith(f"E{count // m.consumers}/{count}")
    full = StageView(stage=0, state=StageState.FULL, iteration=4, tile=0, k_step=1,
                     fill=1.0, round=1, empty_arrivals=0)
    assert words.lamp(m, full) == f"F● E0/{count}"
