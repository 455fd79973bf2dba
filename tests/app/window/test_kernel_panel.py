"""The user-kernel panel (File ▸ Open kernel…): parameters edited in place with the
constraint check in words, Run variant, a sweep and its heatmap, with a stand-in runner."""

from __future__ import annotations

import sys

import places
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

from gemmscope.app.core.user_kernels import OpenKernel, open_kernel
from gemmscope.app.widgets.kernel_panel import KernelPanel
from gemmscope.kernels.ladder.shape import Shape

EXAMPLES = places.REPO / "resources" / "kernels"
SPEC = EXAMPLES / "regblock_float4.toml"


@pytest.fixture
def panel(qtbot):
    widget = KernelPanel(OpenKernel.load(SPEC))
    widget.resize(420, 900)
    qtbot.addWidget(widget)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def test_editing_a_parameter_rechecks_and_says_the_failure_in_words(panel):
    assert panel.run_button.isEnabled()
    assert "✓ threads: 256 per block" in panel.check_lines.text()
    bm = panel.editors["BM"]
    bm.setCurrentIndex(bm.findData(256))
    text = panel.check_lines.text()
    assert "✗ parameters: BK * BN // 4 = 256 is not a multiple of" in text
    assert "✓ threads: 512 per block" in text
    assert not panel.run_button.isEnabled()
    bm.setCurrentIndex(bm.findData(64))
    assert panel.run_button.isEnabled() and "✓ grid: 32x64x1 blocks" in \
        panel.check_lines.text()


def test_run_variant_asks_for_the_edited_variant_with_its_kernel_object(panel, qtbot):
    panel.editors["BK"].setCurrentIndex(panel.editors["BK"].findData(16))
    panel.set_shape(Shape(1000, 999, 1001), 5)
    with qtbot.waitSignal(panel.runs_requested) as got:
        panel.run_button.click()
    (run,) = got.args[0]
    assert (run.level, run.shape, run.repeats) == ("regblock_float4", Shape(1000, 999, 1001),
                                                   5)
    assert run.kernel["params"]["BK"] == 16 and run.kernel["refused"] is None
    assert run.kernel["grid"] == [8, 8, 1]


def test_sweep_asks_for_the_grid_and_refused_cells_carry_their_reason(panel, qtbot):
    panel.sweep_x.setCurrentText("BN")
    panel.sweep_y.setCurrentText("BM")
    with qtbot.waitSignal(panel.runs_requested) as got:
        panel.sweep_button.click()
    runs = got.args[0]
    assert len(runs) == 16  # 4 values of BM x 4 of BN
    refused = [r for r in runs if r.kernel["refused"]]
    assert refused and all("not a multiple" in r.kernel["refused"] for r in refused)
    assert "sweep of 16 variants queued" in panel.status.text()


def test_the_heatmap_draws_results_and_refusals_and_a_click_selects_the_variant(panel):
    p = dict(panel.kernel.params)
    base = {"level": "regblock_float4", "M": 64, "N": 64, "K": 64, "t": 1.0}
    panel.sweep_x.setCurrentText("BN")
    panel.sweep_y.setCurrentText("BM")
    panel.take({"type": "result", **base, "params": {**p, "BM": 64, "BN": 64},
                "tflops": 20.0, "verified": True})
    panel.take({"type": "result", **base, "params": {**p, "BM": 64, "BN": 128},
                "tflops": 30.0, "verified": False})
    panel.take({"type": "error", **base, "kind": "refused", "params": {**p, "BM": 256,
                "BN": 64}, "message": "regblock_float4 was refused before launch: rule"})
    panel.take({"type": "result", "level": "naive", "M": 64, "N": 64, "K": 64,
                "tflops": 99.0, "verified": True, "t": 1.0})  # another level's: not taken
    panel.heatmap.repaint()
    texts = {(c.params["BM"], c.params["BN"]): c.text for c in panel.heatmap.cells_drawn}
    assert texts == {(64, 64): "20.0 ✓", (64, 128): "30.0 ✗", (256, 64): "refused"}
    refused = next(c for c in panel.heatmap.cells_drawn if c.text == "refused")
    assert "refused before launch" in (refused.why or "")
    QTest.mouseClick(panel.heatmap, Qt.MouseButton.LeftButton, pos=QPoint(
        int(refused.rect.center().x()), int(refused.rect.center().y())))
    assert panel.editors["BM"].currentData() == 256 and panel.editors["BN"].currentData() == 64
    assert not panel.run_button.isEnabled()  # the check says why, in words
    assert "✗ parameters" in panel.check_lines.text()


