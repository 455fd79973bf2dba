"""Views tell the truth while replaying: what the recording has but the replay has not
reached is "not replayed yet", not "not recorded"; each view opens on the access its
level is about; the swizzle explorer names its layouts and claims no ldmatrix for FP32
levels; the instruction mix counts per unit of work, with the unit named."""

from __future__ import annotations

import pytest
from replay_seek import seek_whole

from gemmscope.app.core import builds
from gemmscope.app.core.builds import MIX_PER_FMAS, MIX_UNIT, mix_rows
from gemmscope.app.core.roofline_data import roofline_data
from gemmscope.app.views.banks import BanksView
from gemmscope.app.views.coalescing import CoalescingView, summary_line
from gemmscope.app.views.swizzle import SwizzleView
from gemmscope.app.views.swizzle_presets import BY_NAME
from gemmscope.app.widgets.ladder_panel import NOT_REPLAYED
from gemmscope.app.window.main_window import bundled_session
from gemmscope.kernels.models.swizzle import IDENTITY, Pattern, Swizzle
from gemmscope.kernels.protocol import records as rec
from gemmscope.kernels.protocol.recording import read_session


@pytest.fixture(scope="module")
def bundled():
    path = bundled_session()
    assert path is not None
    return path, read_session(path)


def _seek_before(window, session, kind: str) -> None:
    """Replay up to (not including) the first event of type ``kind``."""
    events = session.events
    first = next(i for i, e in enumerate(events) if getattr(e, "type", None) == kind)
    before = events[first - 1]
    t = max(before.t if isinstance(before, rec.Event) else float(before.columns.t[before.stop - 1]),
            0.0)
    window.replay.pause()
    seek_whole(window, t)
    assert window.replay.delivered_count < first + 1


def test_not_replayed_yet_is_not_not_recorded(make_window, bundled):
    path, session = bundled
    window = make_window()
    assert window.open_recording(path)
    window.show()
    _seek_before(window, session, "source_counters")
    level = next(e.level for e in session.events if isinstance(e, rec.SourceCounters))
    assert window.select_level(level)
    code = window.named_widget("code")
    window.flush_views()
    text = code.heat_bar.text.text()
    assert "not replayed yet" in text and "in this recording" not in text
    # the ladder: a level whose result comes later is not replayed yet, not "not run"
    _seek_before(window, session, "result")
    assert window.view_state.state.shape is not None  # chosen before any result
    assert window.ladder.cell_text("naive", "verified") == NOT_REPLAYED
    window.play_instant()
    window.flush_views()
    assert "not replayed yet" not in code.heat_bar.text.text()
    assert NOT_REPLAYED not in [window.ladder.cell_text(lv.id, "verified")
                                for lv in window.store.levels]


def test_the_roofline_waits_for_the_ceilings_the_recording_has(make_window, bundled):
    """The bundled recording's measured ceilings come on its last lines: until the replay
    reaches them the roofline says they are coming, never that none were measured."""
    path, session = bundled
    window = make_window()
    assert window.open_recording(path)
    window.show()
    _seek_before(window, session, "ceilings")
    roofline = window.named_widget("roofline")
    window.flush_views()
    notes = roofline.notes.text()
    assert "measured ceilings: not replayed yet" in notes and "no measured" not in notes
    window.play_instant()
    window.flush_views()
    notes = roofline.notes.text()
    assert "not replayed yet" not in notes and "no measured ceilings" not in notes
    assert roofline_data(window.store).measured  # drawn now


def test_a_replays_messages_are_the_recordings_history(make_window, bundled):
    """A restart, an untimed ncu launch, a probe that failed: said as what happened in
    the recording, at its time, not as this install's faults."""
    path, _session = bundled
    window = make_window()
    assert window.open_recording(path)
    window.play_instant()
    window.flush_views()
    from_store = [m.describe() for m in window.store.messages]
    shown = [t for t in window.messages.texts() if any(m[:40] in t for m in from_store)]
    assert len(shown) == len(from_store) > 0
    assert all(t[2:].startswith("in the recording, at ") for t in shown), shown


def test_what_a_recording_lacks_is_said_so_during_its_replay(make_window, synthetic_file):
    window = make_window()  # the synthetic recording has no per-line counters at all
    assert window.open_recording(synthetic_file)
    window.replay.pause()
    window.show()
    assert window.select_level("naive") or True  # (the header may not be in yet)
    code = window.named_widget("code")
    window.flush_views()
    assert window.store.replay_pending
    assert "in this recording" in code.heat_bar.text.text()
    assert "not replayed yet" not in code.heat_bar.text.text()


def test_the_coalescing_view_opens_on_the_access_its_level_is_about(qtbot):
    view = CoalescingView("naive")
    qtbot.addWidget(view)
    canvas = view.coalescing
    assert canvas.current().array == "A"  # naive: every lane its own row of A
    view.set_level("coalesced")
    acc, rep = canvas.current(), canvas.report()
    assert acc.array == "B" and rep.efficiency == 1.0  # not the A broadcast
    canvas.restart()  # Home: the first instruction, the A broadcast, said as one
    acc, rep = canvas.current(), canvas.report()
    assert acc.array == "A" and canvas.is_broadcast(acc)
    text, colour = summary_line(acc, rep)
    assert text.startswith("broadcast:") and "efficiency" not in text and colour == "ok"


