"""Burst and sustained side by side in the app (issue 15, item 4): the power-limited rule,
the ladder's sustained columns, the bars, the telemetry view's power limit and trial
windows. Texts and numbers are read back from what the widgets show."""

from __future__ import annotations

import numpy as np
import pytest
import synthetic_session as syn

from gemmscope.app.core.store import SessionStore
from gemmscope.kernels.protocol.decoding import of
from gemmscope.kernels.protocol.events import Mode, dumps
from gemmscope.kernels.results.number_texts import DASH, NOT_THROTTLED
from gemmscope.kernels.results.power_limit import (
    is_power_limited,
    power_limit_text,
    sustained_texts,
)
from gemmscope.kernels.results.rows import Result


def _result(tflops: float, mode: str = "burst", **kw) -> Result:
    return Result(level="wmma", M=4096, N=4096, K=4096, dtype="float16", precision="fp16",
                  median_ms=1.0, tflops=tflops, verified=True, rel_err=None, repeats=3,
                  t=0.0, mode=Mode(mode), **kw)


# ------------------------------------------------------------------ the rule
def test_power_limited_by_the_power_cap_or_a_clock_drop_of_more_than_5_percent():
    burst = _result(780.0)
    capped = _result(664.0, "sustained", throttled=("SwPowerCap",), power_limit_w=700.0)
    assert is_power_limited(capped)
    assert power_limit_text(burst, capped) == "−15% under the 700 W limit"
    # no reason given, but the clock fell 6% under the max: limited; 4%: not
    low = _result(700.0, "sustained", sm_clock_mhz_min=0.94 * 1980, throttled=())
    assert is_power_limited(low, 1980.0)
    assert power_limit_text(burst, low, 1980.0) == "−10% under the power limit"
    near = _result(770.0, "sustained", sm_clock_mhz_min=0.96 * 1980, throttled=())
    assert not is_power_limited(near, 1980.0)
    assert power_limit_text(burst, near, 1980.0) == NOT_THROTTLED
    assert not is_power_limited(low)  # without the device's max the clock says nothing
    # a thermal slowdown is not the power limit
    hot = _result(700.0, "sustained", throttled=("SwThermalSlowdown",))
    assert power_limit_text(burst, hot) == NOT_THROTTLED
    assert power_limit_text(burst, None) == DASH
    assert power_limit_text(None, capped) == "under the 700 W limit"
    texts = sustained_texts(burst, capped)
    assert list(texts.values()) == ["664.0", "−15% under the 700 W limit"]


# -------------------------------------------------------------- the session
@pytest.fixture
def sustained_window(qtbot, make_window, tmp_path):
    path = tmp_path / "sustained.jsonl"
    path.write_text("".join(dumps(e) + "\n" for e in syn.with_sustained()), encoding="utf-8")
    window = make_window()
    assert window.open_recording(path)
    window.play_instant()
    window.show()
    qtbot.waitExposed(window)
    window.flush_views()
    return window


def test_ladder_shows_sustained_tflops_and_which_levels_are_power_limited(sustained_window):
    ladder = sustained_window.ladder
    assert ladder.cell_text("wmma", "TFLOPS") == "300.0"
    assert ladder.cell_text("wmma", "sustained TFLOPS") == "261.0"
    assert ladder.cell_text("wmma", "power-limited") == "−13% under the 700 W limit"
    assert ladder.cell("wmma", "power-limited").foreground().color().name() == "#d46a00"
    assert "sustained: 261.0 TFLOPS" in ladder.cell("wmma", "sustained TFLOPS").toolTip()
    assert ladder.cell_text("cp_async", "sustained TFLOPS") == "31.70"
    assert ladder.cell_text("cp_async", "power-limited") == NOT_THROTTLED
    assert ladder.cell_text("naive", "sustained TFLOPS") == DASH
    assert ladder.cell_text("naive", "power-limited") == DASH
    ladder.select_level("wmma")
    assert "<b>Sustained:</b> 261.0 TFLOPS" in ladder.detail.text()


def test_bars_prefer_sustained_energy_and_set_burst_beside_sustained(sustained_window):
    bars = sustained_window.charts()["bars"]
    levels = [row.level for row in bars.rows]
    wmma, naive = levels.index("wmma"), levels.index("naive")
    sustained = {e["level"]: e for e in syn.with_sustained()
                 if e["type"] == "result" and e.get("mode") == "sustained"}
    bars.set_metric("GFLOP/J")
    assert bars.getPlotItem().getAxis("left").labelText.startswith(bars.GFLOP_PER_J_AXIS)
    heights = bars.drawn_values()
    assert heights[wmma] == pytest.approx(sustained["wmma"]["gflop_per_j"])
    assert bars.label_texts[wmma].split("\n")[1].startswith("sustained")
    assert bars.label_texts[naive].split("\n")[1] == "burst"
    assert heights[naive] > 0
    bars.set_metric(bars.PAIR)
    np.testing.assert_allclose(bars.bars.opts["x"], np.arange(len(levels)) - 0.2)
    assert bars.sustained_bars is not None and bars.sustained_bars.isVisible()
    pale = bars.drawn_sustained_values()
    assert pale[wmma] == pytest.approx(261.0) and pale[naive] == 0.0
    assert bars.drawn_values()[wmma] == pytest.approx(300.0)
    assert bars.label_texts[wmma] == "300.0\nsust. −13% ⚠"
    legend = [e.text for e in bars.side_legend.entries]
    assert bars.SUSTAINED_LEGEND in legend
    bars.set_metric("TFLOPS")
    assert not bars.sustained_bars.isVisible()
    np.testing.assert_allclose(bars.bars.opts["x"], np.arange(len(levels)))


def test_telemetry_draws_the_power_limit_and_the_trial_windows(qtbot, sustained_window):
    view = sustained_window.named_widget("telemetry")
    qtbot.waitExposed(view)
    sustained_window.flush_views()
    assert view.limit_line.isVisible() and view.limit_line.value() == syn.POWER_LIMIT_W
    assert view.limit_line.label.toPlainText() == "power limit 700 W"
    assert view.plots["power"].getViewBox().viewRange()[1][1] >= syn.POWER_LIMIT_W
    evs = syn.with_sustained()
    opens = [e["t"] for e in evs if e["type"] == "phase" and e["phase"] == "window"]
    closes = [e["t"] for e in evs if e["type"] == "repeat" and e.get("mode") == "sustained"]
    assert len(opens) == 2 * syn.TRIALS
    for name in ("clocks", "power", "temperature"):
        np.testing.assert_allclose(view.trial_bands[name].spans,
                                   np.column_stack([opens, closes]), err_msg=name)
    assert view.curves["temp_c"].getViewBox() is view.plots["temperature"].getViewBox()



def test_the_power_limit_falls_back_to_a_sustained_result_without_it_in_samples():
    store = SessionStore()
    for ev in syn.with_sustained():
        if ev["type"] == "telemetry":
            ev = {**ev, "power_limit_w": None}
        store.handle(of(ev))
    assert store.telemetry.latest("power_limit_w") is None
    assert store.power_limit_w() == syn.POWER_LIMIT_W
    assert len(store.trial_spans) == 2 * syn.TRIALS