def test_a_bad_spec_is_one_line_naming_the_field(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(SPEC.read_text().replace('precision = "fp32"', 'precision = "fp64"'))
    kernel, why = open_kernel(bad)
    assert kernel is None and why is not None
    assert why.startswith("bad.toml: kernel.precision: invalid enum value") and "\n" not in why


def test_the_window_opens_a_kernel_and_runs_a_sweep_on_a_stand_in_runner(
        qtbot, make_window, tmp_path, fake_runner):
    window = make_window()
    assert window.open_kernel(str(SPEC))
    panel = window.kernel_docks.panels["regblock_float4"]
    window.start_live("Fake GPU", [sys.executable, str(fake_runner)], tmp_path / "l.jsonl")
    window.controls.set_values(Shape(64, 64, 64), 2)
    panel.sweep_x.setCurrentText("BN")
    panel.sweep_y.setCurrentText("BM")
    with qtbot.waitSignal(window.live.idle, timeout=30_000):
        panel.sweep_button.click()
    assert len(panel.kernel.events) == 16  # the session's results and refusals reached it
    grid = panel.kernel.grid("BN", "BM")
    assert len(grid.cells) == 16
    panel.heatmap.grab()  # painted as on screen (the dock may scroll it out of view)
    drawn = panel.heatmap.cells_drawn
    assert len(drawn) == 16
    ran = [c for c in drawn if c.text != "refused"]
    assert ran and all(c.text.endswith("✓") for c in ran)
    # the stand-in's TFLOPS grow with the parameters: the largest variant that ran is best
    best = grid.best()
    assert best is not None and best.params == max(
        (c.params for c in grid.cells.values() if c.tflops is not None),
        key=lambda p: sum(p.values()))
    window.flush_views()
    assert any("refused" in window.messages.item(i).text()
               for i in range(window.messages.count()))


def test_a_users_kernel_joins_the_ladder_in_its_own_colour():
    from gemmscope.app.core.store import SessionStore
    from gemmscope.app.theme import USER_COLORS, level_colors
    from gemmscope.kernels.protocol.decoding import from_builtins

    store = SessionStore()
    store.handle(from_builtins({"type": "session", "t": 0.0, "protocol": 4, "created": "",
                                "levels": {}}))
    ladder_before = [lv.id for lv in store.ladder_levels()]
    store.handle(from_builtins({"type": "kernel", "t": 1.0, "level": "regblock_float4",
                                "file": "regblock_float4.cu", "catalog": {
                                    "id": "regblock_float4", "title": "mine",
                                    "precision": "fp32", "params": {"BM": 128},
                                    "kind": "reference", "user": "x.cu"}}))
    ids = [lv.id for lv in store.ladder_levels()]
    assert ids == [*ladder_before, "regblock_float4"]  # after the ladder, never a reference
    mine = store.levels[-1]
    assert mine.is_user and mine.user == "regblock_float4.cu" and mine.params == {"BM": 128}
    colors = level_colors([(lv.id, lv.precision, lv.is_reference, lv.is_user)
                           for lv in store.levels])
    assert colors["regblock_float4"] == USER_COLORS[0]
    assert list(colors.values()).count(USER_COLORS[0]) == 1
    store.handle(from_builtins({"type": "kernel", "t": 2.0, "level": "regblock_float4",
                                "file": "regblock_float4.cu",
                                "catalog": {"id": "regblock_float4", "precision": "fp32"}}))
    assert [lv.id for lv in store.levels].count("regblock_float4") == 1  # edited: replaced


def test_a_registry_levels_parameters_are_edited_in_the_same_panel(qtbot):
    from gemmscope.app.core.level_variants import LevelVariants

    panel = KernelPanel(LevelVariants.of("register_2d"))
    qtbot.addWidget(panel)
    assert "the registry's choice: BM=128 BN=128 BK=8 TM=8 TN=8" in panel.title.text()
    assert panel.run_button.isEnabled()
    panel.editors["TM"].setValue(3)
    assert "✗ parameters: BM=128 is not a multiple of TM=3" in panel.check_lines.text()
    assert not panel.run_button.isEnabled()
    panel.editors["TM"].setValue(8)
    panel.editors["BM"].setValue(64)
    assert "✓ threads: 128 per block" in panel.check_lines.text()
    panel.set_shape(Shape(512, 512, 512), 3)
    with qtbot.waitSignal(panel.runs_requested) as got:
        panel.run_button.click()
    (run,) = got.args[0]
    assert run.level == "register_2d" and run.params == {"BM": 64} and run.kernel is None
    runs = panel.kernel.sweep("BN", "BM", Shape(512, 512, 512), 3)
    assert {(r.params or {}).get("BM", 128) for r in runs} == {32, 64, 128, 256, 512}


def _shown(panel: KernelPanel, name: str) -> int:
    editor = panel.editors[name]
    return int(editor.currentData() if hasattr(editor, "currentData") else editor.value())


def test_a_level_that_picks_per_shape_is_edited_from_its_pick_which_unedited_values_follow(
        qtbot):
    from gemmscope.app.core.level_variants import LevelVariants
    from gemmscope.kernels.ladder import get

    level = get("fp8_deep")
    at = {s: level.for_shape(*s, 132).params for s in ((4096,) * 3, (8192,) * 3)}
    assert at[(4096,) * 3] != at[(8192,) * 3]  # (else this test shows nothing)
    panel = KernelPanel(LevelVariants.of("fp8_deep"))
    qtbot.addWidget(panel)
    panel.set_shape(Shape(4096, 4096, 4096), 3)
    assert {n: _shown(panel, n) for n in panel.editors} == at[(4096,) * 3]
    assert "registry's entry" in panel.title.text()
    assert "this variant is that plain run" in panel.check_lines.text()
    panel.editors["GW"].setValue(8)  # edited: kept when the shape changes
    panel.set_shape(Shape(8192, 8192, 8192), 3)
    assert {n: _shown(panel, n) for n in panel.editors} == {**at[(8192,) * 3], "GW": 8}
    assert "this variant differs in GW=8" in panel.check_lines.text()
    assert panel.kernel.request(panel.shape, 3).params == {"GW": 8, **{
        k: v for k, v in at[(8192,) * 3].items() if level.params[k] != v}}
    panel.reset_button.click()  # the plain run's form: the edit dropped
    assert {n: _shown(panel, n) for n in panel.editors} == at[(8192,) * 3]
    assert panel.kernel.request(panel.shape, 3).params is None  # the plain run itself


def test_a_variant_equal_to_the_entry_but_not_the_pick_is_sent_with_its_parameters():
    from gemmscope.app.core.level_variants import LevelVariants
    from gemmscope.kernels.ladder import get

    model = LevelVariants.of("fp8_deep")
    shape = Shape(8192, 8192, 8192)
    entry = dict(get("fp8_deep").params)
    assert model.pick(shape) != entry
    run = model.request(shape, 3, entry)  # no parameter differs from the entry ...
    assert run.params == entry  # ... yet the runner must not pick 8192^3's form


def test_a_persistent_levels_check_counts_the_blocks_it_launches_not_its_tiles():
    from gemmscope.app.core.level_variants import LevelVariants

    model = LevelVariants.of("fp8_deep")
    model.sm_count = 132
    model.follow(Shape(4096, 4096, 4096))
    grid = [f for f in model.check(Shape(4096, 4096, 4096)).findings if f.what == "grid"]
    assert grid[0].text == "128x1x1 blocks"  # 512 tiles, four waves of 128 (not 512x1x1)


def test_a_build_event_gives_the_check_its_registers(qtbot):
    from gemmscope.app.core.level_variants import LevelVariants

    panel = KernelPanel(LevelVariants.of("register_2d"))
    qtbot.addWidget(panel)
    assert "• registers: not known before a compile" in panel.check_lines.text()
    panel.take({"type": "build", "t": 1.0, "level": "register_2d", "variant": "vector",
                "params": {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8}, "regs": 200,
                "smem_static_bytes": 8192, "local_bytes": 0, "compiler": "NVRTC 13.0"})
    text = panel.check_lines.text()
    assert "✓ registers: 200 per thread (the build event of a run, NVRTC 13.0)" in text
    assert "1 blocks per SM" in text and "limited by registers" in text
    panel.editors["BM"].setValue(256)  # another variant: no build of it yet
    assert "• registers: not known before a compile" in panel.check_lines.text()


def test_the_ladder_describes_a_users_kernel_without_a_level_before_it(qtbot):
    from gemmscope.app.core.store import SessionStore
    from gemmscope.app.widgets.ladder_panel import LadderPanel
    from gemmscope.kernels.protocol.decoding import from_builtins

    store = SessionStore()
    store.handle(from_builtins({"type": "session", "t": 0.0, "protocol": 4, "created": "",
                                "levels": {}}))
    store.handle(from_builtins({"type": "kernel", "t": 1.0, "level": "mine", "file": "m.cu",
                                "catalog": {"id": "mine", "title": "My kernel",
                                            "adds": "your kernel k from m.cu",
                                            "precision": "fp32"}}))
    panel = LadderPanel()
    qtbot.addWidget(panel)
    panel.bind(store)
    panel.refresh(store.take_changes())
    panel.select_level("mine")
    text = panel.detail.text()
    assert "<b>Adds:</b> your kernel k from m.cu" in text
    panel.select_level("coalesced")
    assert "<b>Adds over <i>naive</i>:</b>" in panel.detail.text()


def test_a_tune_panel_follows_the_run_form_as_it_is_edited(make_window, qtbot):
    from gemmscope.kernels.ladder import get

    window = make_window()
    panel = window.kernel_docks.tune("fp8_deep")
    assert panel is not None and panel.kernel.sm_count == (window.sm_count() or 132)
    for name in ("M", "N", "K"):
        window.controls.fields[name].setText("8192")
    assert panel.shape == Shape(8192, 8192, 8192)
    pick = get("fp8_deep").for_shape(8192, 8192, 8192, panel.kernel.sm_count).params
    assert {n: _shown(panel, n) for n in panel.editors} == pick
    assert panel.check_lines.text().startswith("at 8192×8192×8192:")
    window.controls.fields["K"].setText("0")  # refused by the form: the panel keeps its shape
    assert panel.shape == Shape(8192, 8192, 8192)


def test_a_tune_panels_run_buttons_are_off_while_runs_cannot_be_sent(make_window, qtbot):
    window = make_window()
    panel = window.kernel_docks.tune("register_2d")
    window.controls.set_unavailable("replay: runs need the live runner")
    assert not panel.run_button.isEnabled() and not panel.sweep_button.isEnabled()
    assert "runs need the live runner" in panel.run_button.toolTip()
    window.controls.set_unavailable("")
    assert panel.run_button.isEnabled() and panel.sweep_button.isEnabled()
    panel.editors["TM"].setValue(3)  # the check fails: Run variant off for that reason
    assert not panel.run_button.isEnabled()
    assert panel.run_button.toolTip() == "the check above fails"


def test_a_tune_panel_leaves_the_stage_with_the_other_panels_and_comes_back(make_window,
                                                                             qtbot):
    window = make_window()
    window.show()
    qtbot.waitExposed(window)
    window.kernel_docks.tune("fp8_deep")
    dock = window.kernel_docks.docks["fp8_deep"]
    qtbot.waitUntil(dock.isVisible)
    window.set_presentation(True, full_screen=False)
    assert not dock.isVisible() and not window.ladder_dock.isVisible()
    window.set_presentation(False)
    qtbot.waitUntil(lambda: dock.isVisible() and window.ladder_dock.isVisible())