def test_the_banks_view_opens_on_the_levels_conflict(qtbot):
    view = BanksView("vectorized")
    qtbot.addWidget(view)
    rep = view.banks.report()
    assert rep is not None and rep.conflicts > 0  # the transposed A store, 2-way
    view.set_level("smem_padded")  # no conflicts to show: a load that is no broadcast
    acc = view.banks.current()
    assert acc.op.value == "ld" and not view.banks.is_broadcast(acc)


@pytest.mark.parametrize("level", ["smem_tiled", "smem_padded", "register_2d", "cp_async"])
def test_the_swizzle_explorer_claims_no_ldmatrix_for_fp32_levels(qtbot, level):
    view = SwizzleView(level)
    qtbot.addWidget(view)
    c = view.explorer
    assert c.pattern is Pattern.ROW and c.conflict_free()
    header = c.header_text()
    assert "ldmatrix" not in header and "Swizzle<0,0,0>" not in header
    assert view.pattern_box.currentData() == "row"
    assert "conflict-free" in view.message.text()


def test_the_swizzle_explorer_names_the_tensor_core_levels_patterns(qtbot):
    view = SwizzleView("mma_sync")
    qtbot.addWidget(view)
    assert view.explorer.pattern is Pattern.LDMATRIX
    assert "ldmatrix.x4" in view.explorer.header_text()
    assert "XOR 128-byte (TMA SWIZZLE_128B" in view.explorer.header_text()
    view.set_level("wgmma_tma")
    assert "wgmma core matrices" in view.explorer.header_text()
    assert view.preset_box.currentText() == "the level's own layout"


def test_swizzle_presets_by_name(qtbot):
    view = SwizzleView("smem_tiled")
    qtbot.addWidget(view)
    name = next(n for n in BY_NAME if n.startswith("XOR 128-byte"))
    view.preset_box.activated.emit(view.preset_box.findText(name))
    c = view.explorer
    assert c.swizzle == Swizzle(3, 4, 3) and (view.b_box.value(), view.m_box.value(),
                                              view.s_box.value()) == (3, 4, 3)
    assert c.header_text().startswith(name)
    pad = next(n for n in BY_NAME if n.startswith("padding"))
    view.preset_box.activated.emit(view.preset_box.findText(pad))
    assert c.swizzle == IDENTITY and c.pad_elems == 1
    view.pad_box.setValue(3)  # an edit of the boxes: no preset's name any more
    assert view.preset_box.currentText().startswith("custom")
    view.preset_box.activated.emit(view.preset_box.findText("the level's own layout"))
    assert c.swizzle == IDENTITY and c.pad_elems == 0


def test_the_instruction_mix_is_per_unit_of_work(bundled):
    _path, session = bundled
    pairs = [(e.level, e) for e in session.events if isinstance(e, rec.Build)]
    rows = dict(mix_rows(pairs))
    # one FFMA is one multiply-add: FP32 levels show 1000 FFMA per 1000 FMAs, however
    # many k one loop iteration unrolls (naive: 16, cp_async: a BK=16 tile of 4x4x2x4)
    for level in ("naive", "smem_tiled", "cp_async"):
        assert rows[level]["FFMA"] == pytest.approx(MIX_PER_FMAS)
    # an HMMA.16816 does 64 multiply-adds per thread, an HGMMA.64xBNx16 64 * BN * 16 / 128
    # (2048 at BN = 256; the newest build may be of the 232-wide tile a shape picked)
    assert rows["mma_sync"]["HMMA"] == pytest.approx(MIX_PER_FMAS / 64)
    bn = dict(pairs)["wgmma_tma"].params["BN"]
    assert rows["wgmma_tma"]["HGMMA"] == pytest.approx(MIX_PER_FMAS / (64 * bn * 16 / 128))
    # FP8's FFMAs (the promotion) are overhead on top of the QGMMA work
    assert rows["fp8_block_scaled"]["FFMA"] < rows["fp8_block_scaled"]["HGMMA"] * 100
    assert builds.instruction_fmas("QGMMA.64x128x32.F32.E4M3.E4M3") == 64 * 128 * 32 / 128
    assert builds.instruction_fmas("HFMA2.MMA") == 0  # a move, not the GEMM's work


def test_the_mix_chart_names_its_unit(qtbot, bundled):
    from gemmscope.app.plots.instruction_mix import InstructionMixChart

    _path, session = bundled
    chart = InstructionMixChart()
    qtbot.addWidget(chart)
    pairs = [(e.level, e) for e in session.events if isinstance(e, rec.Build)]
    chart.set_rows(mix_rows(list(dict(pairs).items())))
    item = chart.getPlotItem()
    assert MIX_UNIT in item.titleLabel.text and MIX_UNIT in item.getAxis("left").labelText
    assert "one iteration" not in item.titleLabel.text
    totals = chart.total_texts()
    naive = chart.levels.index("naive")
    assert len(totals) == len(chart.levels) and totals[naive].endswith("k")  # naive: ~5.5k
